package integration_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/pingcap/go-tpc/tpch/dbgen"
)

// This file generates TPC-H data with go-tpc's dbgen (a Go port of the
// TPC-H generator) and writes each table as one Parquet file with the
// TPC-H column types: BIGINT keys and counts, DECIMAL(15,2) money,
// quantities and rates, DATE dates, VARCHAR text.

// tpchMoney is DECIMAL(15,2), the type of every TPC-H money column.
var tpchMoney = &arrow.Decimal128Type{Precision: 15, Scale: 2}

// tpchColumn is one column of a TPC-H table.
type tpchColumn struct {
	name string
	typ  arrow.DataType
}

func tpchCols(spec ...any) []tpchColumn {
	var cols []tpchColumn
	for i := 0; i < len(spec); i += 2 {
		cols = append(cols, tpchColumn{spec[i].(string), spec[i+1].(arrow.DataType)})
	}
	return cols
}

var (
	tpchInt  = arrow.PrimitiveTypes.Int64
	tpchText = arrow.BinaryTypes.String
	tpchDate = arrow.FixedWidthTypes.Date32
)

// tpchTables are the eight tables in load order, with the lower-case column
// names the query texts use.
var tpchTables = []struct {
	name string
	cols []tpchColumn
}{
	{"region", tpchCols("r_regionkey", tpchInt, "r_name", tpchText, "r_comment", tpchText)},
	{"nation", tpchCols("n_nationkey", tpchInt, "n_name", tpchText, "n_regionkey", tpchInt, "n_comment", tpchText)},
	{"supplier", tpchCols("s_suppkey", tpchInt, "s_name", tpchText, "s_address", tpchText, "s_nationkey", tpchInt,
		"s_phone", tpchText, "s_acctbal", tpchMoney, "s_comment", tpchText)},
	{"customer", tpchCols("c_custkey", tpchInt, "c_name", tpchText, "c_address", tpchText, "c_nationkey", tpchInt,
		"c_phone", tpchText, "c_acctbal", tpchMoney, "c_mktsegment", tpchText, "c_comment", tpchText)},
	{"part", tpchCols("p_partkey", tpchInt, "p_name", tpchText, "p_mfgr", tpchText, "p_brand", tpchText, "p_type", tpchText,
		"p_size", tpchInt, "p_container", tpchText, "p_retailprice", tpchMoney, "p_comment", tpchText)},
	{"partsupp", tpchCols("ps_partkey", tpchInt, "ps_suppkey", tpchInt, "ps_availqty", tpchInt, "ps_supplycost", tpchMoney,
		"ps_comment", tpchText)},
	{"orders", tpchCols("o_orderkey", tpchInt, "o_custkey", tpchInt, "o_orderstatus", tpchText, "o_totalprice", tpchMoney,
		"o_orderdate", tpchDate, "o_orderpriority", tpchText, "o_clerk", tpchText, "o_shippriority", tpchInt, "o_comment", tpchText)},
	{"lineitem", tpchCols("l_orderkey", tpchInt, "l_partkey", tpchInt, "l_suppkey", tpchInt, "l_linenumber", tpchInt,
		"l_quantity", tpchMoney, "l_extendedprice", tpchMoney, "l_discount", tpchMoney, "l_tax", tpchMoney,
		"l_returnflag", tpchText, "l_linestatus", tpchText, "l_shipdate", tpchDate, "l_commitdate", tpchDate,
		"l_receiptdate", tpchDate, "l_shipinstruct", tpchText, "l_shipmode", tpchText, "l_comment", tpchText)},
}

// tpchColumnType returns the type of a TPC-H column by name (nil when no
// table has it).
func tpchColumnType(name string) arrow.DataType {
	for _, t := range tpchTables {
		for _, c := range t.cols {
			if c.name == name {
				return c.typ
			}
		}
	}
	return nil
}

// tpchSample is a small, self-consistent data set cut from SF 1's
// generator: the first rows of each table, with the foreign keys folded
// into the rows kept. The zero value means the whole scale factor.
type tpchSample struct {
	suppliers, customers, parts, orders int64
	// Orders after the first `orders` are scanned up to scanOrders and kept
	// when their lines' quantities sum past bigQuantity: SF 1 has a few
	// such orders per million, and without them the large-order query
	// (Q18) would answer nothing at a small scale.
	scanOrders  int64
	bigQuantity int64
}

// tpchSmall is about 1 % of SF 1 (15,000 orders, ~60,000 lines).
var tpchSmall = tpchSample{suppliers: 100, customers: 1500, parts: 2000, orders: 15000,
	scanOrders: 400_000, bigQuantity: 300}

// dbgen's state is package-level and InitDbGen does not reset all of it
// (a second call appends to its distributions), so a process generates one
// data set: a second generateTPCH fails rather than write different data.
var (
	tpchGenMu   sync.Mutex
	tpchGenDone bool
)

// tpchRowsPerBatch is the size of the Arrow batches written to Parquet.
const tpchRowsPerBatch = 64 << 10

// errTPCHEnough stops a table's generation: dbgen's DbGen returns a
// loader's error (formatted with %v, so it is recognised by the loader's
// own flag, not errors.Is).
var errTPCHEnough = errors.New("tpch: enough rows")

// tpchWriter writes one table's rows to a Parquet file in batches.
type tpchWriter struct {
	b    *array.RecordBuilder
	w    *pqarrow.FileWriter // closes the file
	n    int64               // rows in the builder
	rows int64               // rows written
}

func newTPCHWriter(path string, cols []tpchColumn) (*tpchWriter, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ}
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := pqarrow.NewFileWriter(schema, f,
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(122880)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &tpchWriter{b: array.NewRecordBuilder(memory.DefaultAllocator, schema), w: w}, nil
}

// row appends one row: int64 for BIGINT and for DECIMAL(15,2) (in cents),
// string for VARCHAR and for DATE (YYYY-MM-DD).
func (t *tpchWriter) row(vals ...any) error {
	for i, v := range vals {
		switch b := t.b.Field(i).(type) {
		case *array.Int64Builder:
			b.Append(v.(int64))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(v.(int64)))
		case *array.Date32Builder:
			d, err := time.Parse(time.DateOnly, v.(string))
			if err != nil {
				return fmt.Errorf("tpch: date %q: %w", v, err)
			}
			b.Append(arrow.Date32FromTime(d))
		default:
			return fmt.Errorf("tpch: column %d: unexpected builder %T", i, b)
		}
	}
	t.n++
	if t.n == tpchRowsPerBatch {
		return t.flush()
	}
	return nil
}

// count is the number of rows appended so far.
func (t *tpchWriter) count() int64 { return t.rows + t.n }

func (t *tpchWriter) flush() error {
	if t.n == 0 {
		return nil
	}
	rec := t.b.NewRecordBatch()
	defer rec.Release()
	t.rows += t.n
	t.n = 0
	return t.w.Write(rec)
}

func (t *tpchWriter) close() error {
	err := t.flush()
	t.b.Release()
	if cerr := t.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// tpchLoader is a dbgen.Loader that hands each generated item to load, and
// stops generation (errTPCHEnough) once limit items were seen (0: none).
type tpchLoader struct {
	limit, seen int64
	stopped     bool
	load        func(item any) error
}

func (l *tpchLoader) Load(item any) error {
	if l.limit > 0 && l.seen >= l.limit {
		l.stopped = true
		return errTPCHEnough
	}
	l.seen++
	return l.load(item)
}

func (*tpchLoader) Flush() error { return nil }

// tpchPartSuppBridge is TPC-H's rule for the i-th (0..3) supplier of part p
// among s suppliers, as dbgen applies it; the sample re-applies it with its
// own supplier count so every line's (part, supplier) is a partsupp row.
func tpchPartSuppBridge(p, i, s int64) int64 {
	return (p+i*(s/4+(p-1)/s))%s + 1
}

// tpchFold maps key 1..∞ onto 1..n (n = 0: unchanged).
func tpchFold(key, n int64) int64 {
	if n == 0 {
		return key
	}
	return (key-1)%n + 1
}

// generateTPCH writes <table>.parquet for the eight tables into dir: scale
// factor sf, or a sample of SF 1 when sample is not the zero value.
func generateTPCH(dir string, sf int64, sample tpchSample) (err error) {
	tpchGenMu.Lock()
	defer tpchGenMu.Unlock()
	if tpchGenDone {
		return errors.New("tpch: dbgen generates one data set per process (run TestTPCH and BenchmarkTPCH in separate go test runs)")
	}
	tpchGenDone = true
	if sample != (tpchSample{}) {
		sf = 1
	}
	dbgen.InitDbGen(sf)

	writers := map[string]*tpchWriter{}
	defer func() {
		for _, w := range writers {
			if cerr := w.close(); err == nil {
				err = cerr
			}
		}
	}()
	for _, t := range tpchTables {
		w, err := newTPCHWriter(filepath.Join(dir, t.name+".parquet"), t.cols)
		if err != nil {
			return err
		}
		writers[t.name] = w
	}
	s := sample
	// In a sample each line's and partsupp row's supplier is re-derived
	// from the folded part key with the sample's supplier count; the i-th
	// supplier of a line is taken from its generated supplier key.
	suppOf := func(part, i int64) int64 {
		if s.suppliers == 0 {
			return i
		}
		return tpchPartSuppBridge(part, i%4, s.suppliers)
	}
	keep := true // whether the order being generated is kept (orders, then its lines)
	loaders := map[dbgen.Table]*tpchLoader{
		dbgen.TRegion: {load: func(item any) error {
			r := item.(*dbgen.Region)
			return writers["region"].row(int64(r.Code), r.Text, r.Comment)
		}},
		dbgen.TNation: {load: func(item any) error {
			n := item.(*dbgen.Nation)
			return writers["nation"].row(int64(n.Code), n.Text, int64(n.Join), n.Comment)
		}},
		dbgen.TSupp: {limit: s.suppliers, load: func(item any) error {
			x := item.(*dbgen.Supp)
			return writers["supplier"].row(int64(x.SuppKey), x.Name, x.Address, int64(x.NationCode), x.Phone,
				int64(x.Acctbal), x.Comment)
		}},
		dbgen.TCust: {limit: s.customers, load: func(item any) error {
			c := item.(*dbgen.Cust)
			return writers["customer"].row(int64(c.CustKey), c.Name, c.Address, int64(c.NationCode), c.Phone,
				int64(c.Acctbal), c.MktSegment, c.Comment)
		}},
		dbgen.TPart: {limit: s.parts, load: func(item any) error {
			p := item.(*dbgen.Part)
			return writers["part"].row(int64(p.PartKey), p.Name, p.Mfgr, p.Brand, p.Type, int64(p.Size), p.Container,
				int64(p.RetailPrice), p.Comment)
		}},
		dbgen.TPsupp: {limit: s.parts, load: func(item any) error {
			p := item.(*dbgen.Part)
			for i, ps := range p.S {
				sk := int64(ps.SuppKey)
				if s.suppliers != 0 {
					sk = suppOf(int64(ps.PartKey), int64(i))
				}
				if err := writers["partsupp"].row(int64(ps.PartKey), sk, int64(ps.Qty), int64(ps.SCost), ps.Comment); err != nil {
					return err
				}
			}
			return nil
		}},
		dbgen.TOrder: {limit: max(s.orders, s.scanOrders), load: func(item any) error {
			o := item.(*dbgen.Order)
			keep = true
			if s.orders != 0 {
				var qty int64
				for _, l := range o.Lines {
					qty += int64(l.Quantity)
				}
				keep = writers["orders"].count() < s.orders || qty > s.bigQuantity
			}
			if !keep {
				return nil
			}
			return writers["orders"].row(int64(o.OKey), tpchFold(int64(o.CustKey), s.customers), string(o.Status),
				int64(o.TotalPrice), o.Date, o.OrderPriority, o.Clerk, o.ShipPriority, o.Comment)
		}},
		dbgen.TLine: {load: func(item any) error {
			if !keep {
				return nil
			}
			for _, l := range item.(*dbgen.Order).Lines {
				part := tpchFold(int64(l.PartKey), s.parts)
				sk := int64(l.SuppKey)
				if s.suppliers != 0 {
					sk = suppOf(part, sk)
				}
				// dbgen's quantity is a whole number; the column is DECIMAL(15,2).
				if err := writers["lineitem"].row(int64(l.OKey), part, sk, int64(l.LCnt), int64(l.Quantity)*100,
					int64(l.EPrice), int64(l.Discount), int64(l.Tax), string(l.RFlag), string(l.LStatus),
					l.SDate, l.CDate, l.RDate, l.ShipInstruct, l.ShipMode, l.Comment); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	all := map[dbgen.Table]dbgen.Loader{}
	for t, l := range loaders {
		all[t] = l
	}
	// One DbGen call per table: DbGen stops at the first table whose
	// loader fails, and a sample stops every table early.
	for _, t := range []dbgen.Table{dbgen.TRegion, dbgen.TNation, dbgen.TSupp, dbgen.TCust, dbgen.TPartPsupp, dbgen.TOrderLine} {
		if err := dbgen.DbGen(all, []dbgen.Table{t}); err != nil {
			stopped := false
			for _, l := range loaders {
				stopped = stopped || l.stopped
			}
			if !stopped {
				return fmt.Errorf("tpch: generating table %d: %w", t, err)
			}
			for _, l := range loaders {
				l.stopped = false
			}
		}
	}
	return nil
}
