// Package client is a small Go client for metasrv's internal API for
// gateways (POST /internal/v1/metalakes/{m}/resolve and
// GET /internal/v1/metalakes/{m}/generation).
//
// A Client holds one keep-alive http.Client, a query_service bearer token
// and the base URLs of several metasrv nodes. A request goes to the node
// that answered last; on a connection error or a 503 it fails over to the
// next address, trying each once. Every method takes a context first.
//
//	c, err := client.New(client.Config{Addrs: []string{"http://10.0.0.1:8816", "http://10.0.0.2:8816"}, Token: tok})
//	res, err := c.Resolve(ctx, "acme", "alice@acme", "lake",
//		[]client.Ref{{Schema: "sales", Table: "orders", Privilege: client.SelectTable}})
//	for i, r := range res.Refs { … r.Unavailable, r.Conflict, r.Table … }
//	gen, err := c.Generation(ctx, "acme")
//
// Errors: a non-2xx answer is an *Error (HTTP status and metasrv's Gravitino
// code, type and message); errors.Is matches it against ErrUnauthenticated,
// ErrForbidden, ErrNotFound, ErrBadRequest and ErrUnavailable. When no node
// could be reached the error wraps ErrUnavailable and the last cause.
package client
