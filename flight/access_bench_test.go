package flight

import (
	"context"
	"testing"
	"time"

	"lakegate/flight/accesslog"
)

// discardLog is an AccessLog that admits everyone and keeps nothing: what
// the Server itself costs per event.
type discardLog struct{}

func (discardLog) Admit(string) error     { return nil }
func (discardLog) Record(accesslog.Event) {}

// encodingSink takes every flushed batch and drops it: the log's own
// batching, encoding and flushing are paid, the stage's write is not.
type encodingSink struct{}

func (encodingSink) Write(context.Context, string, []byte, int) error { return nil }

// BenchmarkPointQueryAccessLog measures a point query through a Flight
// SQL client, without an access log ("off"), with one that keeps nothing
// ("discard": the Server's own cost per event) and with the real log
// flushing every 100 ms to a sink that drops the Parquet files ("log").
// Compare the variants of one run: off is the baseline.
func BenchmarkPointQueryAccessLog(b *testing.B) {
	for _, bc := range []struct {
		name string
		log  func(b *testing.B) AccessLog
	}{
		{"off", func(*testing.B) AccessLog { return nil }},
		{"discard", func(*testing.B) AccessLog { return discardLog{} }},
		{"log", func(b *testing.B) AccessLog {
			l, err := accesslog.New(accesslog.Config{Sink: encodingSink{}, MemoryOnly: true, FlushInterval: 100 * time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = l.Close(context.Background()) })
			return l
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			log := bc.log(b)
			l := newLake(b, func(c *Config) { c.AccessLog = log })
			cl := l.client(b)
			seedOrders(b, cl)
			ctx := bearerCtx(aliceToken)
			b.ResetTimer()
			for b.Loop() {
				if _, err := runQuery(ctx, cl, "SELECT amount FROM sales.orders WHERE id = 1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
