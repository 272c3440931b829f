// Package oidc fetches, caches and rotates the signing keys of the OIDC
// providers configured in a principal map (authz.Provider), for
// authz.NewAuthenticatorWith. It is the I/O half of JWT sign-in: package
// authz verifies tokens and stays free of network and file access, this
// package reads JWKS documents over HTTPS or from a file.
//
// # Usage
//
//	keys := oidc.NewRegistry(oidc.Options{})
//	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: keys})
//
// Keep one Registry for the process: a reload that keeps a provider's
// settings keeps its cached keys and its refresh budget.
//
// # Guarantees
//
//   - Keys are cached by kid and a known kid is answered from memory,
//     without I/O, locking or allocation: authz asks again on every reuse of
//     a verified token, so a key dropped by a refresh stops its tokens at once.
//   - A token naming an unknown kid triggers at most one refresh per the
//     provider's refresh_interval, whatever the number of such tokens and
//     goroutines: a flood of forged kids cannot make the gateway hammer the
//     provider. Concurrent callers share one fetch; a
//     caller's cancellation does not abort it (each fetch has its own
//     timeout).
//   - Only https URLs are fetched, redirects included; plain http only to
//     loopback hosts when the provider sets allow_http (tests). Responses
//     are limited to 1 MiB and 100 keys.
//   - Discovery reads jwks_uri from the provider's discovery document and
//     refuses a document whose issuer differs from the configured one.
//   - Only public signature keys are kept: keys with use other than sig and
//     symmetric keys are dropped; a set that publishes a private key, or
//     holds no usable key, is refused whole.
//   - A jwks_file is read when the KeySource is made (so a map naming an
//     unreadable or invalid file fails to load) and re-read, under the same
//     refresh bound, when a token names an unknown kid.
//
// There are no goroutines: refreshes happen on demand, in the caller.
package oidc
