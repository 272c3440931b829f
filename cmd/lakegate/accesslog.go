package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// accessLogUsage is the argument line of `lakegate admin access-log`.
const accessLogUsage = "[--user U] [--table SCHEMA.TABLE] [--since DURATION|TIMESTAMP] [--denied] [--limit N] [--format F] [--addr HOST:PORT]"

// accessLogDefaultLimit is the number of events shown without --limit.
const accessLogDefaultLimit = 100

// accessLogQuery is what `admin access-log` asks of system.access_events.
type accessLogQuery struct {
	user   string    // principal, "" for any
	table  string    // SCHEMA.TABLE read or written, "" for any
	since  time.Time // events at or after, zero for any
	denied bool      // denials only
	limit  int
	// allColumns selects every column (the formats programs read); the
	// table format shows the columns a person scans.
	allColumns bool
}

// accessLogBrief are the columns the table format shows. time and rows
// are keywords of MySQL's grammar, so every name is quoted.
var accessLogBrief = []string{"time", "principal", "kind", "decision", "deny_reason", "tables_read", "tables_written", "rows", "duration_ms", "statement"}

// sql returns the statement and its parameters. Values the caller typed
// (user, table, since) reach the gateway only as parameters of a prepared
// statement, never in its text, so no quote in them can change the query.
func (q accessLogQuery) sql() (string, []string) {
	cols := "*"
	if !q.allColumns {
		quoted := make([]string, len(accessLogBrief))
		for i, c := range accessLogBrief {
			quoted[i] = quoteIdent(c)
		}
		cols = strings.Join(quoted, ", ")
	}
	var where, params []string
	if q.user != "" {
		where = append(where, "principal = ?")
		params = append(params, q.user)
	}
	if q.table != "" {
		// tables_read and tables_written list "schema.table@version"
		// separated by commas: the table matches one whole entry.
		where = append(where, "(INSTR(CONCAT(',', tables_read), CONCAT(',', ?, '@')) > 0"+
			" OR INSTR(CONCAT(',', tables_written), CONCAT(',', ?, '@')) > 0)")
		params = append(params, q.table, q.table)
	}
	if !q.since.IsZero() {
		where = append(where, "`time` >= ?")
		params = append(params, q.since.UTC().Format("2006-01-02 15:04:05.000000"))
	}
	if q.denied {
		where = append(where, "decision = 'denied'")
	}
	var b strings.Builder
	b.WriteString("SELECT " + cols + " FROM `system`.`access_events`")
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	b.WriteString(" ORDER BY `time` DESC LIMIT " + strconv.Itoa(q.limit))
	return b.String(), params
}

// parseSince reads --since: a duration before now (Go's syntax, such as
// 90m or 36h, or whole days such as 7d), or a UTC timestamp (RFC 3339,
// "2006-01-02 15:04:05" or a date).
func parseSince(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: a duration looks back, it cannot be negative", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (90m, 36h, 7d) or a UTC timestamp (2026-12-01 09:00:00, 2026-12-01)", s)
}

// accessLogCmd holds the parsed command line of `admin access-log`.
type accessLogCmd struct {
	query  accessLogQuery
	format string
	conn   *connFlags
}

// parseAccessLog parses the flags of `admin access-log` (after the global
// ones in a); now anchors a --since duration.
func parseAccessLog(a *admin, args []string, now time.Time) (*accessLogCmd, error) {
	fs := a.flags()
	user := fs.String("user", "", "only the events of principal `U`")
	table := fs.String("table", "", "only the events that read or wrote `SCHEMA.TABLE` (as the client named it)")
	since := fs.String("since", "", "only the events since `DURATION` ago (90m, 36h, 7d) or since a UTC TIMESTAMP")
	denied := fs.Bool("denied", false, "only the denials")
	limit := fs.Int("limit", accessLogDefaultLimit, "at most `N` events, newest first")
	format := fs.String("format", "table", "output `FORMAT`: table, csv, json (also --json), jsonl or markdown (all but table show every column)")
	c := &accessLogCmd{conn: &connFlags{
		addr:   fs.String("addr", envOr("LAKEGATE_ADDR", "127.0.0.1:8815"), "gateway address (default $LAKEGATE_ADDR or 127.0.0.1:8815); the global --token, --tls-ca and --insecure-no-tls apply to it, --server and --metalake do not"),
		useTLS: fs.Bool("tls", false, "connect to the gateway with TLS"),
		// The global --token, --tls-ca and --insecure-no-tls serve the
		// gateway here.
		token: &a.token, caFile: &a.tlsCA, insecure: &a.insecure,
	}}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequest{text: adminCommandHelp(a.name, accessLogUsage, fs)}
		}
		return nil, fmt.Errorf("%w: %s: %s (see \"lakegate %s --help\")", errUsage, a.name, flagMessage(err), a.name)
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("%w: %s takes no arguments, got %q: usage: lakegate %s %s", errUsage, a.name, fs.Arg(0), a.name, accessLogUsage)
	}
	if a.json && !isSet(fs, "format") {
		*format = "json"
	}
	q := accessLogQuery{user: *user, denied: *denied, limit: *limit, allColumns: *format != "table"}
	if *table != "" {
		if _, err := a.splitName(*table, 2, "--table SCHEMA.TABLE"); err != nil {
			return nil, err
		}
		q.table = *table
	}
	if *since != "" {
		t, err := parseSince(*since, now)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errUsage, a.name, err)
		}
		q.since = t
	}
	if *limit < 1 {
		return nil, fmt.Errorf("%w: %s: --limit must be at least 1, got %d", errUsage, a.name, *limit)
	}
	c.query, c.format = q, *format
	return c, nil
}

// adminAccessLog is `lakegate admin access-log`: the tenant's
// system.access_events, newest first, read through the gateway as the
// caller, so it shows what the caller may read of the table and nothing
// more (a caller without a grant finds no such table).
func adminAccessLog(a *admin, args []string) error {
	c, err := parseAccessLog(a, args, time.Now())
	if err != nil {
		return err
	}
	write, err := writerFor(c.format, false)
	if err != nil {
		return err
	}
	if err := c.conn.resolve(); err != nil {
		return err
	}
	cl, ctx, err := c.conn.dial(a.ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	stmt, params := c.query.sql()
	schema, recs, err := preparedQuery(ctx, cl, stmt, params)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return fmt.Errorf("reading system.access_events: %w", shellError(err))
	}
	if err := write(a.stdout, schema, recs); err != nil {
		return err
	}
	if c.format == "table" {
		fmt.Fprintf(a.stdout, "(%d rows)\n", rowCount(recs))
	}
	return nil
}

// preparedQuery runs stmt as a prepared statement with params bound as
// one row of strings and collects its result.
func preparedQuery(ctx context.Context, cl *flightsql.Client, stmt string, params []string) (*arrow.Schema, []arrow.RecordBatch, error) {
	ps, err := cl.Prepare(ctx, stmt)
	if err != nil {
		return nil, nil, err
	}
	defer ps.Close(ctx)
	if len(params) > 0 {
		fields := make([]arrow.Field, len(params))
		for i := range params {
			fields[i] = arrow.Field{Name: "p" + strconv.Itoa(i+1), Type: arrow.BinaryTypes.String}
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
		for i, p := range params {
			b.Field(i).(*array.StringBuilder).Append(p)
		}
		rec := b.NewRecordBatch()
		b.Release()
		ps.SetParameters(rec)
		defer rec.Release()
	}
	info, err := ps.Execute(ctx)
	if err != nil {
		return nil, nil, err
	}
	return fetchAll(ctx, cl, info)
}
