package metasrv

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"lakegate/catalog"
)

// wantLine is what json.Encoder.Encode writes for e.
func wantLine(t testing.TB, e *Event) ([]byte, bool) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(e); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

func checkAppendEvent(t testing.TB, e Event, commandValid bool) (fast bool) {
	t.Helper()
	want, encodes := wantLine(t, &e)
	got, ok := appendEvent([]byte("prefix"), &e, commandValid)
	if !ok {
		return false
	}
	if !encodes {
		t.Fatalf("appendEvent accepted %+v, which encoding/json rejects", e)
	}
	if got := got[len("prefix"):]; !bytes.Equal(got, want) {
		t.Fatalf("appendEvent(%+v):\n got %s\nwant %s", e, got, want)
	}
	return true
}

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	cmd, err := catalog.EncodeCommand(catalog.AssociateTagsV2{Object: catalog.Catalog("c00"),
		TagsToAdd: []catalog.TagValue{{Name: "pii", Value: "v00"}}})
	if err != nil {
		t.Fatal(err)
	}
	base := Event{Metalake: "acme", Event: catalog.Event{Index: 42, Time: time.Date(2026, 11, 30, 3, 4, 5, 123456789, time.UTC),
		Actor: "alice@acme", Operation: "AssociateTags", Target: catalog.Catalog("c00"), Outcome: catalog.Success}}
	type tc struct {
		name   string
		mod    func(e *Event)
		valid  bool
		wantOK bool
	}
	for _, c := range []tc{
		{"plain", func(*Event) {}, true, true},
		{"zero", func(e *Event) { *e = Event{} }, true, true},
		{"command", func(e *Event) { e.Command = cmd }, true, true},
		{"command not known valid", func(e *Event) { e.Command = cmd }, false, false},
		{"command with spaces", func(e *Event) { e.Command = json.RawMessage(`{"v": 1}`) }, true, false},
		{"command with html", func(e *Event) { e.Command = json.RawMessage(`{"a":"<b>&"}`) }, true, false},
		{"command with U+2028", func(e *Event) { e.Command = json.RawMessage("{\"a\":\"\u2028\"}") }, true, false},
		{"command with other unicode", func(e *Event) { e.Command = json.RawMessage(`{"a":"é日本"}`) }, true, true},
		{"detail, delegator", func(e *Event) { e.Detail, e.Delegator = "some detail: x/y", "svc-query" }, true, true},
		{"rejected request", func(e *Event) {
			e.Index, e.Outcome, e.Detail = 0, catalog.Failure, "metasrv: bad request: request body: unexpected EOF"
			e.Request, e.Reason = "PUT /api/metalakes/{m}/permissions/roles/{role}/{type}/{fullName}/grant", "bad_request"
		}, true, true},
		{"rejected delegated request", func(e *Event) { e.Delegator, e.Reason = "svc-query", "forbidden" }, true, true},
		{"request with html", func(e *Event) { e.Request = "GET /a<b" }, true, false},
		{"detail with quotes", func(e *Event) { e.Outcome, e.Detail = catalog.Failure, `not found: "c00"` }, true, false},
		{"detail with html", func(e *Event) { e.Detail = "a<b" }, true, false},
		{"actor with unicode", func(e *Event) { e.Actor = "zoë@例え.jp" }, true, true},
		{"actor with U+2029", func(e *Event) { e.Actor = "a\u2029b" }, true, false},
		{"actor with invalid UTF-8", func(e *Event) { e.Actor = "a\xffb" }, true, false},
		{"actor with control", func(e *Event) { e.Actor = "a\tb" }, true, false},
		{"actor with DEL", func(e *Event) { e.Actor = "a\x7fb" }, true, true},
		{"untyped target", func(e *Event) { e.Target = catalog.Object{} }, true, true},
		{"unknown target type", func(e *Event) { e.Target.Type = 200 }, true, false},
		{"zero time", func(e *Event) { e.Time = time.Time{} }, true, true},
		{"zone", func(e *Event) { e.Time = e.Time.In(time.FixedZone("x", 3600)) }, true, true},
		{"year 10000", func(e *Event) { e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, true, false},
		{"lake", func(e *Event) { e.Lake = &LakeOp{Op: LakeCreate, Owner: "alice"} }, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := base
			c.mod(&e)
			if ok := checkAppendEvent(t, e, c.valid); ok != c.wantOK {
				t.Errorf("appendEvent ok = %v, want %v", ok, c.wantOK)
			}
		})
	}
}

func FuzzAppendEvent(f *testing.F) {
	f.Add("acme", "alice", "AssociateTags", "c00", "detail", "", []byte(`{"v":1,"type":2,"body":{}}`), uint8(2), int64(0))
	f.Add("a<b", "é", "\u2028", "x\xff", "", "svc", []byte(`{"a": 1}`), uint8(0), int64(-1))
	f.Fuzz(func(t *testing.T, lake, actor, op, target, detail, delegator string, cmd []byte, typ uint8, sec int64) {
		e := Event{Metalake: lake, Event: catalog.Event{Index: uint64(sec), Time: time.Unix(sec, sec%1e9).UTC(), Actor: actor,
			Operation: op, Target: catalog.Object{Type: catalog.ObjectType(typ), Name: target}, Outcome: catalog.Outcome(detail),
			Detail: detail}, Delegator: delegator, Request: op, Reason: delegator}
		if json.Valid(cmd) {
			e.Command = cmd
		}
		checkAppendEvent(t, e, true)
	})
}

func BenchmarkAuditEventEncode(b *testing.B) {
	cmd, _ := catalog.EncodeCommand(catalog.AssociateTagsV2{Object: catalog.Catalog("c00"),
		TagsToAdd: []catalog.TagValue{{Name: "pii", Value: "v00"}}})
	e := Event{Metalake: "acme", Event: catalog.Event{Index: 42, Time: time.Now().UTC(), Actor: "alice@acme",
		Operation: "AssociateTags", Target: catalog.Catalog("c00"), Outcome: catalog.Success}, Command: cmd}
	b.Run("json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(&e)
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = appendEvent(buf[:0], &e, true)
		}
	})
}
