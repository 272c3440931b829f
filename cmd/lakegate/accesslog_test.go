package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// parseAccessLogArgs parses an `admin access-log` command line as
// runAdmin would after the command's name.
func parseAccessLogArgs(args []string, now time.Time) (*accessLogCmd, error) {
	a := &admin{ctx: context.Background(), name: "admin access-log", token: "lg_test"}
	// The global flags are parsed before the command's, as runAdmin does.
	if len(args) > 0 && args[0] == "--json" {
		a.json, args = true, args[1:]
	}
	return parseAccessLog(a, args, now)
}

// TestAccessLogQuery: the flags become a WHERE of parameters, newest
// first, 100 events unless --limit says otherwise.
func TestAccessLogQuery(t *testing.T) {
	now := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	const brief = "SELECT `time`, `principal`, `kind`, `decision`, `deny_reason`, `tables_read`, `tables_written`, `rows`, `duration_ms`, `statement` FROM `system`.`access_events`"
	const tableMatch = "(INSTR(CONCAT(',', tables_read), CONCAT(',', ?, '@')) > 0 OR INSTR(CONCAT(',', tables_written), CONCAT(',', ?, '@')) > 0)"
	for _, c := range []struct {
		args   []string
		sql    string
		params []string
		format string // "" for table
	}{
		{nil, brief + " ORDER BY `time` DESC LIMIT 100", nil, ""},
		{[]string{"--user", "analyst@demo"}, brief + " WHERE principal = ? ORDER BY `time` DESC LIMIT 100", []string{"analyst@demo"}, ""},
		{[]string{"--table", "sales.orders", "--limit", "5"}, brief + " WHERE " + tableMatch + " ORDER BY `time` DESC LIMIT 5",
			[]string{"sales.orders", "sales.orders"}, ""},
		{[]string{"--since", "90m", "--denied"}, brief + " WHERE `time` >= ? AND decision = 'denied' ORDER BY `time` DESC LIMIT 100",
			[]string{"2026-12-02 09:30:00.000000"}, ""},
		{[]string{"--format", "jsonl", "--user", "u", "--table", "s.t", "--since", "2026-12-01"},
			"SELECT * FROM `system`.`access_events` WHERE principal = ? AND " + tableMatch + " AND `time` >= ? ORDER BY `time` DESC LIMIT 100",
			[]string{"u", "s.t", "s.t", "2026-12-01 00:00:00.000000"}, "jsonl"},
		{[]string{"--json"}, "SELECT * FROM `system`.`access_events` ORDER BY `time` DESC LIMIT 100", nil, "json"},
	} {
		cmd, err := parseAccessLogArgs(c.args, now)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		sql, params := cmd.query.sql()
		if c.format == "" {
			c.format = "table"
		}
		if cmd.format != c.format {
			t.Errorf("%q: format %q, want %q", c.args, cmd.format, c.format)
		}
		if sql != c.sql || !slices.Equal(params, c.params) {
			t.Errorf("%q:\n%s %q\nwant\n%s %q", c.args, sql, params, c.sql, c.params)
		}
	}
}

// TestAccessLogValuesNeverInTheStatement: what the caller types as a user
// or a table — a quote, a comment, a second statement — reaches the
// gateway only as a parameter: the statement's text is the same as for
// an innocent value.
func TestAccessLogValuesNeverInTheStatement(t *testing.T) {
	innocent, err := parseAccessLogArgs([]string{"--user", "bob", "--table", "s.t"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := innocent.query.sql()
	for _, attack := range []struct{ user, table string }{
		{`x' OR '1'='1`, "s.t"},
		{`x\' OR 1=1 -- `, "s.t"},
		{"x'; DROP TABLE system.access_events; --", "s.t"},
		{"bob", "s.t' OR '1'='1"},
		{"bob", "s`.`t"},
		{"bob", "s.t/*"},
	} {
		cmd, err := parseAccessLogArgs([]string{"--user", attack.user, "--table", attack.table}, time.Now())
		if err != nil {
			t.Errorf("%q: %v", attack, err)
			continue
		}
		sql, params := cmd.query.sql()
		if sql != want {
			t.Errorf("%q changed the statement:\n%s", attack, sql)
		}
		if !slices.Equal(params, []string{attack.user, attack.table, attack.table}) {
			t.Errorf("%q: parameters %q", attack, params)
		}
	}
}

// TestAccessLogSince: a duration looks back from now (days too); a
// timestamp is UTC.
func TestAccessLogSince(t *testing.T) {
	now := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"15m", now.Add(-15 * time.Minute)},
		{"36h", now.Add(-36 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"0d", now},
		{"2026-12-01", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-12-01 09:30:00", time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)},
		{"2026-12-01T09:30:00", time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)},
		{"2026-12-01T10:30:00+01:00", time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)},
	} {
		got, err := parseSince(c.in, now)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// TestAccessLogUsageErrors: bad flags are usage errors naming the flag,
// before any connection.
func TestAccessLogUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "-5m"}, "negative"},
		{[]string{"--since", "yesterday"}, "--since"},
		{[]string{"--since", "-1d"}, "--since"},
		{[]string{"--limit", "0"}, "--limit"},
		{[]string{"--limit", "x"}, "--limit"},
		{[]string{"--table", "orders"}, "SCHEMA.TABLE"},
		{[]string{"--table", "sales."}, "SCHEMA.TABLE"},
		{[]string{"analyst@demo"}, "takes no arguments"},
		{[]string{"--nope"}, "--nope"},
	} {
		_, err := parseAccessLogArgs(c.args, time.Now())
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error about %s", c.args, err, c.want)
		}
	}
}

// TestAccessLogCommand: the command is in admin's table and usage, its
// help exits 0, and a bad --format or missing token fails before dialing.
func TestAccessLogCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"admin", "access-log", "-h"}, &out, &errOut); err != nil {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"--user", "--table", "--since", "--denied", "--limit", "--addr", "Examples:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help holds no %s:\n%s", want, out.String())
		}
	}
	if !strings.Contains(adminUsage, "access-log [--user U]") {
		t.Error("adminUsage lists no access-log")
	}
	t.Setenv("LAKEGATE_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"admin", "access-log", "--token", "lg_x", "--format", "xml"}, "--format"},
		{[]string{"admin", "access-log"}, "no token"},
		{[]string{"admin", "access-log", "--token", "lg_x", "--addr", "10.1.2.3:8815"}, "not a loopback"},
	} {
		err := run(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error about %s", c.args, err, c.want)
		}
	}
}
