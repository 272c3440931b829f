package flight

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/clocktest"
	"lakegate/flight/ticket"
)

func TestLike(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"%", "", true},
		{"%", "sales", true},
		{"sales", "sales", true},
		{"sales", "Sales", false},
		{"sa%", "sales", true},
		{"%es", "sales", true},
		{"s_les", "sales", true},
		{"s_les", "sles", false},
		{"s\\_les", "s_les", true},
		{"s\\_les", "sales", false},
		{"100\\%", "100%", true},
		{"100\\%", "1000", false},
		{"%a%a%a%a%a%a%a%a%a%a%b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"", "", true},
		{"", "x", false},
		// A trailing backslash escapes nothing: it is a literal backslash.
		{"abc\\", "abc\\", true},
		{"abc\\", "abc", false},
		{"\\", "\\", true},
		{"\\", "", false},
	}
	for _, c := range cases {
		if got := likeMatch(&c.pattern, c.s); got != c.want {
			t.Errorf("like(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if !likeMatch(nil, "anything") {
		t.Error("a nil pattern must match")
	}
}

func TestToStatus(t *testing.T) {
	cases := []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{authz.ErrUnauthenticated, codes.Unauthenticated, unauthenticatedMessage},
		{ticket.ErrInvalid, codes.Unauthenticated, unauthenticatedMessage},
		{tableNotFound("hr", "employees"), codes.NotFound, "table hr.employees does not exist"},
		{fmt.Errorf("resolve: %w", backend.ErrNotFound), codes.NotFound, ""},
		{errNotQuerier, codes.PermissionDenied, ""},
		{fmt.Errorf("%w: x", errBadRequest), codes.InvalidArgument, ""},
		{backend.ErrCanceled, codes.Canceled, ""},
		{context.Canceled, codes.Canceled, ""},
		{backend.ErrDeadline, codes.DeadlineExceeded, ""},
		{backend.ErrResources, codes.ResourceExhausted, ""},
		{fmt.Errorf("duckdb: %w (waited)", backend.ErrMemoryBudget), codes.ResourceExhausted, "the server's memory is held by other queries; retry"},
		{errTooManyPrepared, codes.ResourceExhausted, ""},
		{fmt.Errorf("%w: type mismatch", backend.ErrQuery), codes.InvalidArgument, ""},
		{errors.New("disk on fire at /var/secret"), codes.Internal, "internal error"},
	}
	for _, c := range cases {
		st := status.Convert(toStatus(c.err))
		if st.Code() != c.code || (c.msg != "" && st.Message() != c.msg) {
			t.Errorf("toStatus(%v) = %v %q, want %v %q", c.err, st.Code(), st.Message(), c.code, c.msg)
		}
	}
	// A gate error is a user error.
	_, err := sqlgate.New(sqlgate.Config{}).Parse("SELECT 1; SELECT 2", "")
	if st := status.Convert(toStatus(err)); st.Code() != codes.InvalidArgument {
		t.Errorf("gate error = %v", st)
	}
}

func TestCredentialsFrom(t *testing.T) {
	basicPadded := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice@acme:lg_tok"))
	basicRaw := "Basic " + base64.RawStdEncoding.EncodeToString([]byte("alice@acme:lg_tok"))
	cases := []struct {
		name       string
		headers    []string
		allowBasic bool
		want       callCredentials
		ok         bool
	}{
		{"bearer", []string{"Bearer lg_tok"}, false, callCredentials{token: "lg_tok"}, true},
		{"bearer any case", []string{"bEaReR lg_tok"}, false, callCredentials{token: "lg_tok"}, true},
		{"empty bearer", []string{"Bearer "}, false, callCredentials{}, false},
		{"no scheme", []string{"lg_tok"}, false, callCredentials{}, false},
		{"two headers", []string{"Bearer a", "Bearer b"}, false, callCredentials{}, false},
		{"none", nil, false, callCredentials{}, false},
		{"basic padded", []string{basicPadded}, true, callCredentials{basic: true, id: "alice@acme", token: "lg_tok"}, true},
		{"basic raw", []string{basicRaw}, true, callCredentials{basic: true, id: "alice@acme", token: "lg_tok"}, true},
		{"basic outside handshake", []string{basicPadded}, false, callCredentials{}, false},
		{"basic without colon", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte("alice"))}, true, callCredentials{}, false},
		{"basic empty token", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"))}, true, callCredentials{}, false},
		{"basic empty id", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(":lg_tok"))}, true, callCredentials{}, false},
		{"basic empty id and token", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(":"))}, true, callCredentials{}, false},
		{"basic garbage", []string{"Basic !!!"}, true, callCredentials{}, false},
		{"exactly the limit", []string{"Bearer " + strings.Repeat("t", maxAuthHeader-len("Bearer "))}, false,
			callCredentials{token: strings.Repeat("t", maxAuthHeader-len("Bearer "))}, true},
		{"one byte over the limit", []string{"Bearer " + strings.Repeat("t", maxAuthHeader-len("Bearer ")+1)}, false, callCredentials{}, false},
		{"oversized", []string{"Bearer " + string(make([]byte, maxAuthHeader))}, false, callCredentials{}, false},
	}
	for _, c := range cases {
		md := metadata.MD{}
		for _, h := range c.headers {
			md.Append("authorization", h)
		}
		ctx := metadata.NewIncomingContext(context.Background(), md)
		got, ok := credentialsFrom(ctx, c.allowBasic)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestPreparedStoreTTLAndOwnership(t *testing.T) {
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	ps := newPreparedStore(time.Minute, clock.Now, newSpeculations(new(sync.WaitGroup)))
	alice, bob := principal(t, "alice@acme"), principal(t, "bob@acme")
	id, err := ps.add(alice, &plan{sql: "SELECT 1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ps.get(bob, id); ok {
		t.Fatal("bob can use alice's statement")
	}
	clock.Advance(30 * time.Second)
	if _, ok := ps.get(alice, id); !ok {
		t.Fatal("statement gone before its TTL")
	}
	// Idle for longer than the TTL: the next add sweeps it.
	clock.Advance(2 * time.Minute)
	if _, err := ps.add(bob, &plan{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := ps.get(alice, id); ok {
		t.Fatal("idle statement survived the sweep")
	}
	if ps.len() != 1 {
		t.Fatalf("len = %d, want 1", ps.len())
	}
	ps.remove(alice, id) // closing twice, or someone else's, is harmless
	for i := 0; i < maxPreparedPerPrincipal-1; i++ {
		if _, err := ps.add(bob, &plan{}, nil); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	if _, err := ps.add(bob, &plan{}, nil); !errors.Is(err, errTooManyPrepared) {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := ps.add(alice, &plan{}, nil); err != nil {
		t.Fatalf("the cap is per principal: %v", err)
	}
}

// headerStream captures headers set by a handler.
type headerStream struct {
	grpc.ServerTransportStream
	md metadata.MD
}

func (h *headerStream) Method() string { return "test" }
func (h *headerStream) SetHeader(md metadata.MD) error {
	h.md = metadata.Join(h.md, md)
	return nil
}

func TestSessionsAreBoundToTheirPrincipal(t *testing.T) {
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	st := newSessionStore(time.Hour, clock.Now)
	alice, bob := principal(t, "alice@acme"), principal(t, "bob@acme")
	hs := &headerStream{}
	ctx := grpc.NewContextWithServerTransportStream(context.Background(), hs)
	sess, err := st.obtain(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	sess.state.schema = "sales"
	cookie := hs.md.Get("set-cookie")
	if len(cookie) != 1 {
		t.Fatalf("set-cookie = %v", cookie)
	}
	// Clients send back only name=value.
	nameValue, _, _ := strings.Cut(cookie[0], ";")
	withCookie := metadata.NewIncomingContext(context.Background(), metadata.Pairs("cookie", "other=1; "+nameValue))
	if got := st.state(withCookie, alice); got.schema != "sales" {
		t.Fatalf("alice's session state = %+v", got)
	}
	if got := st.state(withCookie, bob); !reflect.DeepEqual(got, sessionState{}) {
		t.Fatalf("bob presenting alice's cookie got %+v", got)
	}
	clock.Advance(2 * time.Hour)
	if got := st.state(withCookie, alice); !reflect.DeepEqual(got, sessionState{}) {
		t.Fatalf("expired session state = %+v", got)
	}
}

// TestWithheld: engine messages of statements reading a governed table keep
// only their error class; others, and non-engine errors, pass unchanged.
func TestWithheld(t *testing.T) {
	governed := []backend.TableVersion{{}, {Policy: &backend.TablePolicy{RowFilter: "secret_col = 'x'"}}}
	plain := []backend.TableVersion{{}}
	engine := fmt.Errorf("%w: Conversion Error: Could not convert string 'hidden-value' to INT32 in secret_col = 'x'", backend.ErrQuery)
	cases := []struct {
		tables []backend.TableVersion
		err    error
		want   string
		code   codes.Code
	}{
		{governed, engine, "query failed: Conversion Error (details withheld: the statement reads a table through a row filter or column mask)", codes.InvalidArgument},
		{governed, fmt.Errorf("%w: it's 'bad' Error: x", backend.ErrQuery), "query failed: error (details withheld", codes.InvalidArgument},
		{plain, engine, "hidden-value", codes.InvalidArgument},
		// The gateway's own names are withheld from any statement's message.
		{plain, fmt.Errorf("%w: Binder Error: column x not in lg_rel.\"v_03d470a8ac606d2e84e019b0f19c35ff\"", backend.ErrQuery), "query failed: Binder Error (details withheld", codes.InvalidArgument},
		{plain, fmt.Errorf("%w: Binder Error: Table \"__cte0_a\" does not have a column named \"y\"", backend.ErrQuery), "query failed: Binder Error (details withheld", codes.InvalidArgument},
		{plain, fmt.Errorf("%w: Catalog Error: Table with name v_03d470a8ac606d2e does not exist", backend.ErrQuery), "query failed: Catalog Error (details withheld", codes.InvalidArgument},
		{governed, backend.ErrCatalogUnavailable, "metadata service is unavailable", codes.Unavailable},
		{nil, &policyError{table: "hr.t", err: errors.New("column \"x\" is not a column of the table")}, "a row filter or column mask on table hr.t cannot be applied", codes.FailedPrecondition},
		{nil, fmt.Errorf("%w: table hr.t", backend.ErrPolicyConflict), "conflicting policies: table hr.t; ask its owner", codes.FailedPrecondition},
	}
	for _, c := range cases {
		st := status.Convert(toStatus(withheld(c.tables, c.err)))
		if st.Code() != c.code || !strings.Contains(st.Message(), c.want) {
			t.Errorf("%v → %v %q, want %v containing %q", c.err, st.Code(), st.Message(), c.code, c.want)
		}
		if c.tables != nil && c.tables[len(c.tables)-1].Policy != nil && (strings.Contains(st.Message(), "hidden-value") || strings.Contains(st.Message(), "secret_col")) {
			t.Errorf("%q leaks the engine's message", st.Message())
		}
		if namesInternals(st.Message()) {
			t.Errorf("%q names one of the gateway's internal relations", st.Message())
		}
	}
}

// TestPlanSQLFor: the text with parameters pushed behind row filters runs
// only with values of the kinds it needs (NULL is of every kind); any other
// value, a wrong count, or a plan without such a text runs the plain one.
func TestPlanSQLFor(t *testing.T) {
	pl := &plan{sql: "plain", pushed: "pushed", kinds: []sqlgate.ParamKind{sqlgate.ParamInteger, sqlgate.ParamText, sqlgate.ParamAny}}
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{int64(7), "EU", 1.5}, "pushed"},
		{[]any{nil, nil, nil}, "pushed"},
		{[]any{int64(-1), "", []byte("x")}, "pushed"},
		{[]any{"7", "EU", 1.5}, "plain"},              // a string for an integer column
		{[]any{uint64(7), "EU", 1.5}, "plain"},        // unsigned: not vouched for
		{[]any{7.0, "EU", 1.5}, "plain"},              // a float
		{[]any{int64(7), int64(1), 1.5}, "plain"},     // an integer for a VARCHAR column
		{[]any{int64(7), []byte("EU"), 1.5}, "plain"}, // bytes are not text
		{[]any{int64(7), "EU"}, "plain"},              // a wrong count
	} {
		if got := pl.sqlFor(tc.args); got != tc.want {
			t.Errorf("sqlFor(%v) = %s, want %s", tc.args, got, tc.want)
		}
	}
	if got := (&plan{sql: "plain"}).sqlFor(nil); got != "plain" {
		t.Errorf("no pushed text: %s", got)
	}
	if got := (&plan{sql: "plain", pushed: "pushed", kinds: []sqlgate.ParamKind{99}}).sqlFor([]any{int64(1)}); got != "plain" {
		t.Errorf("an unknown kind: %s", got)
	}
}
