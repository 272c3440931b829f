// Package ingesttest reads back, in tests, what the ingest writer stored:
// the parts of a Parquet file's footer that tests of the writer and of
// the table properties choosing it assert on. It is for tests only and
// never writes anything.
package ingesttest
