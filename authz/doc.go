// Package authz owns lakegate's identities: the validated value objects
// (PrincipalID, TenantID, Namespace, Role), the immutable Principal, the
// principal map file that binds SHA-256 token hashes to principals and
// configures OIDC providers, bearer authentication (static tokens and JWTs),
// reloading the map, and carrying the authenticated Principal in a context.
//
// # Usage
//
// At startup, load the map into a Principals, which keeps the map in force
// and its Authenticator and replaces both on Reload:
//
//	keys := oidc.NewRegistry(oidc.Options{}) // package authz/oidc: JWKS fetching
//	ps, err := authz.LoadPrincipals(path, authz.PrincipalsConfig{Keys: keys})
//	if err != nil { ... }
//
// Per request, authenticate the presented credential and attach the result:
//
//	p, reason, err := ps.AuthenticateReason(ctx, credential) // err is always ErrUnauthenticated
//	if err != nil { count(reason); ... }
//	ctx = authz.WithPrincipal(ctx, p)
//
// and later, in handlers, retrieve it with PrincipalFrom. On SIGHUP or an
// admin call, ps.Reload(path); on error the old map stays in force.
//
// A process without reloads or JWTs may still use LoadPrincipalMap and
// NewAuthenticator directly.
//
// # Credentials
//
// A static token ("lg_…") is hashed and compared with every hash of the map
// in constant time. When the map has OIDC providers, a credential shaped
// like a JWT (three dot-separated segments, the first a base64url JSON
// object) is verified as a JWT only: signature by go-jose v4 with the
// provider's allow-listed public-key algorithms (never none or HMAC) and a
// key from the provider's JWKS whose type fits the algorithm; then iss,
// aud, exp, nbf, iat (with the provider's clock skew), the tenant claim, the
// user claim (a valid PrincipalID) and the groups claim (a list of
// strings). A JWT principal is always RoleUser, of the provider's tenant,
// with the namespaces of the map's entry for that user (if listed) and of
// the provider's rules for its groups; a listed principal of another tenant
// or role refuses the token.
//
// # Caller's obligations
//
//   - Map every authentication failure to one wire status and one message;
//     ErrUnauthenticated deliberately says nothing about why. The
//     FailureReason returned beside it is for a metric label only.
//   - A ticket or session that outlives the call that created it records
//     the generation it was issued under (Snapshot.Generation); when the
//     generation in force differs, check Principals.Holds before serving
//     it, so a removed principal loses access on its next call.
//   - Principal.MayReadNamespace answers only for the principal's own tenant:
//     callers always scope lookups with Principal.Tenant(), for every role
//     including tenant_admin.
//   - Tokens are secrets: never log them, never compare them with ==, and do
//     not pass them to anything but the Authenticate methods.
//
// # What this package never does
//
//   - It never logs, stores or echoes a token or a token hash: error messages
//     name the principal index/id and the violated rule only, and Principal
//     redacts itself to id, tenant and role (LogValue).
//   - It never imports wire packages (grpc, arrow, protobuf); conversion to
//     wire status codes happens in the caller.
//   - It does no I/O other than reading and writing principal map files
//     (LoadPrincipalMap, WritePrincipalMap, LoadPrincipals, Reload). Fetching
//     and reading the providers' keys is the KeySets given to it (package
//     authz/oidc), so this package stays free of network access and its
//     verification is tested with keys in memory.
//   - It starts no goroutines and keeps no global mutable state.
//
// Principal, PrincipalMap and Provider are immutable after construction.
// Authenticator is immutable but for its verified-token cache (a JWT
// verified once is remembered by its SHA-256 for at most a minute, never
// past its expiry, and only while its provider's key source still publishes
// the key that verified it); Principals swaps its Snapshot atomically. All
// are safe for use from multiple goroutines.
package authz
