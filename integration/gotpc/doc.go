// Package gotpc reads PingCAP's go-tpc TPC-H queries (as MySQL clients
// send them), their scale factor 1 answers and their precision rules from
// the module's source at test time, so that no text of that project is
// copied into this repository. It is for the TPC-H tests and benchmarks
// only; it reads source files and runs nothing of go-tpc.
package gotpc
