// Package client is a small Go client for gateways: metasrv's internal API
// (POST /internal/v1/metalakes/{m}/resolve, POST …/tables,
// GET …/files and GET …/generation) and the REST writes a gateway makes
// for a user (create schema and table, commit a table version, drop a
// table), sent as the query_service with the delegation headers
// Lakegate-Delegate-Tenant and Lakegate-Delegate-User.
//
// A Client holds one keep-alive http.Client, a query_service bearer token
// and the base URLs of several metasrv nodes. A request goes to the node
// that answered last. A read fails over to the next address on a
// connection error or a 503, trying each once. A write fails over only if
// the connection could not be established (nothing was sent); otherwise
// its error is returned, because the write may have been applied (a
// follower forwards writes to the leader itself). Every method takes a
// context first.
//
//	c, err := client.New(client.Config{Addrs: []string{"http://10.0.0.1:8816", "http://10.0.0.2:8816"}, Token: tok})
//	res, err := c.Resolve(ctx, "acme", "alice@acme", "lake",
//		[]client.Ref{{Schema: "sales", Table: "orders", Privilege: client.SelectTable}})
//	for i, r := range res.Refs { … r.Unavailable, r.Conflict, r.Table (StorageID, Version, Files) … }
//	v, gen, err := c.CommitVersion(ctx, "acme", "alice@acme", "lake", "sales", "orders", t.Version, false, nil, newFiles)
//	res, err = c.ResolveAt(ctx, "acme", "alice@acme", "lake", gen, refs) // read your write
//	lst, err := c.ListTables(ctx, "acme", "alice@acme", "lake", gen)
//	gcGen, keep, err := c.ReferencedFiles(ctx, "acme")
//
// Writes return the metalake generation they were applied at
// (Lakegate-Generation); pass it as minGeneration to read them back on any
// node.
//
// Errors: a non-2xx answer is an *Error (api.Error: HTTP status and
// metasrv's Gravitino code, type and message) wrapped with the address that
// answered; errors.Is matches it against ErrUnauthenticated,
// ErrForbidden, ErrNotFound, ErrBadRequest, ErrUnavailable,
// ErrAlreadyExists (409/1004) and ErrVersionConflict (409/1012). When no
// node could be reached, or a write's outcome is unknown, the error wraps
// ErrUnavailable and the cause.
package client
