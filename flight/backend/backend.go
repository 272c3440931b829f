package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Errors returned by backends. The Flight layer maps them to gRPC codes in one
// place; a missing table and a denied one must look the same to clients.
var (
	// ErrNotFound reports that a referenced table does not exist for the tenant.
	ErrNotFound = errors.New("backend: table not found")
	// ErrCanceled reports that execution stopped because the caller went away.
	ErrCanceled = errors.New("backend: query canceled")
	// ErrDeadline reports that execution exceeded the configured query deadline.
	ErrDeadline = errors.New("backend: query deadline exceeded")
	// ErrResources reports that the engine refused the query for lack of memory or
	// another configured resource.
	ErrResources = errors.New("backend: resources exhausted")
	// ErrMemoryBudget reports that the memory the query needs is held by
	// other tenants' running queries (the gateway's memory budget) and did
	// not come free in time; retrying later may succeed. It wraps
	// ErrResources.
	ErrMemoryBudget = fmt.Errorf("%w: the memory budget is in use by other queries", ErrResources)
	// ErrUnavailable reports that the engine could not be reached (an
	// upstream engine that is down or refuses connections); retrying later
	// may succeed.
	ErrUnavailable = errors.New("backend: engine unavailable")
	// ErrQuery reports that the engine rejected the (well-formed, authorized) SQL,
	// for example a type error or an unknown column. Its message is safe to show
	// the caller: it carries no paths or physical names.
	ErrQuery = errors.New("backend: query failed")
	// ErrNotInMemory reports that Bind was asked for a version as held in
	// memory (LocalTable.InMemory) and the engine no longer holds it: bind
	// it again with its files.
	ErrNotInMemory = errors.New("backend: table version not in memory")
)

// TableName is a logical table name inside a tenant: schema and table, both
// lower case. The catalog level comes from the session and is not part of it.
type TableName struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
}

// String returns "schema.name".
func (n TableName) String() string { return n.Schema + "." + n.Name }

// Relation is the engine-side identifier a logical table is rewritten to. It is
// opaque to clients and never derived from client text.
type Relation struct {
	Schema string
	Name   string
	// Types are the engine's types of the relation's columns, in order, as
	// the engine prints them ("VARCHAR", "DECIMAL(10,2)"); column masks
	// use them to keep a masked column's type.
	Types []string
}

// ColumnFact is a property of every value of a text column of a table
// version that lets the SQL gate print a cheaper form with the same answer
// under MySQL's collation (sqlgate.Relation).
type ColumnFact uint16

const (
	// FactFoldUnique: no two distinct values are equal under the
	// collation, so grouping by their bytes forms the collation's groups.
	FactFoldUnique ColumnFact = iota + 1
	// FactFolded: every value is its own fold (lower-cased, without
	// accents), so LIKE needs to fold only its pattern.
	FactFolded
	// FactASCII: every value is ASCII, so LIKE with an ASCII pattern
	// needs no test of each value for it.
	FactASCII
)

// FactLacks is the fact that no value holds the ASCII letter l ('A'–'Z'
// or 'a'–'z', case counting), so that a LIKE of an ASCII column needs no
// folding for a pattern's letter that occurs in one case only.
// FactLacks of anything but a letter is no fact (Letter reports false).
func FactLacks(l byte) ColumnFact {
	if 'a' <= l|0x20 && l|0x20 <= 'z' {
		return factLacks | ColumnFact(l)
	}
	return 0
}

// factLacks marks the FactLacks facts; the letter is the low byte.
const factLacks ColumnFact = 0x100

// Letter returns the letter of a FactLacks fact.
func (f ColumnFact) Letter() (byte, bool) {
	l := byte(f)
	return l, f&^0xff == factLacks && 'a' <= l|0x20 && l|0x20 <= 'z'
}

// Table describes one table of a tenant.
type Table struct {
	Name     TableName
	Relation Relation
	// Columns lists the column names in order, lower case.
	Columns []string
	// Schema is the Arrow schema of the table's rows.
	Schema *arrow.Schema
}

// Description is what Describe reports about a statement.
type Description struct {
	// Result is the schema of the statement's rows.
	Result *arrow.Schema
	// Params has one field per placeholder, in order, named "parameter_1" and
	// so on. A placeholder the engine cannot type without a value (as in
	// SELECT ?) has type arrow.Null.
	Params *arrow.Schema
}

// Backend executes authorized SQL for tenants. Implementations are safe for use
// from multiple goroutines.
type Backend interface {
	// Bind makes each table version queryable for the tenant from its local
	// files and returns the relation the SQL gate renders it as, in order.
	// Binding the same version again is cheap.
	Bind(ctx context.Context, tenant string, tables []LocalTable) ([]Relation, error)
	// Describe returns the result and parameter schemas of sql without running
	// it to completion. numParams placeholders ("?") are bound to NULL for the
	// purpose.
	Describe(ctx context.Context, tenant, sql string, numParams int) (Description, error)
	// Execute runs sql with the positional args and streams the result. The
	// reader yields batches of at least MinBatchRows rows or MinBatchBytes bytes
	// (except the last). Cancelling ctx interrupts the query. The caller must
	// Release the reader.
	Execute(ctx context.Context, tenant, sql string, args []any) (array.RecordReader, error)
}

// Column is a column of a table version: its name (lower case) and its type
// as the catalog records it (an Arrow type name for tables lakegate wrote).
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// DataFile is one immutable data file of a table version, as committed in
// the catalog. Key is relative to the tenant's child stage.
type DataFile struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Rows   int64  `json:"rows"`
	SHA256 string `json:"sha256"`
}

// TableVersion is a committed version of a table, resolved for a caller.
type TableVersion struct {
	Name      TableName  `json:"name"`
	StorageID string     `json:"storageId"`
	Version   uint64     `json:"version"`
	Columns   []Column   `json:"columns"`
	Files     []DataFile `json:"files"`
	// Generation is the tenant's governance generation the version was
	// resolved and authorized at (0: unknown).
	Generation uint64 `json:"generation,omitempty"`
	// Policy is the row filter and the column masks that apply to the
	// caller reading the version; nil when none do.
	Policy *TablePolicy `json:"policy,omitempty"`
	// Upstream is set for a table of an upstream catalog: the rows are in
	// that engine, not in files (Files is empty).
	Upstream *UpstreamTable `json:"upstream,omitempty"`
	// Codec is the compression of the files written for the table, its
	// parquet.compression property ("" for the default, zstd).
	Codec string `json:"codec,omitempty"`
}

// UpstreamTable says where a table of an upstream catalog lives: the Flight
// SQL engine, as metasrv's catalog registers it, and the table's name there.
type UpstreamTable struct {
	Address     string `json:"address"`
	TLS         bool   `json:"tls,omitempty"`
	Credentials string `json:"credentials,omitempty"` // a file name in the gateway's credentials directory
	Dialect     string `json:"dialect"`               // "mysql" or "sqlite"
	Name        string `json:"name"`                  // "schema.table" on the engine
}

// TablePolicy is what a caller reads a table through: a row filter and
// column masks, SQL expressions in the gateway's dialect (see
// sqlgate.Policy), and the caller's roles, which has_role() in them tests.
type TablePolicy struct {
	// RowFilter keeps the rows for which it is true; "" keeps every row.
	RowFilter string `json:"rowFilter,omitempty"`
	// FilterPolicy names the policy RowFilter comes from, for the access
	// log ("" for none).
	FilterPolicy string `json:"filterPolicy,omitempty"`
	// Masks are the masked columns, in column order.
	Masks []ColumnMask `json:"masks,omitempty"`
	// Roles are the caller's roles in the catalog.
	Roles []string `json:"roles,omitempty"`
}

// ColumnMask is the mask of one column: NULL, REDACT, HASH, LAST4 or an
// expression over "{column}".
type ColumnMask struct {
	Column string `json:"column"`
	Mask   string `json:"mask"`
	// Policy names the policy the mask comes from, for the access log.
	Policy string `json:"policy,omitempty"`
}

// Equal reports whether p and q apply the same filter and masks, from the
// same policies, for the same roles (nil equals nil only). The policy names
// take part: a prepared statement whose tables are Same keeps its plan, and
// the access log records the plan's policies, so a policy renamed or
// replaced by another of the same expression must not be recorded under
// its old name.
func (p *TablePolicy) Equal(q *TablePolicy) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.RowFilter == q.RowFilter && p.FilterPolicy == q.FilterPolicy &&
		slices.Equal(p.Masks, q.Masks) && slices.Equal(p.Roles, q.Roles)
}

// Same reports whether v and w are the same version read through the same
// policy: an authorization of one holds for the other.
func (v *TableVersion) Same(w *TableVersion) bool {
	return v.ID() == w.ID() && v.Policy.Equal(w.Policy) &&
		(v.Upstream == nil) == (w.Upstream == nil) && (v.Upstream == nil || *v.Upstream == *w.Upstream)
}

// ID identifies the version across tables and tenants' catalogs:
// "<storage id>@<version>". Versions are immutable, so an ID always stands
// for the same rows.
func (v *TableVersion) ID() string {
	return v.StorageID + "@" + strconv.FormatUint(v.Version, 10)
}

// ColumnNames returns the column names in order.
func (v *TableVersion) ColumnNames() []string {
	out := make([]string, len(v.Columns))
	for i, c := range v.Columns {
		out[i] = c.Name
	}
	return out
}

// LocalTable is a table version whose files are available on local disk.
type LocalTable struct {
	// ID is TableVersion.ID.
	ID      string
	Columns []Column
	// Paths are the absolute local paths of the version's files, in order.
	Paths []string
	// InMemory says the caller gave no Paths because the engine reported
	// holding the version in memory: Bind fails with ErrNotInMemory rather
	// than bind it without its files should it no longer hold it.
	InMemory bool
}

// Batch sizes the Flight layer expects from Execute: DuckDB produces small
// vectors, and shipping each as its own Flight message wastes most of the
// bandwidth on framing.
const (
	MinBatchRows  = 64 * 1024
	MinBatchBytes = 4 << 20
)
