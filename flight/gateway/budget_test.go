package gateway_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"lakegate/flight/gateway"
)

// TestMemoryBudgetShares: the engines get the budget minus the gateway's
// own buffers (a stream buffer per statement that may run at once, and
// the access log's memory), and the metrics say so.
func TestMemoryBudgetShares(t *testing.T) {
	ms := startFakeMetasrv(t, http.StatusOK)
	cfg, _ := baseConfig(t, ms.url)
	cfg.MemoryBudget, cfg.MaxConcurrent, cfg.MaxConcurrentPerTenant = 4<<30, 8, 4
	cfg.Registry = prometheus.NewRegistry()
	g, err := gateway.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown(context.Background())
	buffers := int64(8 * gateway.StreamBufferBytes)
	if got := gateway.GatewayBuffers(cfg); got != buffers {
		t.Fatalf("GatewayBuffers = %d, want %d", got, buffers)
	}
	if st := g.Engine().Budget(); st.Budget != 4<<30-buffers || st.Reserved != 0 {
		t.Fatalf("engine budget %+v, want %d", st, 4<<30-buffers)
	}
	families, err := cfg.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if m := f.GetMetric(); len(m) == 1 && m[0].GetGauge() != nil {
			got[f.GetName()] = m[0].GetGauge().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"lakegate_memory_budget_bytes":          float64(4<<30 - buffers),
		"lakegate_memory_gateway_buffers_bytes": float64(buffers),
		"lakegate_memory_reserved_bytes":        0,
		"lakegate_tenant_engines_open":          0,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
}
