package integration_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"lakegate/authz"
)

// bearerTransport sends every request with one Authorization header, as an
// MCP client configured with a user's token does.
type bearerTransport struct{ auth string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.auth != "" {
		r.Header.Set("Authorization", b.auth)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPServerOverREST: `lakegate mcp` in front of a metasrv node answers
// each user exactly what REST answers that user. A steward (the metalake's
// owner) sees a DRAFT domain that a plain user does not; a table the user
// may not see is left out of the user's member listing; a call without
// credentials fails; stdio works with a configured token.
func TestMCPServerOverREST(t *testing.T) {
	toks := map[string]string{}
	for _, id := range []string{"steward@acme", "bob@acme"} {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		toks[id] = tok
	}
	hash := func(id string) []string { return []string{authz.HashToken(toks[id]).String()} }
	e := newMetasrvEnv(t,
		authz.PrincipalSpec{ID: "steward@acme", Tenant: "acme", Role: "user", Namespaces: []string{"db"}, TokenHashes: hash("steward@acme")},
		authz.PrincipalSpec{ID: "bob@acme", Tenant: "acme", Role: "user", Namespaces: []string{"db"}, TokenHashes: hash("bob@acme")})
	toks["root"] = e.adminTok
	node := e.startMetasrv(t, "n1", t.TempDir(), "--bootstrap")
	e.waitConverged(t, 1, node)
	msURL := "http://" + node.httpAddr

	// rest sends one request as user and returns the status and body.
	rest := func(user, method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, msURL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+toks[user])
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	must := func(user, method, path string, body any) []byte {
		t.Helper()
		st, raw := rest(user, method, path, body)
		if st != http.StatusOK {
			t.Fatalf("%s %s as %s: HTTP %d: %s", method, path, user, st, raw)
		}
		return raw
	}

	// The metalake, owned by the steward; bob may use the lake's schema db
	// and see published domains, but not schema secret.
	must("root", "POST", "/api/metalakes", map[string]any{"name": "acme", "owner": "steward@acme"})
	const ml = "/api/metalakes/acme"
	cols := []map[string]any{{"name": "id", "type": "bigint", "nullable": false}}
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/users", map[string]any{"name": "bob@acme"}},
		{"POST", ml + "/catalogs", map[string]any{"name": "lake"}},
		{"POST", ml + "/catalogs/lake/schemas", map[string]any{"name": "db"}},
		{"POST", ml + "/catalogs/lake/schemas", map[string]any{"name": "secret"}},
		{"POST", ml + "/catalogs/lake/schemas/db/tables", map[string]any{"name": "trades", "columns": cols}},
		{"POST", ml + "/catalogs/lake/schemas/db/tables", map[string]any{"name": "ledger", "columns": cols}},
		{"POST", ml + "/catalogs/lake/schemas/secret/tables", map[string]any{"name": "payroll", "columns": cols}},
		{"POST", ml + "/roles", map[string]any{"name": "reader", "securableObjects": []map[string]any{
			{"fullName": "acme", "type": "METALAKE", "privileges": []map[string]string{{"name": "USE_DOMAIN", "condition": "ALLOW"}}},
			{"fullName": "lake", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}},
			{"fullName": "lake.db", "type": "SCHEMA", "privileges": []map[string]string{
				{"name": "USE_SCHEMA", "condition": "ALLOW"}, {"name": "SELECT_TABLE", "condition": "ALLOW"}}}}}},
		{"PUT", ml + "/permissions/users/bob@acme/grant", map[string]any{"roleNames": []string{"reader"}}},
		{"POST", ml + "/domains", map[string]any{"name": "Finance", "comment": "money", "backingTag": map[string]any{"name": "finance", "create": true}}},
		{"PATCH", ml + "/domains/Finance", map[string]any{"status": "published"}},
		{"POST", ml + "/domains", map[string]any{"name": "Trading", "backingTag": map[string]any{"name": "trading", "create": true}, "parent": "Finance"}},
		{"POST", ml + "/domains", map[string]any{"name": "Skunkworks", "backingTag": map[string]any{"name": "skunk", "create": true}}},
		{"POST", ml + "/objects/schema/lake.db/tags", map[string]any{"tagsToAdd": []string{"finance"}}},
		{"POST", ml + "/objects/table/lake.db.trades/tags", map[string]any{"tagsToAdd": []string{"trading", "skunk"}}},
		{"POST", ml + "/objects/table/lake.secret.payroll/tags", map[string]any{"tagsToAdd": []string{"finance"}}},
	} {
		must("steward@acme", w.method, w.path, w.body)
	}

	// REST's answers, per user, without the envelope's code.
	restAnswer := func(user, path string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(must(user, "GET", path, nil), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "code")
		return m
	}
	names := func(m map[string]any, field, key string) []string {
		var out []string
		for _, it := range m[field].([]any) {
			out = append(out, it.(map[string]any)[key].(string))
		}
		return out
	}
	stewardDomains := restAnswer("steward@acme", ml+"/domains?details=true")
	bobDomains := restAnswer("bob@acme", ml+"/domains?details=true")
	if got := names(stewardDomains, "domains", "name"); !reflect.DeepEqual(got, []string{"Finance", "Skunkworks", "Trading"}) {
		t.Fatalf("steward's domains over REST: %v", got)
	}
	if got := names(bobDomains, "domains", "name"); !reflect.DeepEqual(got, []string{"Finance"}) {
		t.Fatalf("bob's domains over REST: %v", got)
	}
	stewardMembers := restAnswer("steward@acme", ml+"/domains/Finance/objects")
	bobMembers := restAnswer("bob@acme", ml+"/domains/Finance/objects")
	if got := names(stewardMembers, "metadataObjects", "fullName"); !reflect.DeepEqual(got, []string{"lake.db.ledger", "lake.db.trades", "lake.secret.payroll"}) {
		t.Fatalf("steward's Finance members over REST: %v", got)
	}
	if got := names(bobMembers, "metadataObjects", "fullName"); !reflect.DeepEqual(got, []string{"lake.db.ledger", "lake.db.trades"}) {
		t.Fatalf("bob's Finance members over REST: %v", got)
	}
	stewardDraft := restAnswer("steward@acme", ml+"/domains/Skunkworks/objects")

	// `lakegate mcp` over streamable HTTP.
	mcpOut := &lockedBuffer{}
	mcpErr := &lockedBuffer{}
	cmd := exec.Command(lakegateBin, "mcp", "--server", msURL, "--metalake", "acme", "--http-addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = mcpOut, mcpErr
	cmd.Env = append(os.Environ(), "LAKEGATE_TOKEN=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("lakegate mcp on SIGTERM: %v; stderr:\n%s", err, mcpErr.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("lakegate mcp did not stop on SIGTERM")
		}
	}()
	banner := regexp.MustCompile(`streamable HTTP on (http://\S+/mcp)`)
	var endpoint string
	for deadline := time.Now().Add(startTimeout); endpoint == ""; time.Sleep(20 * time.Millisecond) {
		if m := banner.FindStringSubmatch(mcpOut.String()); m != nil {
			endpoint = m[1]
			continue
		}
		select {
		case err := <-exited:
			t.Fatalf("lakegate mcp exited (%v):\n%s\n%s", err, mcpOut.String(), mcpErr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lakegate mcp printed no banner:\n%s", mcpErr.String())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connect := func(auth string) (*sdk.ClientSession, error) {
		tr := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{auth}},
			MaxRetries: -1, DisableStandaloneSSE: true}
		return sdk.NewClient(&sdk.Implementation{Name: "integration", Version: "0"}, nil).Connect(ctx, tr, nil)
	}
	callTool := func(cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, *sdk.CallToolResult) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			return nil, res
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
		return m, res
	}
	for _, u := range []struct {
		user             string
		domains, members map[string]any
	}{
		{"steward@acme", stewardDomains, stewardMembers},
		{"bob@acme", bobDomains, bobMembers},
	} {
		cs, err := connect("Bearer " + toks[u.user])
		if err != nil {
			t.Fatalf("%s: connect: %v", u.user, err)
		}
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lt.Tools) != 18 {
			t.Errorf("%s: %d tools", u.user, len(lt.Tools))
		}
		if got, _ := callTool(cs, "list_domains", nil); !reflect.DeepEqual(got, u.domains) {
			t.Errorf("%s: list_domains\n got  %v\n REST %v", u.user, got, u.domains)
		}
		if got, _ := callTool(cs, "list_metadata_by_domain", map[string]any{"domain": "Finance"}); !reflect.DeepEqual(got, u.members) {
			t.Errorf("%s: list_metadata_by_domain Finance\n got  %v\n REST %v", u.user, got, u.members)
		}
		got, res := callTool(cs, "list_metadata_by_domain", map[string]any{"domain": "Skunkworks"})
		switch u.user {
		case "steward@acme":
			if !reflect.DeepEqual(got, stewardDraft) {
				t.Errorf("steward: draft members\n got  %v\n REST %v", got, stewardDraft)
			}
		default:
			var msg string
			if res != nil && len(res.Content) > 0 {
				msg = res.Content[0].(*sdk.TextContent).Text
			}
			if got != nil || !strings.Contains(msg, "NoSuchDomainException") {
				t.Errorf("%s: the draft domain's members: %v %q", u.user, got, msg)
			}
		}
		cs.Close()
	}

	// A call without credentials fails: the connection is refused with 401.
	if cs, err := connect(""); err == nil {
		cs.Close()
		t.Error("connected without credentials")
	}
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_domains","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("tools/call without credentials: HTTP %d", resp.StatusCode)
		}
	}

	// stdio: the binary as an agent would run it, with the token from the
	// environment.
	sc := exec.Command(lakegateBin, "mcp", "--stdio", "--server", msURL, "--metalake", "acme", "--include-tool-tags", "domain")
	sc.Env = append(os.Environ(), "LAKEGATE_TOKEN="+toks["bob@acme"])
	stdioErr := &lockedBuffer{}
	sc.Stderr = stdioErr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "integration", Version: "0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: sc}, nil)
	if err != nil {
		t.Fatalf("stdio connect: %v\n%s", err, stdioErr.String())
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 4 {
		t.Errorf("stdio tools: %v %v", lt, err)
	}
	if got, _ := callTool(cs, "list_domains", nil); !reflect.DeepEqual(got, bobDomains) {
		t.Errorf("stdio list_domains\n got  %v\n REST %v", got, bobDomains)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("stdio close: %v\n%s", err, stdioErr.String())
	}
	if s := stdioErr.String(); strings.Contains(s, toks["bob@acme"]) {
		t.Errorf("stdio server logged the token: %s", s)
	}
}
