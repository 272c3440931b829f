package flight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"lakegate/authz"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

func denials(m *Metrics, reason string) float64 {
	return testutil.ToFloat64(m.denials.WithLabelValues(reason))
}

func requests(m *Metrics, rpc, code string) float64 {
	return testutil.ToFloat64(m.requests.WithLabelValues(rpc, code))
}

func TestDenialMetrics(t *testing.T) {
	cases := []struct {
		name   string
		cat    *metricsCatalog
		method string
		call   func(s *Server) error
		reason string
		code   codes.Code
	}{
		{
			name:   "wrong token",
			method: methodGetFlightInfo,
			call: func(s *Server) error {
				return unary(s, withToken("lg_wrong"), methodGetFlightInfo, func(context.Context) error {
					return errors.New("handler reached")
				})
			},
			reason: reasonUnauthenticated, code: codes.Unauthenticated,
		},
		{
			name:   "no token on a stream",
			method: methodDoGet,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken("")}, methodDoGet, func(grpc.ServerStream) error {
					return errors.New("handler reached")
				})
			},
			reason: reasonUnauthenticated, code: codes.Unauthenticated,
		},
		{
			name:   "table outside the namespace grants",
			method: methodGetFlightInfo,
			call: func(s *Server) error {
				return unary(s, withToken(carolToken), methodGetFlightInfo, func(ctx context.Context) error {
					_, err := s.GetFlightInfoStatement(ctx, query("SELECT * FROM sales.orders"), nil)
					return err
				})
			},
			reason: reasonNamespace, code: codes.NotFound,
		},
		{
			name:   "table the catalog reports unavailable",
			method: methodGetFlightInfo,
			call: func(s *Server) error {
				return unary(s, withToken(aliceToken), methodGetFlightInfo, func(ctx context.Context) error {
					_, err := s.GetFlightInfoStatement(ctx, query("SELECT * FROM sales.orders"), nil)
					return err
				})
			},
			reason: reasonPrivilege, code: codes.NotFound,
		},
		{
			name:   "USE of a schema outside the namespace grants",
			cat:    &metricsCatalog{schemas: []string{"sales", "hr"}},
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementUpdate(ss.Context(), &pb.CommandStatementUpdate{Query: "USE hr"})
					return err
				})
			},
			reason: reasonNamespace, code: codes.NotFound,
		},
		{
			name:   "USE of a schema the catalog does not list",
			cat:    &metricsCatalog{schemas: []string{"hr"}},
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementUpdate(ss.Context(), &pb.CommandStatementUpdate{Query: "USE sales"})
					return err
				})
			},
			reason: reasonPrivilege, code: codes.NotFound,
		},
		{
			name:   "ingest into a table outside the namespace grants",
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementIngest(ss.Context(), &pb.CommandStatementIngest{Schema: proto.String("hr"), Table: "orders"}, nil)
					return err
				})
			},
			reason: reasonNamespace, code: codes.NotFound,
		},
		{
			name:   "append to a table the catalog reports unavailable",
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementIngest(ss.Context(), &pb.CommandStatementIngest{Schema: proto.String("sales"), Table: "orders",
						TableDefinitionOptions: &pb.CommandStatementIngest_TableDefinitionOptions{
							IfNotExist: pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_FAIL,
							IfExists:   pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND,
						}}, nil)
					return err
				})
			},
			reason: reasonPrivilege, code: codes.NotFound,
		},
		{
			name:   "DROP of a table outside the namespace grants",
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(carolToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementUpdate(ss.Context(), &pb.CommandStatementUpdate{Query: "DROP TABLE sales.orders"})
					return err
				})
			},
			reason: reasonNamespace, code: codes.NotFound,
		},
		{
			name:   "DROP of a table the catalog did not drop",
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementUpdate(ss.Context(), &pb.CommandStatementUpdate{Query: "DROP TABLE sales.orders"})
					return err
				})
			},
			reason: reasonPrivilege, code: codes.NotFound,
		},
		{
			name:   "ingest into another catalog",
			method: methodDoPut,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoPut, func(ss grpc.ServerStream) error {
					_, err := s.DoPutCommandStatementIngest(ss.Context(), &pb.CommandStatementIngest{Catalog: proto.String("other_tenant"), Schema: proto.String("sales"), Table: "orders"}, nil)
					return err
				})
			},
			reason: reasonTenant, code: codes.NotFound,
		},
		{
			name:   "conflicting policies",
			cat:    &metricsCatalog{err: fmt.Errorf("%w: table sales.orders", backend.ErrPolicyConflict)},
			method: methodGetFlightInfo,
			call: func(s *Server) error {
				return unary(s, withToken(aliceToken), methodGetFlightInfo, func(ctx context.Context) error {
					_, err := s.GetFlightInfoStatement(ctx, query("SELECT * FROM sales.orders"), nil)
					return err
				})
			},
			reason: reasonPolicyConflict, code: codes.FailedPrecondition,
		},
		{
			name:   "forged ticket",
			method: methodDoGet,
			call: func(s *Server) error {
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoGet, func(ss grpc.ServerStream) error {
					_, _, err := s.DoGetStatement(ss.Context(), &pb.TicketStatementQuery{StatementHandle: []byte("forged")})
					return err
				})
			},
			reason: reasonTicket, code: codes.Unauthenticated,
		},
		{
			name:   "another principal's ticket",
			method: methodDoGet,
			call: func(s *Server) error {
				handle, err := s.cfg.Tickets.Seal(nil, ticket.Claims{Principal: "carol@acme", Tenant: "acme",
					Expiry: time.Now().Add(time.Minute), Payload: []byte{payloadV2, '{', '}'}})
				if err != nil {
					return err
				}
				return stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoGet, func(ss grpc.ServerStream) error {
					_, _, err := s.DoGetStatement(ss.Context(), &pb.TicketStatementQuery{StatementHandle: handle})
					return err
				})
			},
			reason: reasonTicket, code: codes.Unauthenticated,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat := tc.cat
			if cat == nil {
				cat = &metricsCatalog{visible: map[backend.TableName]bool{}}
			}
			s, _ := newTestServer(t, cat, nil)
			m := s.cfg.Metrics
			err := tc.call(s)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.code)
			}
			for _, r := range denialReasons {
				want := 0.0
				if r == tc.reason {
					want = 1
				}
				if got := denials(m, r); got != want {
					t.Errorf("denials{reason=%q} = %v, want %v", r, got, want)
				}
			}
			if got := requests(m, rpcLabel(tc.method), tc.code.String()); got != 1 {
				t.Errorf("requests{rpc=%q,code=%q} = %v, want 1", rpcLabel(tc.method), tc.code, got)
			}
			if tc.reason == reasonNamespace && cat.resolveCalls() != 0 {
				t.Errorf("a namespace denial reached the catalog %d times", cat.resolveCalls())
			}
		})
	}
}

// TestDenialReasonsLookAlike checks that a namespace denial and a catalog
// denial of the same table give clients exactly the same answer, while the
// metric tells them apart.
func TestDenialReasonsLookAlike(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{visible: map[backend.TableName]bool{}}, nil)
	m := s.cfg.Metrics
	plan := func(token string) error {
		return unary(s, withToken(token), methodGetFlightInfo, func(ctx context.Context) error {
			_, err := s.GetFlightInfoStatement(ctx, query("SELECT id FROM sales.orders WHERE id = 1"), nil)
			return err
		})
	}
	byNamespace, byCatalog := plan(carolToken), plan(aliceToken)
	if byNamespace == nil || byCatalog == nil {
		t.Fatalf("errors %v, %v", byNamespace, byCatalog)
	}
	if byNamespace.Error() != byCatalog.Error() {
		t.Errorf("texts differ: %q vs %q", byNamespace, byCatalog)
	}
	a, b := status.Convert(byNamespace).Proto(), status.Convert(byCatalog).Proto()
	if !proto.Equal(a, b) {
		t.Errorf("statuses differ: %v vs %v", a, b)
	}
	if a.GetMessage() != "table sales.orders does not exist" {
		t.Errorf("message = %q", a.GetMessage())
	}
	if denials(m, reasonNamespace) != 1 || denials(m, reasonPrivilege) != 1 {
		t.Errorf("denials: namespace %v, privilege %v; want 1, 1", denials(m, reasonNamespace), denials(m, reasonPrivilege))
	}
}

// TestDeniedStatusIsThePlainStatus checks that marking a status as a denial
// changes nothing gRPC or a client can observe.
func TestDeniedStatusIsThePlainStatus(t *testing.T) {
	for _, err := range []error{
		deny(reasonNamespace, tableNotFound("hr", "employees")),
		deny(reasonPrivilege, tableNotFound("hr", "employees")),
		fmt.Errorf("plan: %w", deny(reasonPrivilege, tableNotFound("hr", "employees"))),
		authz.ErrUnauthenticated,
		ticket.ErrInvalid,
		backend.ErrPolicyConflict,
		&notFoundError{kind: catalogKind, name: "other"},
	} {
		got := toStatus(err)
		plain := statusOf(err)
		var d *deniedStatus
		if !errors.As(got, &d) {
			t.Errorf("toStatus(%v) = %T, want a *deniedStatus", err, got)
			continue
		}
		if got.Error() != plain.Error() {
			t.Errorf("%v: Error() = %q, want %q", err, got, plain)
		}
		if !proto.Equal(status.Convert(got).Proto(), status.Convert(plain).Proto()) {
			t.Errorf("%v: status %v, want %v", err, status.Convert(got), status.Convert(plain))
		}
		if !errors.Is(got, plain) {
			t.Errorf("%v: errors.Is(denied, plain) = false", err)
		}
		if again := toStatus(got); again != got {
			t.Errorf("%v: toStatus is not idempotent", err)
		}
	}
	// Not denials: no reason, a plain status.
	for _, err := range []error{errTooManyQueries, backend.ErrCatalogUnavailable, tableNotFound("sales", "x"), errors.New("boom")} {
		var d *deniedStatus
		if errors.As(toStatus(err), &d) {
			t.Errorf("toStatus(%v) is a denial (%s)", err, d.reason)
		}
	}
}

func TestAdmissionMetrics(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, a *admission)
		want map[string]float64
	}{
		{"admitted", func(t *testing.T, a *admission) {
			mustAcquire(t, a, "a")()
		}, map[string]float64{admissionAdmitted: 1}},
		{"rejected after the queue deadline", func(t *testing.T, a *admission) {
			rel := mustAcquire(t, a, "a")
			defer rel()
			if _, err := a.acquire(context.Background(), "a"); !errors.Is(err, errTooManyQueries) {
				t.Fatalf("err = %v", err)
			}
		}, map[string]float64{admissionAdmitted: 1, admissionRejected: 1}},
		{"cancelled", func(t *testing.T, a *admission) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := a.acquire(ctx, "a"); !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
		}, map[string]float64{admissionCancelled: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdmission(workExecute, 1, 1, time.Millisecond)
			a.metrics = NewMetrics(nil)
			tc.run(t, a)
			for _, o := range admissionOutcomes {
				if got := testutil.ToFloat64(a.metrics.admission.WithLabelValues(workExecute, o)); got != tc.want[o] {
					t.Errorf("admission{outcome=%q} = %v, want %v", o, got, tc.want[o])
				}
			}
		})
	}
	// New hands Config.Metrics to the Server's admission.
	s, _ := newTestServer(t, &metricsCatalog{}, nil)
	if s.admitExecute.metrics != s.cfg.Metrics || s.auth.metrics != s.cfg.Metrics {
		t.Fatal("Config.Metrics not wired into admission and the interceptors")
	}
}

func TestStatementMetrics(t *testing.T) {
	cases := []struct {
		name   string
		method string
		msg    proto.Message
		fail   bool
		kind   string // "" for none
	}{
		{"query ticket", methodDoGet, &flight.Ticket{Ticket: anyOf(t, &pb.TicketStatementQuery{StatementHandle: []byte("h")})}, false, statementQuery},
		{"prepared query", methodDoGet, &flight.Ticket{Ticket: anyOf(t, &pb.CommandPreparedStatementQuery{})}, false, statementQuery},
		{"catalog listing", methodDoGet, &flight.Ticket{Ticket: anyOf(t, &pb.CommandGetTables{})}, false, ""},
		{"garbage ticket", methodDoGet, &flight.Ticket{Ticket: []byte("\xff\xff")}, false, ""},
		{"update", methodDoPut, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.CommandStatementUpdate{Query: "INSERT INTO t VALUES (1)"})}}, false, statementWrite},
		{"prepared update", methodDoPut, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.CommandPreparedStatementUpdate{})}}, false, statementWrite},
		{"ingest", methodDoPut, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.CommandStatementIngest{Table: "t"})}}, false, statementIngest},
		{"parameter binding", methodDoPut, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.CommandPreparedStatementQuery{})}}, false, ""},
		{"failed query", methodDoGet, &flight.Ticket{Ticket: anyOf(t, &pb.TicketStatementQuery{})}, true, ""},
		{"query ticket on DoPut", methodDoPut, &flight.FlightData{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyOf(t, &pb.TicketStatementQuery{})}}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestServer(t, &metricsCatalog{}, nil)
			m := s.cfg.Metrics
			err := stream(s, &fakeStream{ctx: withToken(aliceToken), msg: tc.msg}, tc.method, func(ss grpc.ServerStream) error {
				var into proto.Message = &flight.Ticket{}
				if tc.method == methodDoPut {
					into = &flight.FlightData{}
				}
				if err := ss.RecvMsg(into); err != nil {
					return err
				}
				if tc.fail {
					return toStatus(backend.ErrQuery)
				}
				return nil
			})
			if (err != nil) != tc.fail {
				t.Fatalf("err = %v", err)
			}
			for _, k := range statementKinds {
				want := 0
				if k == tc.kind {
					want = 1
				}
				if got := histogramCount(t, m.statement.WithLabelValues(k)); got != want {
					t.Errorf("statement{kind=%q} count = %d, want %d", k, got, want)
				}
			}
			if got := histogramCount(t, m.requestTime.WithLabelValues(rpcLabel(tc.method))); got != 1 {
				t.Errorf("request_seconds count = %d, want 1", got)
			}
		})
	}
	// The type names match the Flight SQL protocol's descriptors.
	for name, msg := range map[string]proto.Message{
		typeTicketStatementQuery:    &pb.TicketStatementQuery{},
		typePreparedStatementQuery:  &pb.CommandPreparedStatementQuery{},
		typeStatementUpdate:         &pb.CommandStatementUpdate{},
		typePreparedStatementUpdate: &pb.CommandPreparedStatementUpdate{},
		typeStatementIngest:         &pb.CommandStatementIngest{},
	} {
		if got := string(msg.ProtoReflect().Descriptor().FullName()); got != name {
			t.Errorf("%s is %s", name, got)
		}
	}
}

// histogramCount is the number of observations of a histogram.
func histogramCount(t *testing.T, o prometheus.Observer) int {
	t.Helper()
	h, ok := o.(prometheus.Histogram)
	if !ok {
		t.Fatalf("%T is not a histogram", o)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(h)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return int(mfs[0].GetMetric()[0].GetHistogram().GetSampleCount())
}

func TestMetasrvMetrics(t *testing.T) {
	m := NewMetrics(nil)
	m.ObserveMetasrv(MetasrvResolve, 3*time.Millisecond, nil)
	m.ObserveMetasrv(MetasrvResolve, 5*time.Second, errors.New("unavailable"))
	m.ObserveMetasrv(MetasrvCommit, time.Millisecond, nil)
	m.ObserveMetasrv("tenants/acme", time.Millisecond, nil) // not an op: dropped
	want := map[[2]string]int{{MetasrvResolve, "ok"}: 1, {MetasrvResolve, "error"}: 1, {MetasrvCommit, "ok"}: 1}
	for _, op := range metasrvOps {
		for _, o := range metasrvOutcomes {
			if got := histogramCount(t, m.metasrv.WithLabelValues(op, o)); got != want[[2]string{op, o}] {
				t.Errorf("metasrv{op=%q,outcome=%q} count = %d, want %d", op, o, got, want[[2]string{op, o}])
			}
		}
	}
	var nilMetrics *Metrics
	nilMetrics.ObserveMetasrv(MetasrvList, time.Millisecond, nil)
	nilMetrics.admitted(workExecute, nil)
}

// TestMetricLabelsAreFinite checks every label value against its fixed
// set, over all codes, reasons and methods, and that no label value of a
// registry that served all kinds of calls carries a tenant, a principal,
// SQL, a table or a path.
func TestMetricLabelsAreFinite(t *testing.T) {
	codeNames := map[string]bool{}
	for c := codes.OK; c <= maxCode; c++ {
		codeNames[c.String()] = true
	}
	if len(codeNames) != 17 {
		t.Fatalf("%d code names", len(codeNames))
	}
	for c := codes.Code(0); c < 64; c++ {
		if l := codeLabel(status.Error(c, "x")); !codeNames[l] {
			t.Errorf("code %d: label %q", c, l)
		}
	}
	if l := codeLabel(nil); l != "OK" {
		t.Errorf("nil: label %q", l)
	}
	if l := codeLabel(errors.New("plain")); !codeNames[l] {
		t.Errorf("plain error: label %q", l)
	}
	rpcs := map[string]bool{otherRPC: true}
	for name := range rpcNames {
		rpcs[name] = true
	}
	for _, want := range []string{"Handshake", "ListFlights", "GetFlightInfo", "PollFlightInfo", "GetSchema", "DoGet", "DoPut", "DoExchange", "DoAction", "ListActions", "Check", "Watch"} {
		if !rpcNames[want] {
			t.Errorf("rpc %q missing", want)
		}
	}
	if len(rpcs) > 20 {
		t.Errorf("%d rpc label values", len(rpcs))
	}
	for _, method := range []string{
		methodDoGet, "/grpc.health.v1.Health/Check", "/arrow.flight.protocol.FlightService/Nope",
		"/tenants/acme/DoGet", "/evil.Service/DoGet", "DoGet", "", "/", "/arrow.flight.protocol.FlightService/",
	} {
		if l := rpcLabel(method); !rpcs[l] {
			t.Errorf("rpcLabel(%q) = %q", method, l)
		}
	}
	if rpcLabel("/evil.Service/DoGet") != otherRPC {
		t.Error("a method of another service is labelled by its name")
	}
	reasons := map[string]bool{"": true}
	for _, r := range denialReasons {
		reasons[r] = true
	}
	if len(reasons) != 7 {
		t.Fatalf("denial reasons %v", denialReasons)
	}
	for _, err := range []error{
		nil, errors.New("x"), authz.ErrUnauthenticated, ticket.ErrInvalid, ticket.ErrTooLarge,
		backend.ErrPolicyConflict, backend.ErrForbidden, backend.ErrNotFound, backend.ErrCatalogUnavailable,
		errNotQuerier, errTooManyQueries, tableNotFound("s", "t"), &notFoundError{kind: catalogKind, name: "c"},
		deny(reasonTenant, errors.New("x")),
	} {
		if r := denialReason(err); !reasons[r] {
			t.Errorf("denialReason(%v) = %q", err, r)
		}
	}

	// Drive a server through denials, admissions, statements and metasrv
	// calls, then check every exported label value.
	s, reg := newTestServer(t, &metricsCatalog{visible: map[backend.TableName]bool{}}, nil)
	m := s.cfg.Metrics
	_ = unary(s, withToken("lg_acme_alice_secret"), methodGetFlightInfo, func(context.Context) error { return nil })
	_ = unary(s, withToken(aliceToken), methodGetFlightInfo, func(ctx context.Context) error {
		_, err := s.GetFlightInfoStatement(ctx, query("SELECT secret_column FROM sales.orders_of_acme"), nil)
		return err
	})
	_ = unary(s, withToken(carolToken), "/tenants/acme/users/alice", func(context.Context) error { return nil })
	_ = stream(s, &fakeStream{ctx: withToken(aliceToken), msg: &flight.Ticket{Ticket: anyOf(t, &pb.TicketStatementQuery{})}}, methodDoGet,
		func(ss grpc.ServerStream) error { return ss.RecvMsg(&flight.Ticket{}) })
	rel, _ := s.admitExecute.acquire(context.Background(), "acme")
	rel()
	m.ObserveMetasrv(MetasrvList, time.Millisecond, errors.New("/srv/lake/tenants/acme: boom"))
	m.ObserveDecision(true)
	m.ObserveDecision(false)
	allowed := map[string]map[string]bool{
		"source": setOf([]string{decisionReused, decisionAsked}),
		"rpc":    rpcs, "code": codeNames,
		"reason":  setOf(slices.Concat(denialReasons[:], authnReasonNames())),
		"kind":    setOf(statementKinds[:]),
		"op":      setOf(metasrvOps[:]),
		"work":    setOf(admissionWork[:]),
		"outcome": setOf(slices.Concat(admissionOutcomes[:], metasrvOutcomes[:], speculationOutcomes[:])),
		"le":      nil, // histogram buckets
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 9 {
		t.Errorf("gathered %d families, want 9", len(mfs))
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "lakegate_") {
			t.Errorf("metric %s lacks the lakegate_ prefix", mf.GetName())
		}
		for _, met := range mf.GetMetric() {
			for _, lp := range met.GetLabel() {
				set, ok := allowed[lp.GetName()]
				if !ok {
					t.Errorf("%s: unexpected label %s", mf.GetName(), lp.GetName())
					continue
				}
				if !set[lp.GetValue()] {
					t.Errorf("%s: label %s=%q outside its fixed set", mf.GetName(), lp.GetName(), lp.GetValue())
				}
				for _, secret := range []string{"acme", "alice", "carol", "secret", "orders", "/srv", "SELECT"} {
					if strings.Contains(lp.GetValue(), secret) {
						t.Errorf("%s: label %s=%q carries %q", mf.GetName(), lp.GetName(), lp.GetValue(), secret)
					}
				}
			}
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lakegate_authz_denials_total Requests refused for authentication or authorization, by the reason decided in the gateway (clients get the same answer for every reason).
# TYPE lakegate_authz_denials_total counter
lakegate_authz_denials_total{reason="namespace"} 0
lakegate_authz_denials_total{reason="policy_conflict"} 0
lakegate_authz_denials_total{reason="privilege"} 1
lakegate_authz_denials_total{reason="tenant"} 0
lakegate_authz_denials_total{reason="ticket"} 0
lakegate_authz_denials_total{reason="unauthenticated"} 1
# HELP lakegate_admission_total Requests asking for a permit, by work (execute: running a statement; plan: planning one or listing schemas and tables) and outcome: admitted, rejected (queue deadline passed), cancelled (caller left while queued).
# TYPE lakegate_admission_total counter
lakegate_admission_total{outcome="admitted",work="execute"} 1
lakegate_admission_total{outcome="admitted",work="plan"} 1
lakegate_admission_total{outcome="cancelled",work="execute"} 0
lakegate_admission_total{outcome="cancelled",work="plan"} 0
lakegate_admission_total{outcome="rejected",work="execute"} 0
lakegate_admission_total{outcome="rejected",work="plan"} 0
# HELP lakegate_flight_requests_total Flight and health RPCs served, by method short name and gRPC status code.
# TYPE lakegate_flight_requests_total counter
lakegate_flight_requests_total{code="NotFound",rpc="GetFlightInfo"} 1
lakegate_flight_requests_total{code="OK",rpc="DoGet"} 1
lakegate_flight_requests_total{code="OK",rpc="other"} 1
lakegate_flight_requests_total{code="Unauthenticated",rpc="GetFlightInfo"} 1
`), "lakegate_authz_denials_total", "lakegate_admission_total", "lakegate_flight_requests_total"); err != nil {
		t.Error(err)
	}
}

func setOf(vs []string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// TestNilMetrics checks that a Server without Config.Metrics serves and
// records nothing.
func TestNilMetrics(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{}, func(c *Config) { c.Metrics = nil })
	called := 0
	err := unary(s, withToken(aliceToken), methodGetFlightInfo, func(context.Context) error { called++; return nil })
	if err != nil || called != 1 {
		t.Fatalf("unary: %v, handler called %d times", err, called)
	}
	err = stream(s, &fakeStream{ctx: withToken(aliceToken)}, methodDoGet, func(grpc.ServerStream) error { called++; return nil })
	if err != nil || called != 2 {
		t.Fatalf("stream: %v, handler called %d times", err, called)
	}
	if err := unary(s, withToken("lg_wrong"), methodGetFlightInfo, func(context.Context) error { return nil }); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong token: %v", err)
	}
	mustAcquire(t, s.admitExecute, "acme")()
}

// authnReasonNames are the reason label values of
// lakegate_authn_failures_total.
func authnReasonNames() []string {
	var out []string
	for _, r := range authz.FailureReasons() {
		out = append(out, r.String())
	}
	return out
}
