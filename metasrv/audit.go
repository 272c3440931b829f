package metasrv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"lakegate/catalog"
)

// Event is an audit event: a catalog event (raft index when applied, time,
// actor, operation, target, outcome, detail) with its metalake. Requests
// rejected before they reach the log (bad bodies, forged headers) are
// events with Index 0.
//
// The success events of an applied entry carry what was applied, so that
// the audit log alone replays the metalakes: the first success event of
// each applied catalog command carries the command (Command), and the
// success event of a metalake operation carries the operation (Lake). The
// rest of what applying needs is on the event: Index, Time and Actor are
// the catalog.Meta the leader stamped (catalog.Apply(s, cmd,
// catalog.Meta{Actor: e.Actor, Time: e.Time, Index: e.Index}) reproduces
// the entry's effect, with IdentityToken set for a SyncIdentityUser, which
// the leader logs only from a verified token; a CreateMetalake is catalog.New(e.Metalake,
// e.Lake.Owner, e.Time)). Replay the events with Command or Lake in file
// order (index order; within one index, event order). Failure events and
// events with index 0 carry neither: they changed nothing.
type Event struct {
	Metalake string `json:"metalake"`
	catalog.Event
	// Delegator is the service that acted for Actor, if any.
	Delegator string `json:"delegator,omitempty"`
	// Request is, on the event of a request refused before it reached the
	// log (Index 0, outcome failure), the REST operation it was routed to:
	// its method and route template as docs/rest.md writes them ("PUT
	// /api/metalakes/{m}/owners/{type}/{fullName}"). The template, never
	// the path: nothing the caller sent is in it.
	Request string `json:"request,omitempty"`
	// Reason is, on the same events, the class of the refusal, as the
	// HTTP answer says it: bad_request, unauthenticated, forbidden,
	// not_found, unsupported, conflict, unavailable or internal.
	Reason string `json:"reason,omitempty"`
	// Command is the applied catalog command as catalog.EncodeCommand
	// writes it ({"v":1,"type":N,"body":{…}}, embedded as a JSON value;
	// catalog.DecodeCommand reads it back), on the command's own success
	// event only (not on the EffectiveTagsChanged events that follow it).
	// Catalog commands hold names, grants, tags, schemas and table versions,
	// no credentials.
	Command json.RawMessage `json:"command,omitempty"`
	// Lake is the applied metalake operation, on the success event of
	// CreateMetalake, AlterMetalake and DropMetalake.
	Lake *LakeOp `json:"lake,omitempty"`
}

// rejectionReasons names the class of a refusal by the HTTP status
// mapError answers it with.
var rejectionReasons = map[int]string{
	http.StatusBadRequest:          "bad_request",
	http.StatusUnauthorized:        "unauthenticated",
	http.StatusForbidden:           "forbidden",
	http.StatusNotFound:            "not_found",
	http.StatusMethodNotAllowed:    "unsupported",
	http.StatusConflict:            "conflict",
	http.StatusServiceUnavailable:  "unavailable",
	http.StatusInternalServerError: "internal",
}

// rejectionReason is the class of the refusal err (Event.Reason).
func rejectionReason(err error) string {
	status, _ := mapError(err)
	if r, ok := rejectionReasons[status]; ok {
		return r
	}
	return "internal"
}

// requestOperation is the REST operation r was routed to (Event.Request):
// the method and the route template, the metalake written {m} as
// docs/rest.md writes it; "" when r matched no route.
func requestOperation(r *http.Request) string {
	if r == nil || r.Pattern == "" {
		return ""
	}
	p := strings.Replace(r.Pattern, "{tenant}", "{m}", 1)
	if !strings.Contains(p, " ") { // a pattern for every method
		p = r.Method + " " + p
	}
	return p
}

// rejected marks e as the event of request r refused with err before it
// reached the log: the REST operation and the class of the refusal. r may
// be nil (no REST operation then).
func (e *Event) rejected(r *http.Request, err error) {
	e.Request, e.Reason = requestOperation(r), rejectionReason(err)
}

// OutcomePre is the outcome of a pre-event: the record, made before
// anything about a request is decided, that an actor asked for an
// operation on a target. The node that decides the request (the leader; a
// follower forwards first) records it with index 0 when the request
// reaches it, and the request's success or failure events follow it. Domain
// operations have them (see preEvents).
const OutcomePre catalog.Outcome = "pre"

// DefaultAuditRing is the number of events kept in memory for GET /events
// when AuditConfig.RingSize is zero.
const DefaultAuditRing = 4096

// auditQueue is the number of Record batches that may wait for the audit
// file writer before Record blocks.
const auditQueue = 4096

// AuditLog appends events as JSON lines to an append-only file (opened
// O_APPEND, mode 0600) and keeps the newest in a bounded in-memory ring.
// Applied events whose index is not above the highest index already in the
// file are not written again (log replay after a restart). Safe for
// concurrent use. Write failures are logged, never returned to the FSM:
// auditing must not make replicas diverge.
//
// Record updates the ring (so Events sees an event as soon as Record
// returns) and queues the file write for one background goroutine, started
// by OpenAuditLog and stopped by Close, which writes the events in Record
// order and flushes whenever its queue is empty; Close writes everything
// queued, then syncs and closes the file. Record blocks only when
// auditQueue batches are waiting. Events still queued when the process
// dies are lost from the file (unless Raft replays their entries).
type AuditLog struct {
	mu       sync.Mutex
	queue    chan auditBatch // nil: memory only, or closed
	done     chan struct{}   // closed when the writer has closed the file
	closeErr error           // the writer's flush, sync and close; read after done
	// writeErrors counts failed writes to the file.
	writeErrors atomic.Uint64
	maxIndex    uint64
	ring        []Event
	next        int  // ring write position
	full        bool // ring wrapped
	log         *slog.Logger
}

// OpenAuditLog opens (creating) the audit file at path; an empty path keeps
// events in memory only. ringSize zero means DefaultAuditRing.
func OpenAuditLog(path string, ringSize int, log *slog.Logger) (*AuditLog, error) {
	if ringSize <= 0 {
		ringSize = DefaultAuditRing
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &AuditLog{ring: make([]Event, ringSize), log: log}
	if path == "" {
		return a, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("metasrv: audit log: %w", err)
	}
	// Recover the highest applied index and the newest events from the
	// file's end: the file only grows, and reading all of it made a
	// node's start as slow as its history was long.
	evs, maxIndex, err := readAuditTail(f, ringSize, auditTailChunk)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("metasrv: audit log: reading %s: %w", path, err)
	}
	for _, e := range evs {
		a.push(e)
	}
	a.maxIndex = maxIndex
	a.startWriter(f)
	return a, nil
}

// auditTailChunk is how much of the audit file readAuditTail reads at a
// time, from the end backwards.
const auditTailChunk = 1 << 20

// maxAuditLine bounds an audit line readAuditTail will parse; a longer one
// (none is written: request bodies are bounded far below it) is skipped.
const maxAuditLine = 16 << 20

// readAuditTail reads r backwards from its end, chunk bytes at a time,
// until it has the last want events (in file order) and the highest Raft
// index of the file, or reached the start. Events are appended in the order
// they were applied, so the highest index is that of the last event that
// has one; events without an index (rejected requests) may follow it. Lines
// that do not parse — a torn last line after a crash — are skipped.
func readAuditTail(r interface {
	io.ReaderAt
	Stat() (os.FileInfo, error)
}, want, chunk int) ([]Event, uint64, error) {
	fi, err := r.Stat()
	if err != nil {
		return nil, 0, err
	}
	var (
		newest   []Event // newest first
		maxIndex uint64
		carry    []byte // the start of a line whose beginning lies before pos
	)
	for pos := fi.Size(); pos > 0 && (len(newest) < want || maxIndex == 0); {
		n := min(int64(chunk), pos)
		pos -= n
		buf := make([]byte, n, n+int64(len(carry)))
		if _, err := r.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		buf = append(buf, carry...)
		lines := bytes.Split(buf, []byte{'\n'})
		if pos > 0 {
			// The first piece may be the end of a line that starts
			// further back.
			carry = lines[0]
			if len(carry) > maxAuditLine {
				carry = nil
			}
			lines = lines[1:]
		}
		for i := len(lines) - 1; i >= 0; i-- {
			var e Event
			if len(lines[i]) == 0 || json.Unmarshal(lines[i], &e) != nil {
				continue
			}
			if maxIndex == 0 {
				maxIndex = e.Index
			}
			if len(newest) < want {
				newest = append(newest, e)
			}
		}
	}
	slices.Reverse(newest)
	return newest, maxIndex, nil
}

// auditFile is where the writer appends: the audit file (a fake in tests).
type auditFile interface {
	io.Writer
	Sync() error
	Close() error
}

// startWriter starts the goroutine that appends recorded events to f.
func (a *AuditLog) startWriter(f auditFile) {
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.queue, a.done = make(chan auditBatch, auditQueue), make(chan struct{})
	go a.write(f, a.queue)
}

// WriteErrors returns how many writes to the audit file have failed since
// it was opened. The events of a failed write are missing from the file
// (they are still in the ring GET /events reads); the file takes events
// again at the next write.
func (a *AuditLog) WriteErrors() uint64 { return a.writeErrors.Load() }

// auditBatch is one Record's events queued for the file. commandValid
// says that their Commands are valid JSON (the FSM decoded them).
type auditBatch struct {
	evs          []Event
	commandValid bool
}

// write appends the queued events to f until the queue is closed, then
// flushes, syncs and closes f. Each event is written as json.Encoder writes
// it: by appendEvent, or by the encoder itself when appendEvent declines.
//
// A failed write (a full disk) is logged and counted, and the buffered
// events are dropped — bufio.Writer keeps its first error for good, which
// would drop every later event too — and the next write begins with a
// newline, ending whatever part of a line the failed one left, so that the
// events after it are whole lines again.
func (a *AuditLog) write(f auditFile, queue <-chan auditBatch) {
	defer close(a.done)
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w) // as json.Marshal, plus '\n'
	torn := false
	failed := func(err error) {
		a.writeErrors.Add(1)
		a.log.Error("metasrv: audit write failed; the events buffered for the file are lost from it (GET /events still has them)", "err", err)
		w.Reset(f)
		torn = true
	}
	for batch := range queue {
		if torn {
			torn = w.WriteByte('\n') != nil
		}
		for i := range batch.evs {
			e := &batch.evs[i]
			var err error
			if line, ok := appendEvent(w.AvailableBuffer(), e, batch.commandValid); ok {
				_, err = w.Write(line)
			} else {
				err = enc.Encode(e)
			}
			if err != nil {
				failed(err)
				break
			}
		}
		if len(queue) == 0 && w.Buffered() > 0 {
			if err := w.Flush(); err != nil {
				failed(err)
			}
		}
	}
	a.closeErr = errors.Join(w.Flush(), f.Sync(), f.Close())
}

func (a *AuditLog) push(e Event) {
	a.ring[a.next] = e
	a.next++
	if a.next == len(a.ring) {
		a.next, a.full = 0, true
	}
}

// Record appends events to the ring and queues them for the file.
func (a *AuditLog) Record(evs ...Event) { a.record(evs, false) }

// recordApplied is Record for the FSM's events, whose Commands it decoded.
func (a *AuditLog) recordApplied(evs []Event) { a.record(evs, true) }

func (a *AuditLog) record(evs []Event, commandValid bool) {
	if len(evs) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Event
	if a.queue != nil {
		out = make([]Event, 0, len(evs))
	}
	for _, e := range evs {
		if e.Index != 0 && e.Index <= a.maxIndex {
			continue // already recorded before a restart
		}
		a.push(e)
		if a.queue != nil {
			out = append(out, e)
		}
	}
	for _, e := range evs {
		a.maxIndex = max(a.maxIndex, e.Index)
	}
	if len(out) > 0 {
		// Under mu, so that batches are queued in Record order; the writer
		// never takes mu.
		a.queue <- auditBatch{out, commandValid}
	}
}

// Events returns the ring's events of metalake (all metalakes when empty)
// whose index is above since (0: any) and, when before is not zero, below
// it, newest first, at most limit — except that the events of the last
// index returned are all returned (one Raft entry may hold many events), so
// that paging with before set to the lowest index returned skips nothing.
// Unapplied events (index 0) are included only when since is 0 and before
// is 0.
func (a *AuditLog) Events(metalake string, since, before uint64, limit int) []Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.next
	if a.full {
		n = len(a.ring)
	}
	var out []Event
	for i := 0; i < n; i++ {
		k := (a.next - 1 - i + len(a.ring)) % len(a.ring)
		e := a.ring[k]
		if metalake != "" && e.Metalake != metalake {
			continue
		}
		if e.Index == 0 && (since != 0 || before != 0) {
			continue
		}
		if e.Index != 0 && (e.Index <= since || (before != 0 && e.Index >= before)) {
			continue
		}
		if len(out) >= limit && (e.Index == 0 || e.Index != out[len(out)-1].Index) {
			break
		}
		out = append(out, e)
	}
	return out
}

// Close writes the queued events, then syncs and closes the file. Later
// Records keep events in memory only. Idempotent.
func (a *AuditLog) Close() error {
	a.mu.Lock()
	q := a.queue
	a.queue = nil
	a.mu.Unlock()
	if q == nil {
		return nil
	}
	close(q)
	<-a.done
	return a.closeErr
}

var _ io.Closer = (*AuditLog)(nil)
