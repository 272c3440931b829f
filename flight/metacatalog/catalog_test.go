package metacatalog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/metasrv/client"
)

// observation is one call to Options.Observe.
type observation struct {
	op  string
	err bool
}

func TestObserve(t *testing.T) {
	var status struct {
		sync.Mutex
		code int
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status.Lock()
		defer status.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status.code)
		_, _ = w.Write([]byte(`{"code":0,"message":"x"}`))
	}))
	defer srv.Close()
	c, err := client.New(client.Config{Addrs: []string{srv.URL}, Token: "lg_test"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got []observation
	)
	cat := NewWithOptions(c, Options{Observe: func(op string, d time.Duration, err error) {
		if d < 0 {
			t.Errorf("%s: negative duration %s", op, d)
		}
		mu.Lock()
		got = append(got, observation{op, err != nil})
		mu.Unlock()
	}})
	caller := backend.Caller{Tenant: "acme", Subject: "alice@acme", Catalog: "lake"}
	name := backend.TableName{Schema: "sales", Name: "orders"}
	calls := func(ctx context.Context) {
		_, _ = cat.List(ctx, caller)
		_, _ = cat.Resolve(ctx, caller, []backend.TableRef{{Name: name}})
		_, _ = cat.Commit(ctx, caller, backend.Commit{Name: name, Base: 1})
		_, _ = cat.Drop(ctx, caller, name)
	}
	cases := []struct {
		code int
		want []observation
	}{
		// 404: no metalake. List, Resolve and Drop have a usable answer;
		// a commit to a missing table fails.
		{http.StatusNotFound, []observation{{OpList, false}, {OpResolve, false}, {OpCommit, true}, {OpDrop, false}}},
		{http.StatusServiceUnavailable, []observation{{OpList, true}, {OpResolve, true}, {OpCommit, true}, {OpDrop, true}}},
	}
	for _, tc := range cases {
		status.Lock()
		status.code = tc.code
		status.Unlock()
		mu.Lock()
		got = nil
		mu.Unlock()
		calls(context.Background())
		mu.Lock()
		if len(got) != len(tc.want) {
			t.Fatalf("HTTP %d: observed %+v, want %+v", tc.code, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("HTTP %d: call %d observed %+v, want %+v", tc.code, i, got[i], tc.want[i])
			}
		}
		mu.Unlock()
	}
	// Without an observer nothing is called (and nothing panics).
	cat = New(c)
	calls(context.Background())
}
