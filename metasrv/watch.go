package metasrv

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"
)

func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request) {
	const op = "WatchGenerations"
	p, err := s.queryService(r, op, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req WatchRequest
	if err := s.internalBody(w, r, p, "", op, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := checkWatch(&req); err != nil {
		s.writeError(w, r, s.rejectDelegation("", p, "", op, err))
		return
	}
	if err := s.delegateFor(r, p, op, slices.Sorted(maps.Keys(req.Known))...); err != nil {
		s.writeError(w, r, err)
		return
	}
	wait := s.cfg.ReadWaitTimeout
	if req.WaitMillis < wait.Milliseconds() { // compared before scaling: no overflow
		wait = time.Duration(req.WaitMillis) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	cur := s.fsm.awaitChange(ctx, req.Known)
	if r.Context().Err() != nil {
		return // the caller left
	}
	// The answer vouches for the node's state now: not if it lost the
	// leader while the request waited.
	if err := s.inContact(); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, WatchResponse{Generations: cur})
}

func checkWatch(req *WatchRequest) error {
	if len(req.Known) == 0 || len(req.Known) > MaxWatchTenants {
		return badRequest("known must name 1 to %d metalakes", MaxWatchTenants)
	}
	for name := range req.Known {
		if err := checkMetalakeName(name); err != nil {
			return badRequest("known: %v", err)
		}
	}
	if req.WaitMillis < 0 {
		return badRequest("waitMillis must not be negative")
	}
	return nil
}

// awaitChange returns the current generation of every metalake of known (0
// for one that does not exist) once one differs from known, or when ctx
// ends.
func (f *FSM) awaitChange(ctx context.Context, known map[string]uint64) map[string]uint64 {
	cur := make(map[string]uint64, len(known))
	for {
		ch := f.wait()
		st := f.st.Load()
		moved := false
		for name, g := range known {
			var now uint64
			if l, ok := st.lakes[name]; ok {
				now = l.Generation()
			}
			cur[name] = now
			moved = moved || now != g
		}
		if moved {
			return cur
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return cur
		}
	}
}
