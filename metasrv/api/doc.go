// Package api is metasrv's wire contract: the one declaration of what goes
// over HTTP between metasrv and its callers (the gateway's client
// metasrv/client, the MCP server metasrv/mcp and the lakegate admin CLI).
//
// What it owns:
//   - the HTTP header names of the REST and internal APIs (headers.go);
//   - the Gravitino error envelope ([ErrorBody]), its codes, and the one Go
//     error type a caller decodes it into ([Error], [DecodeError]) with the
//     sentinels errors.Is matches it against (errors.go);
//   - the internal API's requests and responses (internal.go);
//   - the REST API's objects as they appear on the wire (dto.go), the
//     bodies of its writes (requests.go) and the envelopes of its answers
//     (responses.go).
//
// The server encodes these types and its callers decode them, so a field
// added, renamed or re-tagged here changes every side at once.
//
// What it never does:
//   - decide anything: no authorization, validation, mapping from
//     catalog errors to codes (metasrv's mapError) or I/O; it holds types,
//     constants and the decoding of an error answer;
//   - import metasrv or any package above it: metasrv, metasrv/client,
//     metasrv/mcp and cmd/lakegate import it, and it imports only the
//     standard library and catalog (for the wire form of catalog.Audit).
package api
