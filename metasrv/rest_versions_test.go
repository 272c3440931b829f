package metasrv_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
)

// dataFile is a valid data file of storage id sid.
func dataFile(sid, name string, rows int64) client.DataFile {
	h := sha256.Sum256([]byte(sid + name))
	return client.DataFile{Path: "tables/" + sid + "/" + name + ".parquet", Size: rows * 10, Rows: rows, SHA256: hex.EncodeToString(h[:])}
}

// resolveOne resolves one reference for subject at minGeneration.
func resolveOne(t *testing.T, c *client.Client, subject string, gen uint64, ref client.Ref) client.RefResult {
	t.Helper()
	if ref.Privilege == "" {
		ref.Privilege = client.SelectTable
	}
	res, err := c.ResolveAt(context.Background(), "acme", subject, "lake", gen, []client.Ref{ref})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation < gen {
		t.Fatalf("resolved at generation %d < %d", res.Generation, gen)
	}
	return res.Refs[0]
}

func newClient(t *testing.T, token string, nodes ...*node) *client.Client {
	t.Helper()
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr)
	}
	c, err := client.New(client.Config{Addrs: addrs, Scheme: "http", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestTableVersions(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	ctx := context.Background()
	c := newClient(t, tokGW, n)
	const alice, bob = "alice@acme", "bob@acme"
	cols := []client.Column{{Name: "id", Type: "bigint", Nullable: false}, {Name: "v", Type: "varchar", Nullable: true}}
	f1, f2, f3 := dataFile("ev1", "p1", 3), dataFile("ev1", "p2", 4), dataFile("ev1", "r/p3", 5)

	// Create with a storage id and files: version 1 at the returned generation.
	g1, err := c.CreateTable(ctx, "acme", alice, "lake", "sales", "events", cols, "ev1", []client.DataFile{f1})
	if err != nil || g1 == 0 {
		t.Fatalf("create: %d %v", g1, err)
	}
	r := resolveOne(t, c, alice, g1, client.Ref{Schema: "sales", Table: "events"})
	if r.Table == nil || r.Table.StorageID != "ev1" || r.Table.Version != 1 || !slices.Equal(r.Table.Files, []client.DataFile{f1}) ||
		len(r.Table.Columns) != 2 || r.Table.Columns[0] != cols[0] {
		t.Fatalf("resolve after create: %+v", r.Table)
	}
	if _, err := c.CreateTable(ctx, "acme", alice, "lake", "sales", "events", cols, "", nil); !errors.Is(err, client.ErrAlreadyExists) {
		t.Fatalf("create twice: %v", err)
	}
	if _, err := c.CreateTable(ctx, "acme", alice, "lake", "sales", "events2", cols, "ev1", nil); !errors.Is(err, client.ErrAlreadyExists) {
		t.Fatalf("storage id reused: %v", err)
	}
	// REST GET carries storageId and version.
	tbl := ml + "/catalogs/lake/schemas/sales/tables/events"
	got := must(t, n, call{method: "GET", path: tbl, token: tokAlice})
	if tb := got.body["table"].(map[string]any); tb["storageId"] != "ev1" || tb["version"] != float64(1) {
		t.Fatalf("table GET: %s", got.raw)
	}

	// Append: version 2 with the union; the write's generation reads it back.
	v, g2, err := c.CommitVersion(ctx, "acme", alice, "lake", "sales", "events", 1, false, nil, []client.DataFile{f2})
	if err != nil || v != 2 || g2 <= g1 {
		t.Fatalf("append: v%d g%d (after g%d) %v", v, g2, g1, err)
	}
	r = resolveOne(t, c, alice, g2, client.Ref{Schema: "sales", Table: "events"})
	if r.Table == nil || r.Table.Version != 2 || !slices.Equal(r.Table.Files, []client.DataFile{f1, f2}) {
		t.Fatalf("after append: %+v", r.Table)
	}

	// Stale base: 409 / 1012, typed, no state change.
	if _, _, err := c.CommitVersion(ctx, "acme", alice, "lake", "sales", "events", 1, false, nil, []client.DataFile{f3}); !errors.Is(err, client.ErrVersionConflict) {
		t.Fatalf("stale base: %v", err)
	} else if errors.Is(err, client.ErrAlreadyExists) {
		t.Fatalf("conflict matches ErrAlreadyExists: %v", err)
	}
	// (Files come from a gateway acting for alice: only a gateway
	// registers files.)
	asGW := map[string]string{api.DelegateTenantHeader: "acme", api.DelegateUserHeader: alice}
	raw := expect(t, n, call{method: "POST", path: tbl + "/versions", token: tokGW, header: asGW,
		body: map[string]any{"base": 1, "files": []client.DataFile{f3}}}, http.StatusConflict, 1012)
	if raw.body["type"] != "ConcurrentModificationException" || raw.gen() != g2 {
		t.Fatalf("conflict answer (generation %d, want %d): %s", raw.gen(), g2, raw.raw)
	}
	if gen, _ := c.Generation(ctx, "acme"); gen != g2 {
		t.Fatalf("a conflict moved the generation: %d, was %d", gen, g2)
	}

	// Replace: exactly the new files and columns; the REST answer carries
	// the version and generation.
	rep := must(t, n, call{method: "POST", path: tbl + "/versions", token: tokGW, header: asGW,
		body: map[string]any{"base": 2, "replace": true, "columns": []any{map[string]any{"name": "id", "type": "bigint", "nullable": false},
			map[string]any{"name": "v", "type": "varchar"}, map[string]any{"name": "w", "type": "int"}},
			"files": []client.DataFile{f3}}})
	g3 := rep.gen()
	if rep.body["version"] != float64(3) || rep.body["generation"] != float64(g3) || g3 <= g2 {
		t.Fatalf("replace: %s (header generation %d)", rep.raw, g3)
	}
	r = resolveOne(t, c, alice, g3, client.Ref{Schema: "sales", Table: "events"})
	if r.Table == nil || r.Table.Version != 3 || !slices.Equal(r.Table.Files, []client.DataFile{f3}) || len(r.Table.Columns) != 3 {
		t.Fatalf("after replace: %+v", r.Table)
	}
	// Older retained versions by number; a version never committed is
	// unavailable with the bytes of a missing table.
	if r = resolveOne(t, c, alice, 0, client.Ref{Schema: "sales", Table: "events", Version: 2}); r.Table == nil ||
		r.Table.Version != 2 || !slices.Equal(r.Table.Files, []client.DataFile{f1, f2}) || len(r.Table.Columns) != 2 {
		t.Fatalf("version 2: %+v", r.Table)
	}
	if r = resolveOne(t, c, alice, 0, client.Ref{Schema: "sales", Table: "events", Version: 1}); r.Table == nil ||
		r.Table.Version != 1 || !slices.Equal(r.Table.Files, []client.DataFile{f1}) {
		t.Fatalf("version 1: %+v", r.Table)
	}
	vb := func(table string, version uint64) map[string]any {
		return map[string]any{"subject": alice, "catalog": "lake", "refs": []any{
			map[string]any{"schema": "sales", "table": table, "privilege": "SELECT_TABLE", "version": version}}}
	}
	miss := rawResolve(t, n, tokGW, vb("nope", 0), nil)
	if r99 := rawResolve(t, n, tokGW, vb("events", 99), nil); !bytes.Equal(r99.raw, miss.raw) {
		t.Fatalf("missing version %s vs missing table %s", r99.raw, miss.raw)
	}

	// The version listing, newest first; invisible answers as missing.
	vl := must(t, n, call{method: "GET", path: tbl + "/versions", token: tokAlice})
	vs := vl.body["versions"].([]any)
	if len(vs) != 3 || vs[0].(map[string]any)["version"] != float64(3) || vs[2].(map[string]any)["version"] != float64(1) ||
		vs[1].(map[string]any)["rows"] != float64(7) || vs[0].(map[string]any)["actor"] != alice ||
		len(vs[1].(map[string]any)["files"].([]any)) != 2 || len(vs[2].(map[string]any)["columns"].([]any)) != 2 {
		t.Fatalf("versions: %s", vl.raw)
	}
	dh := map[string]string{api.DelegateTenantHeader: "acme", api.DelegateUserHeader: bob}
	hidden := expect(t, n, call{method: "GET", path: tbl + "/versions", token: tokGW, header: dh}, 404, 1003)
	missing := expect(t, n, call{method: "GET", path: ml + "/catalogs/lake/schemas/sales/tables/nope/versions", token: tokGW, header: dh}, 404, 1003)
	if hidden.body["type"] != missing.body["type"] {
		t.Fatalf("invisible %s vs missing %s", hidden.raw, missing.raw)
	}

	// Permissions: bob may read orders but not modify it; secret is invisible.
	if _, _, err := c.CommitVersion(ctx, "acme", bob, "lake", "sales", "orders", 0, false, nil, nil); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("bob commits orders: %v", err)
	}
	if _, _, err := c.CommitVersion(ctx, "acme", bob, "lake", "sales", "secret", 0, false, nil, nil); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob commits secret: %v", err)
	}
	// Delegation rules hold for the new write.
	other := newClient(t, tokGWOther, n)
	if _, _, err := other.CommitVersion(ctx, "acme", alice, "lake", "sales", "events", 3, false, nil, nil); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("commit by a service outside delegate_tenants: %v", err)
	}
	if !auditHas(n, alice, "gw-other", "not a delegate") {
		t.Fatal("refused delegated commit not audited")
	}
	expect(t, n, call{method: "POST", path: tbl + "/versions", token: tokBob, header: map[string]string{
		api.DelegateTenantHeader: "acme", api.DelegateUserHeader: alice}, body: map[string]any{"base": 3, "files": []any{}}}, 403, 1008)
	// Strict bodies.
	for _, bad := range []string{`{"base":3,"files":[],"x":1}`, `{"files":[]}`, `{"base":-1}`, `{"base":3,"files":[{"path":"a","bogus":1}]}`, ``} {
		expect(t, n, call{method: "POST", path: tbl + "/versions", token: tokAlice, body: bad}, 400, 1001)
	}
	if gen, _ := c.Generation(ctx, "acme"); gen != g3 {
		t.Fatalf("rejected writes moved the generation to %d from %d", gen, g3)
	}

	// Listing: only what the subject may SELECT; schemas it may see.
	lst, err := c.ListTables(ctx, "acme", bob, "lake", g3)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range lst.Tables {
		names = append(names, ti.Schema+"."+ti.Name)
	}
	if lst.Generation < g3 || !slices.Equal(lst.Schemas, []string{"sales"}) || !slices.Equal(names, []string{"sales.conf", "sales.orders", "sales.pii_t"}) {
		t.Fatalf("bob's listing: %+v", lst)
	}
	lst, err = c.ListTables(ctx, "acme", alice, "lake", 0)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(lst.Tables, func(ti client.TableInfo) bool { return ti.Name == "events" })
	if len(lst.Tables) != 5 || i < 0 || lst.Tables[i].StorageID != "ev1" || lst.Tables[i].Version != 3 || len(lst.Tables[i].Columns) != 3 {
		t.Fatalf("alice's listing: %+v", lst)
	}
	// A user without grants, an unknown user and a missing catalog: all empty, alike.
	gc := must(t, n, call{method: "POST", path: ml + "/users", token: tokAlice, body: map[string]any{"name": "carol@acme"}}).gen()
	for _, q := range [][2]string{{"carol@acme", "lake"}, {"ghost@acme", "lake"}, {bob, "nolake"}} {
		lst, err := c.ListTables(ctx, "acme", q[0], q[1], 0)
		if err != nil || len(lst.Schemas) != 0 || len(lst.Tables) != 0 || lst.Schemas == nil || lst.Tables == nil {
			t.Fatalf("listing for %v: %+v %v", q, lst, err)
		}
	}
	lraw := do(t, n, call{method: "POST", path: "/internal/v1/metalakes/acme/tables", token: tokGW, body: map[string]any{"subject": "carol@acme", "catalog": "lake"}})
	mraw := do(t, n, call{method: "POST", path: "/internal/v1/metalakes/acme/tables", token: tokGW, body: map[string]any{"subject": "carol@acme", "catalog": "nolake"}})
	if lraw.status != 200 || !bytes.Equal(lraw.raw, mraw.raw) {
		t.Fatalf("forbidden %s vs missing %s", lraw.raw, mraw.raw)
	}
	expect(t, n, call{method: "POST", path: "/internal/v1/metalakes/acme/tables", token: tokGW, body: `{"subject":"bob@acme","catalog":"lake","x":1}`}, 400, 1001)
	expect(t, n, call{method: "POST", path: "/internal/v1/metalakes/acme/tables", token: tokGWOther, body: map[string]any{"subject": bob, "catalog": "lake"}}, 403, 1008)
	expect(t, n, call{method: "POST", path: "/internal/v1/metalakes/acme/tables", token: tokBob, body: map[string]any{"subject": bob, "catalog": "lake"}}, 403, 1008)

	// Referenced files, before and after a drop.
	gf, files, err := c.ReferencedFiles(ctx, "acme")
	if err != nil || gf != gc {
		t.Fatalf("files at %d (want %d): %v", gf, gc, err)
	}
	want := []client.FileRef{{StorageID: "ev1", Path: f3.Path}, {StorageID: "ev1", Path: f1.Path}, {StorageID: "ev1", Path: f2.Path}}
	var evFiles []client.FileRef
	for _, f := range files {
		if f.StorageID == "ev1" {
			evFiles = append(evFiles, f)
		}
	}
	slices.SortFunc(want, func(a, b client.FileRef) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(evFiles, func(a, b client.FileRef) int { return strings.Compare(a.Path, b.Path) })
	if !slices.Equal(evFiles, want) {
		t.Fatalf("referenced files %+v", files)
	}
	if _, _, err := other.ReferencedFiles(ctx, "acme"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("files for a service outside delegate_tenants: %v", err)
	}
	expect(t, n, call{method: "GET", path: "/internal/v1/metalakes/acme/files", token: tokAlice}, 403, 1008)
	if dropped, _, err := c.DropTable(ctx, "acme", bob, "lake", "sales", "events"); err != nil || dropped {
		t.Fatalf("bob drops an invisible table: %v %v", dropped, err)
	}
	dropped, gd, err := c.DropTable(ctx, "acme", alice, "lake", "sales", "events")
	if err != nil || !dropped || gd <= gc {
		t.Fatalf("drop: %v g%d %v", dropped, gd, err)
	}
	gf, files, err = c.ReferencedFiles(ctx, "acme")
	if err != nil || gf != gd || slices.ContainsFunc(files, func(f client.FileRef) bool { return f.StorageID == "ev1" }) {
		t.Fatalf("files after drop at %d: %+v %v", gf, files, err)
	}
	if dropped, g, err := c.DropTable(ctx, "acme", alice, "lake", "sales", "events"); err != nil || dropped || g != gd {
		t.Fatalf("drop again: %v g%d %v", dropped, g, err)
	}
	// The storage id is free again; a table created without files is at version 0.
	g4, err := c.CreateTable(ctx, "acme", alice, "lake", "sales", "events", cols, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r = resolveOne(t, c, alice, g4, client.Ref{Schema: "sales", Table: "events"}); r.Table == nil || r.Table.Version != 0 || len(r.Table.Files) != 0 || r.Table.StorageID == "" {
		t.Fatalf("fresh table: %+v", r.Table)
	}
	if _, err := c.CreateSchema(ctx, "acme", alice, "lake", "staging"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSchema(ctx, "acme", alice, "lake", "staging"); !errors.Is(err, client.ErrAlreadyExists) {
		t.Fatalf("schema twice: %v", err)
	}
	if lst, err := c.ListTables(ctx, "acme", alice, "lake", 0); err != nil || !slices.Equal(lst.Schemas, []string{"sales", "staging"}) {
		t.Fatalf("empty schema not listed: %+v %v", lst, err)
	}
}

// TestTableVersionsRetainedColumns: renaming or dropping a column whose data
// the current version holds is refused over REST, saying why (409), and the
// table stays readable; a rewrite (replace commit) renames it; the versions
// retained before, holding a column the table no longer has, are refused
// (a mask decided on the current names would not cover it), and adding a
// column of the old name again makes the table forget them.
func TestTableVersionsRetainedColumns(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	ctx := context.Background()
	c := newClient(t, tokGW, n)
	const alice = "alice@acme"
	cols := []client.Column{{Name: "id", Type: "bigint"}, {Name: "ssn", Type: "varchar", Nullable: true}}
	if _, err := c.CreateTable(ctx, "acme", alice, "lake", "sales", "people", cols, "people", []client.DataFile{dataFile("people", "a", 1)}); err != nil {
		t.Fatal(err)
	}
	_, g, err := c.CommitVersion(ctx, "acme", alice, "lake", "sales", "people", 1, false, nil, []client.DataFile{dataFile("people", "b", 1)})
	if err != nil {
		t.Fatal(err)
	}
	tbl := ml + "/catalogs/lake/schemas/sales/tables/people"
	for _, u := range []string{
		`{"@type":"renameColumn","oldFieldName":["ssn"],"newFieldName":"ssn2"}`,
		`{"@type":"deleteColumn","fieldName":["ssn"]}`,
	} {
		r := expect(t, n, call{method: "PUT", path: tbl, token: tokAlice, body: `{"updates":[` + u + `]}`}, http.StatusConflict, 1010)
		if msg, _ := r.body["message"].(string); !strings.Contains(msg, `column "ssn" holds data in version 2`) {
			t.Fatalf("%s: refusal does not say why: %s", u, r.raw)
		}
	}
	for _, v := range []uint64{0, 1, 2} {
		if res := resolveOne(t, c, alice, g, client.Ref{Schema: "sales", Table: "people", Version: v}); res.Table == nil {
			t.Fatalf("version %d after the refused changes: unavailable", v)
		}
	}
	cols[1].Name = "ssn2"
	_, g, err = c.CommitVersion(ctx, "acme", alice, "lake", "sales", "people", 2, true, cols, []client.DataFile{dataFile("people", "c", 2)})
	if err != nil {
		t.Fatal(err)
	}
	if res := resolveOne(t, c, alice, g, client.Ref{Schema: "sales", Table: "people"}); res.Table == nil || res.Table.Version != 3 ||
		res.Table.Columns[1].Name != "ssn2" || len(res.Table.Files) != 1 {
		t.Fatalf("after the rewrite: %+v", res.Table)
	}
	for _, v := range []uint64{1, 2} {
		if res := resolveOne(t, c, alice, g, client.Ref{Schema: "sales", Table: "people", Version: v}); !res.Unavailable {
			t.Fatalf("version %d, holding the old ssn, after the rewrite: %+v", v, res.Table)
		}
	}
	r := must(t, n, call{method: "PUT", path: tbl, token: tokAlice, body: `{"updates":[{"@type":"addColumn","fieldName":["ssn"],"type":"varchar"}]}`})
	vs := must(t, n, call{method: "GET", path: tbl + "/versions", token: tokAlice, header: map[string]string{}}).body["versions"].([]any)
	if len(vs) != 1 || vs[0].(map[string]any)["version"] != float64(3) {
		t.Fatalf("versions after ssn is a column again (generation %d): %v", r.gen(), vs)
	}
}

// TestTableVersionForwarded: a commit sent by the client to a follower is
// forwarded to the leader; its generation reads it back on the follower.
func TestTableVersionForwarded(t *testing.T) {
	n1 := withAcme(t, startDNode(t, "n1", true)) // not solo: n2 joins
	governedLake(t, n1)
	n2 := startDNode(t, "n2", false)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := n2.Join(ctx, n1.addr); err != nil {
		t.Fatal(err)
	}
	leader, follower := n1, n2
	if waitLeader(t, n1, n2) == n2 {
		leader, follower = n2, n1
	}
	c := newClient(t, tokGW, follower)
	cols := []client.Column{{Name: "id", Type: "bigint"}}
	g, err := c.CreateTable(ctx, "acme", "alice@acme", "lake", "sales", "fwd", cols, "fwd", []client.DataFile{dataFile("fwd", "a", 1)})
	if err != nil {
		t.Fatal(err)
	}
	v, g2, err := c.CommitVersion(ctx, "acme", "alice@acme", "lake", "sales", "fwd", 1, false, nil, []client.DataFile{dataFile("fwd", "b", 2)})
	if err != nil || v != 2 || g2 <= g {
		t.Fatalf("forwarded commit: v%d g%d %v", v, g2, err)
	}
	if r := resolveOne(t, c, "alice@acme", g2, client.Ref{Schema: "sales", Table: "fwd"}); r.Table == nil || r.Table.Version != 2 || len(r.Table.Files) != 2 {
		t.Fatalf("read-your-write on the follower: %+v", r.Table)
	}
	if _, _, err := c.CommitVersion(ctx, "acme", "alice@acme", "lake", "sales", "fwd", 1, false, nil, nil); !errors.Is(err, client.ErrVersionConflict) {
		t.Fatalf("forwarded conflict: %v", err)
	}
	// The leader's audit names the user as the committer.
	found := false
	for _, e := range leader.Audit().Events("acme", 0, 0, 1000) {
		found = found || (e.Operation == "CommitTableVersion" && e.Actor == "alice@acme" && e.Outcome == "success")
	}
	if !found {
		t.Fatal("forwarded commit not audited as alice")
	}
}
