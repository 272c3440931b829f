package accesslog

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsExportStats(t *testing.T) {
	reg := prometheus.NewRegistry()
	sink := newFakeSink()
	l := newLog(t, Config{Sink: sink, SpoolDir: t.TempDir(), Metrics: NewMetrics(reg)})
	l.Record(ev("acme", "a0"))
	l.Record(ev("acme", "a1"))
	l.Flush(context.Background())
	sink.setFailing(true)
	l.Record(ev("acme", "a2"))
	l.Flush(context.Background())

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, lp := range m.GetLabel() {
				name += "{" + lp.GetName() + "=" + lp.GetValue() + "}"
			}
			if c := m.GetCounter(); c != nil {
				got[name] = c.GetValue()
			} else {
				got[name] = m.GetGauge().GetValue()
			}
		}
	}
	for name, want := range map[string]float64{
		MetricRecorded:                       3,
		MetricWritten:                        2,
		MetricFlushFailures:                  1,
		MetricRefused:                        0,
		MetricMemoryBytes:                    0,
		MetricDropped + "{reason=fail_open}": 0,
		MetricDropped + "{reason=lost}":      0,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (exported %v), want %v", name, v, ok, want)
		}
	}
	for _, name := range []string{MetricWrittenBytes, MetricSpoolBytes} {
		if got[name] <= 0 {
			t.Errorf("%s = %v, want > 0", name, got[name])
		}
	}
}
