package flight

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/stage"
)

// actionStream collects what a DoAction handler sends.
type actionStream struct {
	grpc.ServerStream
	ctx  context.Context
	sent []*flight.Result
}

func (s *actionStream) Context() context.Context { return s.ctx }
func (s *actionStream) Send(r *flight.Result) error {
	s.sent = append(s.sent, r)
	return nil
}

// actionTypeStream collects what a ListActions handler sends.
type actionTypeStream struct {
	grpc.ServerStream
	sent []string
}

func (s *actionTypeStream) Context() context.Context { return context.Background() }
func (s *actionTypeStream) Send(a *flight.ActionType) error {
	s.sent = append(s.sent, a.GetType())
	return nil
}

func stageService(root *stage.Descriptor) *service {
	s := &Server{cfg: Config{Stage: root}, log: slog.New(slog.DiscardHandler)}
	return &service{FlightServer: flightsql.NewFlightServer(&flightsql.BaseServer{}), srv: s}
}

func TestStageDescribeAction(t *testing.T) {
	local := &stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: "/srv/lake/stage"}}
	s3 := &stage.Descriptor{Version: stage.DescriptorVersion, S3: &stage.S3Descriptor{Bucket: "lake", Prefix: "prod", Region: "us-east-1"}}
	authed := authz.WithPrincipal(context.Background(), principal(t, "alice@acme"))
	action := &flight.Action{Type: StageDescribeActionType}

	t.Run("local root narrowed to the caller's tenant", func(t *testing.T) {
		st := &actionStream{ctx: authed}
		if err := stageService(local).DoAction(action, st); err != nil {
			t.Fatal(err)
		}
		if len(st.sent) != 1 {
			t.Fatalf("got %d results, want 1", len(st.sent))
		}
		d, err := stage.ParseDescriptor(st.sent[0].GetBody())
		if err != nil {
			t.Fatalf("%s: %v", st.sent[0].GetBody(), err)
		}
		if d.S3 != nil || d.Local == nil || d.Local.Root != "/srv/lake/stage/tenants/acme" {
			t.Fatalf("descriptor %s", st.sent[0].GetBody())
		}
	})
	t.Run("s3 prefix narrowed to the caller's tenant", func(t *testing.T) {
		st := &actionStream{ctx: authed}
		if err := stageService(s3).DoAction(action, st); err != nil {
			t.Fatal(err)
		}
		d, err := stage.ParseDescriptor(st.sent[0].GetBody())
		if err != nil || d.S3 == nil || d.S3.Prefix != "prod/tenants/acme" || d.S3.Bucket != "lake" {
			t.Fatalf("descriptor %s: %v", st.sent[0].GetBody(), err)
		}
		if strings.Contains(strings.ToLower(string(st.sent[0].GetBody())), "secret") {
			t.Fatalf("descriptor mentions credentials: %s", st.sent[0].GetBody())
		}
	})
	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			name string
			svc  *service
			ctx  context.Context
			body []byte
			code codes.Code
		}{
			{"no principal", stageService(local), context.Background(), nil, codes.Unauthenticated},
			{"body", stageService(local), authed, []byte("{}"), codes.InvalidArgument},
			{"no stage", stageService(nil), authed, nil, codes.Unimplemented},
		}
		for _, c := range cases {
			st := &actionStream{ctx: c.ctx}
			err := c.svc.DoAction(&flight.Action{Type: StageDescribeActionType, Body: c.body}, st)
			if status.Code(err) != c.code || len(st.sent) != 0 {
				t.Errorf("%s: %v (%d results), want %s", c.name, err, len(st.sent), c.code)
			}
		}
	})
	t.Run("other actions reach the router", func(t *testing.T) {
		st := &actionStream{ctx: authed}
		err := stageService(local).DoAction(&flight.Action{Type: "lakegate.no.such.action"}, st)
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("unknown action: %v, want the router's InvalidArgument", err)
		}
	})
	t.Run("listed only when a stage is configured", func(t *testing.T) {
		for _, root := range []*stage.Descriptor{local, nil} {
			st := &actionTypeStream{}
			if err := stageService(root).ListActions(&flight.Empty{}, st); err != nil {
				t.Fatal(err)
			}
			listed := false
			for _, a := range st.sent {
				listed = listed || a == StageDescribeActionType
			}
			if listed != (root != nil) || len(st.sent) < 2 {
				t.Errorf("stage %v: actions %v", root, st.sent)
			}
		}
	})
}

func TestConfigValidatesStage(t *testing.T) {
	bad := &stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: "relative/stage"}}
	c := Config{Stage: bad}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "Config.Stage") {
		t.Fatalf("Validate: %v, want a Config.Stage error", err)
	}
}
