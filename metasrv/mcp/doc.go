// Package mcp is lakegate's Model Context Protocol server: a set of MCP
// tools in front of metasrv's REST API, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// What it owns:
//   - the tools, grouped by tag (domain, tag, catalog, schema, table,
//     policy; see [AllTags]), each with a typed input whose JSON schema the
//     SDK generates and validates before the tool runs;
//   - a small REST caller that sends every call to metasrv as the caller:
//     with the configured token over stdio ([Config.Token]), or with the
//     Authorization header of the MCP request that carried the call over
//     streamable HTTP ([NewHTTPHandler], stateless: it keeps no session
//     between requests, and reads each body within a deadline);
//   - turning REST answers into tool results (the REST JSON without the
//     envelope's "code" as structured content, plus a short summary) and
//     REST errors into tool errors carrying metasrv's message.
//
// What it never does:
//   - decide authorization: every visibility and privilege rule is
//     metasrv's, applied to the caller's own credentials, so a tool answers
//     exactly what the same REST call answers (drafts hidden, objects
//     filtered, 404 for what the caller may not see);
//   - cache answers or credentials between calls;
//   - log, echo or return tokens (a tool error carries only metasrv's
//     message, never a stack trace or a header).
//
// All tools are read-only except associate_tag_with_metadata.
package mcp
