package api

import "encoding/json"

// The internal API for gateways, under /internal/v1 (see docs/rest.md,
// "Internal API for gateways"):
//
//	POST /internal/v1/metalakes/{m}/resolve     ResolveRequest → ResolveResponse
//	POST /internal/v1/metalakes/{m}/tables      ListTablesRequest → ListTablesResponse
//	GET  /internal/v1/metalakes/{m}/files       → FilesResponse
//	GET  /internal/v1/metalakes/{m}/generation  → GenerationResponse
//	POST /internal/v1/generations               WatchRequest → WatchResponse
//	POST /internal/v1/metalakes/{m}/access-log  CommitAccessLogRequest → CommitAccessLogResponse
//	GET  /internal/v1/metalakes/{m}/access-log?catalog=c → AccessLogResponse

// Privileges a ResolveRef may need.
const (
	SelectTable = "SELECT_TABLE"
	ModifyTable = "MODIFY_TABLE"
)

// MaxResolveRefs bounds the references of one resolve request.
const MaxResolveRefs = 1024

// MaxWatchTenants bounds the metalakes of one watch request.
const MaxWatchTenants = 1024

// ResolveRequest is the body of POST /internal/v1/metalakes/{m}/resolve.
type ResolveRequest struct {
	// Subject is the user (a user name of the metalake) the references are
	// resolved for. Required. If the caller also sends DelegateUserHeader
	// it must be the same.
	Subject string `json:"subject"`
	// Catalog is the catalog every reference is in. Required.
	Catalog string `json:"catalog"`
	// MinGeneration, when set, makes the node wait (bounded, then 503)
	// until the metalake has reached it.
	MinGeneration uint64 `json:"minGeneration,omitempty"`
	// Refs are the table references, answered in order.
	Refs []ResolveRef `json:"refs"`
}

// ResolveRef is one table reference and the privilege it needs
// (SelectTable or ModifyTable).
type ResolveRef struct {
	Schema    string `json:"schema"`
	Table     string `json:"table"`
	Privilege string `json:"privilege"`
	// Version, when not 0, asks for that retained version of the table
	// (time travel) instead of the current one; a version that is not
	// retained is unavailable, like a missing table.
	Version uint64 `json:"version,omitempty"`
}

// ResolveResponse is the answer of resolve: one entry per reference, in
// order, all computed from one snapshot at Generation. An entry is
// UnavailableResult (missing and forbidden alike), a ConflictResult or a
// TableDescriptor; ResolveResult decodes any of them.
type ResolveResponse struct {
	Code       int               `json:"code"`
	Generation uint64            `json:"generation"`
	Results    []json.RawMessage `json:"results"`
}

// ResolveAnswer is ResolveResponse as a client reads it: the results
// decoded in the same pass as the response.
type ResolveAnswer struct {
	Generation uint64          `json:"generation"`
	Results    []ResolveResult `json:"results"`
}

// UnavailableResult is the answer for a missing table and a forbidden one
// alike: the same bytes.
var UnavailableResult = json.RawMessage(`{"unavailable":true}`)

// ConflictResult is the per-reference answer when the policies applying to
// the subject conflict (two row filters, or two masks on one column). It
// names only the table.
type ConflictResult struct {
	Error string `json:"error"` // ConflictError
	Table string `json:"table"`
}

// ConflictError is ConflictResult.Error.
const ConflictError = "conflict"

// ResolveResult is one entry of ResolveResponse.Results as a caller
// decodes it: Unavailable, Error == ConflictError, or a descriptor.
type ResolveResult struct {
	Unavailable bool   `json:"unavailable"`
	Error       string `json:"error"`
	TableDescriptor
}

// TableDescriptor is a resolved, authorized table.
type TableDescriptor struct {
	// FullName is "catalog.schema.table".
	FullName string `json:"fullName"`
	// Columns are the columns to expose, in order.
	Columns []Column `json:"columns"`
	// StorageID is the table's directory under the tenant's stage
	// ("tables/<storageId>/…"); empty for a table without one.
	StorageID string `json:"storageId"`
	// Version is the table version described (the current one unless the
	// reference asked for another); 0 for a table without data.
	Version uint64 `json:"version"`
	// Files are the version's data files, paths relative to the tenant's
	// child stage (empty for version 0 and for an upstream table).
	Files []DataFile `json:"files"`
	// RowFilter is the row filter expression for the subject, nil for none.
	RowFilter *string `json:"rowFilter"`
	// RowFilterPolicy names the policy RowFilter comes from ("" for none),
	// for the access log.
	RowFilterPolicy string `json:"rowFilterPolicy,omitempty"`
	// ColumnMasks are the masks for the subject, in column order.
	ColumnMasks []ColumnMask `json:"columnMasks"`
	// Roles are the subject's roles, sorted, set only when RowFilter or
	// ColumnMasks is: the gateway evaluates has_role('name') in policy
	// expressions itself, from the same snapshot that decided them. Absent
	// otherwise, so that a descriptor without policies does not disclose
	// the subject's roles needlessly.
	Roles []string `json:"roles,omitempty"`
	// Upstream is set for a table of an upstream catalog: the engine holding
	// its rows and the table's name there (Files is then empty). Only
	// SelectTable references resolve to one; the gateway never writes
	// upstream.
	Upstream *Upstream `json:"upstream,omitempty"`
	// Codec is the table's parquet.compression property ("" when it has
	// none): the compression of the files the gateway writes for it.
	Codec string `json:"codec,omitempty"`
}

// Column is one column of a table in the internal API and in the
// gateway's table writes.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// DataFile is one immutable data file of a table version
// (catalog.DataFile).
type DataFile struct {
	// Path is the file's key relative to the tenant's child stage:
	// "tables/<storageId>/…/<file>.parquet".
	Path string `json:"path"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Rows is the file's row count.
	Rows int64 `json:"rows"`
	// SHA256 is the file's SHA-256 digest, 64 lower-case hex characters.
	SHA256 string `json:"sha256"`
}

// ColumnMask is the mask applying to one column for the subject.
type ColumnMask struct {
	Column string `json:"column"`
	Mask   string `json:"mask"`
	// Policy names the policy the mask comes from, for the access log.
	Policy string `json:"policy,omitempty"`
}

// Upstream says where a table of an upstream catalog lives: the engine, as
// its catalog registers it, and the table's name there.
type Upstream struct {
	// Address is the engine's host:port.
	Address string `json:"address"`
	// Dialect is the engine's SQL dialect: "mysql" or "sqlite".
	Dialect string `json:"dialect"`
	// TLS says whether to connect with TLS.
	TLS bool `json:"tls"`
	// Credentials names a file in the gateway's credentials directory; ""
	// for none. metasrv never holds the credentials themselves.
	Credentials string `json:"credentials,omitempty"`
	// Name is the table on the engine, "schema.table" (upstream_name).
	Name string `json:"name"`
}

// ListTablesRequest is the body of POST /internal/v1/metalakes/{m}/tables.
type ListTablesRequest struct {
	// Subject is the user the listing is for. Required; must equal
	// DelegateUserHeader when that is sent.
	Subject string `json:"subject"`
	// Catalog is the catalog listed. Required.
	Catalog string `json:"catalog"`
	// MinGeneration, when set, makes the node wait (bounded) until the
	// metalake has reached it.
	MinGeneration uint64 `json:"minGeneration,omitempty"`
}

// ListTablesResponse is the answer of POST …/tables: the schemas of the
// catalog the subject may see (even empty ones, sorted) and the tables it
// may SELECT, sorted by schema then table, all from one snapshot at
// Generation. A missing catalog and one the subject may not see give the
// same empty answer.
type ListTablesResponse struct {
	Code       int           `json:"code"`
	Generation uint64        `json:"generation"`
	Schemas    []string      `json:"schemas"`
	Tables     []ListedTable `json:"tables"`
}

// ListedTable is one table of a ListTablesResponse.
type ListedTable struct {
	// Schema and Name locate the table in the listed catalog.
	Schema string `json:"schema"`
	Name   string `json:"table"`
	// Columns are the table's current columns, in order.
	Columns []Column `json:"columns"`
	// StorageID is the table's directory "tables/<StorageID>/" in the
	// tenant's stage.
	StorageID string `json:"storageId"`
	// Version is the table's current version (0: no data committed yet).
	Version uint64 `json:"version"`
}

// FilesResponse is the answer of GET …/files: every data file referenced
// by a retained version of a table of the metalake, at Generation (for the
// garbage collector: files not listed, and not newer than the collector's
// grace period, are garbage).
type FilesResponse struct {
	Code       int       `json:"code"`
	Generation uint64    `json:"generation"`
	Files      []FileRef `json:"files"`
}

// FileRef is one referenced file: the table's storage id and the path
// relative to the tenant's child stage ("tables/<StorageID>/…").
type FileRef struct {
	StorageID string `json:"storageId"`
	Path      string `json:"path"`
}

// GenerationResponse is the answer of GET …/generation.
type GenerationResponse struct {
	Code       int    `json:"code"`
	Generation uint64 `json:"generation"`
}

// WatchRequest is the body of POST /internal/v1/generations: a gateway
// follows the generations of the metalakes it holds decisions for, so it
// may reuse a decision exactly as long as its metalake has not moved.
type WatchRequest struct {
	// Known maps each metalake followed (1 to MaxWatchTenants, each one of
	// the caller's delegate tenants) to the generation the caller knows;
	// 0 for none, and for a metalake that does not exist.
	Known map[string]uint64 `json:"known"`
	// WaitMillis is how long the node may hold the request while every
	// known generation is current; 0 answers at once. Capped by the
	// node's read wait timeout.
	WaitMillis int64 `json:"waitMillis,omitempty"`
}

// WatchResponse answers a watch: the node's generation of every metalake
// of the request (0 for one that does not exist), sent as soon as one of
// them differs from what the caller knows, or when the wait ends.
type WatchResponse struct {
	Code        int               `json:"code"`
	Generations map[string]uint64 `json:"generations"`
}

// CommitAccessLogRequest is the body of POST
// /internal/v1/metalakes/{m}/access-log: a gateway, as itself (no
// delegation headers), commits access-log files it wrote into the tenant's
// stage as the next version of <Catalog>.system.access_events, in one
// Raft proposal that also creates the schema and the table, owned by the
// metalake's owner, when they are missing.
type CommitAccessLogRequest struct {
	// Catalog is the catalog whose system schema holds the log. Required.
	Catalog string `json:"catalog"`
	// StorageID is the table's storage id the files were written under:
	// the table's (AccessLogResponse.StorageID) or, before the table
	// exists, a fresh one the gateway drew, which the table then gets. A
	// table with another storage id answers 409 (read it again).
	StorageID string `json:"storageId"`
	// Files are the files to append (at least one), as for a table commit.
	Files []DataFile `json:"files"`
	// Expire lists paths of the current version to leave out of the new
	// one (retention); paths it does not list are ignored. The files stay
	// referenced until the versions listing them are pruned, then the
	// orphan collector deletes them.
	Expire []string `json:"expire,omitempty"`
	// Compact makes the commit a compaction's: Files, merged from the
	// files Expire lists, replace exactly those, which must all be in the
	// current version (else 409) and hold as many events as Files (else
	// 400).
	Compact bool `json:"compact,omitempty"`
}

// CommitAccessLogResponse answers a CommitAccessLogRequest: the version
// the files made, at Generation.
type CommitAccessLogResponse struct {
	Code       int    `json:"code"`
	Generation uint64 `json:"generation"`
	StorageID  string `json:"storageId"`
	Version    uint64 `json:"version"`
}

// AccessLogResponse is the answer of GET …/access-log?catalog=c: the
// access log table's storage id and current version, "" and 0 while it
// does not exist; with files=true also the paths of the current version's
// files (for retention).
type AccessLogResponse struct {
	Code       int      `json:"code"`
	Generation uint64   `json:"generation"`
	StorageID  string   `json:"storageId"`
	Version    uint64   `json:"version"`
	Files      []string `json:"files,omitempty"`
	// Sizes are the sizes in bytes of Files, in the same order, as they
	// were committed.
	Sizes []int64 `json:"sizes,omitempty"`
}

// AccessLogColumns returns the columns of system.access_events as metasrv
// creates them, in the access event's field order, typed by their Arrow
// type names like every table a gateway writes: time "timestamp[us]"
// (UTC, no time zone), rows and bytes "int64", duration_ms "float64", the
// others "utf8"; every column nullable. A fresh slice on each call.
func AccessLogColumns() []Column {
	names := []string{"time", "request_id", "tenant", "principal", "gateway", "client_addr", "kind", "statement",
		"catalog", "tables_read", "tables_written", "filter_policies", "mask_policies", "decision", "deny_reason",
		"rows", "bytes", "duration_ms", "error_class"}
	out := make([]Column, len(names))
	for i, n := range names {
		t := "utf8"
		switch n {
		case "time":
			t = "timestamp[us]"
		case "rows", "bytes":
			t = "int64"
		case "duration_ms":
			t = "float64"
		}
		out[i] = Column{Name: n, Type: t, Nullable: true}
	}
	return out
}
