package metasrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// The internal API for gateways, under /internal/v1 (not under /api: not
// Gravitino-shaped, not for humans). Only query_service principals may call
// it, and only for the tenants in their delegate_tenants. It is always
// answered from the local node's snapshot (never forwarded); callers that
// need read-your-writes pass minGeneration. Errors use the REST API's
// envelope and codes (mapError).
//
//	POST /internal/v1/metalakes/{m}/resolve
//	POST /internal/v1/metalakes/{m}/tables
//	GET  /internal/v1/metalakes/{m}/files
//	GET  /internal/v1/metalakes/{m}/generation
//	POST /internal/v1/generations (watch)
//	POST /internal/v1/metalakes/{m}/access-log (accesslog.go)
//	GET  /internal/v1/metalakes/{m}/access-log
//
// Beside them, one route for the cluster's own nodes (principals.go): POST
// /internal/v1/metalakes/{m}/identity-sync, by which a follower has the
// leader sync a JWT user's memberships.
//
// See docs/rest.md ("Internal API for gateways").

// unavailableResult answers a missing table and a forbidden one alike.
var unavailableResult = api.UnavailableResult

func (s *Server) internalRoutes() {
	s.mux.HandleFunc("POST /internal/v1/metalakes/{tenant}/resolve", s.handleResolve)
	s.mux.HandleFunc("GET /internal/v1/metalakes/{tenant}/generation", s.handleGeneration)
	s.mux.HandleFunc("POST /internal/v1/metalakes/{tenant}/tables", s.handleListTables)
	s.mux.HandleFunc("GET /internal/v1/metalakes/{tenant}/files", s.handleFiles)
	s.mux.HandleFunc("POST /internal/v1/generations", s.handleWatch)
	s.accessLogRoutes()
	s.mux.HandleFunc("/internal/", s.noRoute)
}

// beginInternal authenticates an internal API request: a query_service
// delegate of the tenant addressed, not forwarded. Delegation headers are
// optional; api.DelegateTenantHeader, when sent, must name the tenant.
func (s *Server) beginInternal(r *http.Request, op string) (*authz.Principal, string, error) {
	tenant := r.PathValue("tenant")
	p, err := s.queryService(r, op, tenant)
	if err != nil {
		return nil, tenant, err
	}
	return p, tenant, s.delegateFor(r, p, op, tenant)
}

// queryService authenticates a query_service principal calling the
// internal API directly (not forwarded); tenant names the metalake a
// rejection is audited under.
func (s *Server) queryService(r *http.Request, op, tenant string) (*authz.Principal, error) {
	p, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if r.Header.Get(api.CallerHeader) != "" || r.Header.Get(raftnode.ForwardedHeader) != "" {
		return nil, s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: the internal API is not forwarded", ErrForbidden))
	}
	if p.Role() != authz.RoleQueryService {
		return nil, s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: the internal API is for query_service principals", ErrForbidden))
	}
	return p, nil
}

// delegateFor checks that p may act for every one of tenants (at least
// one) and that this node may answer.
func (s *Server) delegateFor(r *http.Request, p *authz.Principal, op string, tenants ...string) error {
	du := r.Header.Get(api.DelegateUserHeader)
	if dt := r.Header.Get(api.DelegateTenantHeader); dt != "" && (len(tenants) > 1 || dt != tenants[0]) {
		return s.rejectDelegation(tenants[0], p, du, op,
			fmt.Errorf("%w: the delegated tenant must be the metalake addressed", ErrForbidden))
	}
	for _, t := range tenants {
		if !mayDelegate(p, t) {
			return s.rejectDelegation(t, p, du, op,
				fmt.Errorf("%w: not a delegate for this tenant", ErrForbidden))
		}
	}
	if err := s.inContact(); err != nil {
		return err
	}
	if r.Header.Get(api.DelegateTokenHeader) != "" {
		if len(tenants) != 1 || du == "" {
			return s.rejectDelegation(tenants[0], p, du, op,
				fmt.Errorf("%w: a delegated token needs one tenant and the delegated user", ErrForbidden))
		}
		return s.verifyDelegateToken(r, tenants[0], du)
	}
	return nil
}

// inContact refuses to answer from this node's state when it may be stale,
// so gateways fail over to a node in contact with the leader.
func (s *Server) inContact() error {
	if !s.node.InContact(s.cfg.StaleReadBound) {
		return fmt.Errorf("%w: this node has not heard from a leader within %s", ErrUnavailable, s.cfg.StaleReadBound)
	}
	return nil
}

func (s *Server) handleGeneration(w http.ResponseWriter, r *http.Request) {
	if _, tenant, err := s.beginInternal(r, "Generation"); err != nil {
		s.writeError(w, r, err)
	} else if l, ok := s.fsm.Lake(tenant); !ok {
		s.writeError(w, r, fmt.Errorf("%w: metalake %q", ErrNotFound, tenant))
	} else {
		g := l.Generation()
		w.Header().Set(api.GenerationHeader, strconv.FormatUint(g, 10))
		writeJSON(w, http.StatusOK, api.GenerationResponse{Generation: g})
	}
}

func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request) {
	out, l, err := s.resolve(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set(api.GenerationHeader, strconv.FormatUint(l.Generation(), 10))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) (*ResolveResponse, *Metalake, error) {
	const op = "Resolve"
	p, tenant, err := s.beginInternal(r, op)
	if err != nil {
		return nil, nil, err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return nil, nil, s.rejectDelegation(tenant, p, "", op, badRequest("%v", err))
	}
	var req ResolveRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, nil, s.rejectDelegation(tenant, p, "", op, badRequest("request body: %v", err))
	}
	if err := catalog.CheckEntityName(req.Subject); err != nil {
		return nil, nil, s.rejectDelegation(tenant, p, "", op, badRequest("subject must be a user name"))
	}
	if du := r.Header.Get(api.DelegateUserHeader); du != "" && du != req.Subject {
		return nil, nil, s.rejectDelegation(tenant, p, req.Subject, op,
			fmt.Errorf("%w: %s differs from the subject", ErrForbidden, api.DelegateUserHeader))
	}
	if req.Catalog == "" {
		return nil, nil, badRequest("catalog is required")
	}
	if len(req.Refs) > MaxResolveRefs {
		return nil, nil, badRequest("more than %d refs", MaxResolveRefs)
	}
	privs := make([]catalog.Privilege, len(req.Refs))
	for i, ref := range req.Refs {
		if ref.Schema == "" || ref.Table == "" {
			return nil, nil, badRequest("refs[%d]: schema and table are required", i)
		}
		pv, err := catalog.ParsePrivilege(ref.Privilege)
		if err != nil || (pv != catalog.PrivSelectTable && pv != catalog.PrivModifyTable) {
			return nil, nil, badRequest("refs[%d]: privilege must be SELECT_TABLE or MODIFY_TABLE", i)
		}
		privs[i] = pv
	}
	if req.MinGeneration != 0 {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadWaitTimeout)
		err := s.fsm.WaitGeneration(ctx, tenant, req.MinGeneration)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	// One snapshot, read once, decides every reference.
	l, ok := s.fsm.Lake(tenant)
	if !ok {
		return nil, nil, fmt.Errorf("%w: metalake %q", ErrNotFound, tenant)
	}
	snap := l.Snapshot
	gen := snap.Generation()
	catOK := catalog.CheckNamePart(req.Catalog) == nil
	out := &ResolveResponse{Generation: gen, Results: make([]json.RawMessage, len(req.Refs))}
	for i, ref := range req.Refs {
		res, err := resolveRef(snap, req.Subject, catOK, req.Catalog, ref, privs[i])
		if err != nil {
			return nil, nil, err
		}
		out.Results[i] = res
	}
	return out, l, nil
}

// resolveRef answers one reference from snap. A table that is missing, has
// an invalid name, or that subject may not use with priv is unavailable,
// with the same bytes, and so is a version that is not retained or that
// holds a column the table no longer has; only an authorized table reveals
// a policy conflict. A table of an upstream catalog resolves, without files,
// to its engine and upstream name for SELECT_TABLE only; for MODIFY_TABLE,
// or when its catalog's upstream properties or its upstream_name are
// invalid, it is unavailable.
func resolveRef(snap *catalog.Snapshot, subject string, catOK bool, cat string, ref ResolveRef, priv catalog.Privilege) (json.RawMessage, error) {
	if !catOK || (catalog.CheckNamePart(ref.Schema) != nil && ref.Schema != catalog.SystemSchema) || catalog.CheckNamePart(ref.Table) != nil {
		return unavailableResult, nil
	}
	full := cat + "." + ref.Schema + "." + ref.Table
	obj := catalog.Table(full)
	if !snap.Authorize(subject, priv, obj).Allowed {
		return unavailableResult, nil
	}
	info, ok := snap.Object(obj)
	if !ok {
		return unavailableResult, nil
	}
	// A table of an upstream catalog: read only, and only while its
	// catalog's engine properties and its upstream_name are valid.
	var up *api.Upstream
	if ci, ok := snap.Object(catalog.Catalog(cat)); !ok {
		return unavailableResult, nil
	} else if ci.Type == catalogUpstream {
		if priv != catalog.PrivSelectTable {
			return unavailableResult, nil
		}
		if up, ok = resolveUpstream(ci.Properties, info.Properties); !ok {
			return unavailableResult, nil
		}
	}
	sid, ver, ok := snap.TableVersion(full, ref.Version)
	if !ok {
		return unavailableResult, nil
	}
	// Masks are decided by name against the table's current columns, but
	// a version's files hold the columns it was committed with: a column
	// the table no longer has (dropped or renamed since) would escape its
	// mask, so such a version is refused (fail closed) until a replace
	// commit rewrites it.
	if !columnsCovered(ver.Columns, info.Columns) {
		return unavailableResult, nil
	}
	cols := info.Columns
	if ref.Version != 0 {
		cols = ver.Columns // a retained version is read with its own columns
	}
	rp, err := snap.ReadPolicyOf(subject, full)
	filter, masks := rp.Filter, rp.Masks
	switch {
	case errors.Is(err, catalog.ErrConflictingPolicies):
		return json.Marshal(api.ConflictResult{Error: api.ConflictError, Table: full})
	case errors.Is(err, catalog.ErrNotFound):
		return unavailableResult, nil
	case err != nil:
		return nil, err
	}
	files := ver.Files
	if up != nil {
		files = nil // the rows are in the engine
	}
	d := TableDescriptor{FullName: full, StorageID: sid, Version: ver.Version,
		Columns: make([]DescriptorColumn, len(cols)), Files: make([]DescriptorFile, len(files)),
		ColumnMasks: make([]DescriptorMask, len(masks)), Upstream: up, Codec: info.Properties[TableCodecProperty]}
	for i, c := range cols {
		d.Columns[i] = DescriptorColumn{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	for i, f := range files {
		d.Files[i] = DescriptorFile{Path: f.Path, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}
	}
	for i, m := range masks {
		d.ColumnMasks[i] = DescriptorMask{Column: m.Column, Mask: m.Mask, Policy: m.Policy}
	}
	if filter != "" {
		d.RowFilter, d.RowFilterPolicy = &filter, rp.FilterPolicy
	}
	if d.RowFilter != nil || len(d.ColumnMasks) > 0 {
		d.Roles = snap.RolesOf(subject)
	}
	return json.Marshal(d)
}

// columnsCovered reports whether every column of cols has a namesake in
// current.
func columnsCovered(cols, current []catalog.ColumnDef) bool {
	for _, c := range cols {
		if !slices.ContainsFunc(current, func(d catalog.ColumnDef) bool { return d.Name == c.Name }) {
			return false
		}
	}
	return true
}

// internalBody reads and strictly decodes an internal API body into v,
// auditing a rejection.
func (s *Server) internalBody(w http.ResponseWriter, r *http.Request, p *authz.Principal, tenant, op string, v any) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return s.rejectDelegation(tenant, p, "", op, badRequest("%v", err))
	}
	if err := decodeRequest(body, v); err != nil {
		return s.rejectDelegation(tenant, p, "", op, badRequest("request body: %v", err))
	}
	return nil
}

// internalLake waits for minGeneration (0: no wait) and returns tenant's
// metalake.
func (s *Server) internalLake(r *http.Request, tenant string, minGeneration uint64) (*Metalake, error) {
	if minGeneration != 0 {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadWaitTimeout)
		err := s.fsm.WaitGeneration(ctx, tenant, minGeneration)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	l, ok := s.fsm.Lake(tenant)
	if !ok {
		return nil, fmt.Errorf("%w: metalake %q", ErrNotFound, tenant)
	}
	return l, nil
}

func (s *Server) handleListTables(w http.ResponseWriter, r *http.Request) {
	out, err := s.listTables(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set(api.GenerationHeader, strconv.FormatUint(out.Generation, 10))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) (*ListTablesResponse, error) {
	const op = "ListTables"
	p, tenant, err := s.beginInternal(r, op)
	if err != nil {
		return nil, err
	}
	var req ListTablesRequest
	if err := s.internalBody(w, r, p, tenant, op, &req); err != nil {
		return nil, err
	}
	if err := catalog.CheckEntityName(req.Subject); err != nil {
		return nil, s.rejectDelegation(tenant, p, "", op, badRequest("subject must be a user name"))
	}
	if du := r.Header.Get(api.DelegateUserHeader); du != "" && du != req.Subject {
		return nil, s.rejectDelegation(tenant, p, req.Subject, op,
			fmt.Errorf("%w: %s differs from the subject", ErrForbidden, api.DelegateUserHeader))
	}
	if req.Catalog == "" {
		return nil, badRequest("catalog is required")
	}
	l, err := s.internalLake(r, tenant, req.MinGeneration)
	if err != nil {
		return nil, err
	}
	snap := l.Snapshot
	out := &ListTablesResponse{Generation: snap.Generation(), Schemas: []string{}, Tables: []ListedTable{}}
	if catalog.CheckNamePart(req.Catalog) != nil {
		return out, nil
	}
	cat := catalog.Catalog(req.Catalog)
	names, _ := snap.Children(cat) // sorted; none for a missing catalog
	schemas := make([]catalog.Object, len(names))
	for i, n := range names {
		schemas[i] = catalog.Schema(req.Catalog + "." + n)
	}
	// Visibility is decided in batches (one walk per schema, not per
	// table); SELECT_TABLE is then checked on the visible tables only.
	for _, sch := range snap.FilterVisible(req.Subject, schemas) {
		schema := lastPart(sch.Name)
		out.Schemas = append(out.Schemas, schema)
		tnames, _ := snap.Children(sch)
		tables := make([]catalog.Object, len(tnames))
		for i, n := range tnames {
			tables[i] = catalog.Table(sch.Name + "." + n)
		}
		for _, t := range snap.FilterVisible(req.Subject, tables) {
			if !snap.Authorize(req.Subject, catalog.PrivSelectTable, t).Allowed {
				continue
			}
			info, ok := snap.Object(t)
			if !ok {
				continue
			}
			lt := ListedTable{Schema: schema, Name: lastPart(t.Name), Columns: make([]DescriptorColumn, len(info.Columns))}
			for i, c := range info.Columns {
				lt.Columns[i] = DescriptorColumn{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
			}
			lt.StorageID, lt.Version = tableVersion(snap, t.Name)
			out.Tables = append(out.Tables, lt)
		}
	}
	return out, nil
}

func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request) {
	_, tenant, err := s.beginInternal(r, "ReferencedFiles")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var minGen uint64
	if mg := r.URL.Query().Get("minGeneration"); mg != "" {
		if minGen, err = strconv.ParseUint(mg, 10, 64); err != nil {
			s.writeError(w, r, badRequest("minGeneration must be a non-negative integer"))
			return
		}
	}
	l, err := s.internalLake(r, tenant, minGen)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := FilesResponse{Generation: l.Generation(), Files: []FileRef{}}
	for sid, f := range l.Snapshot.ReferencedFiles() {
		out.Files = append(out.Files, FileRef{StorageID: sid, Path: f.Path})
	}
	w.Header().Set(api.GenerationHeader, strconv.FormatUint(out.Generation, 10))
	writeJSON(w, http.StatusOK, out)
}
