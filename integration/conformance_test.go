//go:build duckdb_arrow

// The harness needs duckdb-go's Arrow interface, which is behind the
// duckdb_arrow build tag (the Makefile always sets it).

package integration_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// conformanceDirEnv overrides where the dialect corpus is read from. By
// default it is vendoredCorpus: an unchanged copy of the project's shared
// corpus (../shared/conformance/dialect next to the repository), so the
// harness runs wherever the repository is cloned; TestVendoredCorpus keeps
// the copy identical to the shared files when they are present.
const conformanceDirEnv = "LAKEGATE_CONFORMANCE_DIR"

// vendoredCorpus is the repository's copy of the shared dialect corpus.
var vendoredCorpus = filepath.Join("testdata", "conformance", "dialect")

// TestVendoredCorpus: the vendored corpus is byte-identical to the shared
// one (which must be used as it is).
func TestVendoredCorpus(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "conformance", "dialect")
	if _, err := os.Stat(shared); errors.Is(err, os.ErrNotExist) {
		t.Skipf("no shared corpus at %s to compare with (the vendored copy is used)", shared)
	}
	for _, name := range []string{"setup.duckdb.sql", "corpus.jsonl"} {
		a, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(vendoredCorpus, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the shared copy: copy it again", name)
		}
	}
}

// conformanceTables are the tables setup.duckdb.sql creates, in its order.
// They are loaded into the demo tenant's schema sales with ingest mode
// replace: customers and orders replace the demo tables of that name in the
// test's private server.
var conformanceTables = []string{"customers", "products", "orders", "order_items", "employees", "events"}

// conformanceCasts are applied in the scratch DuckDB after the setup script,
// before the tables are exported to the gateway; the reference queries read
// the casted tables too, so both sides see identical data. Every type the
// setup script produces (BIGINT, INTEGER, VARCHAR, DATE, TIMESTAMP,
// DECIMAL(10,2), DECIMAL(12,2), DOUBLE, BOOLEAN) survives bulk ingest as it
// is, so there is none today; add one line per column the ingest writer
// refuses, with the reason.
var conformanceCasts = []string{}

// minConformancePassed is the number of cases (shared corpus plus
// testdata/conformance/*.jsonl) that give the reference answer today. A
// lower count is a regression; raise it as the translation improves.
const minConformancePassed = 309

// knownDifferent lists the cases that give an answer different from the
// reference today, with the cause. The translation work shrinks it: a case
// listed here that no longer fails (passes or is refused) fails the test until
// it is removed, and a failure not listed here fails the test.
var knownDifferent = map[string]string{}

// conformanceCase is one line of a corpus file.
type conformanceCase struct {
	ID        string `json:"id"`
	MySQL     string `json:"mysql"`
	Reference string `json:"duckdb_reference"`
	file      string
}

type outcome int

const (
	outPassed outcome = iota
	outRefused
	outFailed
)

type caseResult struct {
	c       conformanceCase
	out     outcome
	message string // refusal message, or what differs
}

// TestDialectConformance runs every corpus query through the gateway with the
// ADBC client and its DuckDB reference on a scratch DuckDB holding the same
// tables, and compares the answers (the rules are in docs/dialect.md). Refusals (InvalidArgument or NotFound) are
// acceptable; a different answer, an unexpected error code, or an answer
// where the reference errors is a failure.
func TestDialectConformance(t *testing.T) {
	dir := os.Getenv(conformanceDirEnv)
	if dir == "" {
		dir = vendoredCorpus
	}
	setup, err := os.ReadFile(filepath.Join(dir, "setup.duckdb.sql"))
	if err != nil {
		t.Fatal(err)
	}
	cases := readConformanceCases(t, filepath.Join(dir, "corpus.jsonl"))
	extra, err := filepath.Glob(filepath.Join("testdata", "conformance", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range extra {
		cases = append(cases, readConformanceCases(t, f)...)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.ID] {
			t.Fatalf("case id %s appears twice", c.ID)
		}
		seen[c.ID] = true
	}
	for id := range knownDifferent {
		if !seen[id] {
			t.Errorf("knownDifferent names %s, which is no case; remove it", id)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ref := newScratchDuckDB(t, ctx, string(setup))

	srv := startServe(t)
	admin := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	for _, name := range conformanceTables {
		rdr, err := ref.arrow.QueryContext(ctx, "SELECT * FROM "+name)
		if err != nil {
			t.Fatalf("exporting %s: %v", name, err)
		}
		n, err := admin.ingest(ctx, "sales", name, adbc.OptionValueIngestModeReplace, rdr)
		rdr.Release()
		if err != nil {
			t.Fatalf("ingesting %s: %v", name, err)
		}
		if n <= 0 {
			t.Fatalf("ingesting %s: %d rows", name, n)
		}
	}
	// The cookie middleware (on in dial) keeps the session, so USE sticks.
	if _, _, err := admin.query(ctx, "USE sales"); err != nil {
		t.Fatalf("USE sales: %v", err)
	}
	// Both sides hold the same data, column types included.
	for _, name := range conformanceTables {
		got, err := admin.cells(ctx, "SELECT * FROM "+name)
		if err != nil {
			t.Fatalf("reading back %s: %v", name, err)
		}
		want, err := ref.cells(ctx, "SELECT * FROM "+name)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("sales.%s: %d rows of %s", name, len(got.rows), got.types)
		if got.types != want.types {
			t.Fatalf("%s: column types through the gateway %s, in the scratch DuckDB %s", name, got.types, want.types)
		}
		if diff := compareResults(got, want, false); diff != "" {
			t.Fatalf("%s: loaded data differs: %s", name, diff)
		}
	}

	var results []caseResult
	for _, c := range cases {
		results = append(results, runConformanceCase(ctx, admin, ref, c))
	}

	var passed, failed, refused, byEngine int
	perFile := map[string]*[3]int{}
	var files []string
	for _, r := range results {
		n := perFile[r.c.file]
		if n == nil {
			n = new([3]int)
			perFile[r.c.file] = n
			files = append(files, r.c.file)
		}
		n[r.out]++
		switch r.out {
		case outPassed:
			passed++
		case outRefused:
			refused++
			if !strings.Contains(r.message, "sqlgate:") {
				byEngine++
			}
		case outFailed:
			failed++
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "%d passed, %d failed, %d refused (%d of them by the engine, not the gate) of %d cases\n",
		passed, failed, refused, byEngine, len(results))
	for _, f := range files {
		n := perFile[f]
		fmt.Fprintf(&report, "  %s: %d passed, %d failed, %d refused\n", f, n[outPassed], n[outFailed], n[outRefused])
	}
	for _, r := range results {
		if r.out != outFailed {
			continue
		}
		fmt.Fprintf(&report, "FAILED %s: %s\n    mysql: %s\n", r.c.ID, r.message, r.c.MySQL)
		if reason, ok := knownDifferent[r.c.ID]; ok {
			fmt.Fprintf(&report, "    (known: %s)\n", reason)
		}
	}
	for _, r := range results {
		if r.out == outRefused {
			fmt.Fprintf(&report, "REFUSED %s: %s\n", r.c.ID, r.message)
		}
	}
	t.Log("\n" + report.String())

	for _, r := range results {
		reason, known := knownDifferent[r.c.ID]
		switch {
		case r.out == outFailed && !known:
			t.Errorf("%s gives a different answer through the gateway: %s", r.c.ID, r.message)
		case r.out != outFailed && known:
			t.Errorf("%s is in knownDifferent (%s) but no longer fails: remove it from knownDifferent", r.c.ID, reason)
		}
	}
	if passed < minConformancePassed {
		t.Errorf("%d cases passed, fewer than the %d that passed before (minConformancePassed): a regression", passed, minConformancePassed)
	}
}

func readConformanceCases(t *testing.T, path string) []conformanceCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []conformanceCase
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c conformanceCase
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if c.ID == "" || c.MySQL == "" {
			t.Fatalf("%s:%d: a case needs an id and a mysql query", path, line)
		}
		c.file = path
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runConformanceCase runs one case on both sides and classifies it.
func runConformanceCase(ctx context.Context, gw *client, ref *scratchDuckDB, c conformanceCase) caseResult {
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got, gerr := gw.cells(qctx, c.MySQL)
	refSQL := c.Reference
	if refSQL == "" {
		refSQL = c.MySQL
	}
	want, rerr := ref.cells(qctx, refSQL)
	if gerr != nil {
		switch st := adbcStatus(gerr); st {
		case adbc.StatusInvalidArgument, adbc.StatusNotFound:
			return caseResult{c: c, out: outRefused, message: adbcMessage(gerr)}
		default:
			return caseResult{c: c, out: outFailed, message: fmt.Sprintf("unexpected error (%v): %v", st, gerr)}
		}
	}
	if rerr != nil {
		return caseResult{c: c, out: outFailed, message: fmt.Sprintf("the gateway answered (%d rows) where the reference errors: %v", len(got.rows), rerr)}
	}
	if diff := compareResults(got, want, topLevelOrderBy(c.MySQL)); diff != "" {
		return caseResult{c: c, out: outFailed, message: diff}
	}
	return caseResult{c: c, out: outPassed}
}

func adbcMessage(err error) string {
	var ae adbc.Error
	if errors.As(err, &ae) {
		return ae.Msg
	}
	return err.Error()
}

// scratchDuckDB is the unlocked in-process DuckDB that builds the tables and
// runs the references.
type scratchDuckDB struct {
	arrow *duckdb.Arrow
}

func newScratchDuckDB(t *testing.T, ctx context.Context, setup string) *scratchDuckDB {
	t.Helper()
	// The engine settings that carry MySQL semantics in the gateway's engine
	// (NULLs first ascending, last descending; UTC): the references assume
	// MySQL's answer, and an empty reference is the MySQL text run as is.
	connector, err := duckdb.NewConnector("", func(execer driver.ExecerContext) error {
		for _, s := range []string{
			"SET default_null_order='nulls_first_on_asc_last_on_desc'",
			"SET TimeZone='UTC'",
		} {
			if _, err := execer.ExecContext(ctx, s, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close(); connector.Close() })
	if _, err := db.ExecContext(ctx, setup); err != nil {
		t.Fatalf("setup.duckdb.sql: %v", err)
	}
	for _, s := range conformanceCasts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ar, err := duckdb.NewArrowFromConn(conn)
	if err != nil {
		t.Fatal(err)
	}
	return &scratchDuckDB{arrow: ar}
}

func (s *scratchDuckDB) cells(ctx context.Context, query string) (*result, error) {
	rdr, err := s.arrow.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	return readResult(rdr)
}

// cells runs query through the gateway and returns its normalised answer.
func (c *client) cells(ctx context.Context, query string) (*result, error) {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(query); err != nil {
		return nil, err
	}
	rdr, _, err := stmt.ExecuteQuery(ctx)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	return readResult(rdr)
}

// result is a query's answer with every value normalised (see cellOf).
type result struct {
	types string // the column types, for the loaded-tables check
	ncols int
	rows  [][]cell
}

func readResult(rdr array.RecordReader) (*result, error) {
	var types []string
	for _, f := range rdr.Schema().Fields() {
		types = append(types, f.Type.String())
	}
	res := &result{types: strings.Join(types, ", "), ncols: rdr.Schema().NumFields()}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make([]cell, rec.NumCols())
			for c, col := range rec.Columns() {
				row[c] = cellOf(col, r)
			}
			res.rows = append(res.rows, row)
		}
	}
	return res, rdr.Err()
}

type cellKind int

const (
	kNull cellKind = iota
	kNum
	kStr
	kDate
	kTime
	kTimestamp
	kOther
)

var kindNames = [...]string{"NULL", "number", "string", "date", "time", "timestamp", "other"}

// cell is one normalised value: numbers of every type (booleans as 0/1)
// compare numerically, exactly when both are exact (integers, decimals) and
// with a relative tolerance otherwise; dates, times and timestamps (in UTC)
// compare in one textual form each; anything else by its Arrow text.
type cell struct {
	kind  cellKind
	exact *big.Rat // kNum from an integer, decimal or boolean
	f     float64  // kNum
	s     string   // text of every other kind
}

func (c cell) String() string {
	switch c.kind {
	case kNull:
		return "NULL"
	case kNum:
		if c.exact != nil {
			if c.exact.IsInt() {
				return c.exact.Num().String()
			}
			return strings.TrimRight(c.exact.FloatString(12), "0")
		}
		return strconv.FormatFloat(c.f, 'g', -1, 64)
	case kStr:
		return strconv.Quote(c.s)
	}
	return kindNames[c.kind] + " " + c.s
}

func exactCell(r *big.Rat) cell {
	f, _ := r.Float64()
	return cell{kind: kNum, exact: r, f: f}
}

func cellOf(col arrow.Array, i int) cell {
	if col.IsNull(i) {
		return cell{kind: kNull}
	}
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return exactCell(big.NewRat(1, 1))
		}
		return exactCell(new(big.Rat))
	case *array.Int8:
		return exactCell(new(big.Rat).SetInt64(int64(a.Value(i))))
	case *array.Int16:
		return exactCell(new(big.Rat).SetInt64(int64(a.Value(i))))
	case *array.Int32:
		return exactCell(new(big.Rat).SetInt64(int64(a.Value(i))))
	case *array.Int64:
		return exactCell(new(big.Rat).SetInt64(a.Value(i)))
	case *array.Uint8:
		return exactCell(new(big.Rat).SetUint64(uint64(a.Value(i))))
	case *array.Uint16:
		return exactCell(new(big.Rat).SetUint64(uint64(a.Value(i))))
	case *array.Uint32:
		return exactCell(new(big.Rat).SetUint64(uint64(a.Value(i))))
	case *array.Uint64:
		return exactCell(new(big.Rat).SetUint64(a.Value(i)))
	case *array.Float32:
		return cell{kind: kNum, f: float64(a.Value(i))}
	case *array.Float64:
		return cell{kind: kNum, f: a.Value(i)}
	case *array.Decimal128:
		return decimalCell(a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale))
	case *array.Decimal256:
		return decimalCell(a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale))
	case *array.String:
		return cell{kind: kStr, s: strings.Clone(a.Value(i))}
	case *array.LargeString:
		return cell{kind: kStr, s: strings.Clone(a.Value(i))}
	case *array.StringView:
		return cell{kind: kStr, s: strings.Clone(a.Value(i))}
	case *array.Date32:
		return cell{kind: kDate, s: a.Value(i).ToTime().Format(time.DateOnly)}
	case *array.Date64:
		return cell{kind: kDate, s: a.Value(i).ToTime().Format(time.DateOnly)}
	case *array.Timestamp:
		tt := a.DataType().(*arrow.TimestampType)
		return cell{kind: kTimestamp, s: a.Value(i).ToTime(tt.Unit).UTC().Format("2006-01-02 15:04:05.999999999")}
	case *array.Time32:
		return cell{kind: kTime, s: a.Value(i).ToTime(a.DataType().(*arrow.Time32Type).Unit).Format("15:04:05.999999999")}
	case *array.Time64:
		return cell{kind: kTime, s: a.Value(i).ToTime(a.DataType().(*arrow.Time64Type).Unit).Format("15:04:05.999999999")}
	}
	return cell{kind: kOther, s: strings.Clone(col.DataType().String() + ":" + col.ValueStr(i))}
}

func decimalCell(s string) cell {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return cell{kind: kOther, s: "decimal:" + s}
	}
	return exactCell(r)
}

// cellsEqual is the comparison of the harness: NULL equals NULL, numbers
// within a relative tolerance of 1e-9 (exactly when both are exact), the rest
// textually.
func cellsEqual(a, b cell) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kNull:
		return true
	case kNum:
		if a.exact != nil && b.exact != nil {
			return a.exact.Cmp(b.exact) == 0
		}
		return floatsClose(a.f, b.f)
	}
	return a.s == b.s
}

func floatsClose(a, b float64) bool {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// cellOrder orders cells for the multiset comparison.
func cellOrder(a, b cell) int {
	if c := cmp.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	switch a.kind {
	case kNull:
		return 0
	case kNum:
		if a.exact != nil && b.exact != nil {
			return a.exact.Cmp(b.exact)
		}
		return cmp.Compare(a.f, b.f)
	}
	return strings.Compare(a.s, b.s)
}

func rowOrder(a, b []cell) int {
	for i := range min(len(a), len(b)) {
		if c := cellOrder(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func formatRow(r []cell) string {
	parts := make([]string, len(r))
	for i, c := range r {
		parts[i] = c.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// compareResults returns "" when got and want are the same answer (in order
// when ordered, as multisets otherwise), else what differs. Column names are
// not compared.
func compareResults(got, want *result, ordered bool) string {
	if got.ncols != want.ncols {
		return fmt.Sprintf("%d columns, want %d", got.ncols, want.ncols)
	}
	g, w := got.rows, want.rows
	how := "in order"
	if !ordered {
		how = "as multisets"
		g = slices.Clone(g)
		w = slices.Clone(w)
		slices.SortStableFunc(g, rowOrder)
		slices.SortStableFunc(w, rowOrder)
	}
	for i := range min(len(g), len(w)) {
		for j := range g[i] {
			if !cellsEqual(g[i][j], w[i][j]) {
				what := "value"
				if g[i][j].kind != w[i][j].kind && g[i][j].kind != kNull && w[i][j].kind != kNull {
					what = "type"
				}
				return fmt.Sprintf("%d rows, want %d (compared %s); first %s difference at row %d column %d: got %s, want %s",
					len(g), len(w), how, what, i+1, j+1, formatRow(g[i]), formatRow(w[i]))
			}
		}
	}
	if len(g) != len(w) {
		var extra string
		if len(g) > len(w) {
			extra = "first extra row got " + formatRow(g[len(w)])
		} else {
			extra = "first missing row " + formatRow(w[len(g)])
		}
		return fmt.Sprintf("%d rows, want %d (compared %s); %s", len(g), len(w), how, extra)
	}
	return ""
}

// topLevelOrderBy reports whether a MySQL query has an ORDER BY outside
// every parenthesis (so it orders the result), other than ORDER BY NULL.
// Quoted strings, quoted names and comments are skipped.
func topLevelOrderBy(q string) bool {
	var words []string // upper-cased words at depth 0, in order
	depth := 0
	for i := 0; i < len(q); {
		ch := q[i]
		switch {
		case ch == '\'' || ch == '"' || ch == '`':
			j := i + 1
			for j < len(q) {
				if q[j] == '\\' && ch != '`' {
					j += 2
					continue
				}
				if q[j] == ch {
					if j+1 < len(q) && q[j+1] == ch {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = j + 1
			words = append(words, "'")
		case ch == '#' || ch == '-' && strings.HasPrefix(q[i:], "-- "):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = len(q)
			} else {
				i += j
			}
		case strings.HasPrefix(q[i:], "/*") && !strings.HasPrefix(q[i:], "/*!"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += j + 4
			}
		case ch == '(':
			depth++
			i++
		case ch == ')':
			depth--
			i++
		case isWordByte(ch):
			j := i
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			if depth == 0 {
				words = append(words, strings.ToUpper(q[i:j]))
			}
			i = j
		default:
			if depth == 0 && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' {
				words = append(words, string(ch))
			}
			i++
		}
	}
	for k := 0; k+2 < len(words); k++ {
		if words[k] == "ORDER" && words[k+1] == "BY" && words[k+2] != "NULL" {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// TestConformanceRules pins the harness's own rules: which queries are
// compared in order, and what counts as the same value.
func TestConformanceRules(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT id FROM t ORDER BY id":                                                 true,
		"SELECT a FROM t UNION SELECT b FROM u ORDER BY 1":                             true,
		"(SELECT id FROM t ORDER BY id LIMIT 3) UNION ALL (SELECT id FROM t)":          false,
		"SELECT country, COUNT(*) FROM t GROUP BY country ORDER BY NULL":               false,
		"SELECT ROW_NUMBER() OVER (ORDER BY id) FROM t":                                false,
		"SELECT 'ORDER BY x' FROM t":                                                   false,
		"SELECT `order` FROM t # ORDER BY id":                                          false,
		"WITH x AS (SELECT id FROM t ORDER BY id) SELECT * FROM x":                     false,
		"SELECT GROUP_CONCAT(name ORDER BY id SEPARATOR '|') FROM t":                   false,
		"SELECT 'it\\'s' AS s, id FROM t ORDER BY id":                                  true,
		"SELECT id FROM t /* ORDER BY id */":                                           false,
		"SELECT id FROM t ORDER BY FIELD(tier, 'gold', 'silver'), id LIMIT 5":          true,
		"SELECT id FROM customers WHERE country = 'US' ORDER BY RAND() LIMIT 0":        true,
		"SELECT c.* FROM customers c WHERE c.id = 3":                                   false,
		"SELECT country FROM customers UNION ALL SELECT category FROM products":        false,
		"SELECT id FROM orders WHERE (customer_id, status) = (12, 'paid') ORDER BY id": true,
	} {
		if got := topLevelOrderBy(q); got != want {
			t.Errorf("topLevelOrderBy(%q) = %v, want %v", q, got, want)
		}
	}

	num := func(s string) cell { r, _ := new(big.Rat).SetString(s); return exactCell(r) }
	flt := func(f float64) cell { return cell{kind: kNum, f: f} }
	str := func(s string) cell { return cell{kind: kStr, s: s} }
	null := cell{kind: kNull}
	res := func(rows ...[]cell) *result {
		n := 0
		if len(rows) > 0 {
			n = len(rows[0])
		}
		return &result{ncols: n, rows: rows}
	}
	same := []struct {
		got, want *result
		ordered   bool
	}{
		{res([]cell{num("3"), flt(3.5)}), res([]cell{flt(3), num("3.50")}), true},
		{res([]cell{flt(1.0 / 3)}), res([]cell{flt(0.3333333333333333 * (1 + 1e-12))}), true},
		{res([]cell{null, str("a")}), res([]cell{null, str("a")}), true},
		{res([]cell{num("1")}, []cell{num("2")}), res([]cell{num("2")}, []cell{num("1")}), false},
		{res([]cell{num("1")}, []cell{null}), res([]cell{null}, []cell{num("1")}), false},
	}
	for i, c := range same {
		if d := compareResults(c.got, c.want, c.ordered); d != "" {
			t.Errorf("same %d: %s", i, d)
		}
	}
	differ := []struct {
		got, want *result
		ordered   bool
	}{
		{res([]cell{num("1")}, []cell{num("2")}), res([]cell{num("2")}, []cell{num("1")}), true},
		{res([]cell{flt(1)}), res([]cell{flt(1 + 1e-8)}), false},
		{res([]cell{num("0.1")}), res([]cell{num("0.10000000001")}), false},
		{res([]cell{str("3")}), res([]cell{num("3")}), false},
		{res([]cell{str("a")}), res([]cell{str("A")}), false},
		{res([]cell{null}), res([]cell{str("")}), false},
		{res([]cell{{kind: kDate, s: "2023-01-08"}}), res([]cell{{kind: kTimestamp, s: "2023-01-08 00:00:00"}}), false},
		{res([]cell{num("1")}), res([]cell{num("1")}, []cell{num("1")}), false},
		{res([]cell{num("1"), num("1")}), res([]cell{num("1")}), false},
	}
	for i, c := range differ {
		if d := compareResults(c.got, c.want, c.ordered); d == "" {
			t.Errorf("differ %d: compared equal", i)
		}
	}
}
