package metasrv

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"lakegate/catalog"
)

func TestRejectionReasonAndOperation(t *testing.T) {
	reasons := []struct {
		err  error
		want string
	}{
		{badRequest("x"), "bad_request"},
		{fmt.Errorf("%w: bad name", catalog.ErrInvalidName), "bad_request"},
		{ErrUnauthenticated, "unauthenticated"},
		{fmt.Errorf("%w: forwarding headers", ErrForbidden), "forbidden"},
		{catalog.ErrForbidden, "forbidden"},
		{fmt.Errorf("%w: metalake", ErrNotFound), "not_found"},
		{ErrUnsupported, "unsupported"},
		{catalog.ErrAlreadyExists, "conflict"},
		{catalog.ErrVersionConflict, "conflict"},
		{ErrUnavailable, "unavailable"},
		{errors.New("something unexpected"), "internal"},
	}
	for _, c := range reasons {
		if got := rejectionReason(c.err); got != c.want {
			t.Errorf("rejectionReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	// The route template, whatever the path held.
	mux := http.NewServeMux()
	var got string
	record := func(w http.ResponseWriter, r *http.Request) { got = requestOperation(r) }
	mux.HandleFunc("PUT /api/metalakes/{tenant}/owners/{type}/{fullName}", record)
	mux.HandleFunc("/cluster/join", record)
	ops := []struct{ method, path, want string }{
		{"PUT", "/api/metalakes/acme/owners/table/lake.sales.lg_SECRET", "PUT /api/metalakes/{m}/owners/{type}/{fullName}"},
		{"POST", "/cluster/join", "POST /cluster/join"},
	}
	for _, c := range ops {
		got = ""
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
		if got != c.want {
			t.Errorf("%s %s: %q, want %q", c.method, c.path, got, c.want)
		}
	}
	if got := requestOperation(nil); got != "" {
		t.Errorf("no request: %q", got)
	}
	if got := requestOperation(httptest.NewRequest("GET", "/x", nil)); got != "" {
		t.Errorf("an unrouted request: %q", got)
	}
}
