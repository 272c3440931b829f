//go:build linux

package integration_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSQLCLIScripts: `lakegate sql` against the real gateway runs scripts
// from stdin and files statement by statement in one session (USE holds
// for the statements after it), sets the session from --catalog and
// --schema, stops at the first error unless --force, and its help exits 0.
func TestSQLCLIScripts(t *testing.T) {
	srv := startServe(t)
	token := srv.token(t, "analyst@demo")
	conn := []string{"sql", "--addr", srv.Addr, "--token", token}
	sqlCLI := func(stdin string, args ...string) cliResult {
		t.Helper()
		return runCLIStdin(t, stdin, append(append([]string{}, conn...), args...)...)
	}

	r := sqlCLI("-- count the orders\nUSE sales;\nSELECT count(*) AS n FROM orders; SELECT ';' AS semi\n", "--format", "csv")
	if r.code != 0 || r.stdout != "n\n5000\nsemi\n;\n" {
		t.Fatalf("stdin script: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlCLI("", "SELECT count(*) AS n FROM orders", "--schema", "sales", "--format", "jsonl")
	if r.code != 0 || r.stdout != "{\"n\":5000}\n" {
		t.Fatalf("--schema: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The catalog is the session's: in a catalog the tenant does not have,
	// the schema is not found, as USE would say.
	r = sqlCLI("", "--catalog", "elsewhere", "--schema", "sales", "SELECT 1")
	if r.code != 1 || !strings.Contains(r.stderr, "--schema: schema sales does not exist (NotFound)") {
		t.Fatalf("--catalog elsewhere: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlCLI("", "--catalog", "lake", "--schema", "hr", "SELECT 1")
	if r.code != 1 || !strings.Contains(r.stderr, "--schema: schema hr does not exist (NotFound)") {
		t.Fatalf("--schema of another principal's namespace: exit %d, stderr %q", r.code, r.stderr)
	}

	file := filepath.Join(t.TempDir(), "report.sql")
	if err := os.WriteFile(file, []byte("SELECT 1 AS a;\nSELECT nope FROM sales.orders;\nSELECT 2 AS b;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = sqlCLI("", "-f", file, "--format", "csv")
	if r.code != 1 || r.stdout != "a\n1\n" || !strings.HasPrefix(r.stderr, "lakegate: "+file+":2: ") {
		t.Fatalf("-f stops at the error: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = sqlCLI("", "-f", file, "--format", "csv", "--force")
	if r.code != 1 || r.stdout != "a\n1\nb\n2\n" || !strings.Contains(r.stderr, "1 of 3 statements failed") {
		t.Fatalf("--force: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	for _, args := range [][]string{{"sql", "-h"}, {"admin", "catalog", "list", "--help"}, {"--version"}} {
		r := runCLIStdin(t, "", args...)
		if r.code != 0 || r.stdout == "" || strings.Contains(r.stdout+r.stderr, token) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// runCLIStdin is runCLI with stdin.
func runCLIStdin(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lakegateBin, args...)
	cmd.Env = append(os.Environ(), "LAKEGATE_TOKEN=")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("lakegate %q: %v", args, err)
	}
	return res
}

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx).
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile("/dev/pts/"+itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	return ptm, pts
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// ptyScreen collects what the program writes to the terminal.
type ptyScreen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{}
}

func (s *ptyScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
	return len(p), nil
}

// waitFor waits until the screen holds want after offset from, and returns
// the offset after it.
func (s *ptyScreen) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	at, ok := s.waitWithin(from, want, 30*time.Second)
	if !ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Fatalf("the terminal never showed %q; it shows:\n%s", want, s.buf.String()[from:])
	}
	return at
}

// waitWithin is waitFor bounded by d, reporting whether want showed.
func (s *ptyScreen) waitWithin(from int, want string, d time.Duration) (int, bool) {
	deadline := time.After(d)
	for {
		s.mu.Lock()
		text := s.buf.String()
		s.mu.Unlock()
		if i := strings.Index(text[from:], want); i >= 0 {
			return from + i + len(want), true
		}
		select {
		case <-s.more:
		case <-deadline:
			return from, false
		}
	}
}

// TestSQLShellInteractive runs `lakegate sql` on a pseudo-terminal as a
// person would: the prompt shows tenant, catalog and schema, a statement
// may span lines, USE changes the prompt, meta commands work, the up arrow
// recalls the last statement, Ctrl-C cancels a running statement and keeps
// the shell, and \q leaves with exit status 0.
func TestSQLShellInteractive(t *testing.T) {
	srv := startServe(t)
	ptm, pts := openPTY(t)
	defer ptm.Close()
	cmd := exec.Command(lakegateBin, "sql", "--addr", srv.Addr)
	cmd.Env = append(os.Environ(), "LAKEGATE_TOKEN="+srv.token(t, "analyst@demo"), "LAKEGATE_HISTORY=", "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	screen := &ptyScreen{more: make(chan struct{}, 1)}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	typeLine := func(s string) {
		if _, err := ptm.Write([]byte(s + "\r")); err != nil {
			t.Fatal(err)
		}
	}

	at := screen.waitFor(t, 0, "demo lake> ")
	typeLine("SELECT count(*) AS n")
	at = screen.waitFor(t, at, "        -> ")
	typeLine("FROM sales.orders;")
	at = screen.waitFor(t, at, "5000")
	at = screen.waitFor(t, at, "(1 rows, ")
	typeLine("USE sales;")
	at = screen.waitFor(t, at, "demo lake.sales> ")
	typeLine(`\dt`)
	at = screen.waitFor(t, at, "orders")
	typeLine(".format csv")
	typeLine("SELECT 'a;b' AS semi;")
	at = screen.waitFor(t, at, "semi\r\na;b\r\n")
	// History: the up arrow recalls the last statement, Enter runs it.
	typeLine("\x1b[A")
	at = screen.waitFor(t, at, "semi\r\na;b\r\n")
	typeLine(`\d orders`)
	at = screen.waitFor(t, at, "customer_id")
	typeLine("SELECT nope;")
	at = screen.waitFor(t, at, "ERROR: ")
	// Ctrl-C cancels the running statement and keeps the shell.
	typeLine("SELECT count(*) FROM sales.orders a, sales.orders b, sales.orders c, sales.customers d;")
	at = screen.waitFor(t, at, "SELECT count(*) FROM sales.orders a")
	// Ctrl-C is a signal only once the line editor has handed the
	// terminal back (in raw mode it is a byte the next prompt reads, and
	// drops): press it until the statement is cancelled. The bound is a
	// failure bound.
	cancelled := false
	for range 30 {
		if _, err := ptm.Write([]byte{0x03}); err != nil {
			t.Fatal(err)
		}
		if at, cancelled = screen.waitWithin(at, "cancelled", time.Second); cancelled {
			break
		}
	}
	if !cancelled {
		t.Fatal("Ctrl-C never cancelled the running statement")
	}
	typeLine("SELECT 40 + 2 AS answer;")
	at = screen.waitFor(t, at, "answer\r\n42\r\n")
	typeLine(`\q`)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; the terminal shows:\n%s", err, screen.buf.String()[at:])
		}
	case <-time.After(30 * time.Second):
		t.Fatal(`the shell did not leave on \q`)
	}
}
