package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// CSV columns get their types from a sample of the file's first rows (or
// from --schema): per column the narrowest of BOOLEAN, BIGINT,
// DECIMAL(p,s), DOUBLE, DATE, TIMESTAMP that holds every sampled value,
// else VARCHAR. An inferred DECIMAL has the sample's widest scale and a
// precision of at least 18. Every later value must fit the column's type; one that
// does not fails the whole load with its line, column, value and the type
// expected, since a silently nulled or rounded value is worse than none.

// defaultSampleRows is how many data rows --sample-rows reads by default.
const defaultSampleRows = 1000

// maxDecimalPrecision is DuckDB's (and decimal128's) widest DECIMAL.
const maxDecimalPrecision = 38

// minInferredPrecision is the least precision of an inferred DECIMAL:
// DuckDB's default DECIMAL width, the widest it stores in 64 bits.
const minInferredPrecision = 18

// colKind is a CSV column's SQL type without parameters.
type colKind int

const (
	kindVarchar colKind = iota
	kindBoolean
	kindBigint
	kindInteger
	kindDouble
	kindDecimal
	kindDate
	kindTimestamp
)

// colType is a CSV column's type: its kind and, for DECIMAL, precision and
// scale.
type colType struct {
	kind             colKind
	precision, scale int32
}

// String is the type as SQL spells it, as messages and --schema show it.
func (t colType) String() string {
	switch t.kind {
	case kindBoolean:
		return "BOOLEAN"
	case kindBigint:
		return "BIGINT"
	case kindInteger:
		return "INTEGER"
	case kindDouble:
		return "DOUBLE"
	case kindDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.precision, t.scale)
	case kindDate:
		return "DATE"
	case kindTimestamp:
		return "TIMESTAMP"
	}
	return "VARCHAR"
}

// arrow is the Arrow type sent for t: types the gateway's ingest writes and
// DuckDB reads back as the same SQL type (timestamps in microseconds,
// without a zone).
func (t colType) arrow() arrow.DataType {
	switch t.kind {
	case kindBoolean:
		return arrow.FixedWidthTypes.Boolean
	case kindBigint:
		return arrow.PrimitiveTypes.Int64
	case kindInteger:
		return arrow.PrimitiveTypes.Int32
	case kindDouble:
		return arrow.PrimitiveTypes.Float64
	case kindDecimal:
		return &arrow.Decimal128Type{Precision: t.precision, Scale: t.scale}
	case kindDate:
		return arrow.FixedWidthTypes.Date32
	case kindTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	}
	return arrow.BinaryTypes.String
}

var (
	decimalTypeRE = regexp.MustCompile(`^(?:decimal|numeric)\s*\(\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\)$`)
	schemaNames   = map[string]colKind{
		"varchar": kindVarchar, "text": kindVarchar, "string": kindVarchar,
		"boolean": kindBoolean, "bool": kindBoolean,
		"bigint": kindBigint, "int64": kindBigint, "long": kindBigint,
		"integer": kindInteger, "int": kindInteger, "int32": kindInteger,
		"double": kindDouble, "float64": kindDouble, "float8": kindDouble,
		"date":      kindDate,
		"timestamp": kindTimestamp, "datetime": kindTimestamp,
	}
)

// parseColType reads one type of --schema: varchar, boolean, bigint,
// integer, double, decimal(p,s), date or timestamp (any case; a few
// aliases).
func parseColType(s string) (colType, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if k, ok := schemaNames[s]; ok {
		return colType{kind: k}, nil
	}
	if m := decimalTypeRE.FindStringSubmatch(s); m != nil {
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		if p < 1 || p > maxDecimalPrecision || sc > p {
			return colType{}, fmt.Errorf("%q: a DECIMAL's precision is 1–38 and its scale at most its precision", s)
		}
		return colType{kind: kindDecimal, precision: int32(p), scale: int32(sc)}, nil
	}
	return colType{}, fmt.Errorf("unknown type %q: use varchar, boolean, bigint, integer, double, decimal(p,s), date or timestamp", s)
}

// schemaOverride is --schema: column types by lower-cased column name, in
// the order given.
type schemaOverride struct {
	names []string
	types map[string]colType
}

// parseSchemaFlag reads --schema 'col:type,col:type,…'; commas inside a
// type's parentheses (decimal(15,2)) do not separate columns.
func parseSchemaFlag(s string) (*schemaOverride, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	o := &schemaOverride{types: map[string]colType{}}
	for _, p := range parts {
		name, typ, ok := strings.Cut(p, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: --schema: %q is not COLUMN:TYPE", errUsage, strings.TrimSpace(p))
		}
		t, err := parseColType(typ)
		if err != nil {
			return nil, fmt.Errorf("%w: --schema: column %q: %v", errUsage, name, err)
		}
		if _, dup := o.types[name]; dup {
			return nil, fmt.Errorf("%w: --schema names column %q twice", errUsage, name)
		}
		o.names = append(o.names, name)
		o.types[name] = t
	}
	return o, nil
}

// --- inference ---

// candidate bits: the types a column's sampled values still all fit.
const (
	fitBoolean = 1 << iota
	fitBigint
	fitDecimal
	fitDouble
	fitDate
	fitTimestamp
	fitAll = fitBoolean | fitBigint | fitDecimal | fitDouble | fitDate | fitTimestamp
)

// inferrer narrows one column's type over the sampled values.
type inferrer struct {
	fits      int
	seen      bool  // a non-NULL value was sampled
	intDigits int32 // most digits before the point (leading zeros dropped)
	scale     int32 // most digits after the point
}

var (
	// Floating-point text: fixed-point with an optional exponent.
	floatRE     = regexp.MustCompile(`^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$`)
	timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?$`)
)

// fixedPoint splits fixed-point text — an optional sign, digits, an
// optional point and digits, at least one digit in all — into its sign,
// the digits before the point and those after; ok is false for other
// text. (By hand rather than by regexp: every value of a DECIMAL column
// passes here.)
func fixedPoint(v string) (neg bool, whole, frac string, point, ok bool) {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		neg, v = v[0] == '-', v[1:]
	}
	whole, frac, point = strings.Cut(v, ".")
	ok = (whole != "" || frac != "") && allDigits(whole) && allDigits(frac)
	return neg, whole, frac, point, ok
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dateShape reports whether v looks like YYYY-MM-DD.
func dateShape(v string) bool {
	return len(v) == 10 && v[4] == '-' && v[7] == '-' && allDigits(v[:4]) && allDigits(v[5:7]) && allDigits(v[8:])
}

// isNull reports whether v is NULL in a typed column: empty, or the word
// null in any case. In a VARCHAR column only the empty field is NULL.
func isNull(v string) bool { return v == "" || strings.EqualFold(v, "null") }

// leadingZero reports whether fixed-point text has a redundant leading
// zero ("007", "-01.5"): such text is an identifier (a ZIP code, an
// account number), kept as VARCHAR unless --schema says otherwise.
func leadingZero(v string) bool {
	v = strings.TrimLeft(v, "+-")
	return len(v) > 1 && v[0] == '0' && v[1] >= '0' && v[1] <= '9'
}

func (in *inferrer) add(v string) {
	if isNull(v) {
		return
	}
	in.seen = true
	if in.fits&fitBoolean != 0 && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		in.fits &^= fitBoolean
	}
	if in.fits&(fitBigint|fitDecimal|fitDouble) != 0 {
		_, whole, frac, point, fixed := fixedPoint(v)
		switch {
		case leadingZero(v) || !fixed && !floatRE.MatchString(v):
			in.fits &^= fitBigint | fitDecimal | fitDouble
		case !fixed:
			in.fits &^= fitBigint | fitDecimal
		default:
			whole = strings.TrimLeft(whole, "0")
			in.intDigits = max(in.intDigits, int32(len(whole)))
			in.scale = max(in.scale, int32(len(frac)))
			if point {
				in.fits &^= fitBigint
			} else if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				in.fits &^= fitBigint // beyond BIGINT: a DECIMAL(p,0) may hold it
			}
		}
	}
	if in.fits&fitDate != 0 && parseDate(v) != nil {
		in.fits &^= fitDate
	}
	if in.fits&fitTimestamp != 0 && parseTimestampOrDate(v) != nil {
		in.fits &^= fitTimestamp
	}
}

// parseDate and parseTimestampOrDate only check; appendValue converts.
func parseDate(v string) error {
	_, err := dateValue(v)
	return err
}

func parseTimestampOrDate(v string) error {
	_, err := timestampValue(v)
	return err
}

// result is the narrowest type that holds every sampled value.
func (in *inferrer) result() colType {
	f := in.fits
	switch {
	case !in.seen:
		return colType{kind: kindVarchar}
	case f&fitBoolean != 0:
		return colType{kind: kindBoolean}
	case f&fitBigint != 0:
		return colType{kind: kindBigint}
	case f&fitDecimal != 0 && in.intDigits+in.scale <= maxDecimalPrecision:
		// The scale is the sample's; the precision leaves room for wider
		// values later in the file (growing amounts are common, and DuckDB
		// keeps any DECIMAL of up to 18 digits in 8 bytes).
		return colType{kind: kindDecimal, precision: max(in.intDigits+in.scale, minInferredPrecision), scale: in.scale}
	case f&(fitDecimal|fitDouble) != 0:
		return colType{kind: kindDouble}
	case f&fitDate != 0:
		return colType{kind: kindDate}
	case f&fitTimestamp != 0:
		return colType{kind: kindTimestamp}
	}
	return colType{kind: kindVarchar}
}

// --- conversion ---

// dateValue parses YYYY-MM-DD.
func dateValue(v string) (arrow.Date32, error) {
	if !dateShape(v) {
		return 0, errors.New("not YYYY-MM-DD")
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return 0, err
	}
	return arrow.Date32FromTime(t), nil
}

// timestampValue parses YYYY-MM-DD[ T]HH:MM:SS[.ffffff], or a date
// (midnight), as microseconds since the epoch (no zone).
func timestampValue(v string) (arrow.Timestamp, error) {
	if dateShape(v) {
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return 0, err
		}
		return arrow.Timestamp(t.UnixMicro()), nil
	}
	if !timestampRE.MatchString(v) {
		return 0, errors.New("not YYYY-MM-DD HH:MM:SS[.ffffff]")
	}
	t, err := time.Parse("2006-01-02T15:04:05", v[:10]+"T"+v[11:])
	if err != nil {
		return 0, err
	}
	return arrow.Timestamp(t.UnixMicro()), nil
}

// decimalValue parses fixed-point text exactly into a DECIMAL(p,s): more
// digits after the point than s, or before it than p-s, do not fit (no
// rounding).
func decimalValue(v string, p, s int32) (decimal128.Num, error) {
	neg, whole, frac, _, ok := fixedPoint(v)
	if !ok {
		return decimal128.Num{}, errors.New("not a fixed-point number")
	}
	whole = strings.TrimLeft(whole, "0")
	frac = strings.TrimRight(frac, "0")
	if int32(len(frac)) > s || int32(len(whole)) > p-s {
		return decimal128.Num{}, errors.New("too many digits")
	}
	var n decimal128.Num
	if len(whole)+int(s) <= 18 { // fits an int64: no allocation
		var i int64
		for _, part := range [2]string{whole, frac} {
			for k := 0; k < len(part); k++ {
				i = i*10 + int64(part[k]-'0')
			}
		}
		for range int(s) - len(frac) {
			i *= 10
		}
		n = decimal128.FromI64(i)
	} else {
		b, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", int(s)-len(frac)), 10)
		if !ok {
			return decimal128.Num{}, errors.New("not a number")
		}
		n = decimal128.FromBigInt(b)
	}
	if neg {
		n = n.Negate()
	}
	return n, nil
}

// appendValue appends v, converted to t, to b; a value that does not fit
// is an error (b is then unchanged).
func appendValue(b array.Builder, t colType, v string) error {
	if t.kind == kindVarchar {
		if v == "" {
			b.AppendNull()
		} else {
			b.(*array.StringBuilder).Append(v)
		}
		return nil
	}
	if isNull(v) {
		b.AppendNull()
		return nil
	}
	switch t.kind {
	case kindBoolean:
		switch {
		case strings.EqualFold(v, "true"):
			b.(*array.BooleanBuilder).Append(true)
		case strings.EqualFold(v, "false"):
			b.(*array.BooleanBuilder).Append(false)
		default:
			return errors.New("not true or false")
		}
	case kindBigint, kindInteger:
		bits := 64
		if t.kind == kindInteger {
			bits = 32
		}
		i, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return errors.New("not an integer in range")
		}
		if t.kind == kindInteger {
			b.(*array.Int32Builder).Append(int32(i))
		} else {
			b.(*array.Int64Builder).Append(i)
		}
	case kindDouble:
		if _, _, _, _, fixed := fixedPoint(v); !fixed && !floatRE.MatchString(v) {
			return errors.New("not a number")
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return errors.New("out of range")
		}
		b.(*array.Float64Builder).Append(f)
	case kindDecimal:
		n, err := decimalValue(v, t.precision, t.scale)
		if err != nil {
			return err
		}
		b.(*array.Decimal128Builder).Append(n)
	case kindDate:
		d, err := dateValue(v)
		if err != nil {
			return err
		}
		b.(*array.Date32Builder).Append(d)
	case kindTimestamp:
		ts, err := timestampValue(v)
		if err != nil {
			return err
		}
		b.(*array.TimestampBuilder).Append(ts)
	}
	return nil
}

// --- the reader ---

// ValueError is a CSV value that does not fit its column's type.
type ValueError struct {
	Line     int    // the file line the value starts on, from 1
	Column   string // the column's (lower-cased) name
	Value    string
	Type     colType
	Inferred bool // the type was inferred from a sample, not given by --schema
	Sample   int  // the sample's size in rows, when Inferred
	// Wider is, when Inferred, the narrowest type that holds the sample
	// and this value too.
	Wider colType
}

func (e *ValueError) Error() string {
	v := e.Value
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	msg := fmt.Sprintf("line %d, column %s: %q is not a %s", e.Line, e.Column, v, e.Type)
	if e.Inferred {
		return msg + fmt.Sprintf(" (the type was inferred from the first %d rows: give it with --schema '%s:%s', or sample more with --sample-rows)",
			e.Sample, e.Column, strings.ToLower(e.Wider.String()))
	}
	return msg + " (the type --schema gives)"
}

// csvRow is a record read for the sample, with the line of each field.
type csvRow struct {
	fields []string
	lines  []int
}

// csvReader reads a CSV file as record batches of the columns' types. It
// implements array.RecordReader.
type csvReader struct {
	refs     atomic.Int64
	r        *csv.Reader
	names    []string
	types    []colType
	inferred []*inferrer // per column, what the sample held; nil for a type --schema gives
	sample   int
	schema   *arrow.Schema
	chunk    int
	pending  []csvRow // sampled rows not yet converted
	cur      arrow.RecordBatch
	err      error
	eof      bool
	mem      memory.Allocator
}

// newCSVReader reads the header (or names columns f0, f1, … without one)
// and the first sampleRows data rows, and settles each column's type: the
// override's when it names the column, else inferred from the sample.
func newCSVReader(src io.Reader, co csvOptions, chunk int) (*csvReader, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	// A UTF-8 byte order mark (spreadsheets write one) is not part of the
	// first column's name.
	if bom, err := br.Peek(3); err == nil && string(bom) == "\xef\xbb\xbf" {
		_, _ = br.Discard(3)
	}
	r := csv.NewReader(br)
	r.Comma = co.delimiter
	sampleRows := co.sampleRows
	if sampleRows <= 0 {
		sampleRows = defaultSampleRows
	}
	c := &csvReader{r: r, chunk: chunk, sample: sampleRows, mem: memory.DefaultAllocator}
	c.refs.Store(1)
	if co.header {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		if err != nil {
			return nil, csvReadError(err)
		}
		c.names = append([]string(nil), rec...)
	}
	for len(c.pending) < sampleRows {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			c.eof = true
			break
		}
		if err != nil {
			return nil, csvReadError(err)
		}
		row := csvRow{fields: rec, lines: make([]int, len(rec))}
		for i := range rec {
			row.lines[i], _ = r.FieldPos(i)
		}
		c.pending = append(c.pending, row)
	}
	if c.names == nil {
		if len(c.pending) == 0 {
			return nil, errors.New("the file is empty")
		}
		for i := range c.pending[0].fields {
			c.names = append(c.names, fmt.Sprintf("f%d", i))
		}
	}
	if len(c.pending) == 0 && co.schema == nil {
		return nil, errors.New("no data rows: the column types are inferred from the rows (or give them all with --schema)")
	}
	// Validate the names before the types: --schema refers to them.
	fields := make([]arrow.Field, len(c.names))
	for i, n := range c.names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	named, err := lowerColumnNames(arrow.NewSchema(fields, nil))
	if err != nil {
		if d, ok := guessDelimiter(c.names, co.delimiter); ok && co.header {
			return nil, fmt.Errorf("%w; the header reads as one column: if the file is %s-separated, pass --csv-delimiter %s", err, delimiterName(d), delimiterFlag(d))
		}
		return nil, err
	}
	for i, f := range named.Fields() {
		c.names[i] = f.Name
	}
	if err := c.settleTypes(co.schema); err != nil {
		return nil, err
	}
	for i := range fields {
		fields[i] = arrow.Field{Name: c.names[i], Type: c.types[i].arrow(), Nullable: true}
	}
	c.schema = arrow.NewSchema(fields, nil)
	return c, nil
}

// guessDelimiter returns the likely delimiter of a file whose header
// read as one column: the one of ; tab | , (other than the one used) that
// occurs in it most.
func guessDelimiter(header []string, used rune) (rune, bool) {
	if len(header) != 1 {
		return 0, false
	}
	best, most := rune(0), 0
	for _, d := range []rune{';', '\t', '|', ','} {
		if n := strings.Count(header[0], string(d)); d != used && n > most {
			best, most = d, n
		}
	}
	return best, most > 0
}

func delimiterName(d rune) string {
	if d == '\t' {
		return "tab"
	}
	return string(d)
}

// delimiterFlag is d as typed after --csv-delimiter in a shell.
func delimiterFlag(d rune) string {
	if d == '\t' {
		return `'\t'`
	}
	return "'" + string(d) + "'"
}

// settleTypes gives each column the override's type or the one inferred
// from the sampled rows.
func (c *csvReader) settleTypes(o *schemaOverride) error {
	c.types = make([]colType, len(c.names))
	c.inferred = make([]*inferrer, len(c.names))
	index := make(map[string]int, len(c.names))
	for i, n := range c.names {
		index[n] = i
	}
	given := map[int]bool{}
	if o != nil {
		for _, n := range o.names {
			i, ok := index[n]
			if !ok {
				return fmt.Errorf("%w: --schema names column %q, which the file does not have (its columns: %s)", errUsage, n, strings.Join(c.names, ", "))
			}
			c.types[i], given[i] = o.types[n], true
		}
	}
	for i := range c.names {
		if given[i] {
			continue
		}
		in := &inferrer{fits: fitAll}
		for _, row := range c.pending {
			if i < len(row.fields) {
				in.add(row.fields[i])
			}
		}
		c.types[i], c.inferred[i] = in.result(), in
	}
	return nil
}

// csvReadError rewords encoding/csv's errors: line and column, without
// Go's wording.
func csvReadError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(pe.Err, csv.ErrFieldCount):
		return fmt.Errorf("line %d: a different number of fields than the first line", pe.Line)
	case errors.Is(pe.Err, csv.ErrQuote), errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Errorf("line %d, character %d: a quote inside an unquoted field, or a quoted field not closed", pe.Line, pe.Column)
	}
	return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
}

func (c *csvReader) Schema() *arrow.Schema          { return c.schema }
func (c *csvReader) RecordBatch() arrow.RecordBatch { return c.cur }
func (c *csvReader) Record() arrow.RecordBatch      { return c.cur }
func (c *csvReader) Err() error                     { return c.err }
func (c *csvReader) Retain()                        { c.refs.Add(1) }

func (c *csvReader) Release() {
	if c.refs.Add(-1) == 0 && c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}

// Next converts the next chunk rows: the sampled ones first, then rows
// read from the file.
func (c *csvReader) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.err != nil {
		return false
	}
	b := array.NewRecordBuilder(c.mem, c.schema)
	defer b.Release()
	n := 0
	add := func(fields []string, line func(i int) int) bool {
		if len(fields) != len(c.names) {
			c.err = fmt.Errorf("line %d: %d fields, the header has %d", line(0), len(fields), len(c.names))
			return false
		}
		for i, v := range fields {
			if err := appendValue(b.Field(i), c.types[i], v); err != nil {
				ve := &ValueError{Line: line(i), Column: c.names[i], Value: v, Type: c.types[i], Sample: c.sample}
				if in := c.inferred[i]; in != nil {
					wider := *in
					wider.add(v)
					ve.Inferred, ve.Wider = true, wider.result()
				}
				c.err = ve
				return false
			}
		}
		n++
		return true
	}
	for n < c.chunk && len(c.pending) > 0 {
		row := c.pending[0]
		c.pending = c.pending[1:]
		if !add(row.fields, func(i int) int { return row.lines[i] }) {
			return false
		}
	}
	for n < c.chunk && !c.eof {
		rec, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			c.eof = true
			break
		}
		if err != nil {
			c.err = csvReadError(err)
			return false
		}
		if !add(rec, func(i int) int { l, _ := c.r.FieldPos(i); return l }) {
			return false
		}
	}
	if n == 0 {
		return false
	}
	c.cur = b.NewRecordBatch()
	return true
}
