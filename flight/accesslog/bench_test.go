package accesslog

import (
	"context"
	"testing"
	"time"
)

type nopSink struct{}

func (nopSink) Write(context.Context, string, []byte, int) error { return nil }

// BenchmarkRecord measures Record, which every statement pays.
func BenchmarkRecord(b *testing.B) {
	l, err := New(Config{Sink: nopSink{}, MemoryOnly: true, FlushInterval: time.Hour, MaxBatch: 1 << 30, MaxMemory: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close(context.Background()) }()
	e := Event{
		Time: time.Now(), RequestID: "0123456789abcdef", Tenant: "acme", Principal: "alice",
		Gateway: "gw-1", ClientAddr: "10.0.0.1:5000", Kind: "query",
		Statement: "select `a` , `b` from `sales` . `orders` where `id` = ?", Catalog: "lake",
		Read:     []Table{{Schema: "sales", Name: "orders", Version: 7, FilterPolicy: "f", MaskPolicies: []string{"m"}}},
		Decision: Allowed, Rows: 1, Bytes: 100, Duration: time.Millisecond,
	}
	b.ReportAllocs()
	// Flushes (encoding the batch) happen off the clock, every MaxBatch
	// records, as the flush loop would.
	for i := 0; b.Loop(); i++ {
		l.Record(e)
		if i%DefaultMaxBatch == DefaultMaxBatch-1 {
			b.StopTimer()
			l.Flush(context.Background())
			b.StartTimer()
		}
	}
	b.StopTimer()
}

// BenchmarkRecordParallel measures Record under contention, with the flush
// loop encoding every DefaultMaxBatch events meanwhile (its cost is on
// the clock, shared with the recording goroutines).
func BenchmarkRecordParallel(b *testing.B) {
	l, err := New(Config{Sink: nopSink{}, MemoryOnly: true, FlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close(context.Background()) }()
	e := Event{Time: time.Now(), RequestID: "0123456789abcdef", Tenant: "acme", Principal: "alice", Kind: "query", Decision: Allowed}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Record(e)
		}
	})
	b.StopTimer() // Close's final flush is not Record's cost
}

// BenchmarkEncode measures encoding a batch of 10 000 events.
func BenchmarkEncode(b *testing.B) {
	events := make([]Event, 10_000)
	for i := range events {
		events[i] = Event{Time: time.Now(), RequestID: "0123456789abcdef", Tenant: "acme", Principal: "alice",
			Kind: "query", Statement: "select * from `t` where `a` = ?", Decision: Allowed,
			Read: []Table{{Schema: "s", Name: "t", Version: 3}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(events); err != nil {
			b.Fatal(err)
		}
	}
}
