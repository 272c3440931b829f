package main

import (
	"bytes"
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// helpCommands lists every command line that has a help: the top level,
// each command, and each admin command; token says whether it takes
// --token.
func helpCommands() []struct {
	args  []string
	token bool
} {
	cmds := []struct {
		args  []string
		token bool
	}{
		{nil, false},
		{[]string{"serve"}, false},
		{[]string{"gateway"}, false},
		{[]string{"metasrv"}, false},
		{[]string{"sql"}, true},
		{[]string{"ingest"}, true},
		{[]string{"mcp"}, true},
		{[]string{"token"}, false},
		{[]string{"token", "new"}, false},
		{[]string{"version"}, false},
		{[]string{"admin"}, true},
	}
	keys := make([]string, 0, len(adminCommands))
	for k := range adminCommands {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		cmds = append(cmds, struct {
			args  []string
			token bool
		}{append([]string{"admin"}, strings.Fields(k)...), true})
	}
	return cmds
}

// TestHelpNeverPrintsTheToken: help output is pasted into bug reports, so
// `-h` and `--help` of every command print no token — not the one in
// $LAKEGATE_TOKEN, not one given with --token before the help flag — and
// exit 0 with the help on stdout. `admin <cmd> -h` printed the token as
// the --token flag's default.
func TestHelpNeverPrintsTheToken(t *testing.T) {
	const envToken = "lg_ENVSECRETenvsecretENVSECRETenvsecret0000000"
	const flagToken = "lg_FLAGSECRETflagsecretFLAGSECRETflagsecret000"
	t.Setenv("LAKEGATE_TOKEN", envToken)
	t.Setenv("LAKEGATE_METALAKE", "demo")
	for _, c := range helpCommands() {
		lines := [][]string{
			append(slices.Clone(c.args), "-h"),
			append(slices.Clone(c.args), "--help"),
		}
		if c.token {
			lines = append(lines, append(append(slices.Clone(c.args), "--token", flagToken), "-h"))
			if len(c.args) > 1 && c.args[0] == "admin" {
				lines = append(lines, append(append([]string{"admin", "--token", flagToken}, c.args[1:]...), "--help"))
			}
		}
		for _, args := range lines {
			var out, errOut bytes.Buffer
			err := run(context.Background(), args, &out, &errOut)
			if err != nil {
				t.Errorf("%q: %v (stderr %q), want exit 0", args, err, errOut.String())
			}
			all := out.String() + errOut.String()
			for _, secret := range []string{envToken, flagToken} {
				if strings.Contains(all, secret) {
					t.Errorf("%q printed a token:\n%s", args, all)
				}
			}
			if out.Len() == 0 || !strings.Contains(out.String(), "Usage:") {
				t.Errorf("%q: stdout %q holds no usage", args, out.String())
			}
			if strings.Contains(all, "help requested") {
				t.Errorf("%q: %q", args, all)
			}
		}
	}
}

// TestHelpStyle: every command's help shows its flags as --flag, and
// holds examples; no default is printed twice.
func TestHelpStyle(t *testing.T) {
	t.Setenv("LAKEGATE_TOKEN", "")
	for _, c := range helpCommands() {
		args := append(slices.Clone(c.args), "--help")
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		help := out.String()
		if !strings.Contains(help, "Examples:") {
			t.Errorf("%q: no examples:\n%s", args, help)
		}
		for _, line := range strings.Split(help, "\n") {
			if f := strings.Fields(line); len(f) > 0 && len(f[0]) > 2 && f[0][0] == '-' && f[0][1] != '-' && !strings.HasSuffix(f[0], ",") {
				t.Errorf("%q: single-dash long flag in %q", args, line)
			}
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%q: default printed twice in %q", args, line)
			}
		}
	}
}

// TestFlagsAfterArguments: flags may follow positional arguments.
func TestFlagsAfterArguments(t *testing.T) {
	t.Setenv("LAKEGATE_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		// Parsed up to the token check: the flags after the query were read.
		{[]string{"sql", "SELECT 1", "--format", "xml"}, "--format"},
		{[]string{"ingest", "x.csv", "s.t", "--mode", "merge"}, "--mode"},
		{[]string{"sql", "SELECT 1", "--nope"}, "unknown flag --nope"},
	} {
		err := run(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error about %s", c.args, err, c.want)
		}
	}
}

// TestVersion: `lakegate version` and `--version` print the module
// version, then the VCS revision (marked when modified), commit time and
// Go version the build recorded; "(devel)" without a version.
func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "lakegate", Version: "v0.4.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3726099abcdef"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{bi, true, "lakegate v0.4.0\nrevision: 3726099abcdef (modified)\ncommit time: 2026-12-01T10:00:00Z\ngo: go1.26.8\n"},
		{&debug.BuildInfo{Main: debug.Module{Path: "lakegate", Version: "(devel)"}}, true, "lakegate (devel)\n"},
		{nil, false, "lakegate (devel)\n"},
	} {
		if got := versionText(buildVersion(c.bi, c.ok), c.bi, c.ok); got != c.want {
			t.Errorf("versionText:\n%q\nwant\n%q", got, c.want)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err != nil || !strings.HasPrefix(out.String(), "lakegate "+version+"\n") {
			t.Errorf("%q: %v, %q", args, err, out.String())
		}
	}
}
