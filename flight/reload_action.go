package flight

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/authz"
)

// ReloadPrincipalsActionType is the Flight action that reloads the
// gateway's principal map from its file (Config.ReloadPrincipals), for a
// platform operator only. It takes no body and answers one Result, the
// JSON {"generation": N} of the map in force. Anyone else gets the answer
// of an action the server does not have; a refused map answers
// InvalidArgument with why (never a token or a hash), and the previous map
// stays in force.
const ReloadPrincipalsActionType = "lakegate.principals.reload"

// reloadPrincipals implements ReloadPrincipalsActionType; ok is false when
// the action is not for this caller (the router then answers it as
// unknown).
func (s *Server) reloadPrincipals(a *flight.Action, stream flight.FlightService_DoActionServer) (ok bool, err error) {
	p, found := authz.PrincipalFrom(stream.Context())
	if !found || p.Role() != authz.RoleOperator || s.cfg.ReloadPrincipals == nil {
		return false, nil
	}
	if len(a.GetBody()) != 0 {
		return true, status.Error(codes.InvalidArgument, ReloadPrincipalsActionType+" takes no body")
	}
	if err := s.cfg.ReloadPrincipals(p.ID().String()); err != nil {
		return true, status.Error(codes.InvalidArgument, err.Error())
	}
	body, err := json.Marshal(struct {
		Generation uint64 `json:"generation"`
	}{s.cfg.Authn.Generation()})
	if err != nil {
		return true, status.Error(codes.Internal, "internal error")
	}
	return true, stream.Send(&flight.Result{Body: body})
}
