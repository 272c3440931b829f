package metasrv

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lakegate/authz"
	"lakegate/metasrv/raftnode"
)

// authnFailed counts a credential refused for reason.
func (m *metrics) authnFailed(reason authz.FailureReason) {
	if reason != authz.ReasonNone {
		m.authn.WithLabelValues(reason.String()).Inc()
	}
}

// Metric names (all in the Server's own registry, see MetricsHandler).
// Label values are finite by construction: a route is the ServeMux pattern
// that matched (never the request path, so never a metalake, user or
// object name), a code is the HTTP status, an outcome and a state are
// fixed enums.
const (
	metricHTTPRequests     = "metasrv_http_requests_total"             // counter {route, code}
	metricHTTPDuration     = "metasrv_http_request_duration_seconds"   // histogram {route}
	metricProposalDuration = "metasrv_proposal_duration_seconds"       // histogram {outcome}: propose → committed and applied on the leader
	metricFSMApplyDuration = "metasrv_fsm_apply_duration_seconds"      // histogram: one FSM.Apply
	metricBatchSize        = "metasrv_proposal_batch_size"             // histogram: proposals per Raft entry (leader)
	metricLogWriteDuration = "metasrv_raft_log_write_duration_seconds" // histogram: one write of entries to the Raft log store
	metricLeaderChanges    = "metasrv_raft_leader_changes_total"       // counter: new (leader, term) observed
	metricRaftState        = "metasrv_raft_state"                      // gauge {state}: 1 for the current state
	metricRaftTerm         = "metasrv_raft_term"
	metricRaftLastIndex    = "metasrv_raft_last_index"
	metricRaftCommitIndex  = "metasrv_raft_commit_index"
	metricRaftAppliedIndex = "metasrv_raft_applied_index"
	metricRaftServers      = "metasrv_raft_servers"             // gauge {suffrage}
	metricMetalakes        = "metasrv_metalakes"                // gauge: number of metalakes
	metricAuditWriteErrors = "metasrv_audit_write_errors_total" // counter: failed writes to audit.jsonl
	metricAuthnFailures    = "lakegate_authn_failures_total"    // counter {reason}: authz.FailureReason
)

// Proposal outcomes (the outcome label of metasrv_proposal_duration_seconds).
const (
	outcomeCommitted = "committed" // applied and accepted by the FSM
	outcomeRejected  = "rejected"  // committed, but the FSM rejected it
	outcomeFailed    = "failed"    // not committed, or outcome unknown
)

// unmatchedRoute is the route label of a request no pattern matched
// (including ServeMux redirects).
const unmatchedRoute = "unmatched"

// raftStates are the values of the state label; exactly one is 1.
var raftStates = [...]string{"Follower", "Candidate", "Leader", "Shutdown"}

// metrics are one Server's instruments, registered in its own registry.
type metrics struct {
	reg           *prometheus.Registry
	httpRequests  *prometheus.CounterVec
	httpDuration  *prometheus.HistogramVec
	proposal      *prometheus.HistogramVec
	fsmApply      prometheus.Histogram
	batchSize     prometheus.Histogram
	logWrite      prometheus.Histogram
	leaderChanges prometheus.Counter
	// authn is registered with the node's collectors (New).
	authn *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricHTTPRequests,
			Help: "REST and cluster requests served, by matched route pattern and HTTP status code.",
		}, []string{"route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricHTTPDuration,
			Help:    "Time to serve a request (including forwarding to the leader), by matched route pattern.",
			Buckets: prometheus.ExponentialBucketsRange(0.0005, 10, 16),
		}, []string{"route"}),
		proposal: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricProposalDuration,
			Help:    "Leader-side time from proposing an entry to its commit and application to the FSM, by outcome.",
			Buckets: prometheus.ExponentialBucketsRange(0.0005, 10, 16),
		}, []string{"outcome"}),
		fsmApply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    metricFSMApplyDuration,
			Help:    "Time to apply one log entry to the metasrv FSM.",
			Buckets: prometheus.ExponentialBucketsRange(0.000005, 1, 16),
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    metricBatchSize,
			Help:    "Proposals coalesced into one Raft log entry by the leader.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		logWrite: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: metricLogWriteDuration,
			Help: "Time to write entries to this node's Raft log store (one bbolt transaction and its two fdatasyncs, or with --raft-log wal one append and fsync); every commit waits for one on the leader and then one on a follower.",
			// 50 µs to 10 s: a fast NVMe sync up to a stalled disk.
			Buckets: prometheus.ExponentialBucketsRange(0.00005, 10, 22),
		}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metricLeaderChanges,
			Help: "Leadership changes this node observed (a new leader or a new term with a known leader).",
		}),
	}
	// Name, help and labels are flight's (flight.NewMetrics) to the letter:
	// under serve both register into one registry and share the counter.
	m.authn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricAuthnFailures,
		Help: "Calls and requests refused authentication, by why the credential was refused (authz.FailureReason: unknown_token, malformed, bad_signature, unknown_key, bad_issuer, bad_audience, expired, not_yet_valid, bad_algorithm, bad_claims, unknown_tenant, unknown_user, key_fetch); clients get the same answer for every reason.",
	}, []string{"reason"})
	for _, r := range authz.FailureReasons() {
		m.authn.WithLabelValues(r.String())
	}
	for _, v := range []string{outcomeCommitted, outcomeRejected, outcomeFailed} {
		m.proposal.WithLabelValues(v)
	}
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.proposal, m.fsmApply, m.batchSize, m.logWrite, m.leaderChanges,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// raftCollector reads the node's Status on every scrape.
type raftCollector struct {
	node    *raftnode.Node
	fsm     *FSM
	state   *prometheus.Desc
	term    *prometheus.Desc
	last    *prometheus.Desc
	commit  *prometheus.Desc
	applied *prometheus.Desc
	servers *prometheus.Desc
	lakes   *prometheus.Desc
}

func newRaftCollector(node *raftnode.Node, fsm *FSM) *raftCollector {
	return &raftCollector{
		node:    node,
		fsm:     fsm,
		state:   prometheus.NewDesc(metricRaftState, "Raft state of this node: 1 for the current state, 0 for the others.", []string{"state"}, nil),
		term:    prometheus.NewDesc(metricRaftTerm, "Current Raft term.", nil, nil),
		last:    prometheus.NewDesc(metricRaftLastIndex, "Index of the last entry in this node's Raft log.", nil, nil),
		commit:  prometheus.NewDesc(metricRaftCommitIndex, "Highest Raft index known to be committed.", nil, nil),
		applied: prometheus.NewDesc(metricRaftAppliedIndex, "Highest Raft index applied to the state machine on this node.", nil, nil),
		servers: prometheus.NewDesc(metricRaftServers, "Servers in the Raft configuration, by suffrage.", []string{"suffrage"}, nil),
		lakes:   prometheus.NewDesc(metricMetalakes, "Metalakes in the replicated state on this node.", nil, nil),
	}
}

func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.state, c.term, c.last, c.commit, c.applied, c.servers, c.lakes} {
		ch <- d
	}
}

func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.node.Status()
	for _, s := range raftStates {
		v := 0.0
		if s == st.State {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, s)
	}
	ch <- prometheus.MustNewConstMetric(c.term, prometheus.GaugeValue, float64(st.Term))
	ch <- prometheus.MustNewConstMetric(c.last, prometheus.GaugeValue, float64(st.LastIndex))
	ch <- prometheus.MustNewConstMetric(c.commit, prometheus.GaugeValue, float64(st.CommitIndex))
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(st.AppliedIndex))
	bySuffrage := map[string]int{"Voter": 0, "Nonvoter": 0, "Staging": 0}
	for _, sv := range st.Servers {
		if _, ok := bySuffrage[sv.Suffrage]; ok {
			bySuffrage[sv.Suffrage]++
		}
	}
	for k, v := range bySuffrage {
		ch <- prometheus.MustNewConstMetric(c.servers, prometheus.GaugeValue, float64(v), k)
	}
	ch <- prometheus.MustNewConstMetric(c.lakes, prometheus.GaugeValue, float64(len(c.fsm.st.Load().lakes)))
}

// MetricsHandler serves the node's metrics in the Prometheus exposition
// format, from the Server's own registry (nothing is registered globally).
// Mount it on a separate listener: it is unauthenticated, and its label
// values never carry a metalake, user, object name or SQL.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{Registry: s.metrics.reg})
}

// MetricsRegistry returns the Server's registry, for callers that add their
// own collectors or gather in process.
func (s *Server) MetricsRegistry() *prometheus.Registry { return s.metrics.reg }

// observeProposal records the duration of one Propose call.
func (m *metrics) observeProposal(d time.Duration, index uint64, err error) {
	outcome := outcomeCommitted
	switch {
	case err != nil && index != 0:
		outcome = outcomeRejected
	case err != nil:
		outcome = outcomeFailed
	}
	m.proposal.WithLabelValues(outcome).Observe(d.Seconds())
}

// instrument wraps h, counting requests by the ServeMux pattern that
// matched (ServeMux sets r.Pattern on the request it is handed) and the
// status code.
func (m *metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		route := r.Pattern
		if route == "" {
			route = unmatchedRoute
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		m.httpRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
		m.httpDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusRecorder remembers the first final status code written.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchLeader counts leadership changes until stop is closed.
func (s *Server) watchLeader(stop <-chan struct{}) {
	var lastID string
	var lastTerm uint64
	for {
		ch := s.node.LeaderCh()
		if l, ok := s.node.Leader(); ok {
			term := s.node.Status().Term
			if l.ID != lastID || term != lastTerm {
				lastID, lastTerm = l.ID, term
				s.metrics.leaderChanges.Inc()
			}
		}
		select {
		case <-ch:
		case <-stop:
			return
		}
	}
}
