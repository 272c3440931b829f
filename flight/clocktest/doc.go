// Package clocktest provides a clock that tests move by hand, for the Now
// fields of the gateway's configurations (decision windows, idle sweeps,
// TTLs), so that time-dependent behaviour is tested without sleeping.
//
// It is for tests only: no non-test code may import it.
package clocktest
