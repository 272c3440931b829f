package accesslog

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names.
const (
	MetricRecorded      = "lakegate_access_events_recorded_total"
	MetricWritten       = "lakegate_access_events_written_total"
	MetricWrittenBytes  = "lakegate_access_log_written_bytes_total"
	MetricFlushFailures = "lakegate_access_log_flush_failures_total"
	MetricSpoolBytes    = "lakegate_access_log_spool_bytes"
	MetricMemoryBytes   = "lakegate_access_log_memory_bytes"
	MetricRefused       = "lakegate_access_log_refused_total"
	MetricDropped       = "lakegate_access_events_dropped_total"
)

// Metrics exports a Log's Stats to Prometheus. The instruments read the
// Log's counters when scraped, so Record pays nothing for them.
type Metrics struct {
	mu  sync.Mutex
	log *Log
}

// NewMetrics registers the access log's instruments in reg (it panics if
// they are registered already, like MustRegister; a nil reg registers them
// nowhere). Pass the result as Config.Metrics; until a Log is attached the
// instruments read zero.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	stat := func(f func(Stats) int64) func() float64 {
		return func() float64 {
			m.mu.Lock()
			l := m.log
			m.mu.Unlock()
			if l == nil {
				return 0
			}
			return float64(f(l.Stats()))
		}
	}
	counter := func(name, help string, f func(Stats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, stat(f))
	}
	gauge := func(name, help string, f func(Stats) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, stat(f))
	}
	cs := []prometheus.Collector{
		counter(MetricRecorded, "Access events recorded (kept for writing).", func(s Stats) int64 { return s.Recorded }),
		counter(MetricWritten, "Access events written to the tenants' stages.", func(s Stats) int64 { return s.Written }),
		counter(MetricWrittenBytes, "Bytes of access-log Parquet files written to the tenants' stages.", func(s Stats) int64 { return s.WrittenBytes }),
		counter(MetricFlushFailures, "Access-log batches the stage refused (kept and retried).", func(s Stats) int64 { return s.FlushFailures }),
		gauge(MetricSpoolBytes, "Bytes of access-log batches in the local spool, waiting for the stage.", func(s Stats) int64 { return s.SpoolBytes }),
		gauge(MetricMemoryBytes, "Bytes of access events and batches held in memory.", func(s Stats) int64 { return s.MemoryBytes }),
		counter(MetricRefused, "Statements refused because the access log could not keep their events (fail closed).", func(s Stats) int64 { return s.Refused }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: MetricDropped, Help: "Access events not kept, by reason: fail_open (a fail-open tenant's events while the log was full), lost (after close, or neither written nor spooled at close).",
			ConstLabels: prometheus.Labels{"reason": "fail_open"},
		}, stat(func(s Stats) int64 { return s.FailOpenDrops })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: MetricDropped, Help: "Access events not kept, by reason: fail_open (a fail-open tenant's events while the log was full), lost (after close, or neither written nor spooled at close).",
			ConstLabels: prometheus.Labels{"reason": "lost"},
		}, stat(func(s Stats) int64 { return s.Lost })),
	}
	if reg != nil {
		for _, c := range cs {
			reg.MustRegister(c)
		}
	}
	return m
}

// attach makes m read l.
func (m *Metrics) attach(l *Log) {
	m.mu.Lock()
	m.log = l
	m.mu.Unlock()
}
