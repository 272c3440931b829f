package accesslog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"lakegate/flight/accesslog"
)

// printSink stands in for the gateway's Sink, which writes the file into
// the tenant's stage and commits it as the next version of
// system.access_events.
type printSink struct{}

func (printSink) Write(_ context.Context, tenant string, file []byte, events int) error {
	fmt.Printf("%s: %d events\n", tenant, events)
	return nil
}

func ExampleNew() {
	dir, err := os.MkdirTemp("", "spool")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	l, err := accesslog.New(accesslog.Config{
		Sink:     printSink{},
		SpoolDir: dir,
		FailOpen: func(tenant string) bool { return tenant == "sandbox" },
	})
	if err != nil {
		panic(err)
	}
	// Per statement: Admit before it runs, Record when it ends.
	if err := l.Admit("acme"); errors.Is(err, accesslog.ErrUnavailable) {
		return // refuse the statement: codes.Unavailable, "access log unavailable"
	}
	l.Record(accesslog.Event{
		Time: time.Now(), RequestID: "r1", Tenant: "acme", Principal: "alice", Kind: "query",
		Statement: "select * from `t` where `a` = ?", Catalog: "lake",
		Read:     []accesslog.Table{{Schema: "sales", Name: "orders", Version: 7}},
		Decision: accesslog.Allowed, Rows: 1,
	})
	// On graceful shutdown, after the server stopped taking statements.
	if err := l.Close(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output: acme: 1 events
}
