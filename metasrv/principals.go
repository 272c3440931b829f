package metasrv

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"lakegate/authz"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// principalIndex finds the principals of the map in force by id, for the
// callers a peer forwards for, the bootstrap operator and explain. It
// rebuilds its index when the map's generation changes, so a reload is seen
// by the next lookup.
type principalIndex struct {
	ps  *authz.Principals
	cur atomic.Pointer[indexAt]
}

type indexAt struct {
	gen  uint64
	byID map[string]*authz.Principal
}

// get returns the listed principal with id under the map in force.
func (x *principalIndex) get(id string) (*authz.Principal, bool) {
	snap := x.ps.Current()
	ix := x.cur.Load()
	if ix == nil || ix.gen != snap.Generation() {
		ix = &indexAt{gen: snap.Generation(), byID: map[string]*authz.Principal{}}
		for _, p := range snap.Map().Principals() {
			ix.byID[p.ID().String()] = p
		}
		x.cur.Store(ix)
	}
	p, ok := ix.byID[id]
	return p, ok
}

// ReloadPath is the node-local route that reloads the principal map
// (Config.ReloadPrincipals): POST, operators only, never forwarded — each
// node reloads its own file.
const ReloadPath = "/api/admin/principals/reload"

// reloadResponse answers a reload: the generation of the map in force.
type reloadResponse struct {
	Code       int    `json:"code"`
	Generation uint64 `json:"generation"`
}

// reloadRoutes registers ReloadPath.
func (s *Server) reloadRoutes() {
	s.mux.HandleFunc("POST "+ReloadPath, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		forwarded := r.Header.Get(api.CallerHeader) != "" || r.Header.Get(raftnode.ForwardedHeader) != "" ||
			r.Header.Get(api.DelegateTenantHeader) != "" || r.Header.Get(api.DelegateUserHeader) != ""
		if p.Role() != authz.RoleOperator || forwarded {
			s.writeError(w, r, fmt.Errorf("%w: only an operator reloads the principal map", ErrForbidden))
			return
		}
		if s.cfg.ReloadPrincipals == nil {
			s.writeError(w, r, fmt.Errorf("%w: this node has no principal map file to reload", ErrNotFound))
			return
		}
		if err := s.cfg.ReloadPrincipals(); err != nil {
			s.log.Warn("principal map reload refused", "by", p.ID().String(), "err", err)
			s.writeError(w, r, badRequest("%v", err))
			return
		}
		s.log.Info("principal map reloaded", "by", p.ID().String(), "generation", s.authn.Generation())
		writeJSON(w, http.StatusOK, reloadResponse{Generation: s.authn.Generation()})
	})
}
