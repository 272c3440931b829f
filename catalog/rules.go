package catalog

import (
	"slices"
	"strconv"
)

// Rule levels. A snapshot holds the level of the rules Apply enforces on its
// metalake (Snapshot.Rules). Every command is judged by the rules in force
// when it is applied, so a log written under an earlier level replays to the
// state it produced then; the level only rises, through SetRules, which is
// itself a logged command. metasrv proposes SetRules{Level: CurrentRules}
// ahead of the first command it proposes that a newer level governs.
const (
	// RulesOriginal is the level of a new snapshot and of every snapshot
	// written before levels existed.
	RulesOriginal = 0
	// RulesColumnGovernance is the level at which a column's governance
	// (its tags, and the policies attached to them) cannot be shed by
	// changing the table's columns, and storage ids are minted:
	//
	//   - Adding, dropping or renaming a column (AddColumn, DropObject or
	//     RenameObject of a column), and a replace commit
	//     (CommitTableVersion with Replace) that changes the set of column
	//     names, require ownership of the table or an ancestor; MODIFY_TABLE
	//     lets its holder append and replace rows under the table's columns
	//     (a replace may change their types).
	//   - A column that the table's current version lists — whose data its
	//     files hold — is neither dropped nor renamed (ErrInUse): its data
	//     would otherwise stay in the files under a name no column governs
	//     any more. To remove or rename it, rewrite the table (a replace
	//     commit of new files, read through the caller's masks).
	//   - A column name that becomes a column again (AddColumn, a rename to
	//     it, a replace that adds it) makes the table forget its retained
	//     versions up to the newest one listing that name: their files hold
	//     the old column's data, which the new column — another object,
	//     without the old one's tags — must never be read as. If the current
	//     version lists the name (a state only logs from before this level
	//     hold), the command is refused (ErrInUse) instead.
	//   - A table created without a storage id gets one minted from the
	//     generation it is created at ("t" and 16 hex digits, the first one
	//     8 or above: see mintedStorageID), which no other table of the
	//     metalake, dropped or not, and no table of an earlier metalake of
	//     the same name ever had.
	//
	// Together, for every retained version and every column name it lists,
	// the table's column of that name is the very column object that held
	// the name when the version was committed, or there is no such column
	// (and metasrv refuses to read that version): data is never read under
	// another column's governance than the one it was written under.
	RulesColumnGovernance = 1
	// CurrentRules is the highest level this package knows.
	CurrentRules = RulesColumnGovernance
)

// SetRules raises the metalake's rule level to Level (see RulesOriginal and
// the levels after it): 1 to CurrentRules; a level at or below the current
// one changes nothing. It only ever tightens what Apply accepts, so any
// user of the metalake may run it.
type SetRules struct {
	Level int `json:"level"`
}

// Op returns "SetRules".
func (SetRules) Op() string { return "SetRules" }

// Target returns the metalake (its name is not part of the command).
func (SetRules) Target() Object { return Object{Type: ObjectMetalake} }

func (SetRules) commandType() CommandType { return TypeSetRules }

func (SetRules) permit(*Snapshot, *who) error { return nil }

func (c SetRules) apply(tx *txn) error {
	if c.Level < 1 || c.Level > CurrentRules {
		return errf(ErrInvalidArgument, "rule level "+strconv.Itoa(c.Level)+" is not between 1 and "+strconv.Itoa(CurrentRules))
	}
	if c.Level > int(tx.s.rules) {
		tx.s.rules = uint8(c.Level)
	}
	return nil
}

// Rules returns the rule level Apply enforces on the snapshot's metalake.
func (s *Snapshot) Rules() int { return int(s.rules) }

func (s *Snapshot) columnGovernance() bool { return s.rules >= RulesColumnGovernance }

// mintedStorageID is the storage id of a table created without one at
// generation gen under RulesColumnGovernance: "t" and the 16 hex digits of
// gen with its top bit set. Generations never repeat for a metalake name
// (a metalake created again continues past the dropped one's), and the
// top bit keeps the id apart from the derived ids of RulesOriginal ("t" and
// a 16-hex-digit object id, which never reaches 2^63) and from every id a
// caller could choose (that form is reserved).
func mintedStorageID(gen uint64) string {
	return derivedStorageID(gen | 1<<63)
}

// listedBy returns the newest version of d that lists column name, or 0.
func (d *tableData) listedBy(name string) uint64 {
	for i := len(d.versions) - 1; i >= 0; i-- {
		if slices.ContainsFunc(d.versions[i].columns, func(c ColumnDef) bool { return c.Name == name }) {
			return d.versions[i].version
		}
	}
	return 0
}

// forgetListing returns d without its versions up to the newest one listing
// any of names (the retained versions stay contiguous), or d itself when
// none lists them.
func (d *tableData) forgetListing(names ...string) *tableData {
	var last uint64
	for _, n := range names {
		last = max(last, d.listedBy(n))
	}
	if last == 0 {
		return d
	}
	first := d.versions[0].version
	return &tableData{storage: d.storage, versions: slices.Clone(d.versions[last-first+1:])}
}

// checkColumnHoldsNoData refuses, under RulesColumnGovernance, to drop or
// rename column name of table t while the current version lists it.
func (s *Snapshot) checkColumnHoldsNoData(t *object, name string) error {
	if !s.columnGovernance() {
		return nil
	}
	if d := t.data; d != nil && len(d.versions) > 0 {
		cur := d.versions[len(d.versions)-1]
		if slices.ContainsFunc(cur.columns, func(c ColumnDef) bool { return c.Name == name }) {
			return errf(ErrInUse, "column "+quote(name)+" holds data in version "+itoa(cur.version)+
				" of the table; rewrite the table without it (a replace commit) instead")
		}
	}
	return nil
}

// reintroduce prepares table (its full name) for column names becoming
// columns under RulesColumnGovernance: the retained versions up to the
// newest one listing one of them are forgotten; a current version listing
// one refuses the change. Callers resolve the table again afterwards.
func (tx *txn) reintroduce(table string, names ...string) error {
	if !tx.s.columnGovernance() {
		return nil
	}
	p, ok := tx.s.resolve(Table(table))
	if !ok {
		return errf(ErrNotFound, Table(table).String())
	}
	t := p.leaf()
	d := t.data
	if d == nil || len(d.versions) == 0 {
		return nil
	}
	cur := d.versions[len(d.versions)-1]
	for _, n := range names {
		if slices.ContainsFunc(cur.columns, func(c ColumnDef) bool { return c.Name == n }) {
			return errf(ErrInUse, "version "+itoa(cur.version)+" of the table holds data of an earlier column "+
				quote(n)+"; rewrite the table (a replace commit) before adding it again")
		}
	}
	if nd := d.forgetListing(names...); nd != d {
		nt := t.clone()
		nt.data = nd
		tx.replace(p, nt)
	}
	return nil
}

// sameNames reports whether defs name exactly the columns names (in any
// order).
func sameNames(defs []ColumnDef, names []string) bool {
	if len(defs) != len(names) {
		return false
	}
	for _, cd := range defs {
		if !slices.Contains(names, cd.Name) {
			return false
		}
	}
	return true
}
