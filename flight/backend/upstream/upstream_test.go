package upstream_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"

	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
	"lakegate/flight/ipccheck/ipctest"
)

const (
	token     = "lg_upstream-test-token_0123456789"
	credsName = "engine-token"
	fixtureQ  = "SELECT keyName, value FROM intTable ORDER BY id"
)

var fixtureRows = [][]string{{"one", "1"}, {"zero", "0"}, {"negative one", "-1"}, {"(null)", "(null)"}}

// newPool returns a Pool allowing addrs, with a credentials directory
// holding credsName, and checks at the end of the test that every byte it
// allocated was released.
func newPool(t *testing.T, addrs ...string) *upstream.Pool {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, credsName), []byte("\n  "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := upstream.New(upstream.Config{Allow: addrs, CredentialsDir: dir, Allocator: mem})
	t.Cleanup(func() { p.Close() })
	return p
}

func target(addr string) upstream.Target {
	return upstream.Target{Address: addr, Credentials: credsName}
}

// readAll drains rr into rows of ValueStr cells and releases it.
func readAll(t *testing.T, rr array.RecordReader) ([][]string, error) {
	t.Helper()
	defer rr.Release()
	var rows [][]string
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for j := range row {
				row[j] = rec.Column(j).ValueStr(i)
			}
			rows = append(rows, row)
		}
	}
	return rows, rr.Err()
}

func assertTokenSent(t *testing.T, r *running) {
	t.Helper()
	calls, auth := r.rec.snapshot()
	if len(calls) == 0 {
		t.Fatal("engine saw no calls")
	}
	for i, a := range auth {
		if a != "Bearer "+token {
			t.Errorf("call %d (%s): authorization %q, want the credentials file's token", i, calls[i], a)
		}
	}
}

func TestExecuteAndSchema(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		describe, infoSchema bool
		schemaErr            error
	}{
		{name: "GetExecuteSchema", describe: true, infoSchema: true},
		// A FlightInfo's schema is not trusted: Schema needs GetExecuteSchema.
		{name: "FlightInfoSchema", infoSchema: true, schemaErr: upstream.ErrNoSchema},
		{name: "NoSchemaWithoutRunning", schemaErr: upstream.ErrNoSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := serve(t, "127.0.0.1:0", newEngine(t, tc.describe, tc.infoSchema))
			p := newPool(t, eng.addr)
			ctx := context.Background()

			rr, err := p.Execute(ctx, target(eng.addr), fixtureQ)
			if err != nil {
				t.Fatal(err)
			}
			got := rr.Schema()
			if names := []string{got.Field(0).Name, got.Field(1).Name}; !slices.Equal(names, []string{"keyName", "value"}) {
				t.Errorf("columns %v", names)
			}
			rows, err := readAll(t, rr)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(rows, fixtureRows, slices.Equal) {
				t.Errorf("rows %q, want %q", rows, fixtureRows)
			}

			s, err := p.Schema(ctx, target(eng.addr), fixtureQ)
			if !errors.Is(err, tc.schemaErr) {
				t.Fatalf("Schema: %v, want %v", err, tc.schemaErr)
			}
			if err == nil && !s.Equal(got) {
				t.Errorf("Schema %v, Execute's %v", s, got)
			}
			// Schema reads no rows: the one DoGet is Execute's.
			calls, _ := eng.rec.snapshot()
			if n := count(calls, "/arrow.flight.protocol.FlightService/DoGet"); n != 1 {
				t.Errorf("%d DoGet calls, want 1 (Execute's)", n)
			}
			assertTokenSent(t, eng)
		})
	}
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func TestNoCredentials(t *testing.T) {
	eng := serve(t, "127.0.0.1:0", newEngine(t, true, true))
	p := newPool(t, eng.addr)
	rr, err := p.Execute(context.Background(), upstream.Target{Address: eng.addr}, fixtureQ)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, rr); err != nil {
		t.Fatal(err)
	}
	_, auth := eng.rec.snapshot()
	for _, a := range auth {
		if a != "" {
			t.Errorf("authorization %q sent without credentials", a)
		}
	}
}

func TestNotAllowed(t *testing.T) {
	ctx := context.Background()
	lis := listenCounting(t)
	p := newPool(t, "127.0.0.1:1")
	if _, err := p.Execute(ctx, target(lis.addr), fixtureQ); !errors.Is(err, upstream.ErrNotAllowed) {
		t.Errorf("Execute: %v, want ErrNotAllowed", err)
	}
	if _, err := p.Schema(ctx, target(lis.addr), fixtureQ); !errors.Is(err, upstream.ErrNotAllowed) {
		t.Errorf("Schema: %v, want ErrNotAllowed", err)
	}
	lis.stop()
	if n := lis.accepted.Load(); n != 0 {
		t.Errorf("%d connections to an address not allowed", n)
	}

	// Control: the same listener, allowed, is contacted.
	lis = listenCounting(t)
	p = newPool(t, lis.addr)
	_, err := p.Execute(ctx, target(lis.addr), fixtureQ)
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("Execute on a non-engine: %v, want ErrUnavailable", err)
	}
	if lis.accepted.Load() == 0 {
		t.Error("control: allowed address was not contacted")
	}
}

func TestInvalidAddress(t *testing.T) {
	bad := []string{"", "nohost", ":8815", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:http", "127.0.0.1:08815", "[::1]"}
	p := newPool(t, bad...)
	for _, a := range bad {
		_, err := p.Execute(context.Background(), target(a), fixtureQ)
		if !errors.Is(err, upstream.ErrInvalidTarget) {
			t.Errorf("%q: %v, want ErrInvalidTarget", a, err)
		}
	}
	if err := (upstream.Config{Allow: []string{"127.0.0.1:8815", "[::1]:8815", "engine.internal:1"}}).Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := (upstream.Config{Allow: []string{"127.0.0.1:8815", "127.0.0.1:0"}}).Validate(); !errors.Is(err, upstream.ErrInvalidTarget) {
		t.Errorf("Validate with port 0: %v", err)
	}
}

func TestCredentials(t *testing.T) {
	ctx := context.Background()
	eng := serve(t, "127.0.0.1:0", newEngine(t, true, true))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("good", token+"\n")
	write("empty", " \n")
	write("two-words", "secret-one secret-two\n")
	write("big", strings.Repeat("x", 1<<20))
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	write("subdir/inner", token)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "stolen"), []byte("outside-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "stolen"), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	p := upstream.New(upstream.Config{Allow: []string{eng.addr}, CredentialsDir: dir, Allocator: mem})
	t.Cleanup(func() { p.Close() })

	for _, tc := range []struct {
		name    string
		want    error
		naming  bool // the error names the file
		secrets []string
	}{
		{name: "../x", want: upstream.ErrInvalidTarget},
		{name: "a/b", want: upstream.ErrInvalidTarget},
		{name: "subdir/inner", want: upstream.ErrInvalidTarget},
		{name: "..", want: upstream.ErrInvalidTarget},
		{name: "a..b", want: upstream.ErrInvalidTarget},
		{name: ".hidden", want: upstream.ErrInvalidTarget},
		{name: "/etc/passwd", want: upstream.ErrInvalidTarget},
		{name: strings.Repeat("a", 129), want: upstream.ErrInvalidTarget},
		{name: "missing", want: upstream.ErrCredentials, naming: true},
		{name: "empty", want: upstream.ErrCredentials, naming: true},
		{name: "two-words", want: upstream.ErrCredentials, naming: true, secrets: []string{"secret-one", "secret-two"}},
		{name: "big", want: upstream.ErrCredentials, naming: true, secrets: []string{"xxxx"}},
		{name: "subdir", want: upstream.ErrCredentials, naming: true},
		{name: "escape", want: upstream.ErrCredentials, naming: true, secrets: []string{"outside-secret", outside}},
	} {
		tgt := upstream.Target{Address: eng.addr, Credentials: tc.name}
		_, err := p.Execute(ctx, tgt, fixtureQ)
		if !errors.Is(err, tc.want) {
			t.Errorf("%q: %v, want %v", tc.name, err, tc.want)
			continue
		}
		if _, serr := p.Schema(ctx, tgt, fixtureQ); !errors.Is(serr, tc.want) {
			t.Errorf("%q: Schema: %v, want %v", tc.name, serr, tc.want)
		}
		msg := err.Error()
		if tc.naming != strings.Contains(msg, tc.name) {
			t.Errorf("%q: error %q: names the file = %v, want %v", tc.name, msg, !tc.naming, tc.naming)
		}
		for _, s := range append(tc.secrets, token, dir) {
			if strings.Contains(msg, s) {
				t.Errorf("%q: error %q reveals %q", tc.name, msg, s)
			}
		}
	}
	if calls, _ := eng.rec.snapshot(); len(calls) != 0 {
		t.Errorf("engine contacted with unusable credentials: %v", calls)
	}

	// Control: a good file works, and is read again at each call.
	rr, err := p.Execute(ctx, upstream.Target{Address: eng.addr, Credentials: "good"}, fixtureQ)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, rr); err != nil {
		t.Fatal(err)
	}
	assertTokenSent(t, eng)
	write("good", "rotated-token")
	if _, err := p.Schema(ctx, upstream.Target{Address: eng.addr, Credentials: "good"}, fixtureQ); err != nil {
		t.Fatal(err)
	}
	if _, auth := eng.rec.snapshot(); auth[len(auth)-1] != "Bearer rotated-token" {
		t.Errorf("after rotation sent %q", auth[len(auth)-1])
	}
}

func TestUnavailableThenRecovered(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, true, true)
	first := serve(t, "127.0.0.1:0", eng)
	addr := first.addr
	p := newPool(t, addr)

	rr, err := p.Execute(ctx, target(addr), fixtureQ)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, rr); err != nil {
		t.Fatal(err)
	}

	first.stop()
	_, port, _ := strings.Cut(addr, ":")
	for _, op := range []string{"execute", "schema", "execute"} {
		var err error
		if op == "execute" {
			_, err = p.Execute(ctx, target(addr), fixtureQ)
		} else {
			_, err = p.Schema(ctx, target(addr), fixtureQ)
		}
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Fatalf("%s with the engine down: %v, want ErrUnavailable", op, err)
		}
		if msg := err.Error(); strings.Contains(msg, addr) || strings.Contains(msg, port) || strings.Contains(msg, "127.0.0.1") {
			t.Errorf("error %q reveals the address", msg)
		}
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Code != codes.Unavailable {
			t.Errorf("%s: %#v, want *upstream.Error with code Unavailable", op, err)
		}
	}

	second := serve(t, addr, eng)
	rr, err = p.Execute(ctx, target(addr), fixtureQ)
	if err != nil {
		t.Fatalf("Execute after the engine came back: %v", err)
	}
	rows, err := readAll(t, rr)
	if err != nil || len(rows) != len(fixtureRows) {
		t.Fatalf("after recovery: %d rows, %v", len(rows), err)
	}
	if _, err := p.Schema(ctx, target(addr), fixtureQ); err != nil {
		t.Fatalf("Schema after the engine came back: %v", err)
	}
	assertTokenSent(t, second)
}

// endless never ends: only cancellation stops it.
const endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"

func TestCancelMidStream(t *testing.T) {
	eng := serve(t, "127.0.0.1:0", newEngine(t, false, false))
	p := newPool(t, eng.addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rr, err := p.Execute(ctx, target(eng.addr), endless)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() || rr.RecordBatch().NumRows() == 0 {
		t.Fatalf("first batch: %v", rr.Err())
	}
	cancel()
	for rr.Next() {
	}
	if err := rr.Err(); !errors.Is(err, backend.ErrCanceled) {
		t.Fatalf("after cancel: %v, want ErrCanceled", err)
	}
}

func TestReleaseMidStream(t *testing.T) {
	eng := serve(t, "127.0.0.1:0", newEngine(t, false, false))
	p := newPool(t, eng.addr)
	rr, err := p.Execute(context.Background(), target(eng.addr), endless)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	rr.Release() // stops the upstream stream; the allocator check proves the batches went
}

func TestContextEnded(t *testing.T) {
	eng := serve(t, "127.0.0.1:0", newEngine(t, true, true))
	p := newPool(t, eng.addr)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Execute(canceled, target(eng.addr), fixtureQ); !errors.Is(err, backend.ErrCanceled) {
		t.Errorf("Execute: %v, want ErrCanceled", err)
	}
	if _, err := p.Schema(canceled, target(eng.addr), fixtureQ); !errors.Is(err, backend.ErrCanceled) {
		t.Errorf("Schema: %v, want ErrCanceled", err)
	}
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	if _, err := p.Execute(expired, target(eng.addr), fixtureQ); !errors.Is(err, backend.ErrDeadline) {
		t.Errorf("Execute: %v, want ErrDeadline", err)
	}
}

func TestQueryRefused(t *testing.T) {
	for _, describe := range []bool{false, true} {
		eng := serve(t, "127.0.0.1:0", newEngine(t, describe, describe))
		p := newPool(t, eng.addr)
		const bad = "SELECT secret_column FROM no_such_table"
		_, err := p.Execute(context.Background(), target(eng.addr), bad)
		if describe {
			_, err = p.Schema(context.Background(), target(eng.addr), bad)
		}
		if !errors.Is(err, backend.ErrQuery) {
			t.Fatalf("describe=%v: %v, want ErrQuery", describe, err)
		}
		msg := err.Error()
		for _, s := range []string{"secret_column", "no_such_table", "no such table", eng.addr} {
			if strings.Contains(msg, s) {
				t.Errorf("error %q forwards the engine's text %q", msg, s)
			}
		}
		if !strings.Contains(msg, "upstream engine refused the query (Unknown)") {
			t.Errorf("error %q", msg)
		}
	}
}

func TestEndpointLocations(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, false, true)
	srv := serve(t, "127.0.0.1:0", eng)
	never := listenCounting(t)
	p := newPool(t, srv.addr)
	twice := append(slices.Clone(fixtureRows), fixtureRows...)

	for _, tc := range []struct {
		name string
		locs [][]string
		want error
		rows [][]string
	}{
		{name: "reuse", locs: [][]string{{flight.LocationReuseConnection}}, rows: fixtureRows},
		{name: "reuse and allowed", locs: [][]string{{}, {"grpc://" + srv.addr}}, rows: twice},
		{name: "tcp scheme", locs: [][]string{{"grpc+tcp://" + srv.addr}}, rows: fixtureRows},
		{name: "first allowed", locs: [][]string{{"grpc://" + never.addr, "grpc://" + srv.addr}}, rows: fixtureRows},
		{name: "not allowed", locs: [][]string{{flight.LocationReuseConnection}, {"grpc://" + never.addr}}, want: upstream.ErrNotAllowed},
		{name: "scheme", locs: [][]string{{"http://" + srv.addr}}, want: upstream.ErrNotAllowed},
		{name: "path", locs: [][]string{{"grpc://" + srv.addr + "/x"}}, want: upstream.ErrNotAllowed},
		{name: "user", locs: [][]string{{"grpc://u:p@" + srv.addr}}, want: upstream.ErrNotAllowed},
		{name: "no endpoints", locs: [][]string{}},
	} {
		eng.setLocations(tc.locs)
		rr, err := p.Execute(ctx, target(srv.addr), fixtureQ)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), never.addr) || strings.Contains(err.Error(), srv.addr) {
				t.Errorf("%s: error %q reveals a location", tc.name, err)
			}
			continue
		}
		rows, err := readAll(t, rr)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.EqualFunc(rows, tc.rows, slices.Equal) {
			t.Errorf("%s: rows %q, want %q", tc.name, rows, tc.rows)
		}
	}
	never.stop()
	if n := never.accepted.Load(); n != 0 {
		t.Errorf("%d connections to a location not allowed", n)
	}
	assertTokenSent(t, srv)
}

func TestClose(t *testing.T) {
	eng := serve(t, "127.0.0.1:0", newEngine(t, false, false))
	p := newPool(t, eng.addr)
	rr, err := p.Execute(context.Background(), target(eng.addr), endless)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for rr.Next() {
	}
	if !errors.Is(rr.Err(), backend.ErrUnavailable) {
		t.Errorf("reader after Close: %v, want ErrUnavailable", rr.Err())
	}
	rr.Release()
	if _, err := p.Execute(context.Background(), target(eng.addr), fixtureQ); !errors.Is(err, upstream.ErrClosed) {
		t.Errorf("Execute after Close: %v, want ErrClosed", err)
	}
}

// TestPlaintextOnlyOnLoopback: a target without TLS on a non-loopback
// address is refused before any connection unless AllowPlaintext is set.
func TestPlaintextOnlyOnLoopback(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		addr      string
		plaintext bool
		refused   bool
	}{
		{"engine.example:9030", false, true},
		{"10.1.2.3:9030", false, true},
		{"engine.example:9030", true, false},
		{"localhost:1", false, false},
		{"[::1]:1", false, false},
	} {
		p := upstream.New(upstream.Config{Allow: []string{c.addr}, AllowPlaintext: c.plaintext, DialTimeout: time.Millisecond})
		t.Cleanup(func() { p.Close() })
		_, err := p.Schema(ctx, upstream.Target{Address: c.addr}, "SELECT 1")
		if got := errors.Is(err, upstream.ErrNotAllowed); got != c.refused {
			t.Errorf("%s (AllowPlaintext %v): %v, refused %v, want %v", c.addr, c.plaintext, err, got, c.refused)
		}
	}
}

// TestMalformedEngineSchema: a schema an engine sends whose metadata claims
// more fields than it has bytes (on which arrow-go would allocate 29 GB and
// end the gateway) is refused like any invalid answer.
func TestMalformedEngineSchema(t *testing.T) {
	e := newEngine(t, true, true)
	e.schemaBytes = ipctest.HugeFields()
	eng := serve(t, "127.0.0.1:0", e)
	p := newPool(t, eng.addr)
	if _, err := p.Schema(context.Background(), target(eng.addr), fixtureQ); err == nil || errors.Is(err, upstream.ErrNoSchema) {
		t.Fatalf("Schema: %v, want the answer refused", err)
	}
}
