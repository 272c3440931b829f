package metasrv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// ---- wire shapes (Gravitino's) ----

// provider is the only catalog provider metasrv serves.
const provider = "lakegate"

func toMetalake(l *Metalake) api.MetalakeDTO {
	return api.MetalakeDTO{Name: l.Name(), Comment: l.Comment, Properties: l.Properties,
		Owner: l.Snapshot.MetalakeOwner().Name, Audit: l.Audit}
}

func lastPart(full string) string {
	for i := len(full) - 1; i >= 0; i-- {
		if full[i] == '.' {
			return full[i+1:]
		}
	}
	return full
}

func toCatalog(i catalog.ObjectInfo) api.CatalogDTO {
	return api.CatalogDTO{Name: i.Object.Name, Type: i.Type, Provider: provider, Comment: i.Comment, Properties: i.Properties, Audit: i.Audit}
}

func toSchema(i catalog.ObjectInfo) api.SchemaDTO {
	return api.SchemaDTO{Name: lastPart(i.Object.Name), Comment: i.Comment, Properties: i.Properties, Audit: i.Audit}
}

func toTable(snap *catalog.Snapshot, i catalog.ObjectInfo) api.TableDTO {
	t := api.TableDTO{Name: lastPart(i.Object.Name), Comment: i.Comment, Properties: i.Properties, Audit: i.Audit,
		Columns: toColumnDTOs(i.Columns)}
	t.StorageID, t.Version = tableVersion(snap, i.Object.Name)
	return t
}

// objectResponse answers o, read from snap: an api.CatalogResponse,
// SchemaResponse or TableResponse.
func objectResponse(snap *catalog.Snapshot, o catalog.ObjectInfo) any {
	switch o.Object.Type {
	case catalog.ObjectCatalog:
		return api.CatalogResponse{Catalog: toCatalog(o)}
	case catalog.ObjectSchema:
		return api.SchemaResponse{Schema: toSchema(o)}
	}
	return api.TableResponse{Table: toTable(snap, o)}
}

// objectListResponse answers objs, all of type t, read from snap: an
// api.CatalogListResponse, SchemaListResponse or TableListResponse.
func objectListResponse(snap *catalog.Snapshot, t catalog.ObjectType, objs []catalog.Object) any {
	switch t {
	case catalog.ObjectCatalog:
		return api.CatalogListResponse{Catalogs: dtosOf(snap, objs, toCatalog)}
	case catalog.ObjectSchema:
		return api.SchemaListResponse{Schemas: dtosOf(snap, objs, toSchema)}
	}
	return api.TableListResponse{Tables: dtosOf(snap, objs, func(i catalog.ObjectInfo) api.TableDTO { return toTable(snap, i) })}
}

// dtosOf is the wire objects of objs, [] when there are none.
func dtosOf[D any](snap *catalog.Snapshot, objs []catalog.Object, dto func(catalog.ObjectInfo) D) []D {
	out := make([]D, 0, len(objs))
	for _, o := range objs {
		info, _ := snap.Object(o)
		out = append(out, dto(info))
	}
	return out
}

// visibleObject returns o's info if the caller may see it, else ErrNotFound.
func visibleObject(rq *request, s *catalog.Snapshot, o catalog.Object) (catalog.ObjectInfo, error) {
	if s.Visible(rq.actor(), o) {
		if info, ok := s.Object(o); ok {
			return info, nil
		}
	}
	return catalog.ObjectInfo{}, fmt.Errorf("%w: %s", ErrNotFound, o)
}

func (s *Server) metalakeRoutes() {
	s.write("POST", "/api/metalakes", "CreateMetalake", s.createMetalake)
	s.read("/api/metalakes", "ListMetalakes", s.listMetalakes)
	s.read("/api/metalakes/{tenant}", "GetMetalake", s.getMetalake)
	s.write("PUT", "/api/metalakes/{tenant}", "AlterMetalake", s.alterMetalake)
	s.writeRoute("DELETE", "/api/metalakes/{tenant}", "DropMetalake", true, s.dropMetalake)
}

// objectLevel is one level of the catalog tree (catalogs, schemas, tables)
// and the REST patterns of its collection and of one item; its methods are
// the level's handlers.
type objectLevel struct {
	typ        catalog.ObjectType
	collection string // pattern of the collection
	item       string // pattern of one item
}

// parentOf is the object the collection of rq's path is in.
func (lv objectLevel) parentOf(rq *request) catalog.Object {
	switch lv.typ {
	case catalog.ObjectCatalog:
		return catalog.Object{Type: catalog.ObjectMetalake, Name: rq.metalake}
	case catalog.ObjectSchema:
		return catalog.Catalog(rq.param("catalog"))
	}
	return catalog.Schema(rq.param("catalog") + "." + rq.param("schema"))
}

// prefixOf is the full name prefix of the level's objects in rq's path.
func (lv objectLevel) prefixOf(rq *request) string {
	switch lv.typ {
	case catalog.ObjectCatalog:
		return ""
	case catalog.ObjectSchema:
		return rq.param("catalog") + "."
	}
	return rq.param("catalog") + "." + rq.param("schema") + "."
}

// itemOf is the object rq's path names.
func (lv objectLevel) itemOf(rq *request) catalog.Object {
	name := map[catalog.ObjectType]string{catalog.ObjectCatalog: "catalog", catalog.ObjectSchema: "schema", catalog.ObjectTable: "table"}[lv.typ]
	return catalog.Object{Type: lv.typ, Name: lv.prefixOf(rq) + rq.param(name)}
}

// op is the level's name in operation names ("Catalog", …).
func (lv objectLevel) op() string {
	return map[catalog.ObjectType]string{catalog.ObjectCatalog: "Catalog", catalog.ObjectSchema: "Schema", catalog.ObjectTable: "Table"}[lv.typ]
}

func (s *Server) objectRoutes() {
	const base = "/api/metalakes/{tenant}/catalogs"
	for _, lv := range []objectLevel{
		{catalog.ObjectCatalog, base, base + "/{catalog}"},
		{catalog.ObjectSchema, base + "/{catalog}/schemas", base + "/{catalog}/schemas/{schema}"},
		{catalog.ObjectTable, base + "/{catalog}/schemas/{schema}/tables", base + "/{catalog}/schemas/{schema}/tables/{table}"},
	} {
		s.read(lv.collection, "List"+lv.op()+"s", lv.list)
		s.write("POST", lv.collection, "Create"+lv.op(), lv.create)
		s.read(lv.item, "Get"+lv.op(), lv.get)
		s.write("PUT", lv.item, "Alter"+lv.op(), lv.alter)
		s.write("DELETE", lv.item, "Drop"+lv.op(), lv.drop)
	}
	s.versionRoutes()
}

// list serves GET on the level's collection.
func (lv objectLevel) list(rq *request, l *Metalake) (any, error) {
	snap := l.Snapshot
	parent := lv.parentOf(rq)
	if parent.Type != catalog.ObjectMetalake && !snap.Visible(rq.actor(), parent) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, parent)
	}
	names, _ := snap.Children(parent)
	objs := make([]catalog.Object, len(names))
	for i, n := range names {
		objs[i] = catalog.Object{Type: lv.typ, Name: lv.prefixOf(rq) + n}
	}
	objs = snap.FilterVisible(rq.actor(), objs)
	if rq.details() {
		return objectListResponse(snap, lv.typ, objs), nil
	}
	ids := []api.IdentifierDTO{}
	for _, o := range objs {
		ids = append(ids, api.IdentifierDTO{Name: lastPart(o.Name)})
	}
	return api.EntityListResponse{Identifiers: ids}, nil
}

// create serves POST on the level's collection.
func (lv objectLevel) create(rq *request, l *Metalake) (*plan, error) {
	var cmd catalog.Command
	var name string
	switch lv.typ {
	case catalog.ObjectCatalog:
		var b api.CreateCatalogRequest
		if err := rq.decode(&b); err != nil {
			return nil, err
		}
		if b.Provider != "" && b.Provider != provider {
			return nil, badRequest("provider must be %q", provider)
		}
		b.Type = strings.ToLower(b.Type)
		if b.Type == "" {
			b.Type = catalogManaged
		}
		if b.Type != catalogManaged && b.Type != catalogUpstream {
			return nil, badRequest("catalog type must be %q or %q", catalogManaged, catalogUpstream)
		}
		if err := checkCatalogProperties(b.Type, b.Properties); err != nil {
			return nil, err
		}
		name = b.Name
		cmd = catalog.CreateCatalog{Name: b.Name, Type: b.Type, Comment: b.Comment, Properties: b.Properties}
	case catalog.ObjectSchema:
		var b api.CreateSchemaRequest
		if err := rq.decode(&b); err != nil {
			return nil, err
		}
		name = b.Name
		cmd = catalog.CreateSchema{Name: lv.prefixOf(rq) + b.Name, Comment: b.Comment, Properties: b.Properties}
	default:
		var b api.CreateTableRequest
		if err := rq.decode(&b); err != nil {
			return nil, err
		}
		name = b.Name
		if err := checkTableCodec(b.Properties); err != nil {
			return nil, err
		}
		if _, up := upstreamCatalog(rq, snapOf(l), rq.param("catalog")); up {
			if b.StorageID != "" || b.Files != nil {
				return nil, badRequest(errUpstreamNoData)
			}
			if err := checkUpstreamName(b.Properties); err != nil {
				return nil, err
			}
		}
		if b.StorageID != "" || b.Files != nil {
			if err := checkDataFrom(rq); err != nil {
				return nil, err
			}
		}
		c := catalog.CreateTable{Name: lv.prefixOf(rq) + b.Name, Comment: b.Comment, Properties: b.Properties,
			StorageID: b.StorageID, Files: toDataFiles(b.Files)}
		for _, col := range b.Columns {
			c.Columns = append(c.Columns, colDef(col))
		}
		cmd = c
	}
	if lv.typ == catalog.ObjectSchema && strings.EqualFold(name, catalog.SystemSchema) {
		return nil, errSystemReadOnly
	}
	if err := catalog.CheckNamePart(name); err != nil {
		return nil, err
	}
	target := catalog.Object{Type: lv.typ, Name: lv.prefixOf(rq) + name}
	cmds := []catalog.Command{cmd}
	if lv.typ == catalog.ObjectTable {
		cmds = withRules(snapOf(l), cmds) // storage ids minted
	}
	return &plan{cmds: cmds, render: renderObject(target)}, nil
}

// get serves GET on the level's item.
func (lv objectLevel) get(rq *request, l *Metalake) (any, error) {
	info, err := visibleObject(rq, l.Snapshot, lv.itemOf(rq))
	if err != nil {
		return nil, err
	}
	return objectResponse(l.Snapshot, info), nil
}

// alter serves PUT on the level's item.
func (lv objectLevel) alter(rq *request, l *Metalake) (*plan, error) {
	updates, err := updatesOf[objectUpdate](rq)
	if err != nil {
		return nil, err
	}
	o := lv.itemOf(rq)
	cur := o
	// Comment and property updates fold into one AlterObject of
	// the object as named in the path, applied first; the other
	// updates follow in order. One proposal: all or nothing.
	var alter *propertyAlter
	var cmds []catalog.Command
	columns := false
	for _, u := range updates {
		if u.NewSchemaName != "" && u.Type != "rename" {
			return nil, badRequest("newSchemaName applies to rename only")
		}
		switch u.Type {
		case "rename":
			if err := catalog.CheckNamePart(u.NewName); err != nil {
				return nil, err
			}
			// The parent stays (as named after earlier renames of
			// this request), unless newSchemaName moves a table.
			prefix := cur.Name[:strings.LastIndexByte(cur.Name, '.')+1]
			if u.NewSchemaName != "" {
				if lv.typ != catalog.ObjectTable {
					return nil, badRequest("newSchemaName applies to tables only")
				}
				if strings.EqualFold(u.NewSchemaName, catalog.SystemSchema) {
					return nil, errSystemReadOnly
				}
				if err := catalog.CheckNamePart(u.NewSchemaName); err != nil {
					return nil, err
				}
				prefix = rq.param("catalog") + "." + u.NewSchemaName + "."
			}
			next := catalog.Object{Type: lv.typ, Name: prefix + u.NewName}
			cmds = append(cmds, catalog.RenameObject{Object: cur, NewName: next.Name})
			cur = next
		case "addColumn", "deleteColumn", "renameColumn":
			if lv.typ != catalog.ObjectTable {
				return nil, fmt.Errorf("%w: %s on a %s (it applies to tables only)", ErrUnsupported, u.Type, lv.op())
			}
			c, err := columnUpdate(cur.Name, u.Update)
			if err != nil {
				return nil, err
			}
			cmds = append(cmds, c)
			columns = true
		case "updateComment", "setProperty", "removeProperty":
			if alter == nil {
				alter = &propertyAlter{}
			}
			if err := alter.add(u.Update); err != nil {
				return nil, err
			}
		default:
			return nil, badRequest("unknown update %q", u.Type)
		}
	}
	if alter != nil {
		if err := checkPropertyAlter(rq, snapOf(l), o, alter); err != nil {
			return nil, err
		}
		cmds = append([]catalog.Command{alter.command(o)}, cmds...)
	}
	if columns {
		cmds = withRules(snapOf(l), cmds) // column governance
	}
	return &plan{cmds: cmds, render: renderObject(cur)}, nil
}

// drop serves DELETE on the level's item.
func (lv objectLevel) drop(rq *request, l *Metalake) (*plan, error) {
	o := lv.itemOf(rq)
	force, _ := strconv.ParseBool(rq.query("force"))
	cascade, _ := strconv.ParseBool(rq.query("cascade"))
	return dropPlan(l.Snapshot.Visible(rq.actor(), o), catalog.DropObject{Object: o, Cascade: force || cascade}), nil
}

// objectUpdate is one update of a catalog, schema or table PUT: an Update
// plus, for a table's rename, Gravitino's newSchemaName, which moves the
// table to that schema of the same catalog (a catalog.RenameObject with a
// new parent: the caller needs what its apply-time permit requires,
// ownership of the table or an ancestor and CREATE_TABLE on the target
// schema). The table keeps its storage id, versions, grants and tags.
type objectUpdate struct {
	Update
	NewSchemaName string `json:"newSchemaName,omitempty"`
}

// propertyAlter folds a request's updateComment, setProperty and
// removeProperty updates, in order, into one catalog.AlterObject: the last
// update of the comment or of a property key wins.
type propertyAlter struct {
	comment *string
	set     map[string]string
	remove  []string
}

func (a *propertyAlter) add(u Update) error {
	switch u.Type {
	case "updateComment":
		c := u.NewComment
		a.comment = &c
		return nil
	}
	if u.Property == "" {
		return badRequest("%s needs a non-empty property", u.Type)
	}
	if u.Type == "setProperty" {
		if a.set == nil {
			a.set = map[string]string{}
		}
		a.set[u.Property] = u.Value
		a.remove = slices.DeleteFunc(a.remove, func(k string) bool { return k == u.Property })
		return nil
	}
	delete(a.set, u.Property)
	if !slices.Contains(a.remove, u.Property) {
		a.remove = append(a.remove, u.Property)
	}
	return nil
}

func (a *propertyAlter) command(o catalog.Object) catalog.AlterObject {
	return catalog.AlterObject{Object: o, Comment: a.comment, SetProperties: a.set, RemoveProperties: a.remove}
}

func colDef(c api.ColumnDTO) catalog.ColumnDef {
	nullable := c.Nullable == nil || *c.Nullable // Gravitino: nullable unless said otherwise
	return catalog.ColumnDef{Name: c.Name, Type: c.Type, Comment: c.Comment, Nullable: nullable}
}

func columnUpdate(table string, u Update) (catalog.Command, error) {
	field := u.FieldName
	if u.Type == "renameColumn" {
		field = u.OldFieldName
	}
	if len(field) != 1 {
		return nil, badRequest("%s needs a one-part field name (nested columns are not supported)", u.Type)
	}
	switch u.Type {
	case "addColumn":
		return catalog.AddColumn{Table: table, Column: colDef(api.ColumnDTO{Name: field[0], Type: u.DataType, Comment: u.Comment, Nullable: u.Nullable})}, nil
	case "deleteColumn":
		return catalog.DropObject{Object: catalog.Column(table + "." + field[0])}, nil
	}
	if err := catalog.CheckNamePart(u.NewFieldName); err != nil {
		return nil, err
	}
	return catalog.RenameObject{Object: catalog.Column(table + "." + field[0]), NewName: table + "." + u.NewFieldName}, nil
}

// withRules puts catalog.SetRules{CurrentRules} ahead of cmds when snap (nil
// for a missing metalake) is at a lower rule level: the commands of this
// file are the ones the levels govern (column changes, table creates and
// version commits), and the level must be in the log before the first
// command proposed under it, so that the log replays as it was applied.
func withRules(snap *catalog.Snapshot, cmds []catalog.Command) []catalog.Command {
	if snap == nil || snap.Rules() >= catalog.CurrentRules {
		return cmds
	}
	return append([]catalog.Command{catalog.SetRules{Level: catalog.CurrentRules}}, cmds...)
}

// checkDataFrom refuses data files and storage ids from anyone but a
// gateway acting for a user (a query_service principal delegating): a
// gateway registers only files it wrote itself, under a storage id it drew
// at random, and checked in the stage before committing them (size and
// SHA-256); metasrv cannot read the stage to check anyone else's claim, and
// a caller choosing a storage id could point a table at files it never
// wrote (those of a dropped table, say, which its masks no longer cover).
func checkDataFrom(rq *request) error {
	if rq.delegator != nil {
		return nil
	}
	return badRequest("storageId and files are registered by a lakegate gateway, which writes and checks the files; " +
		"create the table without them (metasrv assigns its storage id) and load its data through a gateway")
}

func renderObject(o catalog.Object) func(*Result) (any, error) {
	return func(res *Result) (any, error) {
		info, ok := res.Lake.Snapshot.Object(o)
		if !ok {
			return nil, fmt.Errorf("metasrv: %s missing after apply", o)
		}
		return objectResponse(res.Lake.Snapshot, info), nil
	}
}

// createMetalake serves POST /api/metalakes.
func (s *Server) createMetalake(rq *request, _ *Metalake) (*plan, error) {
	if !rq.operator() {
		return nil, fmt.Errorf("%w: only operators create metalakes", ErrForbidden)
	}
	var b api.CreateMetalakeRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if err := checkMetalakeName(b.Name); err != nil {
		return nil, err
	}
	if b.Owner == "" {
		b.Owner = rq.actor()
	}
	return &plan{lakeName: b.Name,
		lake: &LakeOp{Op: LakeCreate, Owner: b.Owner, Comment: b.Comment, Properties: b.Properties},
		render: func(res *Result) (any, error) {
			return api.MetalakeResponse{Metalake: toMetalake(res.Lake)}, nil
		}}, nil
}

// listMetalakes serves GET /api/metalakes.
func (s *Server) listMetalakes(rq *request, _ *Metalake) (any, error) {
	out := []api.MetalakeDTO{}
	for _, n := range s.fsm.Lakes() {
		l, ok := s.fsm.Lake(n)
		if !ok {
			continue
		}
		if rq.operator() || (n == rq.caller.Tenant().String() && (rq.caller.AdministersTenant(n) ||
			l.Snapshot.Visible(rq.actor(), catalog.Object{Type: catalog.ObjectMetalake, Name: n}))) {
			out = append(out, toMetalake(l))
		}
	}
	return api.MetalakeListResponse{Metalakes: out}, nil
}

// getMetalake serves GET /api/metalakes/{tenant}.
func (s *Server) getMetalake(rq *request, l *Metalake) (any, error) {
	return api.MetalakeResponse{Metalake: toMetalake(l)}, nil
}

// alterMetalake serves PUT /api/metalakes/{tenant}.
func (s *Server) alterMetalake(rq *request, l *Metalake) (*plan, error) {
	if !rq.operator() {
		return nil, fmt.Errorf("%w: only operators alter metalakes", ErrForbidden)
	}
	var b api.AlterRequest[Update]
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	return &plan{lake: &LakeOp{Op: LakeAlter, Updates: b.Updates},
		render: func(res *Result) (any, error) {
			return api.MetalakeResponse{Metalake: toMetalake(res.Lake)}, nil
		}}, nil
}

// dropMetalake serves DELETE /api/metalakes/{tenant}.
func (s *Server) dropMetalake(rq *request, l *Metalake) (*plan, error) {
	if !rq.operator() {
		return nil, fmt.Errorf("%w: only operators drop metalakes", ErrForbidden)
	}
	dropped := api.DropResponse{}
	if l == nil {
		return &plan{now: dropped}, nil
	}
	force, _ := strconv.ParseBool(rq.query("force"))
	return &plan{lake: &LakeOp{Op: LakeDrop, Force: force}, onNotFound: dropped,
		render: func(*Result) (any, error) { return api.DropResponse{Dropped: true}, nil }}, nil
}
