package catalog

import (
	"fmt"
	"strings"
)

// The access log's table: every catalog may hold the schema SystemSchema
// with the table AccessLogTable, "<catalog>.system.access_events", into
// which gateways commit the access events of the catalog's tenant (see
// CommitAccessLog). It is read like any table and governed like any table;
// metasrv refuses every other write into the schema.
const (
	SystemSchema   = "system"
	AccessLogTable = "access_events"
)

// IsSystemSchema reports whether name, a full schema name "catalog.schema",
// names a catalog's system schema.
func IsSystemSchema(name string) bool {
	_, schema, ok := strings.Cut(name, ".")
	return ok && strings.EqualFold(schema, SystemSchema)
}

// inSystemSchema reports whether full, the full name of a schema, table or
// column, lies in (or is) a catalog's system schema.
func inSystemSchema(full string) bool {
	parts := strings.SplitN(full, ".", 3)
	return len(parts) >= 2 && strings.EqualFold(parts[1], SystemSchema)
}

// WritesSystemSchema reports whether cmd writes into a catalog's system
// schema: creates, alters, drops, renames or moves the schema or an object
// in it (or moves one into it), or commits a table version there. Only
// CommitAccessLog may (and it counts as one); Apply refuses every other
// such command with ErrForbidden. Governing the schema and its table
// (owners, grants, tags) is not writing into it.
func WritesSystemSchema(cmd Command) bool {
	switch c := cmd.(type) {
	case CreateSchema:
		return inSystemSchema(c.Name)
	case CreateTable:
		return inSystemSchema(c.Name)
	case DropObject:
		return c.Object.Type != ObjectCatalog && inSystemSchema(c.Object.Name)
	case RenameObject:
		return c.Object.Type != ObjectCatalog && (inSystemSchema(c.Object.Name) || inSystemSchema(c.NewName))
	case AddColumn:
		return inSystemSchema(c.Table)
	case AlterObject:
		return c.Object.Type != ObjectCatalog && inSystemSchema(c.Object.Name)
	case CommitTableVersion:
		return inSystemSchema(c.Table)
	case CommitAccessLog:
		return true
	}
	return false
}

// systemReadOnly is the refusal of a write into a system schema by any
// command but CommitAccessLog.
const systemReadOnly = "schema system holds the access log and is read-only"

// CommitAccessLog appends Files as the next version of the access log table
// "<Catalog>.system.access_events", creating first, when missing, the
// schema and the table (with Columns, the table's storage id StorageID and
// Files as its version 1), owned by the actor. The actor must own the
// metalake: metasrv proposes it as the metalake's owner on behalf of a
// gateway delegated for the tenant, which it records as the delegator.
//
// Files must be non-empty and lie under "tables/<StorageID>/" (see
// DataFile); Columns must be the table's columns (names and types, in
// order). A table with another storage id refuses the commit with
// ErrVersionConflict, so that a gateway that wrote under a stale id reads
// the table's id again. Unlike CommitTableVersion there is no base: access
// log files only ever append, whatever committed before.
//
// Expire lists files of the current version to leave out of the new one
// (retention): the new version is then the current files but those, then
// Files. A path the current version does not list is ignored, so that a
// commit retried after an unknown outcome stays valid. The files left out
// stay referenced by the retained versions that list them, until those are
// pruned.
//
// Compact makes the commit a compaction's: Files, merged from the files
// Expire lists, replace exactly those. Every path of Expire must then be
// in the current version (else ErrVersionConflict: another compaction or
// retention took it first, and committing would double or resurrect its
// events), named once, and Files must hold as many events (rows) as the
// files they replace (else ErrInvalidArgument).
type CommitAccessLog struct {
	Catalog   string      `json:"catalog"`
	StorageID string      `json:"storageId"`
	Columns   []ColumnDef `json:"columns"`
	Files     []DataFile  `json:"files"`
	Expire    []string    `json:"expire,omitempty"`
	Compact   bool        `json:"compact,omitempty"`
}

// Op returns "CommitAccessLog".
func (CommitAccessLog) Op() string { return "CommitAccessLog" }

// Target returns the access log table.
func (c CommitAccessLog) Target() Object { return Table(c.table()) }

func (CommitAccessLog) commandType() CommandType { return TypeCommitAccessLog }

func (c CommitAccessLog) table() string {
	return c.Catalog + "." + SystemSchema + "." + AccessLogTable
}

func (c CommitAccessLog) permit(s *Snapshot, w *who) error {
	if w.owns(s.root.owner) {
		return nil
	}
	return errf(ErrForbidden, "requires ownership of the metalake")
}

func (c CommitAccessLog) apply(tx *txn) error {
	if err := CheckNamePart(c.Catalog); err != nil {
		return err
	}
	if len(c.Files) == 0 {
		return errf(ErrInvalidArgument, "an access log commit needs files")
	}
	if len(c.Columns) == 0 {
		return errf(ErrInvalidArgument, "an access log commit needs the table's columns")
	}
	cp, ok := tx.s.resolve(Catalog(c.Catalog))
	if !ok {
		return errf(ErrNotFound, Catalog(c.Catalog).String())
	}
	// The schema and the table are created here, not by CreateSchema and
	// CreateTable, whose names may not have a part "system".
	schema := c.Catalog + "." + SystemSchema
	if _, ok := tx.s.resolve(Schema(schema)); !ok {
		if err := tx.createChild(cp, &object{typ: ObjectSchema, name: SystemSchema}); err != nil {
			return err
		}
	}
	table := c.table()
	tp, ok := tx.s.resolve(Table(table))
	if !ok {
		return tx.createAccessLog(c)
	}
	d := tp.leaf().data
	if d == nil || d.storage != c.StorageID {
		return errf(ErrVersionConflict, "the access log table has another storage id")
	}
	if len(c.Expire) == 0 {
		if c.Compact {
			return errf(ErrInvalidArgument, "a compaction replaces files: expire lists them")
		}
		return CommitTableVersion{Table: table, Base: d.current(), Columns: c.Columns, Files: c.Files}.apply(tx)
	}
	expire := make(map[string]struct{}, len(c.Expire))
	for _, p := range c.Expire {
		if _, twice := expire[p]; twice && c.Compact {
			return errf(ErrInvalidArgument, "a compaction names a file it replaces twice")
		}
		expire[p] = struct{}{}
	}
	cur := d.currentFiles()
	files := make([]DataFile, 0, len(cur)+len(c.Files))
	var replacedRows int64
	for _, f := range cur {
		if _, gone := expire[f.Path]; !gone {
			files = append(files, f)
		} else {
			replacedRows += f.Rows
		}
	}
	if c.Compact {
		if len(cur)-len(files) != len(expire) {
			return errf(ErrVersionConflict, "a file the compaction replaces is no longer in the access log's current version")
		}
		var rows int64
		for _, f := range c.Files {
			rows += f.Rows
		}
		if rows != replacedRows {
			return errf(ErrInvalidArgument, fmt.Sprintf("a compaction's files hold %d events, the files they replace %d", rows, replacedRows))
		}
	}
	if len(files) == len(cur) {
		return CommitTableVersion{Table: table, Base: d.current(), Columns: c.Columns, Files: c.Files}.apply(tx)
	}
	if !sameSchema(c.Columns, tableColumns(tp.leaf())) {
		return errf(ErrInvalidArgument, "an append must keep the table's columns (names and types, in order)")
	}
	// A replace by the same columns: the kept files, then the new ones.
	return CommitTableVersion{Table: table, Base: d.current(), Replace: true, Columns: c.Columns,
		Files: append(files, c.Files...)}.apply(tx)
}

// createAccessLog creates the access log table of c, at version 1 made of
// c.Files: CreateTable's apply without its name rule.
func (tx *txn) createAccessLog(c CommitAccessLog) error {
	ct := CreateTable{Name: c.table(), Columns: c.Columns, StorageID: c.StorageID, Files: c.Files}
	if c.StorageID == "" {
		return errf(ErrInvalidArgument, "the access log's first commit needs the storage id its files were written under")
	}
	if err := checkCreateStorage(ct); err != nil {
		return err
	}
	sp, _ := tx.s.resolve(Schema(c.Catalog + "." + SystemSchema))
	if err := tx.createChild(sp, &object{typ: ObjectTable, name: AccessLogTable}); err != nil {
		return err
	}
	for _, cd := range c.Columns {
		if err := checkColumn(cd); err != nil {
			return err
		}
		tp, _ := tx.s.resolve(Table(ct.Name))
		if err := tx.createChild(tp, &object{typ: ObjectColumn, name: cd.Name, comment: cd.Comment,
			kind: cd.Type, nullable: cd.Nullable}); err != nil {
			return err
		}
	}
	return tx.initTableData(ct)
}
