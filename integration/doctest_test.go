package integration_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The doc-tests run the shell blocks of README.md and docs/operations.md
// that are marked as runnable, so the walkthroughs cannot drift from the
// code. A marker is an HTML comment on the line right before a fenced
// block (GitHub renders nothing for it):
//
//	<!-- doctest -->            the next ```sh block runs and must exit 0
//	<!-- doctest: exit N -->    the next ```sh block runs and must exit N
//	<!-- doctest: output -->    the next fenced block is what the last run
//	                            block prints (stdout and stderr together),
//	                            compared line by line, trailing spaces ignored
//
// A document's blocks run in order in one bash (errexit, pipefail) in a
// fresh directory holding bin/lakegate and bin/standin, the binaries this
// package builds, so variables and files carry from one block to the next,
// as in a reader's terminal. Processes a block starts with & are stopped
// when the document ends: bash's EXIT trap signals and waits for its jobs,
// and the whole process group is killed after that as a backstop.
//
// Addresses: the README's reader runs `make run` in another terminal; here
// the harness starts `lakegate serve` on free ports instead and points the
// blocks at it with LAKEGATE_ADDR and LAKEGATE_METASRV. The operations
// walkthrough declares its addresses as `: "${NAME:=127.0.0.1:PORT}"`;
// the harness gives every such NAME a free port, so no doc-test collides
// with another test.

// docRunTimeout bounds one document's run; a failure bound, not a wait.
const docRunTimeout = 3 * time.Minute

// docStep is one runnable block and what it must do.
type docStep struct {
	line     int    // line of the block's opening fence (1-based)
	code     string // the block's text
	wantExit int
	output   *string // expected output, when an output block follows
}

var doctestMarker = regexp.MustCompile(`^<!--\s*doctest(?::\s*(.*?))?\s*-->\s*$`)

// parseDocSteps returns the runnable blocks of a Markdown document. A
// marker not followed by a fenced block, an output block with no run
// block before it, a run block in another language than sh or bash, and
// an unknown marker are errors: a typo must not silently stop a block
// from being tested.
func parseDocSteps(doc string) ([]docStep, error) {
	lines := strings.Split(doc, "\n")
	var steps []docStep
	lastWasRun := false // the previous fenced block was a run block without output yet
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		if strings.HasPrefix(line, "```") {
			// An unmarked block ends the chance of an output block for
			// the run block before it; skip its body.
			lastWasRun = false
			end, err := fenceEnd(lines, i)
			if err != nil {
				return nil, err
			}
			i = end
			continue
		}
		m := doctestMarker.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "<!--") && strings.Contains(line, "doctest") {
				return nil, fmt.Errorf("line %d: malformed doctest marker %q", i+1, line)
			}
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			return nil, fmt.Errorf("line %d: doctest marker not directly followed by a fenced block", i+1)
		}
		open := i + 1
		end, err := fenceEnd(lines, open)
		if err != nil {
			return nil, err
		}
		body := strings.Join(lines[open+1:end], "\n")
		lang := strings.Fields(strings.TrimPrefix(lines[open], "```") + " ")
		arg := m[1]
		switch {
		case arg == "output":
			if !lastWasRun {
				return nil, fmt.Errorf("line %d: output block without a run block right before it", i+1)
			}
			out := body
			steps[len(steps)-1].output = &out
			lastWasRun = false
		case arg == "" || strings.HasPrefix(arg, "exit "):
			if len(lang) == 0 || (lang[0] != "sh" && lang[0] != "bash") {
				return nil, fmt.Errorf("line %d: a runnable block must be ```sh or ```bash", open+1)
			}
			want := 0
			if arg != "" {
				n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(arg, "exit ")))
				if err != nil || n < 1 || n > 255 {
					return nil, fmt.Errorf("line %d: bad exit status in marker %q", i+1, line)
				}
				want = n
			}
			steps = append(steps, docStep{line: open + 1, code: body, wantExit: want})
			lastWasRun = true
		default:
			return nil, fmt.Errorf("line %d: unknown doctest marker %q", i+1, line)
		}
		i = end
	}
	return steps, nil
}

// fenceEnd returns the line of the fence closing the block opened at open.
func fenceEnd(lines []string, open int) (int, error) {
	for j := open + 1; j < len(lines); j++ {
		if strings.TrimRight(lines[j], " \t\r") == "```" {
			return j, nil
		}
	}
	return 0, fmt.Errorf("line %d: fenced block never closed", open+1)
}

// TestDocStepsParse pins the marker rules, so that a mistyped marker fails
// the doc-test instead of leaving a block untested.
func TestDocStepsParse(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    []docStep
		wantErr string
	}{
		{"unmarked blocks are not run", "```sh\nrm -rf /\n```\n", nil, ""},
		{"run block", "text\n<!-- doctest -->\n```sh\necho hi\n```\n", []docStep{{line: 3, code: "echo hi"}}, ""},
		{"bash and exit status", "<!-- doctest: exit 1 -->\n```bash\nfalse\n```\n", []docStep{{line: 2, code: "false", wantExit: 1}}, ""},
		{"output block", "<!-- doctest -->\n```sh\necho hi\n```\n\n<!-- doctest: output -->\n```text\nhi\n```\n",
			[]docStep{{line: 2, code: "echo hi", output: strPtr("hi")}}, ""},
		{"output after an unmarked block", "<!-- doctest -->\n```sh\necho hi\n```\n```sh\nx\n```\n<!-- doctest: output -->\n```text\nhi\n```\n",
			nil, "output block without a run block"},
		{"output first", "<!-- doctest: output -->\n```text\nhi\n```\n", nil, "output block without a run block"},
		{"marker before prose", "<!-- doctest -->\nprose\n```sh\nx\n```\n", nil, "not directly followed"},
		{"marker on another language", "<!-- doctest -->\n```go\nx\n```\n", nil, "must be ```sh"},
		{"unknown marker", "<!-- doctest: skip -->\n```sh\nx\n```\n", nil, "unknown doctest marker"},
		{"malformed marker", "<!-- doctest\n```sh\nx\n```\n", nil, "malformed"},
		{"bad exit", "<!-- doctest: exit zero -->\n```sh\nx\n```\n", nil, "bad exit status"},
		{"unclosed", "<!-- doctest -->\n```sh\nx\n", nil, "never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDocSteps(tt.doc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d steps, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.line != w.line || g.code != w.code || g.wantExit != w.wantExit || (g.output == nil) != (w.output == nil) ||
					(g.output != nil && *g.output != *w.output) {
					t.Errorf("step %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func strPtr(s string) *string { return &s }

// docFile reads a document of the repository (the package runs in
// integration/).
func docFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocsReadme runs the README's walkthrough against a fresh `lakegate
// serve`, as a reader who ran `make run` in another terminal.
func TestDocsReadme(t *testing.T) {
	doc := docFile(t, "README.md")
	steps, err := parseDocSteps(doc)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	// The walkthrough is the README's point: losing its markers must fail.
	if len(steps) < 8 {
		t.Fatalf("README.md has %d runnable blocks, want the walkthrough's (at least 8)", len(steps))
	}
	work := docWorkDir(t)
	dataDir := filepath.Join(work, "data")
	s := startServeArgs(t, dataDir, "serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`metasrv REST on (http://\S+)`).FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metasrv address in the banner:\n%s", s.Banner)
	}
	runDocSteps(t, "README.md", work, steps, []string{"LAKEGATE_ADDR=" + s.Addr, "LAKEGATE_METASRV=" + m[1]})
}

// TestDocsOperations runs docs/operations.md's single-host walkthrough:
// certificates, three metasrv nodes, two gateways, a first tenant, and the
// S3 stand-in by hand.
func TestDocsOperations(t *testing.T) {
	doc := docFile(t, "docs/operations.md")
	steps, err := parseDocSteps(doc)
	if err != nil {
		t.Fatalf("docs/operations.md: %v", err)
	}
	if len(steps) < 6 {
		t.Fatalf("docs/operations.md has %d runnable blocks, want the walkthrough's (at least 6)", len(steps))
	}
	// Every address the walkthrough declares gets a free port.
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*):=127\.0\.0\.1:\d+\}`).FindAllStringSubmatch(doc, -1) {
		names[m[1]] = true
	}
	if len(names) < 13 {
		t.Fatalf("docs/operations.md declares %d addresses, want at least 13 (3 metasrv nodes, 2 gateways)", len(names))
	}
	var env []string
	ports := freePorts(t, len(names))
	i := 0
	for name := range names {
		env = append(env, fmt.Sprintf("%s=127.0.0.1:%d", name, ports[i]))
		i++
	}
	runDocSteps(t, "docs/operations.md", docWorkDir(t), steps, env)
}

// docWorkDir returns a fresh directory laid out like the repository root
// after `make build`: bin/lakegate, and bin/standin for the S3 walkthrough.
func docWorkDir(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lakegateBin, filepath.Join(bin, "lakegate")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(standinBin(t), filepath.Join(bin, "standin")); err != nil {
		t.Fatal(err)
	}
	return work
}

// standinBin builds the S3 stand-in's command once, next to lakegateBin.
func standinBin(t *testing.T) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(lakegateBin), "standin")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	out, err := exec.Command("go", "build", "-o", path, "lakegate/localstack/standin/cmd/standin").CombinedOutput()
	if err != nil {
		t.Fatalf("building standin: %v\n%s", err, out)
	}
	return path
}

// freePorts returns n distinct loopback ports that were free a moment ago
// (all are held open together, so none is returned twice).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// runDocSteps runs steps in one bash in work with env added to a minimal
// environment, and checks each step's exit status and output.
func runDocSteps(t *testing.T, name, work string, steps []docStep, env []string) {
	t.Helper()
	state := t.TempDir() // the blocks, their outputs and statuses, outside work
	var script strings.Builder
	// On any exit — the end, or errexit in a failing block — stop what
	// the blocks started in the background and wait for it.
	script.WriteString("trap 's=$?; set +e; kill $(jobs -p) 2>/dev/null; wait; exit $s' EXIT\nset -o pipefail\n")
	for i, st := range steps {
		block := filepath.Join(state, fmt.Sprintf("block.%d.sh", i))
		if err := os.WriteFile(block, []byte(st.code+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(state, fmt.Sprintf("out.%d", i))
		rc := filepath.Join(state, fmt.Sprintf("rc.%d", i))
		if st.wantExit == 0 {
			// errexit: the first failing command ends the run, and the
			// missing rc file says which block it was in.
			fmt.Fprintf(&script, "set -e\n. %q >%q 2>&1\necho 0 >%q\n", block, out, rc)
		} else {
			fmt.Fprintf(&script, "set +e\n. %q >%q 2>&1\necho $? >%q\nset -e\n", block, out, rc)
		}
	}
	main := filepath.Join(state, "main.sh")
	if err := os.WriteFile(main, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), docRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", main)
	cmd.Dir = work
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + work, // the shell's history and any dotfile stay in the test's directory
		"TMPDIR=" + state,
		"LANG=C.UTF-8",
	}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { stopGroup(t, pgid) })
	runErr := cmd.Wait()
	if ctx.Err() != nil {
		t.Errorf("%s: the walkthrough ran past %s", name, docRunTimeout)
	}
	for i, st := range steps {
		out, _ := os.ReadFile(filepath.Join(state, fmt.Sprintf("out.%d", i)))
		rcText, err := os.ReadFile(filepath.Join(state, fmt.Sprintf("rc.%d", i)))
		if err != nil {
			t.Fatalf("%s:%d: the block failed (%v); its output:\n%s\n(bash: %s)", name, st.line, runErr, out, stderr.String())
		}
		rc, _ := strconv.Atoi(strings.TrimSpace(string(rcText)))
		if rc != st.wantExit {
			t.Fatalf("%s:%d: the block exited %d, want %d; its output:\n%s", name, st.line, rc, st.wantExit, out)
		}
		if st.output != nil {
			if got, want := normalizeOutput(string(out)), normalizeOutput(*st.output); got != want {
				t.Errorf("%s:%d: the block printed\n%s\nthe document says\n%s", name, st.line, got, want)
			}
		}
	}
	if runErr != nil {
		t.Errorf("%s: bash: %v\n%s", name, runErr, stderr.String())
	}
}

// normalizeOutput drops trailing spaces of each line and trailing blank
// lines: a table's padding is not part of what a reader compares.
func normalizeOutput(s string) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), " \t\r"))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// stopGroup ends whatever is left of the process group pgid: SIGTERM, up
// to 10 s for it to go, then SIGKILL. The EXIT trap normally leaves nothing.
func stopGroup(t *testing.T, pgid int) {
	if errors.Is(syscall.Kill(-pgid, syscall.SIGTERM), syscall.ESRCH) {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling for exit, bounded by the deadline
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	t.Errorf("processes of the walkthrough outlived it by 10 s and were killed")
}
