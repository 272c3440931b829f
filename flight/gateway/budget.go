package gateway

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"lakegate/flight/accesslog"
	"lakegate/flight/backend/duckdb"
)

// StreamBufferBytes is what the gateway counts per running statement
// against the memory budget for its own buffers: the batch being sent and
// the next one being built (backend.MinBatchBytes each, up to twice that
// for large rows), and the two batches a speculation reads ahead.
const StreamBufferBytes = 16 << 20

// defaultMaxConcurrent is flight.Config.MaxConcurrent's default.
const defaultMaxConcurrent = 16

// GatewayBuffers is what a gateway configured by c holds in its own
// bounded buffers, counted against the memory budget before the tenant
// engines: StreamBufferBytes for each statement that may run at once
// (MaxConcurrent) and the access log's memory.
func GatewayBuffers(c Config) int64 {
	n := int64(c.MaxConcurrent)
	if n == 0 {
		n = defaultMaxConcurrent
	}
	b := n * StreamBufferBytes
	if c.AccessLog != nil {
		b += accesslog.DefaultMaxMemory
	}
	return b
}

// memoryBudget is the whole budget c sets (its default when zero).
func (c Config) memoryBudget() int64 {
	if c.MemoryBudget != 0 {
		return c.MemoryBudget
	}
	return duckdb.DefaultMemoryBudget()
}

// EngineBudget is the part of the memory budget left to the tenant
// engines after GatewayBuffers, and an error when it cannot hold one
// tenant at its memory limit.
func (c Config) EngineBudget() (int64, error) {
	if c.MemoryBudget < 0 {
		return 0, fmt.Errorf("MemoryBudget %d is negative", c.MemoryBudget)
	}
	limitText := c.MemoryLimit
	if limitText == "" {
		limitText = duckdb.DefaultMemoryLimit
	}
	limit, err := duckdb.ParseSize(limitText)
	if err != nil {
		limit = 0 // the engine refuses it, naming it
	}
	total, buffers := c.memoryBudget(), GatewayBuffers(c)
	engines := total - buffers
	if need := limit + duckdb.DefaultIdleTenantBytes; engines < need {
		return 0, fmt.Errorf("MemoryBudget %s leaves %s for the tenant engines after the gateway's own buffers (%s), less than one tenant at MemoryLimit %s (%s with its idle cost)",
			sizeText(total), sizeText(max(engines, 0)), sizeText(buffers), limitText, sizeText(need))
	}
	return engines, nil
}

// sizeText renders n bytes in MiB.
func sizeText(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// registerBudgetMetrics exports the engine's memory budget to reg.
func registerBudgetMetrics(reg *prometheus.Registry, e *duckdb.Engine, gatewayBuffers int64) {
	gauge := func(name, help string, f func(duckdb.BudgetStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(e.Budget()) })
	}
	counter := func(name, help string, f func(duckdb.BudgetStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(e.Budget()) })
	}
	reg.MustRegister(
		gauge("lakegate_memory_budget_bytes", "The tenant engines' share of the memory budget (--memory-budget minus the gateway's own buffers).",
			func(s duckdb.BudgetStats) float64 { return float64(s.Budget) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "lakegate_memory_gateway_buffers_bytes",
			Help: "The gateway's own buffers, counted against --memory-budget before the engines."},
			func() float64 { return float64(gatewayBuffers) }),
		gauge("lakegate_memory_reserved_bytes", "What the open tenant engines reserve of their share of the memory budget.",
			func(s duckdb.BudgetStats) float64 { return float64(s.Reserved) }),
		gauge("lakegate_tenant_engines_open", "Open tenant engines.",
			func(s duckdb.BudgetStats) float64 { return float64(s.Open) }),
		gauge("lakegate_tenant_engines_active", "Tenant engines holding more than their idle cost: their memory limit while running statements, their in-memory copies' memory while idle.",
			func(s duckdb.BudgetStats) float64 { return float64(s.Active) }),
		counter("lakegate_tenant_engines_evicted_total", "Idle tenant engines closed to make room in the memory budget.",
			func(s duckdb.BudgetStats) float64 { return float64(s.Evicted) }),
		counter("lakegate_memory_budget_refused_total", "Statements that found no room in the memory budget before their context ended (ResourceExhausted).",
			func(s duckdb.BudgetStats) float64 { return float64(s.Refused) }),
	)
}
