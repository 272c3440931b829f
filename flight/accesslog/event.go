package accesslog

import "time"

// Decision is the outcome of authorization for one access.
type Decision string

// Decisions.
const (
	Allowed Decision = "allowed"
	Denied  Decision = "denied"
)

// Event is one access: a statement or a discovery call that reached
// authorization. Its fields are the columns of system.access_events, in
// this order (Columns).
type Event struct {
	// Time is when the call started, UTC.
	Time time.Time
	// RequestID is the call's request id (the x-request-id the gateway
	// logs and metasrv's events carry), so an access joins the metadata
	// events of the same request.
	RequestID string
	// Tenant is the caller's tenant (the metalake).
	Tenant string
	// Principal is the caller (the end user).
	Principal string
	// Gateway is the id of the gateway that served the call (the
	// query_service principal that delegated to metasrv).
	Gateway string
	// ClientAddr is the client's network address as the gateway saw it.
	ClientAddr string
	// Kind is what was done: a statement kind ("query", "insert",
	// "create table as", "drop table", "explain", "describe", …),
	// "ingest", or a discovery call ("get tables", "get schemas", …).
	Kind string
	// Statement is the statement with every literal replaced by "?"
	// (the whole text only where the tenant opted in); "" for calls
	// without SQL.
	Statement string
	// Catalog is the catalog the call named or the session's.
	Catalog string
	// Read and Written are the tables read and written, under the names
	// the client wrote (a denied table included), with their versions
	// where authorized.
	Read, Written []Table
	// Decision is whether authorization allowed the call.
	Decision Decision
	// DenyReason is the reason class of a denial, as counted in
	// lakegate_authz_denials_total ("namespace", "privilege", …).
	DenyReason string
	// Rows and Bytes are what the call returned (or wrote, for a write).
	Rows, Bytes int64
	// Duration is the call's duration, to its last byte.
	Duration time.Duration
	// ErrorClass is the gRPC code name of a failed call ("" on success).
	ErrorClass string
}

// Table is one table of an access: its name, the version read or written
// (0 when none was authorized) and, for a read, the policies whose row
// filter and column masks applied.
type Table struct {
	Schema, Name string
	Version      uint64
	// FilterPolicy names the policy of the row filter applied ("" for
	// none); MaskPolicies the policies of the masks applied.
	FilterPolicy string
	MaskPolicies []string
}
