package flight

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/backend"
)

// TestAlignRowsByPositionForSQL: an INSERT … SELECT without a column list
// fills the table's columns by position and needs one value per column, as
// in MySQL, whatever the select list's names; only ingest matches by name.
// (Matched by name, INSERT INTO t SELECT name FROM t filled just the column
// called name and left the others NULL.)
func TestAlignRowsByPositionForSQL(t *testing.T) {
	cols := []backend.Column{{Name: "id", Type: "int64"}, {Name: "name", Type: "utf8"}}
	reader := func() array.RecordReader {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		b.Append("a")
		col := b.NewArray()
		defer col.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, 1)
		defer rec.Release()
		r, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		name       string
		byPosition bool
		wantErr    bool
	}{
		{"ingest, by name", false, false},
		{"INSERT … SELECT, by position", true, true},
	} {
		src := reader()
		rows, err := alignRows(src, cols, nil, c.byPosition)
		if c.wantErr {
			if !errors.Is(err, errBadRequest) {
				t.Errorf("%s: %v, want a bad request (one value for two columns)", c.name, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else {
			rows.Release()
		}
		src.Release()
	}
}
