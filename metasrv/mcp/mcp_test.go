package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeCall is one request the fake metasrv received.
type fakeCall struct {
	method, uri, auth, contentType, body string
}

// fakeMetasrv answers REST calls from a table of canned answers keyed by
// "METHOD path?query" (the escaped request URI); unknown keys get 404.
type fakeMetasrv struct {
	*httptest.Server
	mu      sync.Mutex
	calls   []fakeCall
	answers map[string]func(auth string) (int, string)
}

func newFakeMetasrv(t *testing.T) *fakeMetasrv {
	t.Helper()
	f := &fakeMetasrv{answers: map[string]func(string) (int, string){}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c := fakeCall{method: r.Method, uri: r.URL.RequestURI(), auth: r.Header.Get("Authorization"),
			contentType: r.Header.Get("Content-Type"), body: string(b)}
		f.mu.Lock()
		f.calls = append(f.calls, c)
		h := f.answers[r.Method+" "+c.uri]
		f.mu.Unlock()
		status, body := http.StatusNotFound, `{"code":1003,"type":"NotFoundException","message":"metasrv: not found: `+r.URL.Path+`"}`
		if h != nil {
			status, body = h(c.auth)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeMetasrv) answer(key string, h func(auth string) (int, string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[key] = h
}

func (f *fakeMetasrv) fixed(key string, status int, body string) {
	f.answer(key, func(string) (int, string) { return status, body })
}

func (f *fakeMetasrv) recorded() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// connectInMemory runs a server for cfg and returns a connected client
// session (the stdio shape: no HTTP headers).
func connectInMemory(t *testing.T, cfg Config) *sdk.ClientSession {
	t.Helper()
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// headerTransport adds an Authorization header to every request.
type headerTransport struct{ auth string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.auth != "" {
		r.Header.Set("Authorization", h.auth)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects to a streamable HTTP endpoint with auth as the
// Authorization header ("" sends none).
func connectHTTP(ctx context.Context, endpoint, auth string) (*sdk.ClientSession, error) {
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: headerTransport{auth}},
		MaxRetries: -1, DisableStandaloneSSE: true}
	return sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, tr, nil)
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured returns a result's structured content re-encoded compactly.
func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var out []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

var allTools = []string{
	"associate_tag_with_metadata", "describe_catalog", "describe_schema", "describe_table", "explain_access",
	"get_domain_by_name", "get_tag", "list_catalogs", "list_domains", "list_domains_for_metadata",
	"list_metadata_by_domain", "list_metadata_by_tag", "list_policies", "list_policies_of_metadata",
	"list_schemas", "list_tables", "list_tags", "list_tags_of_metadata",
}

func TestToolsByTag(t *testing.T) {
	f := newFakeMetasrv(t)
	for _, tc := range []struct {
		tags []string
		want []string
	}{
		{nil, allTools},
		{[]string{"domain"}, []string{"get_domain_by_name", "list_domains", "list_domains_for_metadata", "list_metadata_by_domain"}},
		{[]string{" Table", "policy", ""}, []string{"describe_table", "explain_access", "list_policies", "list_policies_of_metadata", "list_tables"}},
	} {
		cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme", Token: "tok", Tags: tc.tags})
		if got := toolNames(t, cs); !slices.Equal(got, tc.want) {
			t.Errorf("tags %q: tools %v, want %v", tc.tags, got, tc.want)
		}
	}
	// Every tool but one is read-only, and every schema is an object.
	cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme", Token: "tok"})
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ro := tool.Annotations != nil && tool.Annotations.ReadOnlyHint; ro == (tool.Name == "associate_tag_with_metadata") {
			t.Errorf("%s: readOnlyHint %v", tool.Name, ro)
		}
		if s, _ := json.Marshal(tool.InputSchema); !strings.Contains(string(s), `"type":"object"`) {
			t.Errorf("%s: input schema %s", tool.Name, s)
		}
	}
	if _, err := ParseTags([]string{"domain", "bogus"}); err == nil {
		t.Error("unknown tag accepted")
	}
}

func TestConfigChecks(t *testing.T) {
	for _, cfg := range []Config{
		{Server: "127.0.0.1:8816", Metalake: "acme"},
		{Server: "ftp://h", Metalake: "acme"},
		{Server: "http://h/api", Metalake: "acme"},
		{Server: "http://u:p@h", Metalake: "acme"},
		{Server: "http://h"},
		{Server: "http://h", Metalake: "acme", Tags: []string{"nope"}},
	} {
		if _, err := NewServer(cfg); err == nil {
			t.Errorf("NewServer(%+v) accepted", cfg)
		}
	}
	if _, err := NewHTTPHandler(Config{Server: "http://h", Metalake: "acme", Token: "tok"}); err == nil {
		t.Error("NewHTTPHandler accepted a fixed token")
	}
}

// TestStdioUsesToken: every call carries the configured token; the
// result is the REST JSON without "code", plus a summary.
func TestStdioUsesToken(t *testing.T) {
	f := newFakeMetasrv(t)
	f.fixed("GET /api/metalakes/acme/domains?details=true", 200,
		`{"code":0,"domains":[{"name":"Finance","status":"published","owner":{"name":"s@acme","type":"user"},"backingTag":{"name":"finance"}}]}`)
	f.fixed("GET /api/metalakes/acme/domains/Fin%2FOps/objects?domains=Trading&domains=Fin%2FOps&nameContains=tr&types=table", 200,
		`{"code":0,"metadataObjects":[{"fullName":"cat.db.trades","type":"table","relations":[{"type":"direct"}]}]}`)
	cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme", Token: "secret-token-1"})

	res := call(t, cs, "list_domains", map[string]any{})
	if res.IsError {
		t.Fatalf("list_domains: %s", text(res))
	}
	got := structured(t, res)
	if _, ok := got["code"]; ok {
		t.Errorf("structured content keeps code: %v", got)
	}
	if ds, _ := got["domains"].([]any); len(ds) != 1 {
		t.Errorf("structured content %v", got)
	}
	if s := text(res); !strings.HasPrefix(s, "1 domains: Finance (published)") {
		t.Errorf("summary %q", s)
	}
	res = call(t, cs, "list_metadata_by_domain", map[string]any{"domain": "Fin/Ops", "domains": []string{"Trading", "Fin/Ops"},
		"types": []string{"table"}, "name_contains": "tr"})
	if res.IsError {
		t.Fatalf("list_metadata_by_domain: %s", text(res))
	}
	if s := text(res); !strings.HasPrefix(s, "1 members: cat.db.trades (table)") {
		t.Errorf("summary %q", s)
	}
	for _, c := range f.recorded() {
		if c.auth != "Bearer secret-token-1" {
			t.Errorf("%s %s: Authorization %q", c.method, c.uri, c.auth)
		}
	}
}

// TestHTTPForwardsAuthorization: each call goes to metasrv with the
// Authorization header of the MCP request that carried it, so two callers
// get their own answers; a request without one is refused.
func TestHTTPForwardsAuthorization(t *testing.T) {
	f := newFakeMetasrv(t)
	f.answer("GET /api/metalakes/acme/domains?details=true", func(auth string) (int, string) {
		switch auth {
		case "Bearer steward":
			return 200, `{"code":0,"domains":[{"name":"Draft","status":"draft"},{"name":"Pub","status":"published"}]}`
		case "Bearer user":
			return 200, `{"code":0,"domains":[{"name":"Pub","status":"published"}]}`
		}
		return 401, `{"code":1011,"type":"UnauthorizedException","message":"unauthenticated"}`
	})
	h, err := NewHTTPHandler(Config{Server: f.URL, Metalake: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx := context.Background()

	for auth, want := range map[string]int{"Bearer steward": 2, "Bearer user": 1} {
		cs, err := connectHTTP(ctx, ts.URL, auth)
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, cs, "list_domains", nil)
		if ds, _ := structured(t, res)["domains"].([]any); res.IsError || len(ds) != want {
			t.Errorf("%s: %s", auth, text(res))
		}
		cs.Close()
	}
	// A token metasrv does not know: the tool error carries metasrv's
	// message, and never the token.
	cs, err := connectHTTP(ctx, ts.URL, "Bearer stolen-but-wrong-0123")
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "list_domains", nil)
	if !res.IsError || !strings.Contains(text(res), "unauthenticated (HTTP 401, UnauthorizedException)") ||
		strings.Contains(text(res), "stolen") {
		t.Errorf("unknown token: %v %s", res.IsError, text(res))
	}
	cs.Close()

	// No credentials: the connection fails, and a raw request gets 401.
	if cs, err := connectHTTP(ctx, ts.URL, ""); err == nil {
		cs.Close()
		t.Error("connected without credentials")
	}
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("no credentials: HTTP %d %v", resp.StatusCode, resp.Header)
	}
	// Two Authorization headers: which one would be forwarded depends on
	// who reads them, so neither is.
	req, err := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Authorization", "Bearer one")
	req.Header.Add("Authorization", "Bearer two")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("two Authorization headers: HTTP %d", resp.StatusCode)
	}
	for _, c := range f.recorded() {
		if c.auth == "" {
			t.Errorf("metasrv got a call without credentials: %+v", c)
		}
	}
}

// TestServerWithoutCredentials: a server with neither a token nor a
// forwarded header refuses calls without calling metasrv.
func TestServerWithoutCredentials(t *testing.T) {
	f := newFakeMetasrv(t)
	cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme"})
	res := call(t, cs, "list_catalogs", nil)
	if !res.IsError || !strings.Contains(text(res), "no credentials") {
		t.Errorf("%v %s", res.IsError, text(res))
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("metasrv got %d calls", n)
	}
}

func TestInputValidation(t *testing.T) {
	f := newFakeMetasrv(t)
	cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme", Token: "tok"})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_domain_by_name", map[string]any{}, "name"},
		{"get_domain_by_name", map[string]any{"name": ""}, "name"},
		{"get_domain_by_name", map[string]any{"name": "  "}, "name is empty"},
		{"get_domain_by_name", map[string]any{"name": "a\nb"}, "control character"},
		{"get_domain_by_name", map[string]any{"name": "F", "bogus": 1}, "bogus"},
		{"get_domain_by_name", map[string]any{"name": 7}, "name"},
		{"list_metadata_by_domain", map[string]any{"domain": "F", "types": []string{"schema"}}, "types"},
		{"list_metadata_by_domain", map[string]any{"domain": "F", "domains": []string{""}}, "domains"},
		{"list_domains_for_metadata", map[string]any{"metadata_type": "schema", "metadata_full_name": "c.s"}, "metadata_type"},
		{"list_domains_for_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "c.s"}, "3"},
		{"list_domains_for_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "c..t"}, "empty part"},
		{"list_tags_of_metadata", map[string]any{"metadata_type": "user", "metadata_full_name": "u"}, "metadata_type"},
		{"list_policies_of_metadata", map[string]any{"metadata_type": "metalake", "metadata_full_name": "acme"}, "metadata_type"},
		{"associate_tag_with_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "c.s.t"}, "nothing to do"},
		{"associate_tag_with_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "c.s.t",
			"tags_to_add": []map[string]any{{"value": "x"}}}, "name"},
		{"associate_tag_with_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "c.s.t",
			"tags_to_add": []string{"pii"}}, "tags_to_add"},
		{"describe_table", map[string]any{"catalog": "c", "schema": "s"}, "table"},
		{"explain_access", map[string]any{"user": "bob", "privilege": "SELECT_TABLE", "metadata_type": "user", "metadata_full_name": "u"}, "metadata_type"},
		{"explain_access", map[string]any{"user": "bob", "privilege": "SELECT TABLE", "metadata_type": "table", "metadata_full_name": "c.s.t"}, "privilege"},
		{"explain_access", map[string]any{"user": "", "privilege": "SELECT_TABLE", "metadata_type": "table", "metadata_full_name": "c.s.t"}, "user"},
		{"explain_access", map[string]any{"user": "bob", "privilege": "SELECT_TABLE", "metadata_type": "table", "metadata_full_name": "c.s"}, "3"},
		{"list_tables", map[string]any{"catalog": "c", "schema": "s", "details": "yes"}, "details"},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%s %v: error %v %q, want one mentioning %q", tc.tool, tc.args, res.IsError, text(res), tc.want)
		}
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("invalid calls reached metasrv %d times: %+v", n, f.recorded())
	}
}

// TestErrorMapping: REST errors become tool errors with metasrv's message
// and type; nothing else from the answer (or any token) gets through.
func TestErrorMapping(t *testing.T) {
	f := newFakeMetasrv(t)
	f.fixed("GET /api/metalakes/acme/domains/Draft", 404,
		`{"code":1003,"type":"NoSuchDomainException","message":"catalog: ViewDomain DOMAIN Draft: not found: NoSuchDomain: DOMAIN Draft"}`)
	f.fixed("GET /api/metalakes/acme/catalogs/lake", 500, `panic: runtime error at goroutine 7 [running] token=tok-0123456789`)
	f.fixed("GET /api/metalakes/acme/tags/pii", 403,
		`{"code":1008,"type":"ForbiddenException","message":"metasrv: forbidden: echo Bearer tok-0123456789"}`)
	cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme", Token: "tok-0123456789"})

	res := call(t, cs, "get_domain_by_name", map[string]any{"name": "Draft"})
	if want := "catalog: ViewDomain DOMAIN Draft: not found: NoSuchDomain: DOMAIN Draft (HTTP 404, NoSuchDomainException)"; !res.IsError || text(res) != want {
		t.Errorf("404: %v %q", res.IsError, text(res))
	}
	res = call(t, cs, "describe_catalog", map[string]any{"catalog": "lake"})
	if !res.IsError || text(res) != "Internal Server Error (HTTP 500)" {
		t.Errorf("500: %v %q", res.IsError, text(res))
	}
	res = call(t, cs, "get_tag", map[string]any{"tag": "pii"})
	if !res.IsError || strings.Contains(text(res), "tok-0123456789") || !strings.Contains(text(res), "[redacted]") {
		t.Errorf("403: %v %q", res.IsError, text(res))
	}
	// metasrv down: a plain tool error.
	down := Config{Server: "http://127.0.0.1:1", Metalake: "acme", Token: "tok"}
	res = call(t, connectInMemory(t, down), "list_catalogs", nil)
	if !res.IsError || !strings.HasPrefix(text(res), "metasrv unreachable: ") || strings.Contains(text(res), "goroutine") {
		t.Errorf("down: %v %q", res.IsError, text(res))
	}
}

// TestRequests: each tool calls the REST endpoint it fronts, with path
// segments escaped and the v2 body for tag association.
func TestRequests(t *testing.T) {
	f := newFakeMetasrv(t)
	cs := connectInMemory(t, Config{Server: f.URL, Metalake: "acme", Token: "tok"})
	f.fixed("POST /api/metalakes/acme/objects/table/lake.sales.orders/tags", 200, `{"code":0,"names":["dept","pii"]}`)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_domain_by_name", map[string]any{"name": "a b/c"}, "GET /api/metalakes/acme/domains/a%20b%2Fc"},
		{"list_domains_for_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "c.s.t"}, "GET /api/metalakes/acme/objects/table/c.s.t/domains?details=true"},
		{"list_tags", map[string]any{}, "GET /api/metalakes/acme/tags"},
		{"list_tags", map[string]any{"details": true}, "GET /api/metalakes/acme/tags?details=true"},
		{"get_tag", map[string]any{"tag": "pii"}, "GET /api/metalakes/acme/tags/pii"},
		{"list_tags_of_metadata", map[string]any{"metadata_type": "column", "metadata_full_name": "c.s.t.id", "details": true}, "GET /api/metalakes/acme/objects/column/c.s.t.id/tags?details=true"},
		{"list_metadata_by_tag", map[string]any{"tag": "dept", "value": "fin ance"}, "GET /api/metalakes/acme/tags/dept/objects?value=fin+ance"},
		{"list_catalogs", map[string]any{}, "GET /api/metalakes/acme/catalogs"},
		{"describe_catalog", map[string]any{"catalog": "lake"}, "GET /api/metalakes/acme/catalogs/lake"},
		{"list_schemas", map[string]any{"catalog": "lake", "details": true}, "GET /api/metalakes/acme/catalogs/lake/schemas?details=true"},
		{"describe_schema", map[string]any{"catalog": "lake", "schema": "sales"}, "GET /api/metalakes/acme/catalogs/lake/schemas/sales"},
		{"list_tables", map[string]any{"catalog": "lake", "schema": "sales"}, "GET /api/metalakes/acme/catalogs/lake/schemas/sales/tables"},
		{"describe_table", map[string]any{"catalog": "lake", "schema": "sales", "table": "orders"}, "GET /api/metalakes/acme/catalogs/lake/schemas/sales/tables/orders"},
		{"list_policies", map[string]any{}, "GET /api/metalakes/acme/policies"},
		{"list_policies_of_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "lake.sales.orders"}, "GET /api/metalakes/acme/objects/table/lake.sales.orders/policies"},
		{"explain_access", map[string]any{"user": "bob@acme", "privilege": "select_table", "metadata_type": "table", "metadata_full_name": "lake.sales.orders"},
			"GET /api/metalakes/acme/access/explain?object=table%3Alake.sales.orders&privilege=SELECT_TABLE&user=bob%40acme"},
		{"explain_access", map[string]any{"user": "bob@acme", "privilege": "VIEW_TAG", "metadata_type": "tag", "metadata_full_name": "a.b/c"},
			"GET /api/metalakes/acme/access/explain?object=tag%3Aa.b%2Fc&privilege=VIEW_TAG&user=bob%40acme"},
		{"associate_tag_with_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "lake.sales.orders",
			"tags_to_add": []map[string]any{{"name": "dept", "value": "finance"}, {"name": "pii"}}, "tags_to_remove": []map[string]any{{"name": "old"}}},
			"POST /api/metalakes/acme/objects/table/lake.sales.orders/tags"},
	} {
		before := len(f.recorded())
		call(t, cs, tc.tool, tc.args)
		calls := f.recorded()[before:]
		if len(calls) != 1 || calls[0].method+" "+calls[0].uri != tc.want {
			t.Errorf("%s: calls %+v, want %s", tc.tool, calls, tc.want)
		}
	}
	last := f.recorded()[len(f.recorded())-1]
	if last.contentType != v2JSON || last.body != `{"tagsToAdd":[{"name":"dept","value":"finance"},{"name":"pii"}],"tagsToRemove":[{"name":"old"}]}` {
		t.Errorf("association: %s %s", last.contentType, last.body)
	}
	f.fixed("GET /api/metalakes/acme/access/explain?object=table%3Alake.sales.orders&privilege=SELECT_TABLE&user=bob%40acme", 200,
		`{"code":0,"explanation":{"allowed":false,"reason":"denied by grant","rule":"DENY over ALLOW: role r denies SELECT_TABLE on SCHEMA lake.sales"},"gateway":{}}`)
	res := call(t, cs, "explain_access", map[string]any{"user": "bob@acme", "privilege": "SELECT_TABLE", "metadata_type": "table", "metadata_full_name": "lake.sales.orders"})
	if want := "bob@acme SELECT_TABLE on table lake.sales.orders: denied (DENY over ALLOW: role r denies SELECT_TABLE on SCHEMA lake.sales)"; res.IsError || !strings.HasPrefix(text(res), want+"\n") {
		t.Errorf("explanation answer: %v %q", res.IsError, text(res))
	}
	res = call(t, cs, "associate_tag_with_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": "lake.sales.orders",
		"tags_to_add": []map[string]any{{"name": "pii"}}})
	if res.IsError || !strings.HasPrefix(text(res), "table lake.sales.orders now carries 2 direct tags: dept, pii") {
		t.Errorf("association answer: %v %q", res.IsError, text(res))
	}
}

// TestHTTPHoldsNoSessions: the HTTP server checks only that a request
// carries credentials (metasrv judges them at each call), so anyone who can
// reach it could open sessions — each kept in memory for its timeout — with
// made-up tokens, as fast as they like. The server keeps none: every
// request stands alone, with its own Authorization.
func TestHTTPHoldsNoSessions(t *testing.T) {
	f := newFakeMetasrv(t)
	h, err := NewHTTPHandler(Config{Server: f.URL, Metalake: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	for i := range 3 {
		req, err := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", fmt.Sprintf("Bearer made-up-%d", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "serverInfo") {
			t.Fatalf("initialize: HTTP %d: %s", resp.StatusCode, body)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			t.Fatalf("initialize with a made-up token opened session %q", id)
		}
	}
	if calls := f.recorded(); len(calls) != 0 {
		t.Fatalf("initialize called metasrv: %+v", calls)
	}
}

// TestHTTPSlowBodyRefused: a request with any Authorization header reaches
// the MCP layer, so a body sent a byte at a time could hold a connection
// and its goroutine without end. It must arrive within BodyTimeout.
func TestHTTPSlowBodyRefused(t *testing.T) {
	f := newFakeMetasrv(t)
	h, err := NewHTTPHandler(Config{Server: f.URL, Metalake: "acme", BodyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The bound only fails the test.
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: mcp\r\nAuthorization: Bearer anything\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Fatalf("HTTP %d (close %v), want 408 and the connection closed", resp.StatusCode, resp.Close)
	}
}
