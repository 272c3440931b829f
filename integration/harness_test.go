package integration_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	drv "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// lakegateBin is the binary built once for the whole package.
var lakegateBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lakegate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lakegateBin = filepath.Join(dir, "lakegate")
	build := exec.Command("go", "build", "-tags=duckdb_arrow", "-o", lakegateBin, "lakegate/cmd/lakegate")
	if bin := os.Getenv("LAKEGATE_BENCH_BIN"); bin != "" {
		// Benchmarks of another build (to compare two versions with
		// benchstat): a copy of it stands in for the one built here.
		build = exec.Command("cp", bin, lakegateBin)
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building lakegate:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startTimeout bounds how long a server may take to print its banner; it is a
// failure bound, not a synchronisation mechanism.
const startTimeout = 90 * time.Second

// server is one running `lakegate serve` process.
type server struct {
	Addr    string
	DataDir string
	Banner  string

	cmd    *exec.Cmd
	stderr *lockedBuffer
}

var bannerAddr = regexp.MustCompile(`serving Flight SQL on grpc(?:\+tls)?://(\S+)`)

// startServe runs `lakegate serve` with a fresh data directory (unless args
// name one) on a free loopback port and waits for its banner.
func startServe(t testing.TB, args ...string) *server {
	t.Helper()
	dataDir := t.TempDir()
	// Every port is chosen by the OS so test servers never collide.
	full := append([]string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0"}, args...)
	return startServeArgs(t, dataDir, full...)
}

func startServeArgs(t testing.TB, dataDir string, args ...string) *server {
	t.Helper()
	s, err := launch(t, dataDir, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launch runs lakegate with args — env is the child's whole environment,
// nil meaning this process's — and waits for the banner's address line;
// Banner holds every line up to it (serve prints that line last). The
// process is stopped at owner's cleanup. Errors are returned rather than
// reported, so a benchmark may start a server that outlives one of its
// sub-benchmarks.
func launch(owner testing.TB, dataDir string, env []string, args ...string) (*server, error) {
	cmd := exec.Command(lakegateBin, args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{DataDir: dataDir, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	owner.Cleanup(func() { s.stop(owner) })

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var banner strings.Builder
	deadline := time.After(startTimeout)
	for s.Addr == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				return nil, fmt.Errorf("lakegate %s exited before serving:\n%s\n%s", args[0], banner.String(), s.stderr.String())
			}
			banner.WriteString(line + "\n")
			if m := bannerAddr.FindStringSubmatch(line); m != nil {
				s.Addr = m[1]
			}
		case <-deadline:
			s.stop(owner)
			return nil, fmt.Errorf("lakegate %s printed no banner within %s:\n%s", args[0], startTimeout, s.stderr.String())
		}
	}
	go func() { // keep draining so the process never blocks on a full pipe
		for range lines {
		}
	}()
	s.Banner = banner.String()
	return s, nil
}

func (s *server) stop(t testing.TB) {
	if s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
		t.Errorf("lakegate serve did not stop on SIGTERM; stderr:\n%s", s.stderr.String())
	}
	// A build with the race detector (LAKEGATE_BENCH_BIN) reports races
	// on stderr.
	if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
		t.Errorf("lakegate serve reported a data race:\n%s", s.stderr.String())
	}
}

// token returns a demo principal's token from the generated tokens file.
func (s *server) token(t testing.TB, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.DataDir, "tokens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == id {
			return f[1]
		}
	}
	t.Fatalf("no token for %s", id)
	return ""
}

func (s *server) uri() string { return "grpc://" + s.Addr }

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// client is an ADBC connection with its database.
type client struct {
	db   adbc.Database
	conn adbc.Connection
	mem  *memory.CheckedAllocator
}

// dial opens an ADBC Flight SQL connection with the given options (uri is
// filled in when missing) and closes it at cleanup.
func dial(t testing.TB, uri string, opts map[string]string) (*client, error) {
	t.Helper()
	o := map[string]string{adbc.OptionKeyURI: uri, drv.OptionCookieMiddleware: adbc.OptionValueEnabled}
	for k, v := range opts {
		o[k] = v
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	db, err := drv.NewDriver(mem).NewDatabase(o)
	if err != nil {
		return nil, err
	}
	conn, err := db.Open(context.Background())
	if err != nil {
		db.Close()
		return nil, err
	}
	c := &client{db: db, conn: conn, mem: mem}
	t.Cleanup(func() {
		conn.Close()
		db.Close()
		// Every batch the driver handed out was released.
		mem.AssertSize(t, 0)
	})
	return c, nil
}

func mustDial(t testing.TB, uri string, opts map[string]string) *client {
	t.Helper()
	c, err := dial(t, uri, opts)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	return c
}

func bearer(token string) map[string]string {
	return map[string]string{drv.OptionAuthorizationHeader: "Bearer " + token}
}

// query runs sql and returns all rows as Go values (via ValueStr for
// simplicity of comparison) plus the schema.
func (c *client) query(ctx context.Context, sql string) (*arrow.Schema, [][]string, error) {
	var schema *arrow.Schema
	var rows [][]string
	err := c.read(ctx, sql, func(rdr array.RecordReader) error {
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for r := 0; r < int(rec.NumRows()); r++ {
				row := make([]string, rec.NumCols())
				for c, col := range rec.Columns() {
					if col.IsNull(r) {
						row[c] = "NULL"
					} else {
						row[c] = col.ValueStr(r)
					}
				}
				rows = append(rows, row)
			}
		}
		schema = rdr.Schema()
		return rdr.Err()
	})
	return schema, rows, err
}

// read runs sql with ExecuteQuery on a new statement of c and hands its
// result to f; the statement and the reader are released after f.
func (c *client) read(ctx context.Context, sql string, f func(array.RecordReader) error) error {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(sql); err != nil {
		return err
	}
	rdr, _, err := stmt.ExecuteQuery(ctx)
	if err != nil {
		return err
	}
	defer rdr.Release()
	return f(rdr)
}

// prepare prepares sql on a new statement of c, closed at cleanup.
func (c *client) prepare(t testing.TB, sql string) adbc.Statement {
	t.Helper()
	stmt, err := c.conn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stmt.Close() })
	if err := stmt.SetSqlQuery(sql); err != nil {
		t.Fatal(err)
	}
	if err := stmt.Prepare(context.Background()); err != nil {
		t.Fatalf("preparing %s: %v", sql, err)
	}
	return stmt
}

// adbcStatus returns the ADBC status of err, or StatusOK when err is not an
// ADBC error (so a nil error never matches a failure status).
func adbcStatus(err error) adbc.Status {
	var ae adbc.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return adbc.StatusOK
}

// readAll drains a reader (helper for io-less tests).
var _ = io.EOF
