// Package catalogtest is test scaffolding for package catalog: helpers that
// apply commands and fail the test on error, and a deterministic generator of
// large tenants for benchmarks.
//
// Tests and benchmarks only: no non-test code may import it.
package catalogtest
