package duckdb

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"lakegate/flight/backend"
	"lakegate/stage"
)

// BenchmarkReadPool10M measures the read path's buffer pool: SELECT * of a
// 10M-row, 4-column Parquet table (BIGINT, DOUBLE, BIGINT, BIGINT) through
// Execute, each batch written as Arrow IPC (as the Flight server does) and
// released, with the pool on and off in alternating rounds of one
// iteration. It reports the pooled rounds' throughput over the unpooled
// ones' (x-unpooled-min/-med/-max, per pair of rounds), each side's median
// MB/s, and the process's CPU time (user + system, DuckDB's threads
// included) of a pooled round over an unpooled one's (cpu-x-unpooled-*:
// below 1 is less CPU; steadier than throughput on a loaded machine). Run
// with -benchtime Nx for N pairs of rounds (≥ 5).
func BenchmarkReadPool10M(b *testing.B) {
	if testing.Short() {
		b.Skip("writes and scans a 10M-row table; skipped under -short")
	}
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Root = root
	cfg.NoVerify = true
	cfg.Logger = slog.New(slog.DiscardHandler)
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	seg, err := stage.NewSegment()
	if err != nil {
		b.Fatal(err)
	}
	key, err := stage.TableFileKey("t", seg, 0)
	if err != nil {
		b.Fatal(err)
	}
	path, err := e.WriteFile(ctx, "acme", key, `SELECT range AS id, range * 0.5 AS amount,
		range % 1000 AS bucket, (range * 7) % 100003 AS other FROM range(10000000)`)
	if err != nil {
		b.Fatal(err)
	}
	rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "t@1", Paths: []string{path}}})
	if err != nil {
		b.Fatal(err)
	}
	sql := fmt.Sprintf(`SELECT * FROM "%s"."%s"`, rels[0].Schema, rels[0].Name)
	round := func(limit int) (mbps, cpu float64) {
		e.reads.limit = limit // no reader is open between rounds
		cpu0 := cpuSeconds(b)
		start := time.Now()
		rr, err := e.Execute(ctx, "acme", sql, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer rr.Release()
		w := ipc.NewWriter(io.Discard, ipc.WithSchema(rr.Schema()))
		var bytes int64
		for rr.Next() {
			rec := rr.RecordBatch()
			bytes += recordBytes(rec)
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		return float64(bytes) / 1e6 / time.Since(start).Seconds(), cpuSeconds(b) - cpu0
	}
	round(readPoolBytes) // warm-up: DuckDB's file cache, the Go heap
	var on, off, ratios, cpuRatios []float64
	i := 0
	for b.Loop() {
		// Alternate which side goes first, so neither always follows the other.
		var p, u, pc, uc float64
		if i%2 == 0 {
			p, pc = round(readPoolBytes)
			u, uc = round(0)
		} else {
			u, uc = round(0)
			p, pc = round(readPoolBytes)
		}
		i++
		on, off, ratios, cpuRatios = append(on, p), append(off, u), append(ratios, p/u), append(cpuRatios, pc/uc)
	}
	for _, s := range [][]float64{on, off, ratios, cpuRatios} {
		slices.Sort(s)
	}
	b.ReportMetric(on[len(on)/2], "pooled-MB/s")
	b.ReportMetric(off[len(off)/2], "unpooled-MB/s")
	b.ReportMetric(ratios[0], "x-unpooled-min")
	b.ReportMetric(ratios[len(ratios)/2], "x-unpooled-med")
	b.ReportMetric(ratios[len(ratios)-1], "x-unpooled-max")
	b.ReportMetric(cpuRatios[0], "cpu-x-unpooled-min")
	b.ReportMetric(cpuRatios[len(cpuRatios)/2], "cpu-x-unpooled-med")
	b.ReportMetric(cpuRatios[len(cpuRatios)-1], "cpu-x-unpooled-max")
}

// cpuSeconds is the process's CPU time so far, user and system.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
