package flight

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"google.golang.org/grpc/codes"

	"lakegate/flight/ingest/ingesttest"
)

// TestWriteTableCodec: the codec of a table (its parquet.compression
// property, in the version the catalog resolves) compresses every file a
// write to it stores, bulk ingest and INSERT alike, and the engine reads
// them; a codec the gateway does not know refuses the write and stores
// nothing.
func TestWriteTableCodec(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	seedOrders(t, cl)
	setCodec := func(codec string) {
		l.cat.set("sales.orders", func(tb *lakeTable) { tb.versions[len(tb.versions)-1].Codec = codec })
	}
	// newFiles runs write and returns the data files it added.
	newFiles := func(write func() error) ([]string, error) {
		before := l.dataFiles(t)
		err := write()
		var added []string
		for _, f := range l.dataFiles(t) {
			if !slices.Contains(before, f) {
				added = append(added, f)
			}
		}
		return added, err
	}
	ingest := func() error {
		_, err := ingestJSON(ctx, cl, ordersSchema, `[{"id":7,"amount":7.5}]`, ingestOpts("sales", "orders", ingestAppend))
		return err
	}
	insert := func() error {
		_, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders SELECT id + 100, amount FROM sales.orders WHERE id = 1")
		return err
	}
	for _, c := range []struct {
		codec string
		want  compress.Compression
	}{
		{"snappy", compress.Codecs.Snappy},
		{"uncompressed", compress.Codecs.Uncompressed},
		{"zstd", compress.Codecs.Zstd},
		{"", compress.Codecs.Zstd},
	} {
		for name, write := range map[string]func() error{"ingest": ingest, "insert": insert} {
			setCodec(c.codec)
			added, err := newFiles(write)
			if err != nil || len(added) != 1 {
				t.Fatalf("%s with codec %q: files %v, %v", name, c.codec, added, err)
			}
			if got := fileCodecs(t, filepath.Join(l.root, "tenants", "acme", added[0])); !slices.Equal(got, []compress.Compression{c.want}) {
				t.Errorf("%s with codec %q: column chunks compressed with %v, want %v", name, c.codec, got, c.want)
			}
		}
	}
	if got := mustQuery(t, ctx, cl, "SELECT count(*), sum(id) FROM sales.orders"); got[0][0] != "10" {
		t.Errorf("rows read back: %v", got)
	}
	for _, bad := range []string{"gzip", "ZSTD"} {
		setCodec(bad)
		for name, write := range map[string]func() error{"ingest": ingest, "insert": insert} {
			added, err := newFiles(write)
			checkStatus(t, err, codes.InvalidArgument, "unknown Parquet codec")
			if len(added) != 0 {
				t.Errorf("%s with codec %q stored %v", name, bad, added)
			}
		}
	}
}

// fileCodecs returns the distinct codecs of the column chunks of the
// Parquet file at path.
func fileCodecs(t *testing.T, path string) []compress.Compression {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ingesttest.Codecs(f)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
