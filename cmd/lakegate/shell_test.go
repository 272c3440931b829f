package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// fakeGateway is a Flight SQL server that answers as lakegate's gateway
// does for what `lakegate sql` uses: statements by their text, USE and the
// catalog and schema session options kept in a session behind a cookie,
// and the tenant read back from GetSessionOptions. It records each call
// with the session it saw.
type fakeGateway struct {
	flightsql.BaseServer
	token string

	mu       sync.Mutex
	calls    []string
	closed   int // CloseSession calls
	sessions map[string]*fakeSession
	fail     map[string]string // statement → error message
}

type fakeSession struct{ catalog, schema string }

// intResult is every query's result: column n, the values 1 and 2.
var intSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)

func startFakeGateway(t *testing.T) (*fakeGateway, string) {
	t.Helper()
	g := &fakeGateway{token: "tok", sessions: map[string]*fakeSession{}, fail: map[string]string{}}
	srv := flight.NewServerWithMiddleware(nil)
	srv.RegisterFlightService(flightsql.NewFlightServer(g))
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	return g, srv.Addr().String()
}

// session returns the caller's session: the one its cookie names or, when
// create, a new one whose cookie is sent back.
func (g *fakeGateway) session(ctx context.Context, create bool) (*fakeSession, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+g.token {
		return nil, status.Error(codes.Unauthenticated, "unauthenticated")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, line := range md.Get("cookie") {
		cookies, _ := http.ParseCookie(line)
		for _, c := range cookies {
			if s, ok := g.sessions[c.Value]; ok && c.Name == "lakegate_session" {
				return s, nil
			}
		}
	}
	if !create {
		return &fakeSession{}, nil
	}
	id := fmt.Sprintf("s%d", len(g.sessions)+1)
	s := &fakeSession{}
	g.sessions[id] = s
	if err := grpc.SetHeader(ctx, metadata.Pairs("set-cookie", "lakegate_session="+id+"; Path=/")); err != nil {
		return nil, err
	}
	return s, nil
}

func (g *fakeGateway) record(s *fakeSession, call string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	where := s.catalog
	if where == "" {
		where = "lake"
	}
	if s.schema != "" {
		where += "." + s.schema
	}
	g.calls = append(g.calls, call+" @"+where)
}

func (g *fakeGateway) called() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// GetFlightInfoSqlInfo starts a session, as the gateway does for a caller
// without one.
func (g *fakeGateway) GetFlightInfoSqlInfo(ctx context.Context, _ flightsql.GetSqlInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	sess, err := g.session(ctx, true)
	if err != nil {
		return nil, err
	}
	g.record(sess, "open")
	return &flight.FlightInfo{FlightDescriptor: desc, Schema: flight.SerializeSchema(schema_ref.SqlInfo, memory.DefaultAllocator),
		Endpoint: []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}}, TotalRecords: -1, TotalBytes: -1}, nil
}

func (g *fakeGateway) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	s, err := g.session(ctx, false)
	if err != nil {
		return nil, err
	}
	g.record(s, "query "+cmd.GetQuery())
	if msg, ok := g.fail[cmd.GetQuery()]; ok {
		return nil, status.Error(codes.InvalidArgument, msg)
	}
	tkt, err := flightsql.CreateStatementQueryTicket([]byte(cmd.GetQuery()))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(intSchema, memory.DefaultAllocator),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		TotalRecords:     -1, TotalBytes: -1,
	}, nil
}

func (g *fakeGateway) DoGetStatement(ctx context.Context, _ flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if _, err := g.session(ctx, false); err != nil {
		return nil, nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, intSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: b.NewRecordBatch()}
	close(ch)
	return intSchema, ch, nil
}

func (g *fakeGateway) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	q := cmd.GetQuery()
	use := kindOf(q) == kindUse
	s, err := g.session(ctx, use)
	if err != nil {
		return 0, err
	}
	g.record(s, "update "+q)
	if msg, ok := g.fail[q]; ok {
		return 0, status.Error(codes.NotFound, msg)
	}
	if use {
		g.mu.Lock()
		name := strings.TrimSpace(q[len("USE"):])
		if strings.HasPrefix(name, "`") {
			name = strings.ReplaceAll(name[1:len(name)-1], "``", "`")
		}
		s.schema = name
		g.mu.Unlock()
		return 0, nil
	}
	return 3, nil
}

func (g *fakeGateway) SetSessionOptions(ctx context.Context, req *flight.SetSessionOptionsRequest) (*flight.SetSessionOptionsResult, error) {
	s, err := g.session(ctx, true)
	if err != nil {
		return nil, err
	}
	res := &flight.SetSessionOptionsResult{Errors: map[string]*flight.SetSessionOptionsResultError{}}
	g.mu.Lock()
	for name, v := range req.GetSessionOptions() {
		switch name {
		case "catalog":
			s.catalog = v.GetStringValue()
		case "schema":
			s.schema = v.GetStringValue()
		default:
			res.Errors[name] = &flight.SetSessionOptionsResultError{Value: flight.SetSessionOptionsResultErrorInvalidName}
		}
	}
	g.mu.Unlock()
	g.record(s, "set")
	return res, nil
}

func (g *fakeGateway) CloseSession(ctx context.Context, _ *flight.CloseSessionRequest) (*flight.CloseSessionResult, error) {
	if _, err := g.session(ctx, false); err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.closed++
	g.mu.Unlock()
	return &flight.CloseSessionResult{Status: flight.CloseSessionResultClosed}, nil
}

func (g *fakeGateway) GetSessionOptions(ctx context.Context, _ *flight.GetSessionOptionsRequest) (*flight.GetSessionOptionsResult, error) {
	s, err := g.session(ctx, false)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	opts := map[string]any{"tenant": "demo", "catalog": "lake"}
	if s.catalog != "" {
		opts["catalog"] = s.catalog
	}
	if s.schema != "" {
		opts["schema"] = s.schema
	}
	g.mu.Unlock()
	vals, err := flight.NewSessionOptionValues(opts)
	if err != nil {
		return nil, err
	}
	return &flight.GetSessionOptionsResult{SessionOptions: vals}, nil
}

// scriptedEditor is an interactive lineReader typing lines (errInterrupted
// for a Ctrl-C) and recording prompts and history.
type scriptedEditor struct {
	lines   []any // string or error
	prompts []string
	history []string
	closed  bool
}

func (e *scriptedEditor) ReadLine(prompt string) (string, error) {
	e.prompts = append(e.prompts, prompt)
	if len(e.lines) == 0 {
		return "", io.EOF
	}
	l := e.lines[0]
	e.lines = e.lines[1:]
	if err, ok := l.(error); ok {
		return "", err
	}
	return l.(string), nil
}

func (e *scriptedEditor) AddHistory(s string) { e.history = append(e.history, s) }
func (e *scriptedEditor) Close() error        { e.closed = true; return nil }

// tickClock returns a clock that moves 1.5 ms on each reading.
func tickClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time {
		t = t.Add(1500 * time.Microsecond)
		return t
	}
}

// sqlRun runs `lakegate sql` against addr with stdin and a console that is
// a terminal when ed is set.
func sqlRun(t *testing.T, addr, stdin string, ed *scriptedEditor, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("LAKEGATE_TOKEN", "tok")
	con := console{stdin: strings.NewReader(stdin), clock: tickClock()}
	if ed != nil {
		con.terminal = true
		con.editor = func() (lineReader, error) { return ed, nil }
	}
	var out, errOut bytes.Buffer
	err := sqlCmd(context.Background(), append([]string{"--addr", addr}, args...), con, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestSQLScript: a script on stdin runs statement by statement, split
// where the gate's lexer would (not at a ; in a string or a comment),
// the last statement needing no ;; USE holds for the statements after it
// (the session cookie is kept).
func TestSQLScript(t *testing.T) {
	g, addr := startFakeGateway(t)
	script := "-- a report\nUSE sales;\nSELECT 'a;b' AS x; /* ; */ SELECT\n  2 -- two; really\n;\n# done;\nSELECT 3"
	out, errOut, err := sqlRun(t, addr, script, nil, "--format", "csv")
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, errOut)
	}
	want := []string{
		"open @lake",
		"update USE sales @lake",
		"query SELECT 'a;b' AS x @lake.sales",
		"query /* ; */ SELECT\n  2 -- two; really @lake.sales",
		"query SELECT 3 @lake.sales",
	}
	if got := g.called(); !slices.Equal(got, want) {
		t.Errorf("calls:\n%q\nwant\n%q", got, want)
	}
	if want := strings.Repeat("n\n1\n2\n", 3); out != want || errOut != "" {
		t.Errorf("stdout %q stderr %q, want %q and nothing", out, errOut, want)
	}
}

// TestSQLStopsAtFirstError: a script stops at its first failing statement
// (exit 1, the error located by line); with --force it runs on and fails
// at the end.
func TestSQLStopsAtFirstError(t *testing.T) {
	g, addr := startFakeGateway(t)
	g.fail["SELECT bad"] = "column bad does not exist"
	dir := t.TempDir()
	file := filepath.Join(dir, "report.sql")
	if err := os.WriteFile(file, []byte("SELECT 1;\n\nSELECT bad;\nSELECT 3;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := sqlRun(t, addr, "", nil, "-f", file)
	if err == nil || errors.Is(err, errUsage) || err.Error() != file+":3: column bad does not exist (InvalidArgument)" {
		t.Fatalf("error %v", err)
	}
	if got := g.called(); len(got) != 2 {
		t.Fatalf("ran %q, want it to stop after SELECT bad", got)
	}
	g.calls = nil
	out, errOut, err := sqlRun(t, addr, "SELECT 1;\n\nSELECT bad;\nSELECT 3;\n", nil, "--force")
	if err == nil || err.Error() != "1 of 3 statements failed" {
		t.Fatalf("--force: %v", err)
	}
	if len(g.called()) != 3 || !strings.Contains(errOut, "lakegate: stdin:3: column bad does not exist (InvalidArgument)") ||
		strings.Count(out, "(2 rows)") != 2 {
		t.Errorf("--force: calls %q, stdout %q, stderr %q", g.called(), out, errOut)
	}
	// A query argument of several statements names the failing one.
	g.calls = nil
	if _, _, err := sqlRun(t, addr, "", nil, "SELECT 1; SELECT bad; SELECT 3"); err == nil || err.Error() != "statement 2: column bad does not exist (InvalidArgument)" {
		t.Errorf("query argument: %v", err)
	}
	// A script ending inside a string is refused, not sent.
	g.calls = nil
	if _, _, err := sqlRun(t, addr, "SELECT 1;\nSELECT 'open;\n", nil); err == nil || !strings.Contains(err.Error(), "ends inside a '…' string") || len(g.called()) != 1 {
		t.Errorf("open string: %v, calls %q", err, g.called())
	}
}

// TestSQLSessionFlags: --catalog sets the catalog session option and
// --schema runs USE, before the statements, which then run in that
// session; a failing USE fails the command before any statement runs.
func TestSQLSessionFlags(t *testing.T) {
	g, addr := startFakeGateway(t)
	if _, _, err := sqlRun(t, addr, "", nil, "SHOW TABLES", "--catalog", "warehouse", "--schema", "pub`lic"); err != nil {
		t.Fatal(err)
	}
	want := []string{"open @lake", "set @warehouse", "update USE `pub``lic` @warehouse", "query SHOW TABLES @warehouse.pub`lic"}
	if g.closed != 1 {
		t.Errorf("%d sessions closed, want 1", g.closed)
	}
	if got := g.called(); !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	g.calls = nil
	g.fail["USE `nope`"] = "schema nope does not exist"
	_, _, err := sqlRun(t, addr, "", nil, "--schema", "nope", "SELECT 1")
	if err == nil || err.Error() != "--schema: schema nope does not exist (NotFound)" || len(g.called()) != 2 {
		t.Errorf("USE of a missing schema: %v, calls %q", err, g.called())
	}
}

// TestSQLFooters: the row count follows a table; for the formats programs
// read it is left out, or written to stderr with --timing; writes print
// the rows written.
func TestSQLFooters(t *testing.T) {
	g, addr := startFakeGateway(t)
	for _, c := range []struct {
		args           []string
		stdout, stderr string
	}{
		{[]string{"SELECT 1"}, "n\n1\n2\n(2 rows)\n", ""},
		{[]string{"--timing", "SELECT 1"}, "n\n1\n2\n(2 rows, 1.5 ms)\n", ""},
		{[]string{"--format", "jsonl", "SELECT 1"}, "{\"n\":1}\n{\"n\":2}\n", ""},
		{[]string{"--format", "json", "--timing", "SELECT 1"}, "[\n{\"n\":1},\n{\"n\":2}\n]\n", "(2 rows, 1.5 ms)\n"},
		{[]string{"--format", "markdown", "SELECT 1"}, "|   n |\n| --: |\n|   1 |\n|   2 |\n", ""},
		{[]string{"INSERT INTO t VALUES (1)", "--format", "csv"}, "(3 rows written)\n", ""},
	} {
		out, errOut, err := sqlRun(t, addr, "", nil, c.args...)
		if err != nil || out != c.stdout || errOut != c.stderr {
			t.Errorf("%q: %v\nstdout %q want %q\nstderr %q want %q", c.args, err, out, c.stdout, errOut, c.stderr)
		}
	}
	// Statements that need no session open none on the gateway.
	if len(g.sessions) != 0 || g.closed != 0 {
		t.Errorf("%d sessions opened, %d closed, want none", len(g.sessions), g.closed)
	}
}

// TestShellInteractive drives the interactive shell: the prompt shows the
// tenant, catalog and schema and marks continuation lines (and what is
// left open); statements may span lines; Ctrl-C drops the statement being
// typed; meta commands in both styles; errors do not end the shell; each
// statement goes into the history as one entry.
func TestShellInteractive(t *testing.T) {
	g, addr := startFakeGateway(t)
	g.fail["SELECT bad"] = "column bad does not exist"
	ed := &scriptedEditor{lines: []any{
		"SELECT 1",
		"AS one;",
		"SELECT 'never", errInterrupted,
		"USE sales;",
		`\dt ord%`,
		".format csv",
		"SELECT 'it''s;",
		"ok';",
		"SELECT bad;",
		`\nope`,
		`\c warehouse`,
		`\timing off`,
		"SELECT 2; -- trailing",
		"exit",
		"SELECT 'not run';",
	}}
	out, errOut, err := sqlRun(t, addr, "", ed)
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, errOut)
	}
	wantPrompts := []string{
		"demo lake> ", "        -> ",
		"demo lake> ", "        '> ",
		"demo lake> ",
		"demo lake.sales> ", "demo lake.sales> ",
		"demo lake.sales> ", "              '> ",
		"demo lake.sales> ", "demo lake.sales> ", "demo lake.sales> ",
		"demo warehouse> ", "demo warehouse> ", "demo warehouse> ",
	}
	if !slices.Equal(ed.prompts, wantPrompts) {
		t.Errorf("prompts:\n%q\nwant\n%q", ed.prompts, wantPrompts)
	}
	wantCalls := []string{
		"query SELECT 1\nAS one @lake",
		"open @lake",
		"update USE sales @lake",
		"query SHOW TABLES LIKE 'ord%' @lake.sales",
		"query SELECT 'it''s;\nok' @lake.sales",
		"query SELECT bad @lake.sales",
		"set @warehouse",
		"query SELECT 2 @warehouse",
	}
	if got := g.called(); !slices.Equal(got, wantCalls) {
		t.Errorf("calls:\n%q\nwant\n%q", got, wantCalls)
	}
	wantOut := "lakegate sql: connected to " + addr + " as tenant demo. End statements with ;\n" +
		"\\? lists the shell's commands; \\q or Ctrl-D leaves.\n" +
		strings.Repeat("n\n1\n2\n(2 rows, 1.5 ms)\n", 3) + // table, \dt, csv
		"timing is off\nn\n1\n2\n(2 rows)\n"
	if out != wantOut {
		t.Errorf("stdout:\n%s\nwant\n%s", out, wantOut)
	}
	if g.closed != 1 {
		t.Errorf("%d sessions closed, want 1", g.closed)
	}
	if want := "ERROR: column bad does not exist (InvalidArgument)\nERROR: unknown command \\nope: \\? lists the commands\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	wantHistory := []string{"SELECT 1 AS one;", "USE sales;", `\dt ord%`, ".format csv", "SELECT 'it''s; ok';", "SELECT bad;", `\nope`, `\c warehouse`, `\timing off`, "SELECT 2; -- trailing", "exit"}
	if !slices.Equal(ed.history, wantHistory) {
		t.Errorf("history:\n%q\nwant\n%q", ed.history, wantHistory)
	}
	if !ed.closed {
		t.Error("the editor was not closed")
	}
}

// TestShellMetaCommands: the . and \ forms do the same; \i runs a file;
// \set shows and sets session options.
func TestShellMetaCommands(t *testing.T) {
	g, addr := startFakeGateway(t)
	file := filepath.Join(t.TempDir(), "x.sql")
	if err := os.WriteFile(file, []byte("SELECT 7;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ed := &scriptedEditor{lines: []any{".tables", `\dn`, ".schemas", `\d sales.orders`, ".describe orders", `\i ` + file, ".read " + file, `\set schema hr`, `\set`, `\set bogus 1`, ".help", `\q`}}
	out, errOut, err := sqlRun(t, addr, "", ed)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{
		"query SHOW TABLES @lake", "query SHOW SCHEMAS @lake", "query SHOW SCHEMAS @lake",
		"query DESCRIBE `sales`.`orders` @lake", "query DESCRIBE `orders` @lake",
		"query SELECT 7 @lake", "query SELECT 7 @lake", "open @lake", "set @lake.hr", "set @lake.hr",
	}
	if got := g.called(); !slices.Equal(got, wantCalls) {
		t.Errorf("calls:\n%q\nwant\n%q", got, wantCalls)
	}
	if !strings.Contains(out, "catalog  lake\nschema   hr\ntenant   demo\n") || !strings.Contains(out, `\dt .tables [PATTERN]`) {
		t.Errorf("stdout:\n%s", out)
	}
	if errOut != "ERROR: session option bogus: no such session option\n" {
		t.Errorf("stderr %q", errOut)
	}
}

// TestSQLUnreachable: a gateway that does not answer fails the shell at
// its start, with the address; a wrong token fails as unauthenticated.
func TestSQLUnreachable(t *testing.T) {
	_, addr := startFakeGateway(t)
	ed := &scriptedEditor{}
	t.Setenv("LAKEGATE_TOKEN", "tok")
	var out, errOut bytes.Buffer
	con := console{terminal: true, editor: func() (lineReader, error) { return ed, nil }}
	err := sqlCmd(context.Background(), []string{"--addr", addr, "--token", "wrong"}, con, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "unauthenticated (Unauthenticated)") {
		t.Errorf("wrong token: %v", err)
	}
}
