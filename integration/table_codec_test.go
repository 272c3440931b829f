package integration_test

import (
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"lakegate/flight/ingest/ingesttest"
)

// TestTableCodec: a table whose parquet.compression property is set
// through metasrv's REST API gets files of that codec from the next write
// (the Parquet footer says so), the engine reads them with the older zstd
// files, and metasrv refuses a codec it does not know.
func TestTableCodec(t *testing.T) {
	dataDir, metaAddr := t.TempDir(), freeLoopbackAddr(t)
	srv := startServeArgs(t, dataDir, "serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--metasrv-addr", metaAddr, "--raft-addr", freeLoopbackAddr(t))
	env := &metasrvEnv{adminTok: srv.token(t, "admin@demo"), client: &http.Client{Timeout: 20 * time.Second}}
	node := &metasrvProc{id: "serve", httpAddr: metaAddr}
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	ctx := context.Background()
	ingest := func(mode string) {
		t.Helper()
		rdr := newGenRows(1000, false)
		defer rdr.Release()
		if n, err := analyst.ingest(ctx, "sales", "codec_t", mode, rdr); err != nil || n != 1000 {
			t.Fatalf("ingest (%s): %d rows, %v", mode, n, err)
		}
	}
	ingest(adbc.OptionValueIngestModeCreate)
	before := parquetFiles(t, dataDir)

	const table = "/api/metalakes/demo/catalogs/lake/schemas/sales/tables/codec_t"
	set := func(v string) map[string]any {
		return map[string]any{"updates": []any{map[string]any{"@type": "setProperty", "property": "parquet.compression", "value": v}}}
	}
	if r := env.do(t, node, "PUT", table, set("brotli")); r.status != http.StatusBadRequest || !strings.Contains(string(r.raw), "parquet.compression") {
		t.Fatalf("setting an unknown codec: %d %s", r.status, r.raw)
	}
	env.must(t, node, "PUT", table, set("snappy"))
	ingest(adbc.OptionValueIngestModeAppend)

	var added []string
	for _, f := range parquetFiles(t, dataDir) {
		if !slices.Contains(before, f) {
			added = append(added, f)
		}
	}
	if len(added) != 1 {
		t.Fatalf("files added by the append: %v", added)
	}
	// The table's first file: the other one under its storage id.
	tableDir := filepath.Dir(filepath.Dir(added[0]))
	var first []string
	for _, f := range before {
		if strings.HasPrefix(f, tableDir+string(filepath.Separator)) {
			first = append(first, f)
		}
	}
	if len(first) != 1 {
		t.Fatalf("files of the table before the append: %v", first)
	}
	for f, want := range map[string]compress.Compression{first[0]: compress.Codecs.Zstd, added[0]: compress.Codecs.Snappy} {
		if got := footerCodecs(t, f); !slices.Equal(got, []compress.Compression{want}) {
			t.Errorf("%s: column chunks compressed with %v, want %v", f, got, want)
		}
	}
	_, rows, err := analyst.query(ctx, "SELECT count(*), count(DISTINCT id) FROM sales.codec_t")
	if err != nil || len(rows) != 1 || rows[0][0] != "2000" || rows[0][1] != "1000" {
		t.Fatalf("rows read back: %v, %v", rows, err)
	}
}

// parquetFiles lists the Parquet files under dir, sorted.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".parquet") && strings.Contains(filepath.ToSlash(p), "/tables/") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// footerCodecs returns the distinct codecs of the column chunks of the
// Parquet file at path.
func footerCodecs(t *testing.T, path string) []compress.Compression {
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
