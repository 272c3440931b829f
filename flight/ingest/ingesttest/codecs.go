package ingesttest

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// Codecs returns the distinct compression codecs of the column chunks of
// the Parquet file r, in the order the footer first names them.
func Codecs(r parquet.ReaderAtSeeker) ([]compress.Compression, error) {
	pr, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("ingesttest: reading the footer: %w", err)
	}
	defer pr.Close()
	var got []compress.Compression
	md := pr.MetaData()
	for rg := range md.NumRowGroups() {
		for c := range md.Schema.NumColumns() {
			cc, err := md.RowGroup(rg).ColumnChunk(c)
			if err != nil {
				return nil, fmt.Errorf("ingesttest: row group %d, column %d: %w", rg, c, err)
			}
			if !slices.Contains(got, cc.Compression()) {
				got = append(got, cc.Compression())
			}
		}
	}
	return got, nil
}
