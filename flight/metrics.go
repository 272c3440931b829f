package flight

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"lakegate/authz"
)

// Metric names. Every label value comes from a fixed set (see rpcNames,
// codeNames, denialReasons, admissionOutcomes, statementKinds, metasrvOps,
// metasrvOutcomes): never a tenant, a principal, SQL, a table or a path.
const (
	metricRequests      = "lakegate_flight_requests_total"        // counter {rpc, code}
	metricRequestTime   = "lakegate_flight_request_seconds"       // histogram {rpc}
	metricDenials       = "lakegate_authz_denials_total"          // counter {reason}
	metricAdmission     = "lakegate_admission_total"              // counter {work, outcome}
	metricStatementTime = "lakegate_statement_seconds"            // histogram {kind}
	metricMetasrvTime   = "lakegate_metasrv_request_seconds"      // histogram {op, outcome}
	metricDecisions     = "lakegate_decisions_total"              // counter {source}
	metricSpeculations  = "lakegate_speculations_total"           // counter {outcome}
	metricAuthnFailures = "lakegate_authn_failures_total"         // counter {reason}
	otherRPC            = "other"                                 // rpc label of a method not in rpcNames
	healthServicePrefix = "/grpc.health.v1.Health/"               // health RPCs
	flightServicePrefix = "/arrow.flight.protocol.FlightService/" // Flight RPCs
)

// Admission outcomes (the outcome label of lakegate_admission_total).
const (
	admissionAdmitted  = "admitted"  // got its permits
	admissionRejected  = "rejected"  // the queue deadline passed first
	admissionCancelled = "cancelled" // the caller went away or cancelled while queued
)

var admissionOutcomes = [...]string{admissionAdmitted, admissionRejected, admissionCancelled}

// What admission permits are for (the work label of lakegate_admission_total).
const (
	workExecute = "execute" // running a statement: a query's DoGet, a write
	workPlan    = "plan"    // planning a statement, listing schemas and tables
)

var admissionWork = [...]string{workExecute, workPlan}

// Speculation outcomes (the outcome label of lakegate_speculations_total):
// what became of a prepared query opened before its DoGet (speculate.go).
const (
	speculationClaimed   = "claimed"   // its DoGet streamed it
	speculationUnopened  = "unopened"  // it could not open (no free permit, an error)
	speculationStale     = "stale"     // DoGet's authorization gave another plan, or refused
	speculationExpired   = "expired"   // no DoGet came within the TTL
	speculationYielded   = "yielded"   // a statement needed its permit
	speculationDiscarded = "discarded" // parameters bound again, statement closed, shutdown
)

var speculationOutcomes = [...]string{speculationClaimed, speculationUnopened, speculationStale, speculationExpired, speculationYielded, speculationDiscarded}

// Statement kinds (the kind label of lakegate_statement_seconds).
const (
	statementQuery  = "query"  // DoGet of a statement ticket or a prepared query
	statementWrite  = "write"  // DoPut of an update statement (SQL write, USE) or prepared update
	statementIngest = "ingest" // DoPut bulk ingest
)

var statementKinds = [...]string{statementQuery, statementWrite, statementIngest}

// Operations and outcomes of calls to metasrv (the op and outcome labels of
// lakegate_metasrv_request_seconds); see ObserveMetasrv.
const (
	MetasrvResolve = "resolve"
	MetasrvList    = "list"
	MetasrvCommit  = "commit"
	MetasrvDrop    = "drop"
	// MetasrvGeneration is the generation check before a ticket runs.
	MetasrvGeneration = "generation"
)

var (
	metasrvOps      = [...]string{MetasrvResolve, MetasrvList, MetasrvCommit, MetasrvDrop, MetasrvGeneration}
	metasrvOutcomes = [...]string{"ok", "error"}
)

// rpcNames are the rpc label values: the short names of the methods of the
// services a Server registers (Flight and gRPC health). Anything else is
// otherRPC.
var rpcNames = func() map[string]bool {
	m := map[string]bool{}
	for _, sd := range []grpc.ServiceDesc{pb.FlightService_ServiceDesc, healthpb.Health_ServiceDesc} {
		for _, md := range sd.Methods {
			m[md.MethodName] = true
		}
		for _, st := range sd.Streams {
			m[st.StreamName] = true
		}
	}
	return m
}()

// rpcLabel maps a full gRPC method name to its rpc label value.
func rpcLabel(fullMethod string) string {
	if !strings.HasPrefix(fullMethod, flightServicePrefix) && !strings.HasPrefix(fullMethod, healthServicePrefix) {
		return otherRPC
	}
	name := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	if !rpcNames[name] {
		return otherRPC
	}
	return name
}

// maxCode is the highest gRPC code; codeLabel folds anything above it into
// Unknown, so the code label has exactly maxCode+1 values.
const maxCode = codes.Unauthenticated

// codeLabel is the code label value of err: its gRPC code's name.
func codeLabel(err error) string {
	c := status.Code(err)
	if c > maxCode {
		c = codes.Unknown
	}
	return c.String()
}

// Metrics are a Server's Prometheus instruments. Make them with NewMetrics
// and pass them in Config.Metrics; one Metrics may serve several Servers in
// a process (they then add up). A nil *Metrics records nothing. Every
// method is safe for concurrent use.
type Metrics struct {
	requests    *prometheus.CounterVec
	requestTime *prometheus.HistogramVec
	denials     *prometheus.CounterVec
	admission   *prometheus.CounterVec
	statement   *prometheus.HistogramVec
	metasrv     *prometheus.HistogramVec
	decisions   *prometheus.CounterVec
	speculation *prometheus.CounterVec
	authn       *prometheus.CounterVec
}

// NewMetrics returns instruments registered in reg (which must not already
// hold lakegate_ metrics; it panics otherwise, like MustRegister). A nil reg
// registers them nowhere. Serve reg with promhttp.HandlerFor.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricRequests,
			Help: "Flight and health RPCs served, by method short name and gRPC status code.",
		}, []string{"rpc", "code"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricRequestTime,
			Help:    "Time to serve an RPC, streams included, by method short name.",
			Buckets: prometheus.ExponentialBucketsRange(0.0002, 60, 20),
		}, []string{"rpc"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricDenials,
			Help: "Requests refused for authentication or authorization, by the reason decided in the gateway (clients get the same answer for every reason).",
		}, []string{"reason"}),
		admission: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricAdmission,
			Help: "Requests asking for a permit, by work (execute: running a statement; plan: planning one or listing schemas and tables) and outcome: admitted, rejected (queue deadline passed), cancelled (caller left while queued).",
		}, []string{"work", "outcome"}),
		statement: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricStatementTime,
			Help:    "Time of statements that completed successfully, from the start of their execution RPC (planning or ticket check, admission wait, execution) to the end of the result stream or the write's commit, by kind.",
			Buckets: prometheus.ExponentialBucketsRange(0.0005, 600, 22),
		}, []string{"kind"}),
		metasrv: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricMetasrvTime,
			Help:    "Time of the gateway's calls to metasrv (failover and retries included), by operation and outcome.",
			Buckets: prometheus.ExponentialBucketsRange(0.0002, 10, 18),
		}, []string{"op", "outcome"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricDecisions,
			Help: "Resolve requests by source: reused (a decision cached at the tenant's current generation) or asked (sent to metasrv). Only with a decision window.",
		}, []string{"source"}),
		speculation: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricSpeculations,
			Help: "Prepared queries opened when their parameters were bound, before their DoGet, by outcome: claimed (streamed), unopened (no free permit or an error), stale (re-authorization gave another plan), expired, yielded (a statement needed the permit), discarded (rebound, closed, shutdown).",
		}, []string{"outcome"}),
		authn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricAuthnFailures,
			Help: "Calls and requests refused authentication, by why the credential was refused (authz.FailureReason: unknown_token, malformed, bad_signature, unknown_key, bad_issuer, bad_audience, expired, not_yet_valid, bad_algorithm, bad_claims, unknown_tenant, unknown_user, key_fetch); clients get the same answer for every reason.",
		}, []string{"reason"}),
	}
	// Finite label sets are created up front, so a zero is exported rather
	// than nothing.
	for _, r := range denialReasons {
		m.denials.WithLabelValues(r)
	}
	for _, w := range admissionWork {
		for _, o := range admissionOutcomes {
			m.admission.WithLabelValues(w, o)
		}
	}
	for _, k := range statementKinds {
		m.statement.WithLabelValues(k)
	}
	m.decisions.WithLabelValues(decisionReused)
	m.decisions.WithLabelValues(decisionAsked)
	for _, o := range speculationOutcomes {
		m.speculation.WithLabelValues(o)
	}
	for _, r := range authz.FailureReasons() {
		m.authn.WithLabelValues(r.String())
	}
	for _, op := range metasrvOps {
		for _, o := range metasrvOutcomes {
			m.metasrv.WithLabelValues(op, o)
		}
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.requestTime, m.denials, m.admission, m.statement, m.metasrv, m.decisions, m.speculation)
		// A process serving metasrv too (serve) has one registry and one
		// count of authentication failures for both.
		if err := reg.Register(m.authn); err != nil {
			var are prometheus.AlreadyRegisteredError
			existing, ok := (*prometheus.CounterVec)(nil), false
			if errors.As(err, &are) {
				existing, ok = are.ExistingCollector.(*prometheus.CounterVec)
			}
			if !ok {
				panic(err)
			}
			m.authn = existing
		}
	}
	return m
}

// ObserveMetasrv records one call to metasrv: op is one of MetasrvResolve,
// MetasrvList, MetasrvCommit and MetasrvDrop (anything else is dropped),
// err its result. Its signature matches metacatalog.Options.Observe.
func (m *Metrics) ObserveMetasrv(op string, d time.Duration, err error) {
	if m == nil {
		return
	}
	switch op {
	case MetasrvResolve, MetasrvList, MetasrvCommit, MetasrvDrop, MetasrvGeneration:
	default:
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.metasrv.WithLabelValues(op, outcome).Observe(d.Seconds())
}

// Sources of resolve decisions (the source label of lakegate_decisions_total).
const (
	decisionReused = "reused"
	decisionAsked  = "asked"
)

// ObserveDecision records where one resolve decision came from. Its
// signature matches metacatalog.Options.Reuse.
func (m *Metrics) ObserveDecision(reused bool) {
	if m == nil {
		return
	}
	if reused {
		m.decisions.WithLabelValues(decisionReused).Inc()
	} else {
		m.decisions.WithLabelValues(decisionAsked).Inc()
	}
}

// authnFailed counts a credential refused for reason.
func (m *Metrics) authnFailed(reason authz.FailureReason) {
	if m == nil || reason == authz.ReasonNone {
		return
	}
	m.authn.WithLabelValues(reason.String()).Inc()
}

// speculated records what became of a speculation.
func (m *Metrics) speculated(outcome string) {
	if m == nil {
		return
	}
	m.speculation.WithLabelValues(outcome).Inc()
}

// admitted records an admission outcome for work from acquire's error.
func (m *Metrics) admitted(work string, err error) {
	if m == nil {
		return
	}
	outcome := admissionAdmitted
	switch {
	case errors.Is(err, errTooManyQueries):
		outcome = admissionRejected
	case err != nil:
		outcome = admissionCancelled
	}
	m.admission.WithLabelValues(work, outcome).Inc()
}

// finish records one RPC that returned err after starting at start, and
// the denial it carries, if any.
func (m *Metrics) finish(fullMethod string, start time.Time, err error) {
	rpc := rpcLabel(fullMethod)
	m.requests.WithLabelValues(rpc, codeLabel(err)).Inc()
	m.requestTime.WithLabelValues(rpc).Observe(time.Since(start).Seconds())
	var d *deniedStatus
	if errors.As(err, &d) {
		m.denied(d.reason)
	}
}

// denied counts a denial that does not fail the RPC (a refused session
// option); denials that do are counted from the RPC's error.
func (m *Metrics) denied(reason string) {
	if m == nil {
		return
	}
	m.denials.WithLabelValues(reason).Inc()
}

// unaryInterceptor counts and times a unary RPC served by handler.
func (m *Metrics) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if m == nil {
		return handler(ctx, req)
	}
	start := time.Now()
	resp, err := handler(ctx, req)
	m.finish(info.FullMethod, start, err)
	return resp, err
}

// streamInterceptor counts and times a streaming RPC served by handler, and
// for DoGet and DoPut of a statement also its statement latency.
func (m *Metrics) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if m == nil {
		return handler(srv, ss)
	}
	start := time.Now()
	var ks *kindStream
	switch info.FullMethod {
	case flightServicePrefix + "DoGet", flightServicePrefix + "DoPut":
		ks = &kindStream{ServerStream: ss, doGet: strings.HasSuffix(info.FullMethod, "DoGet")}
		ss = ks
	}
	err := handler(srv, ss)
	m.finish(info.FullMethod, start, err)
	if ks != nil && ks.kind != "" && err == nil {
		m.statement.WithLabelValues(ks.kind).Observe(time.Since(start).Seconds())
	}
	return err
}

// kindStream classifies a DoGet or DoPut by the Flight SQL command of its
// first message (the ticket, or the first FlightData's descriptor).
type kindStream struct {
	grpc.ServerStream
	doGet bool
	seen  bool
	kind  string // a statementKinds value, or "" for anything else
}

func (s *kindStream) RecvMsg(msg any) error {
	err := s.ServerStream.RecvMsg(msg)
	if err != nil || s.seen {
		return err
	}
	s.seen = true
	switch v := msg.(type) {
	case *flight.Ticket:
		if s.doGet {
			s.kind = statementKind(true, anyTypeName(v.GetTicket()))
		}
	case *flight.FlightData:
		if !s.doGet {
			s.kind = statementKind(false, anyTypeName(v.GetFlightDescriptor().GetCmd()))
		}
	}
	return nil
}

// Flight SQL command messages that execute statements.
const (
	flightSQLPackage            = "arrow.flight.protocol.sql."
	typeTicketStatementQuery    = flightSQLPackage + "TicketStatementQuery"
	typePreparedStatementQuery  = flightSQLPackage + "CommandPreparedStatementQuery"
	typeStatementUpdate         = flightSQLPackage + "CommandStatementUpdate"
	typePreparedStatementUpdate = flightSQLPackage + "CommandPreparedStatementUpdate"
	typeStatementIngest         = flightSQLPackage + "CommandStatementIngest"
)

// statementKind maps the message type of a DoGet ticket or DoPut command to
// a statement kind, or "" when it does not execute a statement (catalog
// listings, parameter binding).
func statementKind(doGet bool, typeName string) string {
	switch {
	case doGet && (typeName == typeTicketStatementQuery || typeName == typePreparedStatementQuery):
		return statementQuery
	case !doGet && (typeName == typeStatementUpdate || typeName == typePreparedStatementUpdate):
		return statementWrite
	case !doGet && typeName == typeStatementIngest:
		return statementIngest
	}
	return ""
}

// anyTypeName returns the full message name in a serialized
// google.protobuf.Any (the part of type_url after the last '/'), reading
// only that field; "" if b is not one.
func anyTypeName(b []byte) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			url := string(v)
			return url[strings.LastIndexByte(url, '/')+1:]
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

// instrument hands the Server's instruments (Config.Metrics, possibly nil)
// to the parts that record into them. New calls it before it builds the
// interceptor chain.
func (s *Server) instrument() {
	s.auth.metrics = s.cfg.Metrics
	s.admitExecute.metrics = s.cfg.Metrics
	s.admitPlan.metrics = s.cfg.Metrics
	s.specs.metrics = s.cfg.Metrics
}
