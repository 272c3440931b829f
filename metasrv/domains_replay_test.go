package metasrv_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lakegate/catalog"
	"lakegate/metasrv"
)

// auditEvent is an event of GET /events.
type auditEvent struct {
	Metalake  string `json:"metalake"`
	Index     uint64 `json:"index"`
	Actor     string `json:"actor"`
	Operation string `json:"operation"`
	Target    struct {
		Type     string `json:"type"`
		FullName string `json:"fullName"`
	} `json:"target"`
	Outcome string          `json:"outcome"`
	Detail  string          `json:"detail"`
	Command json.RawMessage `json:"command"`
	Lake    json.RawMessage `json:"lake"`
}

func (e auditEvent) String() string {
	return e.Operation + "/" + e.Outcome + " " + strings.ToLower(e.Target.Type) + ":" + e.Target.FullName + " " + e.Detail
}

// allEvents pages GET /events (newest first, before= the lowest index
// returned) and returns the applied events (index ≠ 0) in log order.
func allEvents(t *testing.T, n *node) []auditEvent {
	t.Helper()
	var out []auditEvent
	before := uint64(0)
	for {
		path := "/events?limit=50"
		if before != 0 {
			path += "&before=" + strconv.FormatUint(before, 10)
		}
		var page struct{ Events []auditEvent }
		if err := json.Unmarshal(must(t, n, as(tokAlice, "GET", path, nil)).raw, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Events) == 0 {
			break
		}
		for _, e := range page.Events {
			if e.Index != 0 {
				out = append(out, e)
				before = e.Index
			}
		}
		if before == 0 {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// membersOf formats catalog.DomainMembers as fmtMembers formats the REST
// listing.
func membersOf(t *testing.T, s *catalog.Snapshot, principal, domain string) []string {
	t.Helper()
	ms, err := s.DomainMembers(principal, domain, catalog.MemberQuery{})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range ms {
		var rels []string
		for _, r := range m.Relations {
			s := strings.ToLower(string(r.Type))
			if r.Source.Type != 0 {
				s += " " + strings.ToLower(r.Source.Type.String()) + ":" + r.Source.Name
			}
			rels = append(rels, s)
		}
		out = append(out, m.Object.Name+": "+strings.Join(rels, ", "))
	}
	return out
}

// TestDomainAuditReplay is the domain audit's acceptance: on one node a
// scripted history (domains Finance ⊃ Trading and Markets, tables tagged
// directly, a schema tagged so its tables are INHERITED members, a table
// created under the tagged schema afterwards, tables moved between schemas
// over REST, Trading moved under Markets) is listed over REST at three
// generations; then membership at those generations is reconstructed from
// the node's audit log alone and must match the listings, the moved tables
// and the table created later included.
//
// How the reconstruction works. The success events of every applied entry
// carry what was applied (metasrv.Event): the metalake operation (Lake) on
// CreateMetalake, and the catalog command (Command, catalog.EncodeCommand's
// form) on each command's own event, with the leader-stamped index, time
// and actor that make up its catalog.Meta. Reading the stopped node's
// audit.jsonl and applying those, in file order, with the pure catalog
// package — catalog.New for the metalake, catalog.Apply for each command,
// no FSM and no Raft log — goes through every generation the node went
// through: at each chosen generation the replayed catalog snapshot is
// byte-identical to the one the node held when it answered the listing
// (saved then with MarshalBinary), and the members computed from it are
// what the listing returned. Rejected writes (failure events) carry no
// command and are skipped; GET /events serves the same commands as the
// file.
//
// Earlier finding, resolved: the audit log used to say which operation hit
// which target but not the command's body (AssociateTags events named no
// tag, CreateDomain no bound backing tag), so DOMAINS.md's "from the event
// log alone an auditor can reconstruct which assets were in a domain at any
// generation" held only when joined with the Raft log, and only as far back
// as the log was not compacted. And no REST route moved a table between
// schemas; the rename update's newSchemaName does now.
func TestDomainAuditReplay(t *testing.T) {
	configHook = func(c *metasrv.Config) {
		// Raft's default timeouts: the harness's 200 ms flap on a loaded
		// machine (see noCompaction).
		c.Raft.HeartbeatTimeout, c.Raft.ElectionTimeout, c.Raft.LeaderLeaseTimeout = time.Second, time.Second, 500*time.Millisecond
	}
	t.Cleanup(func() { configHook = nil })
	n := domainNode(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	tom := func(method, path string, body any) call { return as(tokTom, method, path, body) }
	col := []any{map[string]any{"name": "id", "type": "int"}}
	must(t, n, alice("POST", "/catalogs", map[string]any{"name": "cat"}))
	for _, s := range []string{"db", "raw"} {
		must(t, n, alice("POST", "/catalogs/cat/schemas", map[string]any{"name": s}))
		must(t, n, alice("PUT", "/owners/schema/cat."+s, `{"name":"tom@acme","type":"USER"}`))
	}
	for _, tb := range []string{"db.trades", "db.ledger", "raw.events", "raw.staging"} {
		parts := strings.Split(tb, ".")
		must(t, n, alice("POST", "/catalogs/cat/schemas/"+parts[0]+"/tables", map[string]any{"name": parts[1], "columns": col}))
		must(t, n, alice("PUT", "/owners/table/cat."+tb, `{"name":"tom@acme","type":"USER"}`))
	}
	must(t, n, steward("POST", "/domains", `{"name":"Finance","backingTag":{"name":"finance","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"Trading","backingTag":{"name":"trading","create":true},"parent":"Finance"}`))
	must(t, n, steward("POST", "/domains", `{"name":"Markets","backingTag":{"name":"markets","create":true}}`))
	for _, d := range []string{"Finance", "Trading", "Markets"} {
		must(t, n, steward("PATCH", "/domains/"+d, `{"status":"published"}`))
	}
	must(t, n, alice("POST", "/roles", `{"name":"tagger","securableObjects":[
		{"fullName":"cat","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"finance","type":"tag","privileges":[{"name":"APPLY_TAG","condition":"ALLOW"}]},
		{"fullName":"trading","type":"tag","privileges":[{"name":"APPLY_TAG","condition":"ALLOW"}]},
		{"fullName":"markets","type":"tag","privileges":[{"name":"APPLY_TAG","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/tom@acme/grant", `{"roleNames":["tagger"]}`))

	// move moves table cat.<from>.<table> to schema cat.<to> over REST, as
	// tom (who owns the table and both schemas).
	move := func(from, table, to string) {
		t.Helper()
		must(t, n, tom("PUT", "/catalogs/cat/schemas/"+from+"/tables/"+table,
			`{"updates":[{"@type":"rename","newName":"`+table+`","newSchemaName":"`+to+`"}]}`))
	}
	// point records, at the current generation, what member listing
	// returns for each domain, and the node's catalog snapshot bytes.
	type point struct {
		gen     uint64
		members map[string][]string
		snap    []byte
	}
	domains := []string{"Finance", "Trading", "Markets"}
	record := func() point {
		t.Helper()
		p := point{members: map[string][]string{}}
		for _, d := range domains {
			r := must(t, n, alice("GET", "/domains/"+d+"/objects", nil))
			if p.gen != 0 && r.gen() != p.gen {
				t.Fatalf("generation moved while recording: %d, %d", p.gen, r.gen())
			}
			p.gen, p.members[d] = r.gen(), fmtMembers(t, r)
		}
		l, _ := n.FSM().Lake("acme")
		if l.Generation() != p.gen {
			t.Fatalf("FSM at generation %d, listing at %d", l.Generation(), p.gen)
		}
		var err error
		if p.snap, err = l.Snapshot.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(p point, d string, want ...string) {
		t.Helper()
		wantList(t, d+" at generation "+strconv.FormatUint(p.gen, 10), p.members[d], append([]string{}, want...))
	}

	// G1: direct tags only.
	must(t, n, tom("POST", "/objects/table/cat.db.trades/tags", `{"tagsToAdd":["trading"]}`))
	must(t, n, tom("POST", "/objects/table/cat.raw.events/tags", `{"tagsToAdd":["finance"]}`))
	g1 := record()
	check(g1, "Finance", "cat.db.trades: via_subdomain domain:Trading", "cat.raw.events: direct")
	check(g1, "Trading", "cat.db.trades: direct")
	check(g1, "Markets")

	// G2: schema cat.db tagged finance; cat.db.later created under it;
	// cat.raw.staging moved into it.
	must(t, n, tom("POST", "/objects/schema/cat.db/tags", `{"tagsToAdd":["finance"]}`))
	must(t, n, alice("POST", "/catalogs/cat/schemas/db/tables", map[string]any{"name": "later", "columns": col}))
	move("raw", "staging", "db")
	g2 := record()
	check(g2, "Finance",
		"cat.db.later: inherited schema:cat.db",
		"cat.db.ledger: inherited schema:cat.db",
		"cat.db.staging: inherited schema:cat.db",
		"cat.db.trades: inherited schema:cat.db, via_subdomain domain:Trading",
		"cat.raw.events: direct")
	check(g2, "Trading", "cat.db.trades: direct")
	check(g2, "Markets")

	// G3: Trading moved under Markets; cat.db.ledger moved out of the
	// tagged schema; cat.raw.events tagged markets too; a rejected write.
	must(t, n, steward("PUT", "/domains/Trading/parent", `{"parent":"Markets"}`))
	move("db", "ledger", "raw")
	must(t, n, tom("POST", "/objects/table/cat.raw.events/tags", `{"tagsToAdd":["markets"]}`))
	expect(t, n, steward("PATCH", "/domains/Markets", `{"status":"draft"}`), 400, 1001) // C6: Trading is published
	g3 := record()
	check(g3, "Finance",
		"cat.db.later: inherited schema:cat.db",
		"cat.db.staging: inherited schema:cat.db",
		"cat.db.trades: inherited schema:cat.db",
		"cat.raw.events: direct")
	check(g3, "Trading", "cat.db.trades: direct")
	check(g3, "Markets", "cat.db.trades: via_subdomain domain:Trading", "cat.raw.events: direct")
	// A write after the last point, not to be replayed into it.
	must(t, n, tom("POST", "/objects/table/cat.db.trades/tags", `{"tagsToRemove":["trading"]}`))

	// GET /events: the lifecycle events that change membership without a
	// tag operation are there, at increasing indexes.
	evs := allEvents(t, n)
	find := func(s string) uint64 {
		t.Helper()
		for _, e := range evs {
			if strings.HasPrefix(e.String(), s) {
				return e.Index
			}
		}
		t.Fatalf("no event %q", s)
		return 0
	}
	order := []uint64{
		find("AssociateTags/success schema:cat.db"),
		find("EffectiveTagsChanged/success table:cat.db.later created under tagged parent"),
		find("EffectiveTagsChanged/success table:cat.db.staging moved from cat.raw.staging"),
		find(`SetDomainParent/success domain:Trading parent "Finance" -> "Markets"`),
		find("EffectiveTagsChanged/success table:cat.raw.ledger moved from cat.db.ledger"),
	}
	if !slices.IsSorted(order) {
		t.Fatalf("lifecycle events out of order: %v", order)
	}

	// The audit file of the stopped node, all of it flushed.
	n.stop()
	f, err := os.Open(filepath.Join(n.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var file []metasrv.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e metasrv.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		file = append(file, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// GET /events served the same commands as the file holds, event for
	// event (the metalake's applied events; the ring holds them all).
	var fromFile []string
	for _, e := range file {
		if e.Metalake == "acme" && e.Index != 0 {
			fromFile = append(fromFile, e.Operation+"/"+string(e.Outcome)+" "+strconv.FormatUint(e.Index, 10)+" "+string(e.Command))
		}
	}
	var fromREST []string
	for _, e := range evs {
		fromREST = append(fromREST, e.Operation+"/"+e.Outcome+" "+strconv.FormatUint(e.Index, 10)+" "+string(e.Command))
	}
	wantList(t, "GET /events vs audit.jsonl", fromREST, fromFile)

	// Replay: the events carrying a metalake operation or a command, in
	// file order, applied with the catalog package alone.
	var snap *catalog.Snapshot
	points := []point{g1, g2, g3}
	seen, replayed, lastIndex := 0, 0, uint64(0)
	for _, e := range file {
		if e.Metalake != "acme" || (e.Lake == nil && e.Command == nil) {
			continue
		}
		if e.Outcome != catalog.Success || e.Index < lastIndex {
			t.Fatalf("replayable event %+v: not a success, or out of index order", e)
		}
		lastIndex = e.Index
		switch {
		case e.Lake != nil && e.Lake.Op == metasrv.LakeCreate:
			if snap, err = catalog.New(e.Metalake, e.Lake.Owner, e.Time); err != nil {
				t.Fatal(err)
			}
			continue
		case e.Lake != nil:
			t.Fatalf("unexpected metalake operation %+v", e.Lake)
		}
		if snap == nil {
			t.Fatalf("index %d: a command before the metalake was created", e.Index)
		}
		cmd, err := catalog.DecodeCommand(e.Command)
		if err != nil {
			t.Fatalf("index %d: %v", e.Index, err)
		}
		if snap, _, err = catalog.Apply(snap, cmd, catalog.Meta{Actor: e.Actor, Time: e.Time, Index: e.Index}); err != nil {
			t.Fatalf("index %d: %s has a success event but is rejected on replay: %v", e.Index, e.Command, err)
		}
		replayed++
		if seen == len(points) || snap.Generation() != points[seen].gen {
			continue
		}
		p := points[seen]
		seen++
		if b, err := snap.MarshalBinary(); err != nil || string(b) != string(p.snap) {
			t.Fatalf("generation %d: the replayed snapshot differs from the node's (%v)", p.gen, err)
		}
		for _, d := range domains {
			wantList(t, d+" replayed at generation "+strconv.FormatUint(p.gen, 10), membersOf(t, snap, "alice@acme", d), p.members[d])
		}
	}
	if seen != len(points) {
		t.Fatalf("replay reached %d of the %d generations", seen, len(points))
	}
	if snap.Generation() != g3.gen+1 || uint64(replayed) != snap.Generation() {
		t.Fatalf("replayed %d commands to generation %d; the node ended at %d", replayed, snap.Generation(), g3.gen+1)
	}
}
