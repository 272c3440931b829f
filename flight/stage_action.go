package flight

import (
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/authz"
)

// StageDescribeActionType is the Flight action that returns the caller's
// stage: the JSON form of the deployment's root stage.Descriptor narrowed to
// the authenticated principal's tenant (Descriptor.ForTenant). The action
// takes no body and answers one Result. The descriptor never holds
// credentials and never names another tenant's stage; a program opening it
// brings its own storage credentials.
const StageDescribeActionType = "lakegate.stage.describe"

const stageDescribeDescription = "Returns the caller's tenant stage descriptor (JSON, credential-free). Takes no body."

// DoAction answers lakegate's own actions and hands every other action to the
// Flight SQL router.
func (v *service) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	switch a.GetType() {
	case StageDescribeActionType:
		return v.srv.describeStage(a, stream)
	case ReloadPrincipalsActionType:
		if ok, err := v.srv.reloadPrincipals(a, stream); ok {
			return err
		}
	}
	return v.FlightServer.DoAction(a, stream)
}

// ListActions lists the Flight SQL router's actions and, when a stage is
// configured, StageDescribeActionType.
func (v *service) ListActions(e *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	if err := v.FlightServer.ListActions(e, stream); err != nil {
		return err
	}
	if v.srv.cfg.Stage == nil {
		return nil
	}
	return stream.Send(&flight.ActionType{Type: StageDescribeActionType, Description: stageDescribeDescription})
}

// describeStage implements StageDescribeActionType. Authentication already
// happened in the stream interceptor; the principal on the context decides
// the tenant, nothing in the request does.
func (s *Server) describeStage(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	p, ok := authz.PrincipalFrom(stream.Context())
	if !ok {
		return status.Error(codes.Unauthenticated, unauthenticatedMessage)
	}
	if len(a.GetBody()) != 0 {
		return status.Error(codes.InvalidArgument, StageDescribeActionType+" takes no body")
	}
	if s.cfg.Stage == nil {
		return status.Error(codes.Unimplemented, "no stage is configured on this server")
	}
	child, err := s.cfg.Stage.ForTenant(p.Tenant().String())
	if err != nil {
		s.logger(stream.Context()).Error("stage descriptor for tenant", "tenant", p.Tenant().String(), "err", err)
		return status.Error(codes.Internal, "internal error")
	}
	body, err := json.Marshal(child)
	if err != nil {
		s.logger(stream.Context()).Error("encoding stage descriptor", "err", err)
		return status.Error(codes.Internal, "internal error")
	}
	return stream.Send(&flight.Result{Body: body})
}
