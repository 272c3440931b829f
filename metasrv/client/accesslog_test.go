package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
)

// TestClientAccessLog: the access log's calls go to the internal API as
// the gateway itself (no delegation headers on the commit), carry the body
// the server decodes, and map a conflict to ErrVersionConflict; a commit
// is a write, sent once even when the node answers 503.
func TestClientAccessLog(t *testing.T) {
	files := []api.DataFile{{Path: "tables/sid/seg/part-0.parquet", Size: 10, Rows: 2, SHA256: strings.Repeat("ab", 32)}}
	var commits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/internal/v1/metalakes/acme/access-log":
			if r.URL.Query().Get("catalog") != "lake" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"code":0,"generation":4,"storageId":"sid","version":3}`))
		case r.Method == http.MethodPost && r.URL.Path == "/internal/v1/metalakes/acme/access-log":
			commits.Add(1)
			var b api.CommitAccessLogRequest
			raw, _ := io.ReadAll(r.Body)
			if r.Header.Get(api.DelegateUserHeader) != "" || r.Header.Get(api.DelegateTenantHeader) != "" ||
				json.Unmarshal(raw, &b) != nil || b.Catalog != "lake" || len(b.Files) != 1 || b.Files[0] != files[0] {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"code":1001,"type":"IllegalArgumentException","message":"bad"}`))
				return
			}
			switch b.StorageID {
			case "sid":
				_, _ = w.Write([]byte(`{"code":0,"generation":5,"storageId":"sid","version":4}`))
			case "busy":
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"code":1002,"type":"ServiceUnavailableException","message":"no leader"}`))
			default:
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"code":1012,"type":"ConcurrentModificationException","message":"another storage id"}`))
			}
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Addrs: []string{srv.URL}, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	ctx := t.Context()
	if sid, v, err := c.AccessLogTable(ctx, "acme", "lake"); err != nil || sid != "sid" || v != 3 {
		t.Fatalf("AccessLogTable = %q %d %v", sid, v, err)
	}
	for _, tc := range []struct {
		name, sid string
		want      error
		version   uint64
	}{
		{"committed", "sid", nil, 4},
		{"another storage id", "stale", client.ErrVersionConflict, 0},
		{"unavailable", "busy", client.ErrUnavailable, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := commits.Load()
			v, _, err := c.CommitAccessLog(ctx, "acme", "lake", tc.sid, files)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) || v != tc.version {
				t.Fatalf("CommitAccessLog = %d, %v; want %d, %v", v, err, tc.version, tc.want)
			}
			if n := commits.Load() - before; n != 1 {
				t.Fatalf("sent %d times", n)
			}
		})
	}
}
