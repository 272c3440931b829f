package integration_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	mclient "lakegate/metasrv/client"
)

// committedAccessEvents counts the events of tenant's access log as
// committed: the rows of every file of the current version of
// lake.system.access_events (listed by metasrv for the gateway principal
// gwTok), read from the local stage stageRoot, whose statement is
// statement. It is how a benchmark checks that no event was lost.
func committedAccessEvents(b testing.TB, msURL, gwTok, stageRoot, tenant, statement string) int {
	b.Helper()
	mc, err := mclient.New(mclient.Config{Addrs: []string{msURL}, Token: gwTok, Scheme: "http"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, files, err := mc.AccessLogFiles(ctx, tenant, "lake")
	if err != nil {
		b.Fatalf("listing the access log's files: %v", err)
	}
	n := 0
	for _, f := range files {
		n += accessEventsWith(b, filepath.Join(stageRoot, "tenants", tenant, filepath.FromSlash(f.Path)), statement)
	}
	return n
}

// accessEventsWith counts the events of one access-log Parquet file whose
// statement is statement.
func accessEventsWith(b testing.TB, path, statement string) int {
	b.Helper()
	tbl := readParquetTable(b, path)
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("statement")
	if len(idx) != 1 {
		b.Fatal(errors.New(path + ": no statement column"))
	}
	n := 0
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		col := chunk.(*array.String)
		for i := 0; i < col.Len(); i++ {
			if col.Value(i) == statement {
				n++
			}
		}
	}
	return n
}
