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
// corpus (the directory conformance/dialect of a checkout named shared
// beside the repository's root), so the harness runs wherever the
// repository is cloned; TestVendoredCorpus keeps the copy identical to the
// shared files when they are present.
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
// testdata/conformance/*.jsonl) whose values are the reference's today
// (passed, or passed but for the type classes of knownTypeDifferent). A
// lower count is a regression; raise it as the translation improves.
const minConformancePassed = 605

// knownDifferent lists the cases that give an answer different from the
// reference today, with the cause. The translation work shrinks it: a case
// listed here that no longer fails (passes or is refused) fails the test until
// it is removed, and a failure not listed here fails the test.
var knownDifferent = map[string]string{}

// knownTypeDifferent lists the cases whose values and names match the
// reference but whose result type classes differ (see typeClass), with the
// cause. Like knownDifferent it can only shrink: a listed case that no longer
// differs in type fails the test until it is removed, and a type difference
// not listed here fails the test.
var knownTypeDifferent = map[string]string{
	// Comparisons and NOT are BOOLEAN in the engine; MySQL's are integers.
	"x05": "!id and !(id - 2) are BOOLEAN; MySQL's are integers (0/1)",
	// Our function cases (functions_*.jsonl).
	"fi12": "ISNULL(…) is BOOLEAN, not an integer",
	// Computed DECIMALs carry precision 38, so FLOOR of one is a DECIMAL
	// where MySQL, knowing the quotient's smaller precision, gives BIGINT.
	"fn51": "FLOOR(DECIMAL / 100) is DECIMAL(…,0), not BIGINT",
}

// conformanceCase is one line of a corpus file. Names, when present, are
// MySQL's result column names for the case, overriding deriveNames.
type conformanceCase struct {
	ID        string   `json:"id"`
	MySQL     string   `json:"mysql"`
	Reference string   `json:"duckdb_reference"`
	Names     []string `json:"names,omitempty"`
	// Evidence, in an override only, says why the shared reference is not
	// MySQL's answer.
	Evidence string `json:"evidence,omitempty"`
	file     string
}

// overridesFile holds our corrections to references of the shared corpus,
// which is used as it is: a line replaces the reference of the shared case of
// the same id (and the same mysql text), with the evidence that the shared
// reference's value or type is not MySQL's.
var overridesFile = filepath.Join("testdata", "conformance", "overrides", "shared.jsonl")

// applyOverrides replaces the references of cases that overridesFile
// corrects, and returns how many it replaced.
func applyOverrides(t *testing.T, cases []conformanceCase) int {
	t.Helper()
	byID := map[string]int{}
	for i, c := range cases {
		byID[c.ID] = i
	}
	n := 0
	for _, o := range readConformanceCases(t, overridesFile) {
		i, ok := byID[o.ID]
		switch {
		case !ok:
			t.Errorf("%s: %s overrides no case of the shared corpus", overridesFile, o.ID)
			continue
		case cases[i].MySQL != o.MySQL:
			t.Errorf("%s: %s has another mysql text than the shared case", overridesFile, o.ID)
			continue
		case o.Evidence == "" || o.Reference == "":
			t.Errorf("%s: %s needs a reference and the evidence for it", overridesFile, o.ID)
			continue
		}
		cases[i].Reference, cases[i].file = o.Reference, overridesFile
		n++
	}
	return n
}

type outcome int

const (
	outPassed outcome = iota
	outRefused
	outFailed
	outTypeDiffers // values and names as the reference, type classes not
)

type caseResult struct {
	c       conformanceCase
	out     outcome
	message string // refusal message, or what differs
	// namesUnchecked: the expected names could not be derived from the
	// mysql text and the case gives none, so names were not compared.
	namesUnchecked bool
}

// TestDialectConformance runs every corpus query through the gateway with the
// ADBC client and its DuckDB reference on a scratch DuckDB holding the same
// tables, and compares the answers: values, then MySQL's column names, then
// each column's type class (the rules are in docs/dialect.md). Refusals
// (InvalidArgument or NotFound) are acceptable; different values or names, an
// unexpected error code, or an answer where the reference errors is a
// failure; right values and names of another type class are a type
// difference, counted apart.
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
	t.Logf("%d references of the shared corpus overridden (%s)", applyOverrides(t, cases), overridesFile)
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

	var passed, failed, typeDiffers, refused, byEngine int
	var unnamed []string
	perFile := map[string]*[4]int{}
	var files []string
	for _, r := range results {
		n := perFile[r.c.file]
		if n == nil {
			n = new([4]int)
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
		case outTypeDiffers:
			typeDiffers++
		}
		if r.namesUnchecked && r.out != outRefused {
			unnamed = append(unnamed, r.c.ID)
		}
	}
	var report strings.Builder
	fmt.Fprintf(&report, "%d passed, %d failed, %d type differs, %d refused (%d of them by the engine, not the gate) of %d cases\n",
		passed, failed, typeDiffers, refused, byEngine, len(results))
	for _, f := range files {
		n := perFile[f]
		fmt.Fprintf(&report, "  %s: %d passed, %d failed, %d type differs, %d refused\n",
			f, n[outPassed], n[outFailed], n[outTypeDiffers], n[outRefused])
	}
	fmt.Fprintf(&report, "names not compared (not derivable, no \"names\" in the case) in %d answered cases: %s\n",
		len(unnamed), strings.Join(unnamed, " "))
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
		if r.out != outTypeDiffers {
			continue
		}
		fmt.Fprintf(&report, "TYPE DIFFERS %s: %s\n    mysql: %s\n", r.c.ID, r.message, r.c.MySQL)
		if reason, ok := knownTypeDifferent[r.c.ID]; ok {
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
		reason, known = knownTypeDifferent[r.c.ID]
		switch {
		case r.out == outTypeDiffers && !known:
			t.Errorf("%s answers with result types other than MySQL's: %s", r.c.ID, r.message)
		case r.out != outTypeDiffers && known:
			t.Errorf("%s is in knownTypeDifferent (%s) but its types no longer differ: remove it from knownTypeDifferent", r.c.ID, reason)
		}
	}
	if passed+typeDiffers < minConformancePassed {
		t.Errorf("%d cases answered the reference's values, fewer than the %d before (minConformancePassed): a regression",
			passed+typeDiffers, minConformancePassed)
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
		first := ""
		if len(got.rows) > 0 {
			first = ", first " + formatRow(got.rows[0])
		}
		return caseResult{c: c, out: outFailed, message: fmt.Sprintf("the gateway answered (%d rows%s) where the reference errors: %v", len(got.rows), first, rerr)}
	}
	if diff := compareResults(got, want, topLevelOrderBy(c.MySQL)); diff != "" {
		return caseResult{c: c, out: outFailed, message: diff}
	}
	var names []expectedName
	if c.Names != nil {
		for _, n := range c.Names {
			names = append(names, expectedName{name: n})
		}
	} else {
		names, _ = deriveNames(c.MySQL)
	}
	res := caseResult{c: c, out: outPassed, namesUnchecked: names == nil}
	if names != nil {
		if diff := compareNames(got.names, names); diff != "" {
			res.out, res.message = outFailed, diff
		}
	}
	if diff := compareClasses(got, want); diff != "" {
		if res.out == outFailed {
			res.message += "; " + diff
		} else {
			res.out, res.message = outTypeDiffers, diff
		}
	}
	return res
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
func (c *client) cells(ctx context.Context, query string) (res *result, err error) {
	err = c.read(ctx, query, func(rdr array.RecordReader) error {
		res, err = readResult(rdr)
		return err
	})
	return res, err
}

// result is a query's answer with every value normalised (see cellOf).
type result struct {
	types   string // the column types, for the loaded-tables check
	ncols   int
	names   []string // the column names
	classes []string // each column's typeClass
	rows    [][]cell
}

func readResult(rdr array.RecordReader) (*result, error) {
	var types []string
	for _, f := range rdr.Schema().Fields() {
		types = append(types, f.Type.String())
	}
	res := &result{types: strings.Join(types, ", "), ncols: rdr.Schema().NumFields()}
	for _, f := range rdr.Schema().Fields() {
		res.names = append(res.names, f.Name)
		res.classes = append(res.classes, typeClass(f))
	}
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

// quotedEnd returns the index of the quote closing the string or quoted
// name that opens at q[i] (len(q) or more when it is not closed): a doubled
// quote stays inside, and so does a backslash escape outside backquotes.
func quotedEnd(q string, i int) int {
	ch := q[i]
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
	return j
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
			i = quotedEnd(q, i) + 1
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

	// Type classes: one per MySQL result type a client reads back.
	jsonMeta := arrow.NewMetadata([]string{"ARROW:extension:name"}, []string{"arrow.json"})
	for _, c := range []struct {
		f    arrow.Field
		want string
	}{
		{arrow.Field{Type: arrow.PrimitiveTypes.Int8}, "integer"},
		{arrow.Field{Type: arrow.PrimitiveTypes.Int32}, "integer"},
		{arrow.Field{Type: arrow.PrimitiveTypes.Int64}, "integer"},
		{arrow.Field{Type: arrow.PrimitiveTypes.Uint64}, "integer"},
		{arrow.Field{Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}}, "decimal(2)"},
		{arrow.Field{Type: &arrow.Decimal128Type{Precision: 38, Scale: 6}}, "decimal(6)"},
		{arrow.Field{Type: &arrow.Decimal256Type{Precision: 40, Scale: 0}}, "decimal(0)"},
		{arrow.Field{Type: arrow.PrimitiveTypes.Float32}, "floating"},
		{arrow.Field{Type: arrow.PrimitiveTypes.Float64}, "floating"},
		{arrow.Field{Type: arrow.BinaryTypes.String}, "string"},
		{arrow.Field{Type: arrow.BinaryTypes.LargeString}, "string"},
		{arrow.Field{Type: arrow.BinaryTypes.StringView}, "string"},
		{arrow.Field{Type: arrow.BinaryTypes.Binary}, "binary"},
		{arrow.Field{Type: arrow.FixedWidthTypes.Date32}, "date"},
		{arrow.Field{Type: arrow.FixedWidthTypes.Timestamp_us}, "datetime"},
		{arrow.Field{Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}, "datetime"},
		{arrow.Field{Type: arrow.FixedWidthTypes.Time64us}, "time"},
		{arrow.Field{Type: arrow.FixedWidthTypes.Boolean}, "boolean"},
		{arrow.Field{Type: arrow.BinaryTypes.String, Metadata: jsonMeta}, "JSON"},
		{arrow.Field{Type: arrow.Null}, "null"},
		{arrow.Field{Type: arrow.FixedWidthTypes.MonthDayNanoInterval}, "other(month_day_nano_interval)"},
	} {
		if got := typeClass(c.f); got != c.want {
			t.Errorf("typeClass(%s) = %s, want %s", c.f.Type, got, c.want)
		}
	}
	classed := func(classes []string, rows ...[]cell) *result {
		r := res(rows...)
		r.classes = classes
		return r
	}
	for i, c := range []struct {
		got, want *result
		same      bool
	}{
		{classed([]string{"decimal(2)"}, []cell{num("1")}), classed([]string{"decimal(2)"}, []cell{num("1")}), true},
		{classed([]string{"floating"}, []cell{num("1")}), classed([]string{"decimal(4)"}, []cell{num("1")}), false},
		{classed([]string{"decimal(2)"}, []cell{num("1")}), classed([]string{"decimal(4)"}, []cell{num("1")}), false},
		{classed([]string{"boolean"}, []cell{num("1")}), classed([]string{"integer"}, []cell{num("1")}), false},
		{classed([]string{"date"}, []cell{num("1")}), classed([]string{"datetime"}, []cell{num("1")}), false},
		// An all-NULL reference column has the type of an untyped NULL.
		{classed([]string{"floating"}, []cell{null}), classed([]string{"integer"}, []cell{null}), true},
		// Without rows the reference's types still count.
		{classed([]string{"floating"}), classed([]string{"integer"}), false},
	} {
		if d := compareClasses(c.got, c.want); (d == "") != c.same {
			t.Errorf("classes %d: compareClasses = %q, want same %v", i, d, c.same)
		}
	}

	// Names: MySQL's, derived from the text of the query.
	for _, c := range []struct {
		q    string
		want []string // nil: not derivable
	}{
		{"SELECT id, name FROM customers", []string{"id", "name"}},
		{"SELECT c.id, `c`.`name` FROM customers c", []string{"id", "name"}},
		{"SELECT count(*) AS n, SUM(total) total_sum, 1 + 1 `two`, 2 AS 'Two' FROM t", []string{"n", "total_sum", "two", "Two"}},
		{"SELECT COUNT(*), IFNULL(discount, 0), YEAR( order_date ) FROM orders", []string{"COUNT(*)", "IFNULL(discount, 0)", "YEAR( order_date )"}},
		{"SELECT 'abc', '  lead', 'it\\'s', 'a''b', \"dq\", 'con' 'cat'", []string{"abc", "lead", "it's", "a'b", "dq", "con"}},
		{"SELECT null, true, False, 2.50, -1, 1e3", []string{"NULL", "TRUE", "FALSE", "2.50", "-1", "1e3"}},
		{"SELECT DISTINCT /*+ hint */ tier FROM customers", []string{"tier"}},
		{"SELECT id, id --1 FROM t", []string{"id", "id --1"}},
		{"SELECT a IS NULL, b COLLATE utf8mb4_bin, CASE WHEN a THEN 1 END, NOT x FROM t", []string{"a IS NULL", "b COLLATE utf8mb4_bin", "CASE WHEN a THEN 1 END", "NOT x"}},
		{"SELECT order_date + INTERVAL 1 DAY, order_date - INTERVAL 1 DAY AS d FROM orders", []string{"order_date + INTERVAL 1 DAY", "d"}},
		{"SELECT LAG(id) OVER w, ROW_NUMBER() OVER (ORDER BY id) rn FROM t WINDOW w AS (ORDER BY id)", []string{"LAG(id) OVER w", "rn"}},
		{"WITH x AS (SELECT 1 AS v) SELECT v, (SELECT MAX(v) FROM x) FROM x", []string{"v", "(SELECT MAX(v) FROM x)"}},
		{"SELECT a FROM t UNION SELECT b FROM u", []string{"a"}},
		{"SELECT CONCAT(a, ',', b) FROM t WHERE x = 'FROM'", []string{"CONCAT(a, ',', b)"}},
		{"SELECT * FROM t", nil},
		{"SELECT t.* FROM t", nil},
		{"SELECT id, ? FROM t", nil},
		{"SELECT id /* c */ FROM t", nil},
		{"SELECT (1), +1 FROM t", nil},
		{"SELECT _utf8mb4'abc'", nil},
		{"SELECT N'abc'", nil},
		{"SELECT '   '", nil},
		{"SELECT DATE '2024-01-01'", nil},
		{"(SELECT a FROM t) UNION (SELECT b FROM u)", nil},
		{"SHOW TABLES", nil},
	} {
		got, ok := deriveNames(c.q)
		if ok != (c.want != nil) {
			t.Errorf("deriveNames(%q): derivable %v, want %v", c.q, ok, c.want != nil)
			continue
		}
		var names []string
		for _, n := range got {
			names = append(names, n.name)
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("deriveNames(%q) = %q, want %q", c.q, names, c.want)
		}
	}
	ident, text := func(s string) expectedName { return expectedName{name: s, ident: true} }, func(s string) expectedName { return expectedName{name: s} }
	for i, c := range []struct {
		got  []string
		want []expectedName
		same bool
	}{
		{[]string{"total"}, []expectedName{ident("Total")}, true},       // identifiers are lower-cased
		{[]string{"count(*)"}, []expectedName{text("COUNT(*)")}, false}, // expression text keeps its case
		{[]string{"a +  b"}, []expectedName{text("a +\n\tb")}, true},    // a line break or a tab becomes a space
		{[]string{"a", "b"}, []expectedName{text("a")}, false},          // column count
		{[]string{"Cust_1"}, []expectedName{text("Cust_1")}, true},
	} {
		if d := compareNames(c.got, c.want); (d == "") != c.same {
			t.Errorf("names %d: compareNames = %q, want same %v", i, d, c.same)
		}
	}
}

// typeClass is the class of MySQL result type a column's Arrow type stands
// for: integer, decimal(scale), floating, string, binary, date, datetime,
// time, boolean, JSON or null; anything else is other(type). Integers of
// every width and signedness are one class, as are timestamps with and
// without a time zone (both sides run in UTC).
func typeClass(f arrow.Field) string {
	if ext, ok := f.Type.(arrow.ExtensionType); ok {
		if strings.HasSuffix(ext.ExtensionName(), "json") {
			return "JSON"
		}
		return typeClass(arrow.Field{Type: ext.StorageType(), Metadata: f.Metadata})
	}
	if name, ok := f.Metadata.GetValue("ARROW:extension:name"); ok && strings.HasSuffix(name, "json") {
		return "JSON"
	}
	switch t := f.Type.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return "integer"
	case arrow.DecimalType:
		return fmt.Sprintf("decimal(%d)", t.GetScale())
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		return "floating"
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return "string"
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		return "binary"
	case *arrow.Date32Type, *arrow.Date64Type:
		return "date"
	case *arrow.TimestampType:
		return "datetime"
	case *arrow.Time32Type, *arrow.Time64Type:
		return "time"
	case *arrow.BooleanType:
		return "boolean"
	case *arrow.NullType:
		return "null"
	}
	return "other(" + f.Type.String() + ")"
}

// compareClasses returns "" when every column has the reference's type
// class, else the classes of both sides. A column that is NULL in every row
// of a reference with rows is not compared: its type is the type of an
// untyped NULL (INTEGER in DuckDB), which says nothing of MySQL's.
func compareClasses(got, want *result) string {
	same := len(got.classes) == len(want.classes)
	for c := 0; same && c < len(got.classes); c++ {
		same = got.classes[c] == want.classes[c] || allNull(want, c)
	}
	if same {
		return ""
	}
	return fmt.Sprintf("type classes [%s], want [%s]", strings.Join(got.classes, ", "), strings.Join(want.classes, ", "))
}

// allNull reports whether column c of r has rows and is NULL in all of them.
func allNull(r *result, c int) bool {
	for _, row := range r.rows {
		if row[c].kind != kNull {
			return false
		}
	}
	return len(r.rows) > 0
}

// expectedName is MySQL's name of one result column. ident marks a name
// taken from an identifier (a column reference or an alias): the gateway
// lower-cases those (docs/dialect.md, "Result column names"), so they
// compare without case.
type expectedName struct {
	name  string
	ident bool
}

// compareNames returns "" when the gateway's column names are MySQL's, else
// both lists. A line break or a tab in MySQL's name compares as a space (the
// gateway's names are one line).
func compareNames(got []string, want []expectedName) string {
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		w := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(want[i].name)
		same = got[i] == w || want[i].ident && strings.EqualFold(got[i], w)
	}
	if same {
		return ""
	}
	ws := make([]string, len(want))
	for i, w := range want {
		ws[i] = strconv.Quote(w.name)
	}
	gs := make([]string, len(got))
	for i, g := range got {
		gs[i] = strconv.Quote(g)
	}
	return fmt.Sprintf("column names [%s], want [%s]", strings.Join(gs, ", "), strings.Join(ws, ", "))
}

// sqlToken is one token of MySQL text, for deriveNames.
type sqlToken struct {
	kind       byte // 'w' word, 'q' `quoted name`, 's' string, 'n' number, 'c' comment, 'p' punctuation
	start, end int  // byte offsets in the text
	text       string
}

// lexMySQL splits MySQL text into tokens. It knows quoting (with backslash
// escapes and doubled quotes), the three comment forms (including `--` only
// before white space, as in MySQL) and numbers; everything else is one
// punctuation byte (or a multi-byte operator split into bytes).
func lexMySQL(q string) []sqlToken {
	var toks []sqlToken
	for i := 0; i < len(q); {
		ch := q[i]
		start := i
		var kind byte
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
			continue
		case ch == '\'' || ch == '"' || ch == '`':
			i = min(quotedEnd(q, i)+1, len(q))
			kind = 's'
			if ch == '`' {
				kind = 'q'
			}
		case ch == '#' || strings.HasPrefix(q[i:], "--") && (i+2 == len(q) || strings.ContainsRune(" \t\n\r", rune(q[i+2]))):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = len(q)
			} else {
				i += j
			}
			kind = 'c'
		case strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += j + 4
			}
			kind = 'c'
		case ch >= '0' && ch <= '9' || ch == '.' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			for i < len(q) && (isWordByte(q[i]) || q[i] == '.' ||
				(q[i] == '+' || q[i] == '-') && (q[i-1] == 'e' || q[i-1] == 'E')) {
				i++
			}
			kind = 'n'
		case isWordByte(ch):
			for i < len(q) && isWordByte(q[i]) {
				i++
			}
			kind = 'w'
		default:
			i++
			kind = 'p'
		}
		toks = append(toks, sqlToken{kind: kind, start: start, end: i, text: q[start:i]})
	}
	return toks
}

// selectModifiers may follow SELECT before the first field.
var selectModifiers = map[string]bool{
	"ALL": true, "DISTINCT": true, "DISTINCTROW": true, "HIGH_PRIORITY": true, "STRAIGHT_JOIN": true,
	"SQL_SMALL_RESULT": true, "SQL_BIG_RESULT": true, "SQL_BUFFER_RESULT": true, "SQL_NO_CACHE": true,
	"SQL_CALC_FOUND_ROWS": true,
}

// selectListEnd are the words that end a select list at depth 0.
var selectListEnd = map[string]bool{
	"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true, "LIMIT": true,
	"UNION": true, "EXCEPT": true, "INTERSECT": true, "INTO": true, "WINDOW": true, "FOR": true, "LOCK": true,
}

// notAlias are words that end an expression and so are never an implicit
// alias (reserved words MySQL does not accept as a bare alias).
var notAlias = map[string]bool{
	"END": true, "NULL": true, "TRUE": true, "FALSE": true, "UNKNOWN": true, "AND": true, "OR": true,
	"XOR": true, "NOT": true, "IS": true, "DIV": true, "MOD": true, "LIKE": true, "REGEXP": true,
	"RLIKE": true, "IN": true, "BETWEEN": true, "COLLATE": true, "BINARY": true, "ESCAPE": true,
	"SOUNDS": true, "OVER": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "INTERVAL": true, "EXISTS": true,
}

// deriveNames derives MySQL's result column names from the text of a query,
// independently of the gateway's naming code, for the common shapes of a
// select field: an alias (AS or implicit, bare or `quoted`, or a string
// after AS), a column reference (its last part), a string literal (its
// value, leading spaces removed; of adjacent strings the first), NULL, TRUE,
// FALSE, a number (its text) and any other expression (its text as written,
// at most 256 bytes; after a top-level INTERVAL only AS introduces an alias,
// as the unit ends the expression). For a set operation the first branch names the
// columns. It returns ok false, and no names, when a field is of another
// shape: `*`, a parameter, a comment inside the select list, a
// parenthesised or unary-plus number, a
// character-set introducer, a string of spaces, or a first branch in
// parentheses.
func deriveNames(q string) (names []expectedName, ok bool) {
	toks := lexMySQL(q)
	// The main SELECT: the first at depth 0 (after a WITH clause's CTEs).
	i, depth := 0, 0
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'c' {
			continue
		}
		if t.kind == 'p' && t.text == "(" {
			if depth == 0 && (i == 0 || allComments(toks[:i])) {
				return nil, false // a parenthesised first branch
			}
			depth++
		}
		if t.kind == 'p' && t.text == ")" {
			depth--
		}
		if depth == 0 && t.kind == 'w' && strings.EqualFold(t.text, "SELECT") {
			break
		}
	}
	if i == len(toks) {
		return nil, false
	}
	i++
	// Modifiers and comments (optimizer hints) before the first field.
	for i < len(toks) && (toks[i].kind == 'c' || toks[i].kind == 'w' && selectModifiers[strings.ToUpper(toks[i].text)]) {
		i++
	}
	var fields [][]sqlToken
	var field []sqlToken
	depth = 0
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'c' {
			return nil, false
		}
		if depth == 0 && (t.kind == 'w' && selectListEnd[strings.ToUpper(t.text)] || t.kind == 'p' && (t.text == ";" || t.text == ")")) {
			break
		}
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
		case depth == 0 && t.kind == 'p' && t.text == ",":
			fields = append(fields, field)
			field = nil
			continue
		}
		field = append(field, t)
	}
	fields = append(fields, field)
	for _, f := range fields {
		n, ok := fieldName(q, f)
		if !ok {
			return nil, false
		}
		names = append(names, n)
	}
	return names, true
}

func allComments(toks []sqlToken) bool {
	for _, t := range toks {
		if t.kind != 'c' {
			return false
		}
	}
	return true
}

// fieldName is deriveNames for one select field.
func fieldName(q string, f []sqlToken) (expectedName, bool) {
	if len(f) == 0 {
		return expectedName{}, false
	}
	depth, interval := 0, false
	for _, t := range f {
		switch {
		case t.kind == 'p' && t.text == "(":
			depth++
		case t.kind == 'p' && t.text == ")":
			depth--
		case t.kind == 'p' && (t.text == "?" || t.text == "*" && len(f) == 1):
			return expectedName{}, false
		case depth == 0 && t.kind == 'w' && strings.EqualFold(t.text, "INTERVAL"):
			// The unit after INTERVAL n is not an alias.
			interval = true
		}
	}
	if n := len(f); n >= 2 && f[n-1].kind == 'p' && f[n-1].text == "*" && f[n-2].text == "." {
		return expectedName{}, false
	}
	last := f[len(f)-1]
	if len(f) >= 2 && (!interval || strings.EqualFold(f[len(f)-2].text, "AS")) {
		prev := f[len(f)-2]
		if prev.kind == 'w' && strings.EqualFold(prev.text, "AS") {
			switch last.kind {
			case 'w', 'q':
				return expectedName{name: identValue(last), ident: true}, true
			case 's':
				v, ok := stringValue(last.text)
				return expectedName{name: v, ident: true}, ok
			}
			return expectedName{}, false
		}
		endsOperand := prev.kind == 's' || prev.kind == 'n' || prev.kind == 'q' ||
			prev.kind == 'w' && !notAlias[strings.ToUpper(prev.text)] || prev.kind == 'p' && prev.text == ")"
		switch {
		case last.kind == 'q' && endsOperand,
			last.kind == 'w' && !notAlias[strings.ToUpper(last.text)] && endsOperand:
			return expectedName{name: identValue(last), ident: true}, true
		case last.kind == 's' && prev.kind != 's' && endsOperand:
			return expectedName{}, false // a string alias without AS: rare, not derived
		}
	}
	// Adjacent strings are one literal, named by the first.
	allStrings := true
	for _, t := range f {
		allStrings = allStrings && t.kind == 's'
	}
	if allStrings {
		v, ok := stringValue(f[0].text)
		v = strings.TrimLeft(v, " ")
		return expectedName{name: v}, ok && v != ""
	}
	if len(f) == 1 {
		switch f[0].kind {
		case 'n':
			return expectedName{name: f[0].text}, true
		case 'q':
			return expectedName{name: identValue(f[0]), ident: true}, true
		case 'w':
			if u := strings.ToUpper(f[0].text); u == "NULL" || u == "TRUE" || u == "FALSE" {
				return expectedName{name: u}, true
			}
			return expectedName{name: f[0].text, ident: true}, true
		}
	}
	// A qualified column reference: name (. name)+.
	qualified := len(f)%2 == 1
	for k, t := range f {
		if k%2 == 0 {
			qualified = qualified && (t.kind == 'w' || t.kind == 'q')
		} else {
			qualified = qualified && t.kind == 'p' && t.text == "."
		}
	}
	if qualified {
		return expectedName{name: identValue(last), ident: true}, true
	}
	// A number in parentheses or with a unary plus, or a string with a
	// character-set introducer: not derived.
	onlyNumber := true
	for _, t := range f {
		onlyNumber = onlyNumber && (t.kind == 'n' || t.kind == 'p' && strings.Contains("()+-", t.text))
	}
	if onlyNumber && (f[0].text == "(" || f[0].text == "+") {
		return expectedName{}, false
	}
	if f[0].kind == 'w' && (strings.EqualFold(f[0].text, "N") || f[0].text[0] == '_') && len(f) > 1 && f[1].kind == 's' {
		return expectedName{}, false
	}
	text := q[f[0].start:last.end]
	if len(text) > 256 {
		return expectedName{}, false
	}
	return expectedName{name: text}, true
}

// identValue is the name a word or a `quoted` identifier stands for.
func identValue(t sqlToken) string {
	if t.kind == 'q' {
		return strings.ReplaceAll(t.text[1:len(t.text)-1], "``", "`")
	}
	return t.text
}

// stringValue is the value of a MySQL string literal ('…' or "…"), with
// MySQL's backslash escapes (\% and \_ keep their backslash) and doubled
// quotes.
func stringValue(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != lit[len(lit)-1] || lit[0] != '\'' && lit[0] != '"' {
		return "", false
	}
	quote, body := lit[0], lit[1:len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		ch := body[i]
		switch {
		case ch == '\\' && i+1 < len(body):
			i++
			switch e := body[i]; e {
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'Z':
				b.WriteByte(26)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		case ch == quote && i+1 < len(body) && body[i+1] == quote:
			b.WriteByte(quote)
			i++
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), true
}
