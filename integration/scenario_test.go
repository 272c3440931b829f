package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/flight/ticket"
)

// scenarioTables is how many tables the discovery part creates in schema
// "many"; scenarioVisible of them are made visible to alice.
const (
	scenarioTables  = 10_000
	scenarioVisible = 100
	// scenarioWriters is how many REST writes the discovery part keeps in
	// flight (the leader commits concurrent writes together).
	scenarioWriters = 16
)

// scenarioREST calls the metasrv REST API as any principal, with any
// content type. Safe for concurrent use.
type scenarioREST struct{ hc *http.Client }

func (a *scenarioREST) call(node *metasrvProc, tok, method, path, ctype string, body any) (msResp, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return msResp{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+node.httpAddr+path, rd)
	if err != nil {
		return msResp{}, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if rd != nil {
		if ctype == "" {
			ctype = "application/json"
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Accept", ctype)
	}
	hr, err := a.hc.Do(req)
	if err != nil {
		return msResp{}, fmt.Errorf("%s %s on %s: %w", method, path, node.id, err)
	}
	defer hr.Body.Close()
	raw, err := io.ReadAll(hr.Body)
	if err != nil {
		return msResp{}, err
	}
	r := msResp{status: hr.StatusCode, raw: raw, header: hr.Header}
	_ = json.Unmarshal(raw, &r.body)
	if c, _ := r.body["code"].(float64); r.status != http.StatusOK || c != 0 {
		return r, fmt.Errorf("%s %s on %s: HTTP %d: %s", method, path, node.id, r.status, raw)
	}
	return r, nil
}

func (a *scenarioREST) must(t *testing.T, node *metasrvProc, tok, method, path string, body any) msResp {
	t.Helper()
	r, err := a.call(node, tok, method, path, "", body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startGatewayEnv starts `lakegate gateway` with env and waits for its
// Flight address line (like startServeArgs, which inherits the test's
// environment).
func startGatewayEnv(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(lakegateBin, append([]string{"gateway"}, args...)...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t) })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(startTimeout)
	for s.Addr == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("lakegate gateway exited before serving:\n%s", s.stderr.String())
			}
			if m := bannerAddr.FindStringSubmatch(line); m != nil {
				s.Addr = m[1]
			}
		case <-deadline:
			t.Fatalf("lakegate gateway printed no banner within %s:\n%s", startTimeout, s.stderr.String())
		}
	}
	go func() { // keep draining so the process never blocks on a full pipe
		for range lines {
		}
	}()
	return s
}

// redeemedLate matches the ADBC driver's note that a refusal came when the
// ticket was redeemed (DoGet re-authorizes) rather than when the statement
// was planned: planned from a decision taken just before a change reached
// the gateway. No row is returned, but a refusal like a missing table's
// (same text, same cost) comes at planning, once the change has arrived.
var redeemedLate = regexp.MustCompile(`\(NotFound; DoGet: endpoint \d+: \[\]\)$`)

// revocationBound is how long after a governance change is acknowledged a
// gateway may still decide a statement from what it knew before (1 s, the
// bound the gateways promise); the gateways' default --decision-window.
const revocationBound = time.Second

// TestScenario drives the governance model end to end with real processes:
// a 3-node metasrv cluster, two `lakegate gateway` replicas sharing one
// ticket key ring and an S3 stage on the stand-in. It provisions a tenant
// over REST, then checks through both gateways with ADBC: role grants, a
// DENY on a schema (refused like a missing table within revocationBound),
// tag policies (presence and value selectors, disabling, inheritance from
// the schema), tickets across gateways, revocation and key retirement,
// discovery over 10,000 tables, and the loss of the metasrv leader during a
// stream of queries.
func TestScenario(t *testing.T) {
	started := time.Now()
	ctx := context.Background()
	dir := t.TempDir()
	s3 := newTenantsS3(t)

	gwTok := newToken(t)
	ownerTok, aliceTok, bobTok := newToken(t), newToken(t), newToken(t)
	hash := func(tok string) []string { return []string{authz.HashToken(tok).String()} }

	// metasrv's map: the deployment admin, the peers, the gateways'
	// query_service identity (a delegate for acme) and the tenant's owner,
	// who provisions over REST with its own token.
	allNS := []string{"sales", "finance", "hr", "many"}
	env := newMetasrvEnv(t,
		authz.PrincipalSpec{ID: "gateway", Tenant: "platform", Role: "query_service", DelegateTenants: []string{"acme"}, TokenHashes: hash(gwTok)},
		authz.PrincipalSpec{ID: "owner@acme", Tenant: "acme", Role: "user", Namespaces: allNS, TokenHashes: hash(ownerTok)})
	adminTok := env.adminTok
	// The gateways' map: the end users.
	gwPrincipals := filepath.Join(dir, "gateway-principals.yaml")
	if err := authz.WritePrincipalMap(gwPrincipals, []authz.PrincipalSpec{
		{ID: "owner@acme", Tenant: "acme", Role: "user", Namespaces: allNS, TokenHashes: hash(ownerTok)},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: allNS, TokenHashes: hash(aliceTok)},
		{ID: "bob@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales", "finance", "hr"}, TokenHashes: hash(bobTok)},
	}); err != nil {
		t.Fatal(err)
	}
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ringPath := filepath.Join(dir, "ticket-keys")
	if err := ticket.WriteRingFile(ringPath, ring); err != nil {
		t.Fatal(err)
	}
	gwTokFile := writeSecret(t, dir, "gateway.token", gwTok+"\n")
	stageFile := s3.descriptorFile(t)

	// The metasrv cluster: n1 bootstraps, n2 joins through n1, n3 through n2.
	nodes, leader := env.startCluster(t)
	t.Logf("cluster formed, leader %s (%s)", leader.id, time.Since(started).Round(time.Millisecond))

	// The gateways list the leader first: a gateway reads from the node
	// that answered it last, and a write acknowledged by the leader is
	// applied there, so a revocation sent to the leader decides the very
	// next statement. (Through a follower it would take effect after the
	// follower applied it: replication lag.)
	metasrvList := []string{"http://" + leader.httpAddr}
	for _, p := range without(nodes, leader) {
		metasrvList = append(metasrvList, "http://"+p.httpAddr)
	}
	startGW := func(t *testing.T, ringFile string) *server {
		return startGatewayEnv(t, s3.env, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
			"--principals", gwPrincipals, "--ticket-keys", ringFile, "--stage", stageFile, "--data-dir", t.TempDir(),
			"--metasrv", strings.Join(metasrvList, ","), "--metasrv-token-file", gwTokFile, "--log-level", "warn")
	}
	gw1, gw2 := startGW(t, ringPath), startGW(t, ringPath)
	grpcConn := func(t *testing.T, gw *server) *grpc.ClientConn {
		conn, err := grpc.NewClient(gw.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	conn1, conn2 := grpcConn(t, gw1), grpcConn(t, gw2)
	// Health checks need a known principal.
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+aliceTok)
	for _, conn := range []*grpc.ClientConn{conn1, conn2} {
		if err := waitServing(actx, conn, readinessService); err != nil {
			t.Fatalf("readiness: %v; stderr:\n%s\n%s", err, gw1.stderr.String(), gw2.stderr.String())
		}
	}
	t.Logf("gateways ready (%s)", time.Since(started).Round(time.Millisecond))

	api := &scenarioREST{hc: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}}}
	t.Cleanup(api.hc.CloseIdleConnections)
	const ml = "/api/metalakes/acme"
	// changed is when the last governance change was acknowledged: the
	// gateways must decide by it within revocationBound.
	var changed time.Time
	owner := func(t *testing.T, method, path string, body any) msResp {
		t.Helper()
		r := api.must(t, leader, ownerTok, method, path, body)
		changed = time.Now()
		return r
	}

	// Provisioning: the admin creates the metalake for its owner; the owner
	// creates everything else.
	api.must(t, leader, adminTok, "POST", "/api/metalakes", map[string]any{"name": "acme", "owner": "owner@acme"})
	owner(t, "POST", ml+"/catalogs", map[string]any{"name": "lake", "type": "managed"})
	for _, s := range allNS {
		owner(t, "POST", ml+"/catalogs/lake/schemas", map[string]any{"name": s})
	}
	for _, u := range []string{"alice@acme", "bob@acme"} { // (the owner exists with the metalake)
		owner(t, "POST", ml+"/users", map[string]any{"name": u})
	}
	type priv = map[string]string
	allow := func(names ...string) []priv {
		var out []priv
		for _, n := range names {
			out = append(out, priv{"name": n, "condition": "ALLOW"})
		}
		return out
	}
	useCatalog := map[string]any{"fullName": "lake", "type": "CATALOG", "privileges": allow("USE_CATALOG")}
	useSchema := func(s string, more ...string) map[string]any {
		return map[string]any{"fullName": "lake." + s, "type": "SCHEMA", "privileges": allow(append([]string{"USE_SCHEMA"}, more...)...)}
	}
	owner(t, "POST", ml+"/roles", map[string]any{"name": "reader", "securableObjects": []any{useCatalog, useSchema("sales", "SELECT_TABLE")}})
	owner(t, "POST", ml+"/roles", map[string]any{"name": "deny_sales", "securableObjects": []any{useCatalog}})
	owner(t, "POST", ml+"/roles", map[string]any{"name": "analyst", "securableObjects": []any{useCatalog, useSchema("sales"), useSchema("finance"), useSchema("hr")}})
	owner(t, "PUT", ml+"/permissions/users/bob@acme/grant", map[string]any{"roleNames": []string{"analyst"}})
	owner(t, "PUT", ml+"/permissions/users/alice@acme/grant", map[string]any{"roleNames": []string{"deny_sales"}})

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ownerC := mustDial(t, gw1.uri(), bearer(ownerTok))
	ingest := func(t *testing.T, schema, table string, n int64) {
		t.Helper()
		rdr := ingestRows(mem, 1, n)
		defer rdr.Release()
		if got, err := ownerC.ingest(ctx, schema, table, adbc.OptionValueIngestModeCreate, rdr); err != nil || got != n {
			t.Fatalf("owner ingests %s.%s: %d, %v", schema, table, got, err)
		}
	}
	sizes := map[string]int64{"sales.orders": 100, "finance.ledger": 20, "hr.staff": 30, "sales.sibling": 40, "sales.later": 50}
	for _, tbl := range []string{"sales.orders", "finance.ledger", "hr.staff", "sales.sibling"} {
		s, n, _ := strings.Cut(tbl, ".")
		ingest(t, s, n, sizes[tbl])
	}
	t.Logf("provisioned (%s)", time.Since(started).Round(time.Millisecond))

	alice := []*client{mustDial(t, gw1.uri(), bearer(aliceTok)), mustDial(t, gw2.uri(), bearer(aliceTok))}
	bob := []*client{mustDial(t, gw1.uri(), bearer(bobTok)), mustDial(t, gw2.uri(), bearer(bobTok))}
	countSQL := func(tbl string) string { return "SELECT count(*), sum(id) FROM " + tbl }
	want := func(tbl string) []string {
		n := sizes[tbl]
		return []string{fmt.Sprint(n), fmt.Sprint(n * (n + 1) / 2)}
	}
	// settled runs query until done says its outcome reflects the last
	// change; a query that started more than revocationBound after the
	// change and still does not fails t. It returns how long after the
	// change the first settled query started.
	settled := func(t *testing.T, what string, query func() error, done func(error) bool) time.Duration {
		t.Helper()
		for {
			start := time.Now()
			err := query()
			if done(err) {
				return start.Sub(changed)
			}
			if start.Sub(changed) > revocationBound {
				t.Fatalf("%s: not in effect %s after the change: %v", what, revocationBound, err)
			}
		}
	}
	// reads fails unless c reads tbl in full (within revocationBound of
	// the last change).
	reads := func(t *testing.T, who string, c *client, gw int, tbl string) {
		t.Helper()
		var rows [][]string
		settled(t, fmt.Sprintf("%s reads %s via gateway %d", who, tbl, gw+1), func() (err error) {
			_, rows, err = c.query(ctx, countSQL(tbl))
			return err
		}, func(err error) bool {
			if err != nil && adbcStatus(err) != adbc.StatusNotFound {
				t.Fatalf("%s via gateway %d: %s: %v", who, gw+1, tbl, err)
			}
			return err == nil
		})
		wantRows(t, rows, want(tbl))
	}
	// refusal is the error of a refused query with the table's name
	// replaced (within revocationBound of the last change), and the stage
	// requests the refused query cost; "" (after reporting) when it was
	// refused other than as NotFound.
	refusal := func(t *testing.T, who string, c *client, gw int, tbl string) (string, int) {
		t.Helper()
		var err error
		var reqs, tries int
		after := settled(t, fmt.Sprintf("%s refused %s via gateway %d", who, tbl, gw+1), func() error {
			tries++
			from := s3.mark()
			_, _, err = c.query(ctx, countSQL(tbl))
			reqs = s3.mark() - from
			return err
		}, func(err error) bool { return err != nil && !redeemedLate.MatchString(err.Error()) })
		if adbcStatus(err) != adbc.StatusNotFound {
			t.Errorf("%s via gateway %d: %s: err %v (status %v), want NotFound", who, gw+1, tbl, err, adbcStatus(err))
			return "", reqs
		}
		if tries > 1 {
			t.Logf("%s via gateway %d: %s refused by the query started %s after the change (try %d)", who, gw+1, tbl, after.Round(time.Microsecond), tries)
		}
		return strings.ReplaceAll(err.Error(), tbl, "<table>"), reqs
	}
	refusedText := func(t *testing.T, who string, c *client, gw int, tbl string) string {
		t.Helper()
		text, _ := refusal(t, who, c, gw, tbl)
		return text
	}
	// missingText is what each gateway answers for a table nobody has, and
	// missingReqs how many stage requests that cost (none expected).
	missingText, missingReqs := make([]string, 2), make([]int, 2)
	for gw, c := range alice {
		if missingText[gw], missingReqs[gw] = refusal(t, "alice", c, gw, "sales.nosuch"); missingText[gw] == "" {
			t.FailNow()
		}
	}
	if missingText[0] != missingText[1] {
		t.Fatalf("the gateways answer a missing table differently:\n%s\n%s", missingText[0], missingText[1])
	}
	t.Logf("a missing table: %s", missingText[0])
	refusedLikeMissing := func(t *testing.T, who string, cs []*client, tbl string) {
		t.Helper()
		for gw, c := range cs {
			got, n := refusal(t, who, c, gw, tbl)
			if got != "" && got != missingText[gw] {
				t.Errorf("%s via gateway %d: %s refused as\n%s\nbut a missing table as\n%s", who, gw+1, tbl, got, missingText[gw])
			}
			if n != missingReqs[gw] {
				t.Errorf("%s via gateway %d: refusing %s cost %d stage requests, a missing table %d", who, gw+1, tbl, n, missingReqs[gw])
			}
		}
	}

	t.Run("1 role grant", func(t *testing.T) {
		refusedLikeMissing(t, "alice before the grant", alice, "sales.orders")
		owner(t, "PUT", ml+"/permissions/users/alice@acme/grant", map[string]any{"roleNames": []string{"reader"}})
		for gw, c := range alice {
			reads(t, "alice", c, gw, "sales.orders")
		}
	})

	t.Run("2 deny on the schema", func(t *testing.T) {
		const denyPath = ml + "/permissions/roles/deny_sales/schema/lake.sales/"
		deny := map[string]any{"privileges": []priv{{"name": "SELECT_TABLE", "condition": "DENY"}}}
		owner(t, "PUT", denyPath+"grant", deny)
		// Each gateway refuses within revocationBound (the watch on the
		// tenant's generation reports the change within a round trip).
		for gw, c := range alice {
			got := refusedText(t, "alice under the DENY", c, gw, "sales.orders")
			if got != "" && got != missingText[gw] {
				t.Errorf("gateway %d: denied table refused as\n%s\nbut a missing table as\n%s", gw+1, got, missingText[gw])
			}
		}
		owner(t, "PUT", denyPath+"revoke", deny)
		for gw, c := range alice {
			reads(t, "alice after the DENY is removed", c, gw, "sales.orders")
		}
	})

	t.Run("3 certified tag policy", func(t *testing.T) {
		refusedLikeMissing(t, "bob before the policy", bob, "sales.orders")
		owner(t, "POST", ml+"/tags", map[string]any{"name": "certified"})
		owner(t, "POST", ml+"/objects/table/lake.sales.orders/tags", map[string]any{"tagsToAdd": []string{"certified"}})
		owner(t, "POST", ml+"/policies", map[string]any{"name": "certified_read", "policyType": "system_access_control",
			"content": map[string]any{"privileges": []string{"SELECT_TABLE"}, "applicable_roles": []string{"analyst"}}})
		owner(t, "PUT", ml+"/tags/certified/policies/certified_read", nil)
		for gw, c := range bob {
			reads(t, "bob", c, gw, "sales.orders")
		}
		refusedLikeMissing(t, "bob", bob, "sales.sibling")
	})

	t.Run("4 dept value selector", func(t *testing.T) {
		owner(t, "POST", ml+"/tags", map[string]any{"name": "dept", "allowedValues": []string{"finance", "hr"}})
		for tbl, v := range map[string]string{"finance.ledger": "finance", "hr.staff": "hr"} {
			if _, err := api.call(leader, ownerTok, "POST", ml+"/objects/table/lake."+tbl+"/tags", "application/vnd.gravitino.v2+json",
				map[string]any{"tagsToAdd": []map[string]string{{"name": "dept", "value": v}}}); err != nil {
				t.Fatal(err)
			}
			changed = time.Now()
		}
		owner(t, "POST", ml+"/policies", map[string]any{"name": "finance_read", "policyType": "system_access_control",
			"content": map[string]any{"privileges": []string{"SELECT_TABLE"}, "applicable_roles": []string{"analyst"}}})
		owner(t, "PUT", ml+"/tags/dept/policies/finance_read", map[string]any{"selector": map[string]any{"type": "TAG_VALUE", "value": "finance"}})
		for gw, c := range bob {
			reads(t, "bob", c, gw, "finance.ledger")
		}
		refusedLikeMissing(t, "bob", bob, "hr.staff")
	})

	t.Run("5 disabling the policy revokes", func(t *testing.T) {
		owner(t, "PATCH", ml+"/policies/certified_read", map[string]any{"enable": false})
		refusedLikeMissing(t, "bob with certified_read disabled", bob, "sales.orders")
		owner(t, "PATCH", ml+"/policies/certified_read", map[string]any{"enable": true})
		for gw, c := range bob {
			reads(t, "bob with certified_read enabled again", c, gw, "sales.orders")
		}
	})

	t.Run("6 tag inherited from the schema", func(t *testing.T) {
		owner(t, "POST", ml+"/objects/schema/lake.sales/tags", map[string]any{"tagsToAdd": []string{"certified"}})
		ingest(t, "sales", "later", sizes["sales.later"])
		for gw, c := range bob {
			reads(t, "bob", c, gw, "sales.later")
		}
	})

	t.Run("7 tickets", func(t *testing.T) {
		cl1, cl2 := flightsqlClient(conn1), flightsqlClient(conn2)
		const sql = "SELECT id FROM sales.orders WHERE id <= 10"
		ticketFor := func() *flight.Ticket {
			t.Helper()
			info, err := cl1.Execute(actx, sql)
			if err != nil {
				t.Fatal(err)
			}
			return info.GetEndpoint()[0].GetTicket()
		}
		redeem := func(cl *flightsql.Client, tkt *flight.Ticket) (int64, error) { return redeemRows(actx, cl, tkt) }
		if n, err := redeem(cl2, ticketFor()); err != nil || n != 10 {
			t.Fatalf("a ticket of gateway 1 at gateway 2: %d rows, %v", n, err)
		}

		early := ticketFor()
		owner(t, "PUT", ml+"/permissions/users/alice@acme/revoke", map[string]any{"roleNames": []string{"reader"}})
		for gw, cl := range []*flightsql.Client{cl1, cl2} {
			var err error
			settled(t, fmt.Sprintf("a ticket issued before the revocation refused at gateway %d", gw+1), func() error {
				_, err = redeem(cl, early)
				return err
			}, func(err error) bool { return err != nil })
			if status.Code(err) != codes.NotFound || status.Convert(err).Message() != "table sales.orders does not exist" {
				t.Errorf("a ticket issued before the revocation, at gateway %d: %v", gw+1, err)
			}
		}
		owner(t, "PUT", ml+"/permissions/users/alice@acme/grant", map[string]any{"roleNames": []string{"reader"}})
		var n int64
		settled(t, "the early ticket once the grant is back", func() (err error) {
			n, err = redeem(cl2, early)
			if err != nil && status.Code(err) != codes.NotFound {
				t.Fatalf("the early ticket once the grant is back: %v", err)
			}
			return err
		}, func(err error) bool { return err == nil })
		if n != 10 {
			t.Fatalf("the early ticket once the grant is back: %d rows", n)
		}

		// Retiring the key: a replica whose ring no longer holds gateway
		// 1's key refuses its tickets.
		retired, err := ticket.GenerateRing(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		retiredPath := filepath.Join(t.TempDir(), "ticket-keys")
		if err := ticket.WriteRingFile(retiredPath, retired); err != nil {
			t.Fatal(err)
		}
		gw3 := startGW(t, retiredPath)
		conn3 := grpcConn(t, gw3)
		if err := waitServing(actx, conn3, readinessService); err != nil {
			t.Fatalf("readiness of gateway 3: %v", err)
		}
		cl3 := flightsqlClient(conn3)
		n, err = redeem(cl3, ticketFor())
		if err == nil {
			t.Fatalf("a replica without the ticket's key redeemed it (%d rows)", n)
		}
		t.Logf("a ticket whose key was retired: %v", err)
		// (The replica itself works: it redeems its own tickets.)
		info, err := cl3.Execute(actx, sql)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := redeem(cl3, info.GetEndpoint()[0].GetTicket()); err != nil || n != 10 {
			t.Fatalf("gateway 3's own ticket: %d rows, %v", n, err)
		}
	})

	t.Run("8 discovery over many tables", func(t *testing.T) {
		begin := time.Now()
		name := func(i int) string { return fmt.Sprintf("t%05d", i) }
		parallel := func(n int, path func(i int) string, body func(i int) any) error {
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, scenarioWriters)
			for range scenarioWriters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1) - 1)
						if i >= n {
							return
						}
						if _, err := api.call(leader, ownerTok, "POST", path(i), "", body(i)); err != nil {
							errs <- err
							next.Store(int64(n)) // stop the others
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			return <-errs
		}
		cols := []map[string]any{{"name": "id", "type": "bigint"}}
		if err := parallel(scenarioTables, func(int) string { return ml + "/catalogs/lake/schemas/many/tables" },
			func(i int) any { return map[string]any{"name": name(i), "columns": cols} }); err != nil {
			t.Fatal(err)
		}
		t.Logf("created %d tables over REST with %d writers in %s", scenarioTables, scenarioWriters, time.Since(begin).Round(time.Millisecond))

		owner(t, "POST", ml+"/tags", map[string]any{"name": "visible"})
		step := scenarioTables / scenarioVisible
		var visible []string
		for i := range scenarioVisible {
			visible = append(visible, name(i*step+7))
		}
		if err := parallel(scenarioVisible, func(i int) string { return ml + "/objects/table/lake.many." + visible[i] + "/tags" },
			func(int) any { return map[string]any{"tagsToAdd": []string{"visible"}} }); err != nil {
			t.Fatal(err)
		}
		owner(t, "POST", ml+"/roles", map[string]any{"name": "many_reader", "securableObjects": []any{useCatalog, useSchema("many")}})
		owner(t, "POST", ml+"/policies", map[string]any{"name": "many_read", "policyType": "system_access_control",
			"content": map[string]any{"privileges": []string{"SELECT_TABLE"}, "applicable_roles": []string{"many_reader"}}})
		owner(t, "PUT", ml+"/tags/visible/policies/many_read", nil)
		owner(t, "PUT", ml+"/permissions/users/alice@acme/grant", map[string]any{"roleNames": []string{"many_reader"}})

		pattern := "many"
		for gw, conn := range []*grpc.ClientConn{conn1, conn2} {
			cl := flightsqlClient(conn)
			listed := time.Now()
			info, err := cl.GetTables(actx, &flightsql.GetTablesOpts{DbSchemaFilterPattern: &pattern})
			if err != nil {
				t.Fatalf("GetTables via gateway %d: %v", gw+1, err)
			}
			got := readStrings(t, cl, actx, info, 2)
			t.Logf("GetTables via gateway %d: %d tables in %s", gw+1, len(got), time.Since(listed).Round(time.Millisecond))
			slices.Sort(got)
			if !slices.Equal(got, visible) {
				t.Errorf("GetTables via gateway %d: %d tables %v…, want the %d tagged ones", gw+1, len(got), got[:min(len(got), 5)], len(visible))
			}
		}
		reads(t, "alice", alice[0], 0, "sales.orders") // unchanged
		t.Logf("discovery part: %s", time.Since(begin).Round(time.Millisecond))
	})

	t.Run("9 leader loss during queries", func(t *testing.T) {
		// A loop of alice's queries alternating gateways: an authorized one
		// (which may fail during the outage, but only as Unavailable, and
		// otherwise returns exactly its rows) and a denied one, which must
		// never return data.
		loop := []*client{mustDial(t, gw1.uri(), bearer(aliceTok)), mustDial(t, gw2.uri(), bearer(aliceTok))}
		type outcome struct{ ok, failed, deniedOK int }
		var mu sync.Mutex
		var out [2]outcome
		var problems []string
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				gw := i % 2
				c := loop[gw]
				_, rows, err := c.query(ctx, countSQL("sales.orders"))
				_, drows, derr := c.query(ctx, countSQL("hr.staff"))
				mu.Lock()
				switch {
				case err == nil && slices.EqualFunc(rows, [][]string{want("sales.orders")}, slices.Equal):
					out[gw].ok++
				case err == nil:
					problems = append(problems, fmt.Sprintf("gateway %d: sales.orders rows %v", gw+1, rows))
				case adbcStatus(err) == adbc.StatusIO && strings.Contains(err.Error(), "(Unavailable;"): // the gRPC code, as the driver writes it
					out[gw].failed++
				default:
					problems = append(problems, fmt.Sprintf("gateway %d: sales.orders failed other than Unavailable: %v", gw+1, err))
				}
				if derr == nil {
					out[gw].deniedOK++
					problems = append(problems, fmt.Sprintf("gateway %d: alice read hr.staff: %v", gw+1, drows))
				}
				mu.Unlock()
			}
		}()
		snapshot := func() [2]outcome {
			mu.Lock()
			defer mu.Unlock()
			return out
		}
		var stopOnce sync.Once
		halt := func() { stopOnce.Do(func() { close(stop) }) }
		defer halt()
		// waitLoop polls the loop's counters (there is no event to wait on)
		// until cond holds; loopBound is a failure bound only.
		const loopBound = 60 * time.Second
		waitLoop := func(what string, cond func([2]outcome) bool) {
			t.Helper()
			deadline := time.After(loopBound)
			for s := snapshot(); !cond(s); s = snapshot() {
				select {
				case <-done:
					t.Fatalf("the loop ended: %v", problems)
				case <-deadline:
					t.Fatalf("%s: not within %s; loop %+v, problems %v", what, loopBound, s, problems)
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		// Let the loop run on a healthy cluster first: the kill happens
		// after it has completed queries on both gateways.
		waitLoop("queries before the kill", func(s [2]outcome) bool { return s[0].ok > 0 && s[1].ok > 0 })
		before := snapshot()
		killed := leader
		killed.kill(t)
		killedAt := time.Now()
		survivors := without(nodes, killed)
		newLeader := env.waitConverged(t, 3, survivors...)
		t.Logf("killed leader %s; new leader %s after %s", killed.id, newLeader.id, time.Since(killedAt).Round(time.Millisecond))
		// Queries succeed on both gateways after the election.
		for gw, c := range alice {
			reads(t, "alice after the election", c, gw, "sales.orders")
		}
		afterElection := snapshot()
		waitLoop("loop queries after the election", func(s [2]outcome) bool {
			return s[0].ok > afterElection[0].ok && s[1].ok > afterElection[1].ok
		})
		halt()
		<-done
		final := snapshot()
		t.Logf("loop: before the kill %+v; at the end %+v", before, final)
		if len(problems) > 0 {
			t.Errorf("%d problems during the leader loss:\n%s", len(problems), strings.Join(problems, "\n"))
		}
		// The cluster still takes writes, and the gateways still decide:
		// a DENY through the new leader takes effect.
		const denyPath = ml + "/permissions/roles/deny_sales/schema/lake.sales/"
		deny := map[string]any{"privileges": []priv{{"name": "SELECT_TABLE", "condition": "DENY"}}}
		api.must(t, newLeader, ownerTok, "PUT", denyPath+"grant", deny)
		for gw, c := range alice {
			// A gateway may read from the other survivor: poll until it has
			// applied the write (metasrvFailover is a failure bound).
			deadline := time.Now().Add(metasrvFailover)
			for {
				_, _, err := c.query(ctx, countSQL("sales.orders"))
				if adbcStatus(err) == adbc.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("gateway %d: DENY after the election not in effect within %s: %v", gw+1, metasrvFailover, err)
				}
			}
		}
	})

	// No secret reached the logs.
	for name, out := range map[string]string{"gateway 1": gw1.stderr.String(), "gateway 2": gw2.stderr.String(),
		"n1": nodes[0].stderr.String(), "n2": nodes[1].stderr.String(), "n3": nodes[2].stderr.String()} {
		secrets := []string{adminTok, gwTok, ownerTok, aliceTok, bobTok}
		for _, tok := range env.peerTokens {
			secrets = append(secrets, tok)
		}
		for _, secret := range secrets {
			if strings.Contains(out, secret) {
				t.Errorf("%s logged a token", name)
			}
		}
	}
	t.Logf("scenario done in %s", time.Since(started).Round(time.Millisecond))
}
