package integration_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpAs runs `lakegate mcp --stdio` in front of metasrv msURL for
// metalake, with token as the caller's credentials (as an agent configured
// with that user's token runs it), and returns the client session.
func mcpAs(t *testing.T, ctx context.Context, msURL, metalake, token string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(lakegateBin, "mcp", "--stdio", "--server", msURL, "--metalake", metalake)
	cmd.Env = append(os.Environ(), "LAKEGATE_TOKEN="+token)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "integration", Version: "0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("lakegate mcp --metalake %s: connect: %v\n%s", metalake, err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// mcpAnswer is one tool call's outcome as a client sees it: whether it
// failed, and its content (text and structured) as JSON.
type mcpAnswer struct {
	isError bool
	body    string
}

func callMCP(t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) mcpAnswer {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	sc, _ := json.Marshal(res.StructuredContent)
	return mcpAnswer{isError: res.IsError, body: strings.Join(texts, "\n") + "\n" + string(sc)}
}

// checkAccessLogMCPIsolation: b's admin, asking metasrv's MCP tools (which
// run as the caller) about metalake a's access log — its catalog, the
// system schema, the access_events table, its tags, policies, domains, and
// an explanation of a's admin reading it — gets, tool by tool, exactly what
// a metalake that does not exist gets. The same tools pointed at b's own
// metalake answer, so a's answers are not those of a malformed call.
func checkAccessLogMCPIsolation(t *testing.T, msURL, tokenB string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const table = "lake.system.access_events"
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_catalogs", nil},
		{"describe_catalog", map[string]any{"catalog": "lake"}},
		{"list_schemas", map[string]any{"catalog": "lake"}},
		{"describe_schema", map[string]any{"catalog": "lake", "schema": "system"}},
		{"list_tables", map[string]any{"catalog": "lake", "schema": "system", "details": true}},
		{"describe_table", map[string]any{"catalog": "lake", "schema": "system", "table": "access_events"}},
		{"list_tags_of_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": table, "details": true}},
		{"list_policies_of_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": table, "details": true}},
		{"list_domains_for_metadata", map[string]any{"metadata_type": "table", "metadata_full_name": table}},
		{"explain_access", map[string]any{"user": "admin@a", "privilege": "SELECT_TABLE", "metadata_type": "table", "metadata_full_name": table}},
		{"explain_access", map[string]any{"user": "admin@b", "privilege": "SELECT_TABLE", "metadata_type": "table", "metadata_full_name": table}},
	}
	own := mcpAs(t, ctx, msURL, "b", tokenB)
	other := mcpAs(t, ctx, msURL, "a", tokenB)
	missing := mcpAs(t, ctx, msURL, "nosuch", tokenB)
	for _, c := range calls {
		if c.tool == "describe_table" || c.tool == "list_tables" {
			if got := callMCP(t, ctx, own, c.tool, c.args); got.isError || !strings.Contains(got.body, "access_events") {
				t.Errorf("admin@b %s %v on b's own metalake: %+v, want b's access log table", c.tool, c.args, got)
			}
		}
		got := callMCP(t, ctx, other, c.tool, c.args)
		want := callMCP(t, ctx, missing, c.tool, c.args)
		// A missing metalake's answer names the metalake asked for.
		want.body = strings.ReplaceAll(want.body, "nosuch", "a")
		if !got.isError || got != want {
			t.Errorf("admin@b %s %v on metalake a through MCP:\n %+v\nwant what a missing metalake answers:\n %+v", c.tool, c.args, got, want)
		}
		if strings.Contains(got.body, "access_events") && !strings.Contains(want.body, "access_events") {
			t.Errorf("admin@b %s on metalake a: the answer names a's access log: %s", c.tool, got.body)
		}
	}
}
