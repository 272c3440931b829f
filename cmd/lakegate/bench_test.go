package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAdminBenchWrites(t *testing.T) {
	t.Setenv("LAKEGATE_METASRV", "")
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METALAKE", "")
	server := startAdminMetasrv(t)
	admin := func(token string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"admin", "--server", server, "--token", token}, args...), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	alice := func(args ...string) (string, error) {
		return admin("tok-alice", append([]string{"--metalake", "acme"}, args...)...)
	}
	if out, err := admin("tok-admin", "metalake", "create", "acme", "--owner", "alice@acme"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, err := alice("catalog", "create", "other"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// leftovers lists the run's objects still in the metalake.
	leftovers := func(prefix string) []string {
		t.Helper()
		var left []string
		out, err := alice("catalog", "list", "--json")
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var cl struct{ Catalogs []struct{ Name string } }
		if err := json.Unmarshal([]byte(out), &cl); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(cl.Catalogs) == 0 {
			t.Fatalf("no catalogs listed (the test's own are there): %s", out)
		}
		for _, c := range cl.Catalogs {
			if strings.HasPrefix(c.Name, prefix+"_") {
				left = append(left, "catalog "+c.Name)
			}
		}
		if _, err := alice("tag", "get", prefix); err == nil {
			left = append(left, "tag "+prefix)
		}
		return left
	}
	events := func() int {
		t.Helper()
		out, err := alice("events", "--limit", "1000", "--json")
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.Count(out, `"operation":"AssociateTags"`)
	}

	t.Run("measures committed writes and leaves nothing behind", func(t *testing.T) {
		before := events()
		out, err := alice("bench", "writes", "--writers", "4", "--writes", "40", "--json")
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var rep benchReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if rep.Writes != 40 || rep.Writers != 4 || rep.WritesPerSecond <= 0 ||
			!(rep.P50Ms > 0 && rep.P50Ms <= rep.P90Ms && rep.P90Ms <= rep.P99Ms && rep.P99Ms <= rep.P999Ms && rep.P999Ms <= rep.MaxMs) {
			t.Fatalf("report: %+v", rep)
		}
		// 40 timed writes and one untimed attach and detach per writer,
		// each an applied change of its own.
		if got := events() - before; got != 48 {
			t.Fatalf("%d tag association events, want 48", got)
		}
		if left := leftovers("lgbench"); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
		out, err = alice("bench", "writes", "--writers", "2", "--writes", "6", "--prefix", "b2")
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for _, want := range []string{"writes:", "6 (2 writers)", "writes/s:", "latency p99:"} {
			if !strings.Contains(out, want) {
				t.Fatalf("table output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("--keep leaves the objects", func(t *testing.T) {
		if out, err := alice("bench", "writes", "--writers", "2", "--writes", "4", "--prefix", "kept", "--keep"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		want := []string{"catalog kept_0000", "catalog kept_0001", "tag kept"}
		if left := leftovers("kept"); !slices.Equal(left, want) {
			t.Fatalf("after --keep: %v, want %v", left, want)
		}
	})

	t.Run("an existing name stops the run and is left untouched", func(t *testing.T) {
		if out, err := alice("catalog", "create", "mine_0001", "--comment", "not the benchmark's"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		out, err := alice("bench", "writes", "--writers", "3", "--writes", "10", "--prefix", "mine")
		if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "catalog mine_0001 exists already") {
			t.Fatalf("err = %v: %s", err, out)
		}
		if left := leftovers("mine"); len(left) != 1 || left[0] != "catalog mine_0001" {
			t.Fatalf("after the refused run: %v, want only the existing catalog", left)
		}
		if out, _ := alice("catalog", "get", "mine_0001"); !strings.Contains(out, "not the benchmark's") {
			t.Fatalf("the existing catalog changed: %s", out)
		}
	})

	t.Run("a missed target fails after cleaning up", func(t *testing.T) {
		out, err := alice("bench", "writes", "--writers", "2", "--writes", "4", "--max-p99", "1ns", "--min-rate", "1e9")
		if !errors.Is(err, errBenchShort) || !strings.Contains(err.Error(), "above --max-p99 1ns") || !strings.Contains(err.Error(), "below --min-rate 1e+09") {
			t.Fatalf("err = %v: %s", err, out)
		}
		if left := leftovers("lgbench"); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})

	t.Run("a metalake the caller cannot see creates nothing", func(t *testing.T) {
		out, err := admin("tok-alice", "--metalake", "nope", "bench", "writes", "--writers", "2", "--writes", "4")
		if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "creating tag lgbench") {
			t.Fatalf("err = %v: %s", err, out)
		}
	})

	for _, args := range [][]string{
		{"--writers", "0"}, {"--writers", "1025"}, {"--writes", "0"}, {"--prefix", "Bad"}, {"--prefix", "a-b"},
		{"--prefix", ""}, {"--prefix", strings.Repeat("a", 41)}, {"--max-p99", "-1s"}, {"extra"},
	} {
		if out, err := alice(append([]string{"bench", "writes"}, args...)...); !errors.Is(err, errUsage) {
			t.Errorf("bench writes %q: err = %v, want a usage error: %s", args, err, out)
		}
	}
	if out, err := admin("tok-alice", "bench", "writes"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--metalake") {
		t.Errorf("without a metalake: err = %v: %s", err, out)
	}
}
