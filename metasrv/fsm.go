package metasrv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lakegate/catalog"
	"lakegate/metasrv/raftnode"
)

// Proposal encodings. Version 1 is a JSON object ({"v":1,…}, the commands
// embedded as JSON values); version 2, written since, is a compact binary
// envelope around the already-encoded catalog commands (see
// EncodeProposal), so that applying an entry decodes each command once.
// DecodeProposal reads both, so that logs written by earlier versions
// replay unchanged.
const (
	proposalVersionJSON   = 1
	proposalVersionBinary = 2
)

// proposalMagic starts a version 2 proposal: "LGP" and the version byte. A
// version 1 proposal starts with '{'.
var proposalMagic = [4]byte{'L', 'G', 'P', proposalVersionBinary}

// Kinds of a version 2 proposal's body.
const (
	proposalCommands = 1
	proposalLake     = 2
)

// Bits of a version 2 proposal's flags byte: proposalAdmin is Admin;
// proposalDelegator says that the uvarint-length-prefixed Delegator follows
// the flags byte (entries written before it existed never set it);
// proposalIdentity is Identity.
const (
	proposalAdmin     = 1
	proposalDelegator = 2
	proposalIdentity  = 4
)

// Proposal is one replicated log entry of metasrv: a change to one metalake,
// stamped by the leader with the acting principal and the time before it is
// proposed. Exactly one of Commands and Lake is set.
type Proposal struct {
	// V is the encoding's version, set by DecodeProposal (EncodeProposal
	// ignores it).
	V        int    `json:"v"`
	Metalake string `json:"metalake"`
	Actor    string `json:"actor"`
	// Admin records that the leader authenticated Actor as an operator;
	// metalake operations (Lake) require it.
	Admin bool `json:"admin,omitempty"`
	// Delegator is the query_service that acted for Actor (delegation),
	// empty otherwise; it is recorded on the proposal's audit events.
	Delegator string `json:"delegator,omitempty"`
	// Identity records that the leader verified an identity provider's
	// token of the user Actor and built the proposal's commands from it (a
	// JWT user's membership sync): they are applied with
	// catalog.Meta.IdentityToken, under which only
	// catalog.SyncIdentityUser of Actor itself runs. Only the leader's
	// membership sync sets it; the version 1 encoding cannot carry it.
	Identity bool      `json:"-"`
	Time     time.Time `json:"time"`
	// Commands are catalog commands (catalog.EncodeCommand), applied in
	// order, all or nothing.
	Commands []json.RawMessage `json:"commands,omitempty"`
	// Lake is a metalake operation.
	Lake *LakeOp `json:"lake,omitempty"`
}

// Metalake operations (LakeOp.Op).
const (
	LakeCreate = "create"
	LakeAlter  = "alter"
	LakeDrop   = "drop"
)

// LakeOp creates, alters or drops a metalake.
type LakeOp struct {
	Op string `json:"op"`
	// Owner is the initial owner (a user of the new metalake) for create.
	Owner      string            `json:"owner,omitempty"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// Updates for alter: updateComment, setProperty, removeProperty.
	Updates []Update `json:"updates,omitempty"`
	// Force drops a metalake that still has catalogs.
	Force bool `json:"force,omitempty"`
}

// Update is one change of a PUT {"updates":[…]} body. Which fields apply
// depends on Type (Gravitino's "@type").
type Update struct {
	Type         string   `json:"@type"`
	NewName      string   `json:"newName,omitempty"`
	NewComment   string   `json:"newComment,omitempty"`
	Property     string   `json:"property,omitempty"`
	Value        string   `json:"value,omitempty"`
	FieldName    []string `json:"fieldName,omitempty"`
	OldFieldName []string `json:"oldFieldName,omitempty"`
	NewFieldName string   `json:"newFieldName,omitempty"`
	DataType     string   `json:"type,omitempty"`
	Comment      string   `json:"comment,omitempty"`
	Nullable     *bool    `json:"nullable,omitempty"`
	IfExists     bool     `json:"ifExists,omitempty"`
}

// EncodeProposal serializes p (deterministically) in the version 2
// encoding: proposalMagic; the uvarint-length-prefixed metalake, actor and
// time (time.Time.MarshalBinary of p.Time in UTC); a flags byte (bit 0:
// Admin, bit 1: a Delegator follows, bit 2: Identity); the uvarint-length-prefixed
// Delegator when set; a kind byte; then for proposalCommands a uvarint count and the
// uvarint-length-prefixed commands as given (catalog.EncodeCommand bytes),
// or for proposalLake the uvarint-length-prefixed JSON of p.Lake. Exactly
// one of Commands and Lake must be set.
func EncodeProposal(p Proposal) ([]byte, error) {
	if (len(p.Commands) == 0) == (p.Lake == nil) {
		return nil, fmt.Errorf("%w: exactly one of commands and lake must be set", ErrInvalidProposal)
	}
	tb, err := p.Time.UTC().MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("%w: time: %v", ErrInvalidProposal, err)
	}
	n := len(proposalMagic) + len(p.Metalake) + len(p.Actor) + len(p.Delegator) + len(tb) + 6*binary.MaxVarintLen64 + 2
	for _, c := range p.Commands {
		n += binary.MaxVarintLen64 + len(c)
	}
	b := make([]byte, 0, n)
	b = append(b, proposalMagic[:]...)
	b = appendBytes(b, []byte(p.Metalake))
	b = appendBytes(b, []byte(p.Actor))
	b = appendBytes(b, tb)
	var flags byte
	if p.Admin {
		flags |= proposalAdmin
	}
	if p.Delegator != "" {
		flags |= proposalDelegator
	}
	if p.Identity {
		flags |= proposalIdentity
	}
	b = append(b, flags)
	if p.Delegator != "" {
		b = appendBytes(b, []byte(p.Delegator))
	}
	if p.Lake != nil {
		lb, err := json.Marshal(p.Lake)
		if err != nil {
			return nil, fmt.Errorf("%w: lake: %v", ErrInvalidProposal, err)
		}
		b = append(b, proposalLake)
		return appendBytes(b, lb), nil
	}
	b = append(b, proposalCommands)
	b = binary.AppendUvarint(b, uint64(len(p.Commands)))
	for _, c := range p.Commands {
		b = appendBytes(b, c)
	}
	return b, nil
}

func appendBytes(b, part []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(part))), part...)
}

// DecodeProposal parses bytes written by EncodeProposal (version 2) or by
// earlier versions (version 1, JSON), strictly: unknown versions, kinds,
// flags and fields, truncation and trailing data are errors wrapping
// ErrInvalidProposal. The version 2 Commands alias b; each is decoded
// strictly by catalog.DecodeCommand when applied.
func DecodeProposal(b []byte) (Proposal, error) {
	var p Proposal
	if len(b) > 0 && b[0] == '{' {
		return decodeProposalJSON(b)
	}
	if len(b) < len(proposalMagic) || [3]byte(b[:3]) != [3]byte(proposalMagic[:3]) {
		return p, fmt.Errorf("%w: proposal: unknown encoding", ErrInvalidProposal)
	}
	if b[3] != proposalVersionBinary {
		return p, fmt.Errorf("%w: unsupported proposal version %d", ErrInvalidProposal, b[3])
	}
	d := proposalDecoder{b: b[len(proposalMagic):]}
	p.V = proposalVersionBinary
	p.Metalake = string(d.bytes("metalake"))
	p.Actor = string(d.bytes("actor"))
	if tb := d.bytes("time"); d.err == nil {
		if err := p.Time.UnmarshalBinary(tb); err != nil {
			d.fail("time: %v", err)
		}
		p.Time = p.Time.UTC()
		// Version 1's RFC 3339 cannot say more; the catalog refuses it too.
		if y := p.Time.Year(); y < 0 || y > 9999 {
			d.fail("time in year %d, outside 0-9999", y)
		}
	}
	flags := d.byte("flags")
	if flags&^(proposalAdmin|proposalDelegator|proposalIdentity) != 0 && d.err == nil {
		d.fail("unknown flags %#x", flags)
	}
	p.Admin = flags&proposalAdmin != 0
	p.Identity = flags&proposalIdentity != 0
	if flags&proposalDelegator != 0 {
		if p.Delegator = string(d.bytes("delegator")); d.err == nil && p.Delegator == "" {
			d.fail("empty delegator")
		}
	}
	switch kind := d.byte("kind"); {
	case d.err != nil:
	case kind == proposalCommands:
		n := d.uvarint("command count")
		if d.err == nil && (n == 0 || n > uint64(len(d.b))) {
			d.fail("bad command count %d", n)
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			if c := d.bytes("command"); d.err == nil {
				p.Commands = append(p.Commands, json.RawMessage(c))
			}
		}
	case kind == proposalLake:
		if lb := d.bytes("lake"); d.err == nil {
			if err := strictJSON(lb, &p.Lake); err != nil {
				d.fail("lake: %v", err)
			} else if p.Lake == nil {
				d.fail("lake: null")
			}
		}
	default:
		d.fail("unknown kind %d", kind)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes of trailing data", len(d.b))
	}
	if d.err != nil {
		return Proposal{}, fmt.Errorf("%w: proposal: %v", ErrInvalidProposal, d.err)
	}
	return p, nil
}

// decodeProposalJSON parses a version 1 proposal.
func decodeProposalJSON(b []byte) (Proposal, error) {
	var p Proposal
	if err := strictJSON(b, &p); err != nil {
		return p, fmt.Errorf("%w: proposal: %v", ErrInvalidProposal, err)
	}
	if p.V != proposalVersionJSON {
		return p, fmt.Errorf("%w: unsupported proposal version %d", ErrInvalidProposal, p.V)
	}
	if (len(p.Commands) == 0) == (p.Lake == nil) {
		return p, fmt.Errorf("%w: exactly one of commands and lake must be set", ErrInvalidProposal)
	}
	return p, nil
}

// proposalDecoder reads a version 2 proposal; the first error sticks.
type proposalDecoder struct {
	b   []byte
	err error
}

func (d *proposalDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *proposalDecoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("%s: bad length", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *proposalDecoder) bytes(what string) []byte {
	l := d.uvarint(what)
	if d.err != nil {
		return nil
	}
	if l > uint64(len(d.b)) {
		d.fail("%s: truncated", what)
		return nil
	}
	v := d.b[:l:l]
	d.b = d.b[l:]
	return v
}

func (d *proposalDecoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("%s: truncated", what)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Metalake is the replicated state of one metalake: the catalog snapshot plus
// the metalake's own comment and properties. Immutable once published.
type Metalake struct {
	Snapshot   *catalog.Snapshot
	Comment    string
	Properties map[string]string // never modified
	Audit      catalog.Audit
}

// Name returns the metalake's name.
func (l *Metalake) Name() string { return l.Snapshot.Metalake() }

// Generation returns the metalake's generation (catalog.Snapshot.Generation).
func (l *Metalake) Generation() uint64 { return l.Snapshot.Generation() }

// state is the whole replicated state; never modified once published.
type state struct {
	lakes map[string]*Metalake
	// ended holds the last generation of each dropped metalake whose name
	// has not been used again: one created under that name starts past it.
	ended map[string]uint64
}

// Result is the value an applied Proposal returns to the proposer (via
// raftnode.Node.Propose on the leader).
type Result struct {
	Metalake string
	// Lake is the metalake after the change; nil after a drop.
	Lake   *Metalake
	Events []Event
	// Dropped reports whether a drop removed a metalake.
	Dropped bool
}

// Generation returns the metalake's generation after the change (0 after a
// drop).
func (r *Result) Generation() uint64 {
	if r.Lake == nil {
		return 0
	}
	return r.Lake.Generation()
}

// FSM is metasrv's raftnode.StateMachine: the set of metalakes (tenant →
// *Metalake) behind one atomic pointer, so that a request loads the state once.
// Apply is deterministic; the only effect besides the new state is handing
// each command's events to the audit sink. Safe for concurrent use: Apply,
// Snapshot and Restore are called by raftnode from one goroutine, readers
// call Lake and WaitGeneration from any.
type FSM struct {
	st      atomic.Pointer[state]
	audit   *AuditLog // may be nil
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change

	// applyDuration, when set before the FSM is handed to raftnode,
	// observes the seconds each Apply takes.
	applyDuration prometheus.Observer
}

var _ raftnode.StateMachine = (*FSM)(nil)

// NewFSM returns an empty FSM that records events to audit (nil: none).
func NewFSM(audit *AuditLog) *FSM {
	f := &FSM{audit: audit, changed: make(chan struct{})}
	f.st.Store(&state{lakes: map[string]*Metalake{}})
	return f
}

// Lake returns the current state of metalake name.
func (f *FSM) Lake(name string) (*Metalake, bool) {
	l, ok := f.st.Load().lakes[name]
	return l, ok
}

// Lakes returns the names of all metalakes, sorted.
func (f *FSM) Lakes() []string {
	return slices.Sorted(maps.Keys(f.st.Load().lakes))
}

func (f *FSM) wait() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *FSM) broadcast() {
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// WaitGeneration blocks until metalake name exists at generation ≥ gen, or
// ctx ends.
func (f *FSM) WaitGeneration(ctx context.Context, name string, gen uint64) error {
	for {
		ch := f.wait()
		if l, ok := f.Lake(name); ok && l.Generation() >= gen {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("metasrv: waiting for generation %d of %q: %w", gen, name, ctx.Err())
		}
	}
}

// Apply implements raftnode.StateMachine. For a plain proposal it returns
// a *Result, or an error (a *catalog.Error or one wrapping a metasrv
// sentinel) for a rejected proposal. For a batch entry (see batch.go) it
// returns a *BatchResult holding one of those per proposal, applied in
// order at index, the state published once. Either way every proposal's
// events go to the audit sink.
func (f *FSM) Apply(index uint64, cmd []byte) any {
	if f.applyDuration != nil {
		defer func(start time.Time) { f.applyDuration.Observe(time.Since(start).Seconds()) }(time.Now())
	}
	st := f.st.Load()
	if isBatch(cmd) {
		return f.applyBatch(st, index, cmd)
	}
	next := &state{lakes: maps.Clone(st.lakes), ended: st.ended}
	res, err := applyProposal(st, next, index, cmd)
	f.record(res.Events)
	if err != nil {
		return err
	}
	f.st.Store(next)
	f.broadcast()
	return res
}

// applyBatch applies a batch entry's proposals in order against the state
// each leaves, publishing the state once.
func (f *FSM) applyBatch(st *state, index uint64, cmd []byte) any {
	props, err := decodeBatch(cmd)
	if err != nil {
		f.record([]Event{{Event: catalog.Event{Index: index, Operation: "Apply", Outcome: catalog.Failure, Detail: err.Error()}}})
		return err
	}
	next := &state{lakes: maps.Clone(st.lakes), ended: st.ended}
	out := &BatchResult{Results: make([]any, len(props))}
	evs := make([]Event, 0, 2*len(props)) // a command's event, and often one EffectiveTagsChanged
	changed := false
	for i, b := range props {
		res, err := applyProposal(next, next, index, b)
		evs = append(evs, res.Events...)
		if err != nil {
			out.Results[i] = err
			continue
		}
		out.Results[i] = res
		changed = true
	}
	// One Record: the events share the entry's index, and the audit log
	// skips indexes it has already recorded.
	f.record(evs)
	if changed {
		f.st.Store(next)
		f.broadcast()
	}
	return out
}

// applyProposal decodes and applies one proposal against st and, when it
// is accepted, records its effect in next (which may be st itself while
// unpublished). It always returns a Result carrying the events, with the
// proposal's delegator stamped on them.
func applyProposal(st, next *state, index uint64, cmd []byte) (*Result, error) {
	p, err := DecodeProposal(cmd)
	if err != nil {
		return &Result{Events: []Event{{Event: catalog.Event{Index: index, Operation: "Apply", Outcome: catalog.Failure, Detail: err.Error()}}}}, err
	}
	meta := catalog.Meta{Actor: p.Actor, Time: p.Time, Index: index, IdentityToken: p.Identity}
	var res *Result
	if p.Lake != nil {
		res, err = applyLake(st, p, meta)
	} else {
		res, err = applyCommands(st, p, meta)
	}
	if p.Delegator != "" {
		for i := range res.Events {
			res.Events[i].Delegator = p.Delegator
		}
	}
	if err != nil {
		return res, err
	}
	if res.Lake == nil {
		if old, ok := next.lakes[p.Metalake]; ok {
			next.ended = maps.Clone(next.ended) // shared with the published state
			if next.ended == nil {
				next.ended = map[string]uint64{}
			}
			next.ended[p.Metalake] = old.Generation()
		}
		delete(next.lakes, p.Metalake)
	} else {
		if _, ok := next.ended[p.Metalake]; ok { // created again: its snapshot carries on
			next.ended = maps.Clone(next.ended)
			delete(next.ended, p.Metalake)
		}
		next.lakes[p.Metalake] = res.Lake
	}
	return res, nil
}

func (f *FSM) record(evs []Event) {
	if f.audit != nil {
		f.audit.recordApplied(evs)
	}
}

func lakeEvent(p Proposal, m catalog.Meta, op string) Event {
	return Event{Metalake: p.Metalake, Event: catalog.Event{Index: m.Index, Time: m.Time.UTC().Round(0), Actor: m.Actor,
		Operation: op, Target: catalog.Object{Type: catalog.ObjectMetalake, Name: p.Metalake}, Outcome: catalog.Success}}
}

func failed(ev Event, err error) (*Result, error) {
	ev.Outcome, ev.Detail = catalog.Failure, err.Error()
	return &Result{Metalake: ev.Metalake, Events: []Event{ev}}, err
}

func applyLake(st *state, p Proposal, m catalog.Meta) (*Result, error) {
	op := p.Lake.Op
	ev := lakeEvent(p, m, map[string]string{LakeCreate: "CreateMetalake", LakeAlter: "AlterMetalake", LakeDrop: "DropMetalake"}[op])
	if ev.Operation == "" {
		ev.Operation = "Metalake"
		return failed(ev, fmt.Errorf("%w: unknown metalake operation %q", ErrInvalidProposal, op))
	}
	if !p.Admin {
		return failed(ev, fmt.Errorf("%w: metalake operations need an operator", ErrForbidden))
	}
	cur, exists := st.lakes[p.Metalake]
	switch op {
	case LakeCreate:
		if err := checkMetalakeName(p.Metalake); err != nil {
			return failed(ev, err)
		}
		if exists {
			return failed(ev, fmt.Errorf("%w: metalake %q", catalog.ErrAlreadyExists, p.Metalake))
		}
		if err := checkProperties(p.Lake.Properties); err != nil {
			return failed(ev, err)
		}
		// One created again continues past the dropped one's last
		// generation.
		var start uint64
		if g, ok := st.ended[p.Metalake]; ok {
			start = g + 1
		}
		s, err := catalog.NewAt(p.Metalake, p.Lake.Owner, m.Time, start)
		if err != nil {
			return failed(ev, err)
		}
		l := &Metalake{Snapshot: s, Comment: p.Lake.Comment, Properties: maps.Clone(p.Lake.Properties),
			Audit: catalog.Audit{Creator: m.Actor, CreateTime: m.Time.UTC().Round(0)}}
		if len(l.Properties) == 0 {
			l.Properties = nil
		}
		ev.Lake = p.Lake
		return &Result{Metalake: p.Metalake, Lake: l, Events: []Event{ev}}, nil
	case LakeAlter:
		if !exists {
			return failed(ev, fmt.Errorf("%w: metalake %q", catalog.ErrNotFound, p.Metalake))
		}
		n := *cur
		props := maps.Clone(cur.Properties)
		if props == nil {
			props = map[string]string{}
		}
		for _, u := range p.Lake.Updates {
			switch u.Type {
			case "updateComment":
				n.Comment = u.NewComment
			case "setProperty":
				if u.Property == "" {
					return failed(ev, fmt.Errorf("%w: empty property name", catalog.ErrInvalidArgument))
				}
				props[u.Property] = u.Value
			case "removeProperty":
				delete(props, u.Property)
			case "rename":
				return failed(ev, fmt.Errorf("%w: a metalake cannot be renamed (its name is the tenant)", ErrUnsupported))
			default:
				return failed(ev, fmt.Errorf("%w: unknown metalake update %q", catalog.ErrInvalidArgument, u.Type))
			}
		}
		if len(props) == 0 {
			props = nil
		}
		if err := checkProperties(props); err != nil {
			return failed(ev, err)
		}
		n.Properties = props
		n.Audit.LastModifier, n.Audit.LastModifiedTime = m.Actor, m.Time.UTC().Round(0)
		ev.Lake = p.Lake
		return &Result{Metalake: p.Metalake, Lake: &n, Events: []Event{ev}}, nil
	default: // LakeDrop
		if !exists {
			return failed(ev, fmt.Errorf("%w: metalake %q", catalog.ErrNotFound, p.Metalake))
		}
		if cs, _ := cur.Snapshot.Children(catalog.Object{Type: catalog.ObjectMetalake, Name: p.Metalake}); len(cs) > 0 && !p.Lake.Force {
			return failed(ev, fmt.Errorf("%w: metalake %q has catalogs (drop with force=true)", catalog.ErrNonEmpty, p.Metalake))
		}
		ev.Lake = p.Lake
		return &Result{Metalake: p.Metalake, Events: []Event{ev}, Dropped: true}, nil
	}
}

func applyCommands(st *state, p Proposal, m catalog.Meta) (*Result, error) {
	cur, ok := st.lakes[p.Metalake]
	if !ok {
		ev := lakeEvent(p, m, "Apply")
		return failed(ev, fmt.Errorf("%w: metalake %q", catalog.ErrNotFound, p.Metalake))
	}
	s := cur.Snapshot
	var evs []Event
	for _, raw := range p.Commands {
		cmd, err := catalog.DecodeCommand(raw)
		if err != nil {
			ev := lakeEvent(p, m, "Apply")
			return failed(ev, err)
		}
		n, cevs, err := catalog.Apply(s, cmd, m)
		if err != nil {
			// All or nothing: report only the failure.
			out := make([]Event, 0, len(cevs))
			for _, e := range cevs {
				out = append(out, Event{Metalake: p.Metalake, Event: e})
			}
			return &Result{Metalake: p.Metalake, Events: out}, err
		}
		for i, e := range cevs {
			ev := Event{Metalake: p.Metalake, Event: e}
			if i == 0 {
				// The command's own event (catalog.Apply returns it first):
				// carry the command for replay. Cloned: raw aliases the
				// log entry.
				ev.Command = bytes.Clone(raw)
			}
			evs = append(evs, ev)
		}
		s = n
	}
	l := *cur
	l.Snapshot = s
	return &Result{Metalake: p.Metalake, Lake: &l, Events: evs}, nil
}

// ---- snapshots ----

// fsmSnapshotMagic starts the FSM's snapshot stream; endedMagic starts its
// optional last section, the generations of dropped metalakes.
var (
	fsmSnapshotMagic = [5]byte{'L', 'G', 'M', 'S', 1}
	endedMagic       = [5]byte{'L', 'G', 'M', 'E', 1}
)

// maxLakeRecord bounds one metalake record read from a snapshot.
const maxLakeRecord = 1 << 30

type lakeMeta struct {
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	Audit      catalog.Audit     `json:"audit"`
}

// Snapshot implements raftnode.StateMachine: O(1).
func (f *FSM) Snapshot() (raftnode.Snapshot, error) { return fsmSnapshot{f.st.Load()}, nil }

type fsmSnapshot struct{ st *state }

// Persist writes the metalakes sorted by name: magic, uvarint count, then
// per metalake uvarint-length-prefixed name, metadata JSON and
// catalog.Snapshot.MarshalBinary bytes; then, when a dropped metalake's
// name is unused, endedMagic, uvarint count and per name (sorted) its
// uvarint-length-prefixed bytes and uvarint last generation. The bytes
// depend only on the state.
func (s fsmSnapshot) Persist(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var hdr []byte
	hdr = append(hdr, fsmSnapshotMagic[:]...)
	hdr = binary.AppendUvarint(hdr, uint64(len(s.st.lakes)))
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(s.st.lakes)) {
		l := s.st.lakes[name]
		meta, err := json.Marshal(lakeMeta{Comment: l.Comment, Properties: l.Properties, Audit: l.Audit})
		if err != nil {
			return fmt.Errorf("metasrv: snapshot %q: %w", name, err)
		}
		body, err := l.Snapshot.MarshalBinary()
		if err != nil {
			return fmt.Errorf("metasrv: snapshot %q: %w", name, err)
		}
		for _, part := range [][]byte{[]byte(name), meta, body} {
			if _, err := bw.Write(binary.AppendUvarint(nil, uint64(len(part)))); err != nil {
				return err
			}
			if _, err := bw.Write(part); err != nil {
				return err
			}
		}
	}
	if len(s.st.ended) > 0 {
		b := append([]byte(nil), endedMagic[:]...)
		b = binary.AppendUvarint(b, uint64(len(s.st.ended)))
		for _, name := range slices.Sorted(maps.Keys(s.st.ended)) {
			b = binary.AppendUvarint(b, uint64(len(name)))
			b = append(b, name...)
			b = binary.AppendUvarint(b, s.st.ended[name])
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func (fsmSnapshot) Release() {}

// Restore implements raftnode.StateMachine.
func (f *FSM) Restore(r io.Reader) error {
	br := bufio.NewReader(r)
	var magic [5]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || magic != fsmSnapshotMagic {
		return fmt.Errorf("metasrv: restore: bad header (%v)", err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("metasrv: restore: count: %w", err)
	}
	readPart := func() ([]byte, error) {
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, err
		}
		if l > maxLakeRecord {
			return nil, fmt.Errorf("record of %d bytes", l)
		}
		b := make([]byte, l)
		_, err = io.ReadFull(br, b)
		return b, err
	}
	lakes := map[string]*Metalake{}
	for i := uint64(0); i < n; i++ {
		var parts [3][]byte
		for k := range parts {
			if parts[k], err = readPart(); err != nil {
				return fmt.Errorf("metasrv: restore: metalake %d: %w", i, err)
			}
		}
		var meta lakeMeta
		if err := strictJSON(parts[1], &meta); err != nil {
			return fmt.Errorf("metasrv: restore: metalake %q: %w", parts[0], err)
		}
		s, err := catalog.UnmarshalSnapshot(parts[2])
		if err != nil {
			return fmt.Errorf("metasrv: restore: metalake %q: %w", parts[0], err)
		}
		if s.Metalake() != string(parts[0]) {
			return fmt.Errorf("metasrv: restore: metalake %q holds %q", parts[0], s.Metalake())
		}
		lakes[string(parts[0])] = &Metalake{Snapshot: s, Comment: meta.Comment, Properties: meta.Properties, Audit: meta.Audit}
	}
	ended, err := restoreEnded(br, lakes)
	if err != nil {
		return err
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return errors.New("metasrv: restore: trailing data")
	}
	f.st.Store(&state{lakes: lakes, ended: ended})
	f.broadcast()
	return nil
}

// strictJSON decodes exactly one JSON value into v, rejecting unknown fields
// and trailing data.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// restoreEnded reads the optional section of dropped metalakes' last
// generations (nil when the stream ends before it).
func restoreEnded(br *bufio.Reader, lakes map[string]*Metalake) (map[string]uint64, error) {
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return nil, nil
	}
	var magic [5]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || magic != endedMagic {
		return nil, errors.New("metasrv: restore: trailing data")
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("metasrv: restore: dropped metalakes: %w", err)
	}
	ended := map[string]uint64{}
	for i := uint64(0); i < n; i++ {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > 256 {
			return nil, fmt.Errorf("metasrv: restore: dropped metalake %d: bad name (%v)", i, err)
		}
		name := make([]byte, l)
		if _, err := io.ReadFull(br, name); err != nil {
			return nil, fmt.Errorf("metasrv: restore: dropped metalake %d: %w", i, err)
		}
		g, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("metasrv: restore: dropped metalake %q: %w", name, err)
		}
		if _, live := lakes[string(name)]; live {
			return nil, fmt.Errorf("metasrv: restore: metalake %q both live and dropped", name)
		}
		ended[string(name)] = g
	}
	return ended, nil
}
