package metasrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"lakegate/authz"
	"lakegate/catalog"
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
//	GET  /internal/v1/metalakes/{m}/generation
//
// See docs/rest.md ("Internal API for gateways").

// MaxResolveRefs bounds the references of one resolve request.
const MaxResolveRefs = 1024

// ResolveRequest is the body of POST /internal/v1/metalakes/{m}/resolve.
type ResolveRequest struct {
	// Subject is the user (a user name of the metalake) the references are
	// resolved for. Required. If the caller also sends DelegateUserHeader
	// it must be the same.
	Subject string `json:"subject"`
	// Catalog is the catalog every reference is in. Required.
	Catalog string `json:"catalog"`
	// MinGeneration, when set, makes the node wait (bounded by
	// ReadWaitTimeout, then 503) until the metalake has reached it.
	MinGeneration uint64 `json:"minGeneration,omitempty"`
	// Refs are the table references, answered in order.
	Refs []ResolveRef `json:"refs"`
}

// ResolveRef is one table reference and the privilege it needs
// (SELECT_TABLE or MODIFY_TABLE).
type ResolveRef struct {
	Schema    string `json:"schema"`
	Table     string `json:"table"`
	Privilege string `json:"privilege"`
}

// ResolveResponse is the answer of resolve: one entry per reference, in
// order, all computed from one snapshot at Generation.
type ResolveResponse struct {
	Code       int               `json:"code"`
	Generation uint64            `json:"generation"`
	Results    []json.RawMessage `json:"results"`
}

// TableDescriptor is a resolved, authorized table.
type TableDescriptor struct {
	FullName string             `json:"fullName"`
	Columns  []DescriptorColumn `json:"columns"`
	// Version is the table's version; for now the metalake's generation.
	Version uint64 `json:"version"`
	// RowFilter is the row filter expression for the subject, nil for none.
	RowFilter   *string          `json:"rowFilter"`
	ColumnMasks []DescriptorMask `json:"columnMasks"`
}

// DescriptorColumn is one column of a TableDescriptor.
type DescriptorColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// DescriptorMask is the mask applying to one column for the subject.
type DescriptorMask struct {
	Column string `json:"column"`
	Mask   string `json:"mask"`
}

// unavailableResult is the answer for a missing table and a forbidden one
// alike: the same bytes.
var unavailableResult = json.RawMessage(`{"unavailable":true}`)

// ConflictResult is the per-reference answer when the policies applying to
// the subject conflict (two row filters, or two masks on one column). It
// names only the table.
type ConflictResult struct {
	Error string `json:"error"` // "conflict"
	Table string `json:"table"`
}

func (s *Server) internalRoutes() {
	s.mux.HandleFunc("POST /internal/v1/metalakes/{tenant}/resolve", s.handleResolve)
	s.mux.HandleFunc("GET /internal/v1/metalakes/{tenant}/generation", s.handleGeneration)
	s.mux.HandleFunc("/internal/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, fmt.Errorf("%w: no such endpoint", ErrNotFound))
	})
}

// beginInternal authenticates an internal API request: a query_service
// delegate of the tenant addressed, not forwarded. Delegation headers are
// optional; DelegateTenantHeader, when sent, must name the tenant.
func (s *Server) beginInternal(r *http.Request, op string) (*authz.Principal, string, error) {
	p, err := s.authenticate(r)
	if err != nil {
		return nil, "", err
	}
	tenant := r.PathValue("tenant")
	if r.Header.Get(CallerHeader) != "" || r.Header.Get(raftnode.ForwardedHeader) != "" {
		return nil, "", s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: the internal API is not forwarded", ErrForbidden))
	}
	if p.Role() != authz.RoleQueryService {
		return nil, "", s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: the internal API is for query_service principals", ErrForbidden))
	}
	du := r.Header.Get(DelegateUserHeader)
	if dt := r.Header.Get(DelegateTenantHeader); dt != "" && dt != tenant {
		return nil, "", s.rejectDelegation(tenant, p, du, op,
			fmt.Errorf("%w: the delegated tenant must be the metalake addressed", ErrForbidden))
	}
	if !mayDelegate(p, tenant) {
		return nil, "", s.rejectDelegation(tenant, p, du, op,
			fmt.Errorf("%w: not a delegate for this tenant", ErrForbidden))
	}
	return p, tenant, nil
}

func (s *Server) handleGeneration(w http.ResponseWriter, r *http.Request) {
	if _, tenant, err := s.beginInternal(r, "Generation"); err != nil {
		s.writeError(w, r, err)
	} else if l, ok := s.fsm.Lake(tenant); !ok {
		s.writeError(w, r, fmt.Errorf("%w: metalake %q", ErrNotFound, tenant))
	} else {
		g := l.Generation()
		w.Header().Set(GenerationHeader, strconv.FormatUint(g, 10))
		writeJSON(w, http.StatusOK, struct {
			Code       int    `json:"code"`
			Generation uint64 `json:"generation"`
		}{0, g})
	}
}

func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request) {
	out, l, err := s.resolve(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set(GenerationHeader, strconv.FormatUint(l.Generation(), 10))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) (*ResolveResponse, *Lake, error) {
	const op = "Resolve"
	p, tenant, err := s.beginInternal(r, op)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		return nil, nil, s.rejectDelegation(tenant, p, "", op, badRequest("reading request body: %v", err))
	}
	var req ResolveRequest
	if err := strictJSON(body, &req); err != nil {
		return nil, nil, s.rejectDelegation(tenant, p, "", op, badRequest("request body: %v", err))
	}
	if err := catalog.CheckEntityName(req.Subject); err != nil {
		return nil, nil, s.rejectDelegation(tenant, p, "", op, badRequest("subject must be a user name"))
	}
	if du := r.Header.Get(DelegateUserHeader); du != "" && du != req.Subject {
		return nil, nil, s.rejectDelegation(tenant, p, req.Subject, op,
			fmt.Errorf("%w: %s differs from the subject", ErrForbidden, DelegateUserHeader))
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
		res, err := resolveRef(snap, gen, req.Subject, catOK, req.Catalog, ref, privs[i])
		if err != nil {
			return nil, nil, err
		}
		out.Results[i] = res
	}
	return out, l, nil
}

// resolveRef answers one reference from snap. A table that is missing, has
// an invalid name, or that subject may not use with priv is unavailable,
// with the same bytes; only an authorized table reveals a policy conflict.
func resolveRef(snap *catalog.Snapshot, gen uint64, subject string, catOK bool, cat string, ref ResolveRef, priv catalog.Privilege) (json.RawMessage, error) {
	if !catOK || catalog.CheckNamePart(ref.Schema) != nil || catalog.CheckNamePart(ref.Table) != nil {
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
	filter, masks, err := snap.RowFiltersAndMasks(subject, full)
	switch {
	case errors.Is(err, catalog.ErrConflictingPolicies):
		return json.Marshal(ConflictResult{Error: "conflict", Table: full})
	case errors.Is(err, catalog.ErrNotFound):
		return unavailableResult, nil
	case err != nil:
		return nil, err
	}
	d := TableDescriptor{FullName: full, Version: gen,
		Columns: make([]DescriptorColumn, len(info.Columns)), ColumnMasks: make([]DescriptorMask, len(masks))}
	for i, c := range info.Columns {
		d.Columns[i] = DescriptorColumn{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	for i, m := range masks {
		d.ColumnMasks[i] = DescriptorMask{Column: m.Column, Mask: m.Mask}
	}
	if filter != "" {
		d.RowFilter = &filter
	}
	return json.Marshal(d)
}
