package catalog

import (
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RetainedVersions is how many versions older than the current one a table
// keeps: committing a version prunes the oldest beyond this many. Files of a
// pruned version that no retained version lists are no longer referenced
// (see ReferencedFiles).
const RetainedVersions = 8

// Limits of table versions and data files.
const (
	maxVersionFiles  = 100000 // files per version
	maxDataFilePath  = 1024   // bytes of a DataFile.Path
	maxStorageIDLen  = 64
	dataFileSuffix   = ".parquet"
	storageDirPrefix = "tables/"
)

// DataFile is one immutable data file of a table version.
type DataFile struct {
	// Path is the file's key relative to the tenant's child stage:
	// "tables/<storageId>/<segment>/…/<file>.parquet", where every segment is
	// made of [A-Za-z0-9._-] and is neither "." nor ".."; at most 1024
	// bytes.
	Path string `json:"path"`
	// Size is the file's size in bytes (>= 0).
	Size int64 `json:"size"`
	// Rows is the number of rows in the file (>= 0).
	Rows int64 `json:"rows"`
	// SHA256 is the file's SHA-256 digest: 64 lower-case hex characters.
	SHA256 string `json:"sha256"`
}

// TableVersionInfo is one committed version of a table.
type TableVersionInfo struct {
	// Version is 1, 2, …; 0 means the table has never had data committed.
	Version uint64
	// Columns is the table's schema as of the version.
	Columns []ColumnDef
	// Files are all files making up the version (for an append: the
	// previous version's files followed by the new ones). The slice is
	// shared with the snapshot: do not modify it.
	Files []DataFile
	// Rows is the sum of Files' rows.
	Rows int64
	// Actor is the user who committed the version.
	Actor string
	// Time is the commit's leader-assigned time.
	Time time.Time
}

// CommitTableVersion commits a new version of Table (optimistic
// concurrency): Base must be the table's current version (0 for a table
// that has never had data committed), else the command fails with
// ErrVersionConflict; the new version is Base+1.
//
// With Replace the new version is exactly Files with the schema Columns
// (required); the table's columns are rebuilt to match: a column whose name
// remains keeps its object (grants, tags), its type, comment and
// nullability updated; a removed column is dropped with its tags; a new one
// is added. Without Replace, Files are appended to Base's files; Columns
// must then be omitted or equal, by names and types in order, to the
// table's columns, which the new version records.
//
// Every file must lie under "tables/<the table's storage id>/" (see
// DataFile), and no path may appear twice in the new version. The table
// keeps its current version and RetainedVersions older ones. Requires
// MODIFY_TABLE on the table (with USE_CATALOG and USE_SCHEMA), or
// ownership of it or an ancestor; under RulesColumnGovernance a replace
// whose Columns add or remove a column name requires ownership, and forgets
// the retained versions up to the newest one listing a name it adds.
type CommitTableVersion struct {
	Table   string      `json:"table"`
	Base    uint64      `json:"base"`
	Replace bool        `json:"replace,omitempty"`
	Columns []ColumnDef `json:"columns,omitempty"`
	Files   []DataFile  `json:"files"`
}

// Op returns "CommitTableVersion".
func (CommitTableVersion) Op() string { return "CommitTableVersion" }

// Target returns the table.
func (c CommitTableVersion) Target() Object { return Table(c.Table) }

func (CommitTableVersion) commandType() CommandType { return TypeCommitTableVersion }

// ---- internal records ----

// tableData is the storage state of a table (immutable once published).
type tableData struct {
	storage  string
	versions []*tableVersion // retained versions, oldest first; empty: version 0
}

type tableVersion struct {
	version uint64
	columns []ColumnDef
	files   []DataFile
	rows    int64
	actor   string
	time    time.Time
}

func (d *tableData) current() uint64 {
	if d == nil || len(d.versions) == 0 {
		return 0
	}
	return d.versions[len(d.versions)-1].version
}

func (d *tableData) currentFiles() []DataFile {
	if d == nil || len(d.versions) == 0 {
		return nil
	}
	return d.versions[len(d.versions)-1].files
}

// withVersion returns d with v appended as the current version, pruning
// versions beyond RetainedVersions older ones.
func (d *tableData) withVersion(v *tableVersion) *tableData {
	keep := d.versions
	if len(keep) > RetainedVersions {
		keep = keep[len(keep)-RetainedVersions:]
	}
	vs := make([]*tableVersion, 0, len(keep)+1)
	vs = append(vs, keep...)
	return &tableData{storage: d.storage, versions: append(vs, v)}
}

// derivedStorageID is the storage id of a table created without one.
func derivedStorageID(id uint64) string {
	s := strconv.FormatUint(id, 16)
	return "t" + strings.Repeat("0", max(0, 16-len(s))) + s
}

// isDerivedStorageID reports whether s has the form of a derived storage id
// ("t" and 16 lower-case hex digits), which callers may not choose.
func isDerivedStorageID(s string) bool {
	if len(s) != 17 || s[0] != 't' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func isAlnumLower(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' }

// checkStorageID checks a storage id: 1–64 characters of [a-z0-9-],
// alphanumeric at both ends.
func checkStorageID(s string) error {
	if s == "" || len(s) > maxStorageIDLen {
		return errf(ErrInvalidArgument, "storage id must have 1 to 64 characters")
	}
	for i := 0; i < len(s); i++ {
		if !isAlnumLower(s[i]) && s[i] != '-' {
			return errf(ErrInvalidArgument, "storage id "+strconv.Quote(s)+" may only contain a-z, 0-9 and -")
		}
	}
	if !isAlnumLower(s[0]) || !isAlnumLower(s[len(s)-1]) {
		return errf(ErrInvalidArgument, "storage id "+strconv.Quote(s)+" must start and end with a letter or digit")
	}
	return nil
}

func shortQuote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}

// checkDataFile checks one file of a table with the given storage id.
func checkDataFile(storage string, f DataFile) error {
	bad := func(why string) error { return errf(ErrInvalidArgument, "data file "+shortQuote(f.Path)+": "+why) }
	if len(f.Path) > maxDataFilePath {
		return bad("path longer than 1024 bytes")
	}
	rest, ok := strings.CutPrefix(f.Path, storageDirPrefix+storage+"/")
	if !ok {
		return bad("path must start with " + strconv.Quote(storageDirPrefix+storage+"/"))
	}
	if !strings.HasSuffix(f.Path, dataFileSuffix) {
		return bad("path must end with " + dataFileSuffix)
	}
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return bad("empty, . or .. path segment")
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !isAlnumLower(c) && !('A' <= c && c <= 'Z') && c != '.' && c != '_' && c != '-' {
				return bad("path segments may only contain A-Z, a-z, 0-9, '.', '_' and '-'")
			}
		}
	}
	if f.Size < 0 || f.Rows < 0 {
		return bad("negative size or rows")
	}
	if len(f.SHA256) != 64 {
		return bad("sha256 must be 64 lower-case hex characters")
	}
	for i := 0; i < len(f.SHA256); i++ {
		if !isLowerHex(f.SHA256[i]) {
			return bad("sha256 must be 64 lower-case hex characters")
		}
	}
	return nil
}

// buildFiles validates added (to follow prev) and returns the files of the
// new version and their total rows.
func buildFiles(storage string, prev, added []DataFile) ([]DataFile, int64, error) {
	if len(prev)+len(added) > maxVersionFiles {
		return nil, 0, errf(ErrInvalidArgument, "more than "+itoa(maxVersionFiles)+" files in a version")
	}
	// A few files appended to many (an access log's flush) are compared
	// with the others directly: hashing every path of a large version on
	// each commit would cost the log's apply more than the commit itself.
	const fewAdded = 8
	var seen map[string]struct{}
	if len(added) > fewAdded {
		seen = make(map[string]struct{}, len(prev)+len(added))
	}
	var rows int64
	for _, f := range prev {
		if seen != nil {
			seen[f.Path] = struct{}{}
		}
		rows += f.Rows
	}
	for i, f := range added {
		if err := checkDataFile(storage, f); err != nil {
			return nil, 0, err
		}
		dup := false
		if seen != nil {
			_, dup = seen[f.Path]
			seen[f.Path] = struct{}{}
		} else {
			same := func(g DataFile) bool { return g.Path == f.Path }
			dup = slices.ContainsFunc(prev, same) || slices.ContainsFunc(added[:i], same)
		}
		if dup {
			return nil, 0, errf(ErrInvalidArgument, "data file "+shortQuote(f.Path)+" listed twice")
		}
		if rows > math.MaxInt64-f.Rows {
			return nil, 0, errf(ErrInvalidArgument, "total rows overflow")
		}
		rows += f.Rows
	}
	files := make([]DataFile, 0, len(prev)+len(added))
	files = append(files, prev...)
	return append(files, added...), rows, nil
}

// tableColumns returns the column definitions of a table object, in order.
func tableColumns(t *object) []ColumnDef {
	out := make([]ColumnDef, 0, len(t.columns))
	for _, c := range t.columns {
		co, _ := t.get(c)
		out = append(out, ColumnDef{Name: co.name, Type: co.kind, Comment: co.comment, Nullable: co.nullable})
	}
	return out
}

// ---- CreateTable's storage ----

// initTableData sets the storage id (and, when c asks for it, version 1) of
// the table just created by c.
func (tx *txn) initTableData(c CreateTable) error {
	tp, _ := tx.s.resolve(Table(c.Name))
	t := tp.leaf()
	storage := c.StorageID
	switch {
	case storage == "" && tx.s.columnGovernance():
		if len(c.Files) > 0 {
			return errf(ErrInvalidArgument, "data files need the storage id they were written under")
		}
		storage = mintedStorageID(tx.s.gen + 1)
	case storage == "":
		storage = derivedStorageID(t.id)
	}
	if tx.s.storageIDs.Has(storage) {
		return errf(ErrAlreadyExists, "storage id "+strconv.Quote(storage))
	}
	d := &tableData{storage: storage}
	if c.StorageID != "" || c.Files != nil {
		files, rows, err := buildFiles(storage, nil, c.Files)
		if err != nil {
			return err
		}
		d.versions = []*tableVersion{{version: 1, columns: tableColumns(t), files: files, rows: rows,
			actor: tx.m.Actor, time: tx.m.Time}}
	}
	nt := t.clone()
	nt.data = d
	tx.replace(tp, nt)
	tx.s.storageIDs = tx.s.storageIDs.Set(storage, t.id)
	return nil
}

// checkCreateStorage validates CreateTable's storage fields before anything
// is created.
func checkCreateStorage(c CreateTable) error {
	if c.StorageID == "" {
		return nil
	}
	if err := checkStorageID(c.StorageID); err != nil {
		return err
	}
	if isDerivedStorageID(c.StorageID) {
		return errf(ErrInvalidArgument, "storage id "+strconv.Quote(c.StorageID)+" is reserved (t and 16 hex digits)")
	}
	return nil
}

// ---- CommitTableVersion ----

func (c CommitTableVersion) permit(s *Snapshot, w *who) error {
	p, ok := s.resolve(Table(c.Table))
	if !ok {
		return errf(ErrNotFound, Table(c.Table).String())
	}
	if c.Replace && s.columnGovernance() && !sameNames(c.Columns, p.leaf().columns) {
		// A replace that adds or removes columns changes the table's
		// columns like AddColumn or DropObject would.
		return s.permitColumnChange(w, &p)
	}
	return s.need(w, s.authorizePath(w, PrivModifyTable, &p), Table(c.Table), "MODIFY_TABLE")
}

func sameSchema(a, b []ColumnDef) bool {
	return slices.EqualFunc(a, b, func(x, y ColumnDef) bool { return x.Name == y.Name && x.Type == y.Type })
}

func (c CommitTableVersion) apply(tx *txn) error {
	tp, ok := tx.s.resolve(Table(c.Table))
	if !ok {
		return errf(ErrNotFound, Table(c.Table).String())
	}
	t := tp.leaf()
	d := t.data
	cur := d.current()
	if c.Base != cur {
		return errf(ErrVersionConflict, "base version "+itoa(c.Base)+", current version "+itoa(cur))
	}
	if cur == math.MaxUint64 {
		return errf(ErrInvalidArgument, "version overflow")
	}
	var prev []DataFile
	if c.Replace {
		if len(c.Columns) == 0 {
			return errf(ErrInvalidArgument, "a replace needs the new columns")
		}
		names := make(map[string]struct{}, len(c.Columns))
		for _, cd := range c.Columns {
			if err := checkColumn(cd); err != nil {
				return err
			}
			if _, dup := names[cd.Name]; dup {
				return errf(ErrInvalidArgument, "column "+quote(cd.Name)+" listed twice")
			}
			names[cd.Name] = struct{}{}
		}
	} else {
		if len(c.Columns) > 0 && !sameSchema(c.Columns, tableColumns(t)) {
			return errf(ErrInvalidArgument, "an append must keep the table's columns (names and types, in order)")
		}
		prev = d.currentFiles()
	}
	files, rows, err := buildFiles(d.storage, prev, c.Files)
	if err != nil {
		return err
	}
	if c.Replace {
		if tx.s.columnGovernance() {
			// Names that become columns again must not be read, in the
			// versions retained before, as the new columns.
			var added []string
			for _, cd := range c.Columns {
				if !slices.Contains(t.columns, cd.Name) {
					added = append(added, cd.Name)
				}
			}
			d = d.forgetListing(added...)
		}
		if err := tx.rebuildColumns(c.Table, c.Columns); err != nil {
			return err
		}
		tp, _ = tx.s.resolve(Table(c.Table))
		t = tp.leaf()
	}
	nt := t.clone()
	nt.data = d.withVersion(&tableVersion{version: cur + 1, columns: tableColumns(t), files: files, rows: rows,
		actor: tx.m.Actor, time: tx.m.Time})
	nt.audit = tx.touch(nt.audit)
	tx.replace(tp, nt)
	return nil
}

// rebuildColumns makes the columns of table match defs (validated): columns
// whose name remains keep their object, removed ones are dropped, new ones
// added, and the order becomes defs' order.
func (tx *txn) rebuildColumns(table string, defs []ColumnDef) error {
	tp, _ := tx.s.resolve(Table(table))
	for _, name := range slices.Clone(tp.leaf().columns) {
		if !slices.ContainsFunc(defs, func(cd ColumnDef) bool { return cd.Name == name }) {
			cp, _ := tx.s.resolve(Column(table + "." + name))
			tx.dropLeaf(cp)
		}
	}
	for _, cd := range defs {
		tp, _ = tx.s.resolve(Table(table))
		co, ok := tp.leaf().get(cd.Name)
		if !ok {
			if err := tx.createChild(tp, &object{typ: ObjectColumn, name: cd.Name, comment: cd.Comment,
				kind: cd.Type, nullable: cd.Nullable}); err != nil {
				return err
			}
			continue
		}
		if co.kind != cd.Type || co.comment != cd.Comment || co.nullable != cd.Nullable {
			nc := co.clone()
			nc.kind, nc.comment, nc.nullable = cd.Type, cd.Comment, cd.Nullable
			nc.audit = tx.touch(nc.audit)
			cp := tp
			cp.objs[cp.n] = co
			cp.n++
			tx.replace(cp, nc)
		}
	}
	tp, _ = tx.s.resolve(Table(table))
	nt := tp.leaf().clone()
	nt.columns = make([]string, len(defs))
	for i, cd := range defs {
		nt.columns[i] = cd.Name
	}
	tx.replace(tp, nt)
	return nil
}

// ---- reads ----

func (v *tableVersion) info() TableVersionInfo {
	return TableVersionInfo{Version: v.version, Columns: slices.Clone(v.columns), Files: v.files, Rows: v.rows,
		Actor: v.actor, Time: v.time}
}

// TableVersion returns the storage id of table ("catalog.schema.table") and
// its committed version (0: the current one). ok is false when the table or
// that version (never committed, or pruned) does not exist. For a table that
// has never had data committed, version 0 gives Version 0, the table's
// current columns and no files. Like Object, it does not check visibility.
func (s *Snapshot) TableVersion(table string, version uint64) (storageID string, v TableVersionInfo, ok bool) {
	p, found := s.resolve(Table(table))
	if !found {
		return "", TableVersionInfo{}, false
	}
	t := p.leaf()
	d := t.data
	if len(d.versions) == 0 {
		if version != 0 {
			return "", TableVersionInfo{}, false
		}
		return d.storage, TableVersionInfo{Columns: tableColumns(t)}, true
	}
	if version == 0 {
		return d.storage, d.versions[len(d.versions)-1].info(), true
	}
	first := d.versions[0].version
	if version < first || version > d.current() {
		return "", TableVersionInfo{}, false
	}
	return d.storage, d.versions[version-first].info(), true
}

// TableVersions returns the storage id of table and its retained versions,
// newest first (none for a table that has never had data committed). ok is
// false when the table does not exist. It does not check visibility.
func (s *Snapshot) TableVersions(table string) (storageID string, versions []TableVersionInfo, ok bool) {
	p, found := s.resolve(Table(table))
	if !found {
		return "", nil, false
	}
	d := p.leaf().data
	for i := len(d.versions) - 1; i >= 0; i-- {
		versions = append(versions, d.versions[i].info())
	}
	return d.storage, versions, true
}

// ReferencedFiles yields every file of every retained version of every table
// of the metalake, with its table's storage id, each path once: tables in
// name order, then versions newest first. A garbage collector may delete
// any file under "tables/" that it does not yield (and that no commit in
// flight is about to reference).
func (s *Snapshot) ReferencedFiles() iter.Seq2[string, DataFile] {
	return func(yield func(string, DataFile) bool) {
		for _, cn := range sortedKeys(s.root.children) {
			cat, _ := s.root.get(cn)
			for _, sn := range sortedKeys(cat.children) {
				sch, _ := cat.get(sn)
				for _, tn := range sortedKeys(sch.children) {
					t, _ := sch.get(tn)
					if !yieldTableFiles(t.data, yield) {
						return
					}
				}
			}
		}
	}
}

func yieldTableFiles(d *tableData, yield func(string, DataFile) bool) bool {
	if d == nil || len(d.versions) == 0 {
		return true
	}
	seen := make(map[string]struct{})
	for i := len(d.versions) - 1; i >= 0; i-- {
		for _, f := range d.versions[i].files {
			if _, dup := seen[f.Path]; dup {
				continue
			}
			seen[f.Path] = struct{}{}
			if !yield(d.storage, f) {
				return false
			}
		}
	}
	return true
}
