// Package pkitest makes certificate authorities and certificates for tests
// of the TLS listeners and clients (Flight, metasrv, Raft peers, upstream
// engines, MCP): P-256 keys, valid from an hour ago for a day.
//
// It is for tests only: no non-test code may import it, and nothing it
// makes is fit for a deployment.
package pkitest
