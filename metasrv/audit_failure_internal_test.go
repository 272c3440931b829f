package metasrv

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"

	"lakegate/catalog"
)

// flakyFile is an audit file whose writes fail, after writing half of what
// they were given (a torn line), while failing is set; each write reports
// its outcome on wrote.
type flakyFile struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	failing bool
	wrote   chan error
}

func (f *flakyFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	n := len(p)
	if f.failing {
		n, err = len(p)/2, syscall.ENOSPC
	}
	f.buf.Write(p[:n])
	f.wrote <- err
	return n, err
}

func (f *flakyFile) Sync() error  { return nil }
func (f *flakyFile) Close() error { return nil }

func (f *flakyFile) setFailing(v bool) {
	f.mu.Lock()
	f.failing = v
	f.mu.Unlock()
}

// TestAuditFileRecoversAfterWriteErrors: a failed write to audit.jsonl (a
// full disk) must not stop the file for good — the buffered writer's error
// was sticky, so every later event was dropped until a restart, with only a
// log line to show it — and it is counted for the metasrv_audit_write_errors_total
// alert. Events written after the disk recovers are whole lines again.
func TestAuditFileRecoversAfterWriteErrors(t *testing.T) {
	f := &flakyFile{wrote: make(chan error, 64)}
	a := &AuditLog{ring: make([]Event, 16)}
	a.startWriter(f)
	ev := func(i uint64) Event {
		return Event{Metalake: "acme", Event: catalog.Event{Index: i, Actor: "alice", Operation: "CreateCatalog", Outcome: catalog.Success}}
	}

	f.setFailing(true)
	a.Record(ev(1))
	if err := <-f.wrote; err == nil {
		t.Fatal("the failing write succeeded")
	}
	f.setFailing(false)
	a.Record(ev(2))
	a.Record(ev(3))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := a.WriteErrors(); n == 0 {
		t.Fatal("the failed write was not counted")
	}
	var got []uint64
	for line := range strings.SplitSeq(f.buf.String(), "\n") {
		var e Event
		if json.Unmarshal([]byte(line), &e) == nil {
			got = append(got, e.Index)
		}
	}
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("whole events in the file after the failure: %v, want [2 3]; file:\n%q", got, f.buf.String())
	}
}
