package flight

import (
	"testing"

	"lakegate/flight/accesslog"
)

// discardLog is an AccessLog that admits everyone and keeps nothing: what
// the Server itself costs per event.
type discardLog struct{}

func (discardLog) Admit(string) error     { return nil }
func (discardLog) Record(accesslog.Event) {}

// BenchmarkPointQueryAccessLog measures a point query through a Flight
// SQL client, without an access log and with one that keeps nothing.
func BenchmarkPointQueryAccessLog(b *testing.B) {
	for _, bc := range []struct {
		name string
		log  AccessLog
	}{{"off", nil}, {"on", discardLog{}}} {
		b.Run(bc.name, func(b *testing.B) {
			l := newLake(b, func(c *Config) { c.AccessLog = bc.log })
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
