package metasrv

import (
	"fmt"
	"net/http"
	"strconv"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// The access log (see docs/rest.md, "Internal API for gateways"):
//
//	POST /internal/v1/metalakes/{m}/access-log  commit access-log files
//	GET  /internal/v1/metalakes/{m}/access-log?catalog=c  the table's storage id
//
// A gateway commits the Parquet files of its access events, written into
// the tenant's stage under the table's storage id, as the next version of
// <catalog>.system.access_events: one Raft proposal of one
// catalog.CommitAccessLog, applied as the metalake's owner with the
// gateway as its delegator (the audit event's actor and delegator), which
// creates the schema and the table on first use. Only a query_service
// delegated for the tenant commits, as itself: no delegation headers. Every
// other write into a schema named system is refused by name, here
// (refuseSystemWrites) and by the catalog.

// errSystemReadOnly refuses a write into a system schema.
var errSystemReadOnly = fmt.Errorf("%w: schema system holds the access log and is read-only", ErrForbidden)

// refuseSystemWrites refuses a plan that writes into a catalog's system
// schema, unless it is the access log's commit.
func refuseSystemWrites(pl *plan) error {
	if pl.accessLog {
		return nil
	}
	for _, c := range pl.cmds {
		if catalog.WritesSystemSchema(c) {
			return errSystemReadOnly
		}
	}
	return nil
}

func (s *Server) accessLogRoutes() {
	const path = "/internal/v1/metalakes/{tenant}/access-log"
	s.mux.HandleFunc("POST "+path, s.handleCommitAccessLog)
	s.mux.HandleFunc("GET "+path, s.handleAccessLogTable)
}

// handleCommitAccessLog serves POST …/access-log. A follower forwards it to
// the leader like any write; the leader checks the caller again.
func (s *Server) handleCommitAccessLog(w http.ResponseWriter, r *http.Request) {
	const op = "CommitAccessLog"
	rq, err := s.beginGateway(w, r, op)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.serveWrite(rq, op, false, s.commitAccessLog); err != nil {
		s.writeError(w, r, err)
	}
}

// beginGateway authenticates a gateway acting as itself for the tenant the
// path addresses: a query_service delegated for it, without delegation
// headers (the commit is the gateway's, not a user's). Anything else is
// refused (403) and audited, as on the other internal endpoints.
func (s *Server) beginGateway(w http.ResponseWriter, r *http.Request, op string) (*request, error) {
	rq, err := s.beginCaller(w, r, op)
	if err != nil {
		return nil, err
	}
	p, tenant := rq.caller, rq.metalake
	switch {
	case p.Role() != authz.RoleQueryService:
		return nil, s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: the internal API is for query_service principals", ErrForbidden))
	case r.Header.Get(api.DelegateTenantHeader) != "" || r.Header.Get(api.DelegateUserHeader) != "":
		return nil, s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: a gateway commits the access log as itself, without delegation headers", ErrForbidden))
	case !mayDelegate(p, tenant):
		return nil, s.rejectDelegation(tenant, p, "", op,
			fmt.Errorf("%w: not a delegate for this tenant", ErrForbidden))
	}
	return rq, nil
}

// commitAccessLog plans the access log's commit: one CommitAccessLog, as
// the metalake's owner on behalf of the gateway.
func (s *Server) commitAccessLog(rq *request, l *Metalake) (*plan, error) {
	var b api.CommitAccessLogRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if err := catalog.CheckNamePart(b.Catalog); err != nil {
		return nil, badRequest("catalog: %v", err)
	}
	if len(b.Files) == 0 {
		return nil, badRequest("files are required")
	}
	owner := l.Snapshot.MetalakeOwner()
	if owner.Type != catalog.OwnerUser {
		return nil, fmt.Errorf("%w: the access log is committed as the metalake's owner, which must be a user", ErrUnsupported)
	}
	// The proposal's actor is the owner, its delegator the gateway.
	rq.delegator, rq.subject = rq.caller, owner.Name
	cmd := catalog.CommitAccessLog{Catalog: b.Catalog, StorageID: b.StorageID, Files: toDataFiles(b.Files), Expire: b.Expire, Compact: b.Compact}
	for _, c := range api.AccessLogColumns() {
		cmd.Columns = append(cmd.Columns, catalog.ColumnDef{Name: c.Name, Type: c.Type, Nullable: c.Nullable})
	}
	table := cmd.Target().Name
	return &plan{cmds: withRules(l.Snapshot, []catalog.Command{cmd}), accessLog: true, render: func(res *Result) (any, error) {
		sid, v, ok := res.Lake.Snapshot.TableVersion(table, 0)
		if !ok {
			return nil, fmt.Errorf("metasrv: %s has no version after a commit", table)
		}
		return api.CommitAccessLogResponse{Generation: res.Generation(), StorageID: sid, Version: v.Version}, nil
	}}, nil
}

// handleAccessLogTable serves GET …/access-log?catalog=c from the local
// snapshot, like the other internal reads.
func (s *Server) handleAccessLogTable(w http.ResponseWriter, r *http.Request) {
	_, tenant, err := s.beginInternal(r, "AccessLogTable")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cat := r.URL.Query().Get("catalog")
	if err := catalog.CheckNamePart(cat); err != nil {
		s.writeError(w, r, badRequest("catalog: %v", err))
		return
	}
	l, err := s.internalLake(r, tenant, 0)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := api.AccessLogResponse{Generation: l.Generation()}
	sid, v, ok := l.Snapshot.TableVersion(cat+"."+catalog.SystemSchema+"."+catalog.AccessLogTable, 0)
	if ok {
		out.StorageID, out.Version = sid, v.Version
		if withFiles, _ := strconv.ParseBool(r.URL.Query().Get("files")); withFiles {
			out.Files, out.Sizes = make([]string, len(v.Files)), make([]int64, len(v.Files))
			for i, f := range v.Files {
				out.Files[i], out.Sizes[i] = f.Path, f.Size
			}
		}
	}
	w.Header().Set(api.GenerationHeader, strconv.FormatUint(out.Generation, 10))
	writeJSON(w, http.StatusOK, out)
}
