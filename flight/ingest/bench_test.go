package ingest_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/ingest"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// peakAllocator tracks the largest number of bytes it had out at once.
type peakAllocator struct {
	memory.Allocator
	cur, peak atomic.Int64
}

func (a *peakAllocator) add(n int64) {
	c := a.cur.Add(n)
	for p := a.peak.Load(); c > p && !a.peak.CompareAndSwap(p, c); p = a.peak.Load() {
	}
}

func (a *peakAllocator) Allocate(size int) []byte {
	a.add(int64(size))
	return a.Allocator.Allocate(size)
}

func (a *peakAllocator) Reallocate(size int, b []byte) []byte {
	a.add(int64(size - len(b)))
	return a.Allocator.Reallocate(size, b)
}

func (a *peakAllocator) Free(b []byte) {
	a.add(-int64(len(b)))
	a.Allocator.Free(b)
}

// heapPeak samples the live Go heap (as of the last GC, so the peak is
// approximate: it misses what was freed between collections) every
// millisecond until stopped and returns the largest sample.
func heapPeak() (stop func() uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var (
		peak uint64
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak }
}

var narrow = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64},
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

// genReader yields rows [0, rows) of narrow in batches of batch rows,
// building each batch only when asked, so the data set is never in memory.
type genReader struct {
	array.RecordReader
	rows, batch, next int
	cur               arrow.RecordBatch
	bytes             int64 // Arrow buffer bytes yielded so far
}

func (g *genReader) Schema() *arrow.Schema { return narrow }
func (g *genReader) Err() error            { return nil }
func (g *genReader) Release() {
	if g.cur != nil {
		g.cur.Release()
	}
}
func (g *genReader) RecordBatch() arrow.RecordBatch { return g.cur }
func (g *genReader) Next() bool {
	g.Release()
	g.cur = nil
	if g.next >= g.rows {
		return false
	}
	g.cur = narrowBatch(g.next, min(g.batch, g.rows-g.next))
	g.next += int(g.cur.NumRows())
	for _, c := range g.cur.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				g.bytes += int64(buf.Len())
			}
		}
	}
	return true
}

func narrowBatch(start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, narrow)
	defer b.Release()
	ids, xs := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Float64Builder)
	names, ats := b.Field(2).(*array.StringBuilder), b.Field(3).(*array.TimestampBuilder)
	for i := start; i < start+n; i++ {
		ids.Append(int64(i))
		xs.Append(float64(i) * 0.37)
		names.Append(fmt.Sprintf("customer-%d", i%50000))
		ats.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000))
	}
	return b.NewRecordBatch()
}

// TestMemoryBounded writes 2M rows × 4 columns (in 64Ki-row batches,
// generated on the fly) to a local store and checks that the encoder's
// Arrow memory stays bounded by about one row group, not by the data: the
// peak is the same for 2M rows as for 0.5M, and far below the data size.
//
// Measured (arrow-go v18.8.0, go1.26, 2 CPUs shared with other builds),
// RowGroupRows 256Ki, batches of 64Ki rows, delta encodings chosen for the
// id, name and timestamp columns:
//
//	rows   Arrow data  file      Arrow peak  live-heap peak above baseline
//	0.5M   21.1 MiB    1.0 MiB   1.0 MiB     9 MiB
//	2M     84.6 MiB    3.6 MiB   1.0 MiB     20 MiB
//
// The Arrow peak (encoder buffers from Config.Allocator) is exactly flat.
// The live heap (sampled from /gc/heap/live:bytes, so approximate) is
// mostly zstd encoder state and the one batch in flight, not the data
// written. Only the Arrow peak is asserted.
func TestMemoryBounded(t *testing.T) {
	run := func(rows int) (arrowPeak, heap uint64, data int64) {
		st := stagetest.Local(t).Open(t, "acme")
		mem := &peakAllocator{Allocator: memory.NewGoAllocator()}
		cfg := newConfig(t, st, narrow)
		cfg.RowGroupRows, cfg.Allocator = 256<<10, mem
		g := &genReader{rows: rows, batch: 64 << 10}
		defer g.Release()
		runtime.GC()
		base := heapNow()
		stop := heapPeak()
		files, n, err := ingest.Copy(t.Context(), cfg, g)
		heap = stop() - base
		if err != nil || n != int64(rows) {
			t.Fatalf("%d rows, %v", n, err)
		}
		var size int64
		for _, f := range files {
			size += f.Size
		}
		t.Logf("%d rows: %.1f MiB Arrow data -> %d file(s), %.1f MiB; Arrow peak %.1f MiB, heap peak %.1f MiB",
			rows, mib(g.bytes), len(files), mib(size), mib(mem.peak.Load()), mib(int64(heap)))
		return uint64(mem.peak.Load()), heap, g.bytes
	}
	run(64 << 10) // warm up: one-time allocations (zstd encoders, pools)
	small, smallHeap, _ := run(512 << 10)
	big, bigHeap, data := run(2 << 20)
	_, _ = smallHeap, bigHeap
	if big > uint64(data)/3 {
		t.Errorf("Arrow peak %.1f MiB for %.1f MiB of data: not bounded by a row group", mib(int64(big)), mib(data))
	}
	if big > 2*small+(4<<20) {
		t.Errorf("Arrow peak grows with the data: %.1f MiB for 0.5M rows, %.1f MiB for 2M", mib(int64(small)), mib(int64(big)))
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// BenchmarkCopy writes 1M rows × 4 columns (int64, float64, string,
// timestamp), pre-built as 16 batches of 64Ki rows, to a local store, with
// the writer as configured by default ("new") and, alternating with it
// round by round in the same run, the writer as it was before its encoding
// was chosen by measurement ("legacy": a dictionary tried on every column,
// zstd's default level, one column after the other). Bytes per op are the
// Arrow buffer bytes of one write, so MB/s is Arrow input throughput of
// both writers together. It reports each writer's median MB/s and CPU
// seconds per write, the ratio new ÷ legacy of throughput per round (min,
// median, max) and of CPU, each writer's file size, and the new writer's
// Arrow memory peak and Go heap peak above the pre-built batches.
func BenchmarkCopy(b *testing.B) {
	const rows, batch = 1 << 20, 64 << 10
	var (
		recs      []arrow.RecordBatch
		dataBytes int64
	)
	for i := 0; i < rows; i += batch {
		rec := narrowBatch(i, batch)
		defer rec.Release()
		recs = append(recs, rec)
		for _, c := range rec.Columns() {
			for _, buf := range c.Data().Buffers() {
				if buf != nil {
					dataBytes += int64(buf.Len())
				}
			}
		}
	}
	root := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: b.TempDir()}}
	child, err := root.ForTenant("acme")
	if err != nil {
		b.Fatal(err)
	}
	st, err := stage.OpenLocal(child)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.SetBytes(2 * dataBytes)
	type result struct {
		mbps, cpu []float64
		file      int64
	}
	var (
		res             [2]result // 0 legacy, 1 new
		ratios          []float64
		arrowPeak, heap int64
	)
	write := func(legacy bool) (mbps, cpu float64, size int64) {
		b.StopTimer()
		mem := &peakAllocator{Allocator: memory.NewGoAllocator()}
		cfg := newConfig(b, st, narrow)
		cfg.Allocator = mem
		if legacy {
			cfg = ingest.Legacy(cfg)
		}
		r, err := array.NewRecordReader(narrow, recs)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		base := heapNow()
		b.StartTimer()
		stop := heapPeak()
		cpu0, start := cpuSeconds(), time.Now()
		files, _, err := ingest.Copy(b.Context(), cfg, r)
		el, cpu := time.Since(start), cpuSeconds()-cpu0
		h := stop()
		if err != nil {
			b.Fatal(err)
		}
		r.Release()
		if !legacy {
			arrowPeak, heap = max(arrowPeak, mem.peak.Load()), max(heap, int64(h)-int64(base))
		}
		for _, f := range files {
			size += f.Size
		}
		if err := st.Delete(b.Context(), keys(files)...); err != nil {
			b.Fatal(err)
		}
		return float64(dataBytes) / 1e6 / el.Seconds(), cpu, size
	}
	round := 0
	for b.Loop() {
		var mbps [2]float64
		for k := range 2 {
			w := (round + k) % 2 // alternate which writer goes first
			m, cpu, size := write(w == 0)
			mbps[w] = m
			res[w].mbps, res[w].cpu, res[w].file = append(res[w].mbps, m), append(res[w].cpu, cpu), size
		}
		ratios = append(ratios, mbps[1]/mbps[0])
		round++
	}
	lo, med, hi := spread(ratios)
	b.ReportMetric(lo, "x-legacy-min")
	b.ReportMetric(med, "x-legacy-med")
	b.ReportMetric(hi, "x-legacy-max")
	for w, name := range []string{"legacy", "new"} {
		_, m, _ := spread(res[w].mbps)
		_, c, _ := spread(res[w].cpu)
		b.ReportMetric(m, name+"-MB/s")
		b.ReportMetric(c, name+"-cpu-s")
		b.ReportMetric(mib(res[w].file), name+"-file-MiB")
	}
	_, cl, _ := spread(res[0].cpu)
	_, cn, _ := spread(res[1].cpu)
	b.ReportMetric(cn/cl, "cpu-x-legacy")
	b.ReportMetric(mib(arrowPeak), "arrow-peak-MiB")
	b.ReportMetric(mib(heap), "heap-peak-MiB")
}

// spread returns the minimum, median and maximum of xs (zeros if empty).
func spread(xs []float64) (lo, med, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[0], s[len(s)/2], s[len(s)-1]
}

// cpuSeconds is the CPU time the process has used, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func heapNow() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkCopyCodecs writes the rows of BenchmarkCopy with each codec a
// table may choose, and reports the CPU seconds and the file size of one
// write.
func BenchmarkCopyCodecs(b *testing.B) {
	const rows, batch = 1 << 20, 64 << 10
	var recs []arrow.RecordBatch
	for i := 0; i < rows; i += batch {
		rec := narrowBatch(i, batch)
		defer rec.Release()
		recs = append(recs, rec)
	}
	root := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: b.TempDir()}}
	child, err := root.ForTenant("acme")
	if err != nil {
		b.Fatal(err)
	}
	st, err := stage.OpenLocal(child)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, codec := range []ingest.Codec{ingest.CodecZstd, ingest.CodecSnappy, ingest.CodecUncompressed} {
		b.Run(string(codec), func(b *testing.B) {
			var cpu []float64
			var size int64
			for b.Loop() {
				cfg := newConfig(b, st, narrow)
				cfg.Codec = codec
				r, err := array.NewRecordReader(narrow, recs)
				if err != nil {
					b.Fatal(err)
				}
				cpu0 := cpuSeconds()
				files, _, err := ingest.Copy(b.Context(), cfg, r)
				cpu = append(cpu, cpuSeconds()-cpu0)
				r.Release()
				if err != nil {
					b.Fatal(err)
				}
				size = 0
				for _, f := range files {
					size += f.Size
				}
				if err := st.Delete(b.Context(), keys(files)...); err != nil {
					b.Fatal(err)
				}
			}
			_, med, _ := spread(cpu)
			b.ReportMetric(med, "cpu-s")
			b.ReportMetric(mib(size), "file-MiB")
		})
	}
}
