// Package authz owns lakegate's identities: the validated value objects
// (PrincipalID, TenantID, Namespace, Role), the immutable Principal, the
// principal map file that binds SHA-256 token hashes to principals, bearer-token
// authentication, and carrying the authenticated Principal in a context.
//
// # Usage
//
// At startup, load the map once and build an Authenticator:
//
//	m, err := authz.LoadPrincipalMap(path) // refuses unsafe files; see LoadPrincipalMap
//	if err != nil { ... }
//	a := authz.NewAuthenticator(m)
//
// Per request, authenticate the presented bearer token and attach the result:
//
//	p, err := a.Authenticate(token) // err is always ErrUnauthenticated
//	if err != nil { ... }
//	ctx = authz.WithPrincipal(ctx, p)
//
// and later, in handlers, retrieve it with PrincipalFrom.
//
// # Caller's obligations
//
//   - The map is immutable for the process lifetime. Rotating a token means
//     adding its new hash next to the old one, restarting, then removing the
//     old hash and restarting again. There is no reload.
//   - Map every authentication failure to one wire status and one message;
//     ErrUnauthenticated deliberately says nothing about why.
//   - Principal.MayReadNamespace answers only for the principal's own tenant:
//     callers always scope lookups with Principal.Tenant(), for every role
//     including tenant_admin.
//   - Tokens are secrets: never log them, never compare them with ==, and do
//     not pass them to anything but Authenticate/AuthenticateBasic.
//
// # What this package never does
//
//   - It never logs, stores or echoes a token or a token hash: error messages
//     name the principal index/id and the violated rule only, and Principal
//     redacts itself to id, tenant and role (LogValue).
//   - It never imports wire packages (grpc, arrow, protobuf); conversion to
//     wire status codes happens in the caller.
//   - It does no I/O other than LoadPrincipalMap and WritePrincipalMap, starts
//     no goroutines and keeps no global mutable state.
//
// All exported types are immutable after construction and safe for use from
// multiple goroutines.
package authz
