package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"lakegate/metasrv/api"
)

const adminUsage = `usage: lakegate admin [global flags] <command> [args] [flags]

global flags (accepted anywhere on the line):
  --server URL     metasrv REST address (default $LAKEGATE_METASRV or http://127.0.0.1:8816)
  --token TOKEN    bearer token (default $LAKEGATE_TOKEN)
  --metalake M     metalake (tenant) to work in (default $LAKEGATE_METALAKE, else the
                   caller's own: see whoami)
  --json           print the raw response body instead of a table
  --tls-ca FILE    trust this CA (PEM) instead of the system roots
  --insecure-no-tls  allow http:// to a non-loopback --server (a trusted network):
                   the token crosses it in clear

commands:
  cluster status
  cluster remove-node ID
  whoami           who the token belongs to: principal, tenant, role, default metalake
  principals reload [--gateway ADDR]... [--tls] [--no-metasrv]
                   (operator: the metasrv node at --server, and each gateway named, reload
                    their principal map file; a refused map leaves the previous one in force)
  metalake create NAME [--comment C] [--owner O] [--property K=V]...
  metalake list | get NAME | drop NAME [--force]
  catalog create NAME [--type managed|upstream] [--comment C] [--property K=V]...
                   (upstream: --property upstream.address=HOST:PORT --property upstream.dialect=mysql|sqlite
                    [--property upstream.tls=true|false] [--property upstream.credentials=FILE])
  catalog list | get NAME | drop NAME [--cascade] [--force]
  catalog alter NAME [--rename NEW] [--comment C] [--set K=V]... [--unset K]...
  schema create CATALOG.SCHEMA [--comment C]
  schema list CATALOG | get CATALOG.SCHEMA | drop CATALOG.SCHEMA [--cascade]
  schema alter CATALOG.SCHEMA [--rename NEW] [--comment C] [--set K=V]... [--unset K]...
  table list CATALOG.SCHEMA | get CATALOG.SCHEMA.TABLE | versions CATALOG.SCHEMA.TABLE
  tag create NAME [--comment C] [--allowed-values a,b]
  tag list [OBJECT_TYPE FULLNAME] | get NAME | drop NAME | objects TAG [--value V]
  tag attach OBJECT_TYPE FULLNAME TAG[=VALUE]...
  tag detach OBJECT_TYPE FULLNAME TAG[=VALUE]...
  policy list | get NAME
  policy create NAME --type row_filter|column_mask --content JSON [--comment C] [--disabled]
  policy alter NAME [--rename N] [--comment C] [--content JSON]
  policy enable NAME | disable NAME | delete NAME
  policy attach NAME TAG[=VALUE] | detach NAME TAG
  domain create NAME (--tag TAG[=VALUE] | --new-tag TAG) [--parent P] [--comment C] [--property K=V]...
  domain list [--under DOMAIN] | get NAME | delete NAME
  domain alter NAME [--rename NEW] [--comment C] [--set K=V]... [--unset K]...
  domain publish NAME | unpublish NAME | move NAME PARENT | detach NAME
  domain set-tag NAME (TAG[=VALUE] | --remove)
  domain members NAME [--domains D,...] [--types T,...] [--name-contains S]
  domain of OBJECT_TYPE FULLNAME
  grant ROLE OBJECT_TYPE FULLNAME PRIV[,PRIV]... [--deny]
  revoke ROLE OBJECT_TYPE FULLNAME PRIV[,PRIV]... [--deny]
  role create NAME | list | get NAME | drop NAME
  owner get OBJECT_TYPE FULLNAME
  owner set OBJECT_TYPE FULLNAME user|group NAME
  user create NAME | list | grant-role USER ROLE... | revoke-role USER ROLE...
  events [--since N] [--limit N]
  explain USER PRIVILEGE OBJECT_TYPE:NAME   (why USER holds PRIVILEGE on the object, or not)
  access-log [--user U] [--table SCHEMA.TABLE] [--since DURATION|TIMESTAMP] [--denied] [--limit N]
                   (system.access_events newest first, read through the gateway at --addr
                    as the caller: default $LAKEGATE_ADDR or 127.0.0.1:8815)
  --dry-run        on tag, policy, grant, revoke, role, user and owner changes: show what the change
                   would grant or take away, and which reads it would filter or mask, without it
  bench writes [--writers N] [--writes N] [--prefix P] [--keep] [--min-rate R] [--max-p99 D]
                   (a load generator: creates tag P and catalogs P_NNNN, times committed tag
                    attach/detach writes, drops them again; refuses to start if one exists)
`

// adminCommands maps "group verb" (or "group" for verbless commands) to
// its implementation.
var adminCommands = map[string]func(a *admin, args []string) error{
	"whoami":              adminWhoami,
	"principals reload":   adminPrincipalsReload,
	"cluster status":      adminClusterStatus,
	"cluster remove-node": adminClusterRemove,
	"metalake create":     adminMetalakeCreate,
	"metalake list":       adminMetalakeList,
	"metalake get":        adminMetalakeGet,
	"metalake drop":       adminMetalakeDrop,
	"catalog create":      adminCatalogCreate,
	"catalog list":        adminCatalogList,
	"catalog get":         getByName("catalogs", func(a *admin, r *api.CatalogResponse) { a.printCatalog(r.Catalog) }),
	"catalog drop":        adminCatalogDrop,
	"catalog alter":       adminCatalogAlter,
	"schema create":       adminSchemaCreate,
	"schema list":         adminSchemaList,
	"schema get":          adminSchemaGet,
	"schema drop":         adminSchemaDrop,
	"schema alter":        adminSchemaAlter,
	"table list":          adminTableList,
	"table get":           adminTableGet,
	"table versions":      adminTableVersions,
	"tag create":          adminTagCreate,
	"tag list":            adminTagList,
	"tag get":             getByName("tags", func(a *admin, r *api.TagResponse) { a.printTag(r.Tag) }),
	"tag drop":            dropByName("tags", "tag"),
	"tag objects":         adminTagObjects,
	"tag attach":          func(a *admin, args []string) error { return adminTagAssoc(a, "attach", args) },
	"tag detach":          func(a *admin, args []string) error { return adminTagAssoc(a, "detach", args) },
	"policy list":         adminPolicyList,
	"policy get":          getByName("policies", func(a *admin, r *api.PolicyResponse) { a.printPolicy(r.Policy) }),
	"policy create":       adminPolicyCreate,
	"policy alter":        adminPolicyAlter,
	"policy enable":       func(a *admin, args []string) error { return adminPolicyEnable(a, true, args) },
	"policy disable":      func(a *admin, args []string) error { return adminPolicyEnable(a, false, args) },
	"policy delete":       adminPolicyDelete,
	"policy attach":       adminPolicyAttach,
	"policy detach":       adminPolicyDetach,
	"domain create":       adminDomainCreate,
	"domain list":         adminDomainList,
	"domain get":          adminDomainGet,
	"domain alter":        adminDomainAlter,
	"domain publish":      func(a *admin, args []string) error { return adminDomainStatus(a, "published", args) },
	"domain unpublish":    func(a *admin, args []string) error { return adminDomainStatus(a, "draft", args) },
	"domain move":         adminDomainMove,
	"domain detach":       adminDomainDetach,
	"domain set-tag":      adminDomainSetTag,
	"domain delete":       adminDomainDelete,
	"domain members":      adminDomainMembers,
	"domain of":           adminDomainOf,
	"grant":               func(a *admin, args []string) error { return adminGrant(a, "grant", args) },
	"revoke":              func(a *admin, args []string) error { return adminGrant(a, "revoke", args) },
	"owner get":           adminOwnerGet,
	"owner set":           adminOwnerSet,
	"role create":         adminRoleCreate,
	"role list":           adminRoleList,
	"role get":            getByName("roles", func(a *admin, r *api.RoleResponse) { a.printRole(r.Role) }),
	"role drop":           dropByName("roles", "role"),
	"user create":         adminUserCreate,
	"user list":           adminUserList,
	"user grant-role":     func(a *admin, args []string) error { return adminUserRoles(a, "grant", args) },
	"user revoke-role":    func(a *admin, args []string) error { return adminUserRoles(a, "revoke", args) },
	"events":              adminEvents,
	"explain":             adminExplain,
	"access-log":          adminAccessLog,
	"bench writes":        adminBenchWrites,
}

// admin is one `lakegate admin` invocation: the global flags, the HTTP
// client and the output.
type admin struct {
	ctx            context.Context
	name           string // the command, for flag errors
	server, token  string
	metalake       string
	tlsCA          string
	insecure       bool // --insecure-no-tls
	json           bool
	dryRun         bool // --dry-run: writes are previewed (see dryRunnable)
	hc             *http.Client
	stdout, stderr io.Writer
}

// runAdmin runs `lakegate admin …`.
func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := &admin{ctx: ctx, name: "admin", stdout: stdout, stderr: stderr,
		server: os.Getenv("LAKEGATE_METASRV"), token: os.Getenv("LAKEGATE_TOKEN"), metalake: os.Getenv("LAKEGATE_METALAKE")}
	if a.server == "" {
		a.server = "http://127.0.0.1:8816"
	}
	fs := a.flags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpRequest{text: adminHelp()}
		}
		return fmt.Errorf("%w: %s", errUsage, flagMessage(err))
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "help" {
		if len(rest) == 0 {
			fmt.Fprint(stderr, adminUsage)
			return fmt.Errorf("%w: admin needs a command", errUsage)
		}
		return &helpRequest{text: adminHelp()}
	}
	key, rest := rest[0], rest[1:]
	cmd, ok := adminCommands[key]
	if !ok && len(rest) > 0 && !isHelpFlag(rest[0]) {
		key, rest = key+" "+rest[0], rest[1:]
		cmd, ok = adminCommands[key]
	}
	if !ok && (len(rest) == 0 || isHelpFlag(rest[0])) {
		if help, isGroup := adminGroupHelp(key); isGroup {
			if len(rest) == 0 {
				fmt.Fprint(stderr, help)
				return fmt.Errorf("%w: admin %s needs a verb", errUsage, key)
			}
			return &helpRequest{text: help}
		}
	}
	if !ok {
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("%w: unknown admin command %q", errUsage, key)
	}
	a.name = "admin " + key
	if dryRunCommands[key] {
		cmd = dryRunnable(cmd)
	}
	return cmd(a, rest)
}

// flags returns a FlagSet holding the global flags, bound to a.
func (a *admin) flags() *flag.FlagSet {
	fs := newFlagSet(a.name)
	fs.StringVar(&a.server, "server", a.server, "metasrv REST address (default $LAKEGATE_METASRV or http://127.0.0.1:8816)")
	fs.StringVar(&a.token, "token", a.token, "bearer token (default $LAKEGATE_TOKEN)")
	fs.StringVar(&a.metalake, "metalake", a.metalake, "metalake to work in (default $LAKEGATE_METALAKE, else the caller's own: see whoami)")
	fs.BoolVar(&a.json, "json", a.json, "print the raw response body")
	fs.StringVar(&a.tlsCA, "tls-ca", a.tlsCA, "trust this CA (PEM) instead of the system roots")
	fs.BoolVar(&a.insecure, "insecure-no-tls", a.insecure, "allow http:// to a non-loopback --server (a trusted network): the token crosses it in clear")
	return fs
}

// parse parses flags and positional arguments in any order, checks the
// number of positional arguments (max < 0: no upper bound) and prepares
// the client.
func (a *admin) parse(fs *flag.FlagSet, args []string, minArgs, maxArgs int, argsUsage string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{text: adminCommandHelp(a.name, argsUsage, fs)}
			}
			return nil, fmt.Errorf("%w: %s: %s (see \"lakegate %s --help\")", errUsage, a.name, flagMessage(err), a.name)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	if len(pos) < minArgs || (maxArgs >= 0 && len(pos) > maxArgs) {
		return nil, fmt.Errorf("%w: usage: lakegate %s %s", errUsage, a.name, argsUsage)
	}
	if a.token == "" {
		return nil, fmt.Errorf("%w: no token: pass --token or set LAKEGATE_TOKEN", errUsage)
	}
	var err error
	if a.server, a.hc, err = metasrvClient(a.server, a.tlsCA, a.insecure); err != nil {
		return nil, err
	}
	return pos, nil
}

// metasrvClient returns server as a base URL — http:// when it names no
// scheme, https:// with a CA file — and a client for it trusting caFile
// (the system roots when empty). Plain http:// beyond loopback is refused
// unless insecure (--insecure-no-tls): every request carries a token.
func metasrvClient(server, caFile string, insecure bool) (string, *http.Client, error) {
	if !strings.Contains(server, "://") {
		scheme := "http://"
		if caFile != "" {
			scheme = "https://"
		}
		server = scheme + server
	}
	server = strings.TrimRight(server, "/")
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("%w: --server %q is not an http:// or https:// address", errUsage, server)
	}
	if u.Scheme == "http" {
		if err := checkClearText("--server", u.Hostname(), "https:// (with --tls-ca)", insecure); err != nil {
			return "", nil, err
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return "", nil, fmt.Errorf("reading --tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return "", nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	}
	return server, &http.Client{Timeout: 60 * time.Second, Transport: tr}, nil
}

// lake returns the path of segs (URL-encoded) under the metalake: the one
// --metalake or $LAKEGATE_METALAKE names, else the caller's own (whoami).
func (a *admin) lake(segs ...string) (string, error) {
	if a.metalake == "" {
		me, err := a.whoami()
		if err != nil {
			return "", err
		}
		if me.Metalake == "" {
			return "", fmt.Errorf("%w: %s needs --metalake (or $LAKEGATE_METALAKE): %s is an %s, which works on every metalake and has none of its own", errUsage, a.name, me.Name, me.Role)
		}
		a.metalake = me.Metalake
	}
	return apiPath(append([]string{"api", "metalakes", a.metalake}, segs...)...), nil
}

// whoami asks metasrv who the token belongs to.
func (a *admin) whoami() (api.WhoamiDTO, error) {
	raw, err := a.send(a.ctx, http.MethodGet, "/api/whoami", nil, "")
	if err != nil {
		return api.WhoamiDTO{}, fmt.Errorf("asking metasrv whose token this is (for the default metalake): %w", err)
	}
	var r api.WhoamiResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return api.WhoamiDTO{}, fmt.Errorf("decoding the answer: %w", err)
	}
	return r.Principal, nil
}

// apiPath joins URL-encoded path segments.
func apiPath(segs ...string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// call sends a request and returns the body of a 2xx answer. body is
// marshaled as JSON with contentType (default application/json).
func (a *admin) call(method, path string, query url.Values, body any, contentType string) ([]byte, error) {
	if a.dryRun && method != http.MethodGet {
		return nil, a.previewWrite(method, path, body)
	}
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return a.send(a.ctx, method, path, b, contentType)
}

// send sends body (none if nil) as contentType (default
// application/json) to path, which may carry a query, and returns the
// body of a 2xx answer or an *api.Error.
func (a *admin) send(ctx context.Context, method, path string, body []byte, contentType string) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.server+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if rd != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", contentType)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return raw, nil
	}
	e := api.DecodeError(resp.StatusCode, raw)
	if e.Message == "" { // the operator's own server: show what it said
		e.Message = strings.TrimSpace(string(raw))
	}
	return nil, e
}

// show prints raw with --json, and otherwise decodes it into v and calls
// render.
func (a *admin) show(raw []byte, v any, render func()) error {
	if a.json {
		a.stdout.Write(bytes.TrimSpace(raw))
		fmt.Fprintln(a.stdout)
		return nil
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			return fmt.Errorf("decoding the answer: %w", err)
		}
	}
	render()
	return nil
}

// table prints aligned rows under a header.
func (a *admin) table(header []string, rows [][]string) {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = printable(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// fields prints aligned "key: value" lines, leaving out empty values.
func (a *admin) fields(kv ...string) {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 1, ' ', 0)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[i], printable(kv[i+1]))
		}
	}
	tw.Flush()
}

// request sends a request to path and shows the answer: the raw body
// with --json, and otherwise decoded into out and printed by print.
func (a *admin) request(method, path string, q url.Values, body, out any, print func()) error {
	raw, err := a.call(method, path, q, body, "")
	if err != nil {
		return err
	}
	return a.show(raw, out, print)
}

// lakeRequest is request for the path of segs under the metalake.
func (a *admin) lakeRequest(method string, segs []string, q url.Values, body, out any, print func()) error {
	p, err := a.lake(segs...)
	if err != nil {
		return err
	}
	return a.request(method, p, q, body, out, print)
}

// dropped returns the printer of a DELETE answer r about what.
func (a *admin) dropped(r *api.DropResponse, what string) func() {
	return func() {
		if r.Dropped {
			fmt.Fprintf(a.stdout, "dropped %s\n", what)
		} else {
			fmt.Fprintf(a.stdout, "%s does not exist (nothing dropped)\n", what)
		}
	}
}

// lakeDrop deletes the object at segs under the metalake and reports it
// as what.
func (a *admin) lakeDrop(segs []string, q url.Values, what string) error {
	var r api.DropResponse
	return a.lakeRequest("DELETE", segs, q, nil, &r, a.dropped(&r, what))
}

// tableOf prints a table with one row per item.
func tableOf[T any](a *admin, header []string, items []T, row func(T) []string) {
	rows := make([][]string, 0, len(items))
	for _, it := range items {
		rows = append(rows, row(it))
	}
	a.table(header, rows)
}

// withDetails is the query asking a list for full objects.
func withDetails() url.Values { return url.Values{"details": {"true"}} }

// propertyFlag collects repeated K=V flags.
type propertyFlag map[string]string

func (p propertyFlag) String() string { return "" }

func (p propertyFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	p[k] = v
	return nil
}

func props(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ", ")
}

// splitName splits a dotted full name into exactly n parts.
func (a *admin) splitName(s string, n int, what string) ([]string, error) {
	parts := strings.SplitN(s, ".", n)
	if len(parts) != n {
		return nil, fmt.Errorf("%w: %s: want %s, got %q", errUsage, a.name, what, s)
	}
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%w: %s: want %s, got %q", errUsage, a.name, what, s)
		}
	}
	return parts, nil
}

// parseName parses exactly one positional argument, a dotted full name
// of n parts (see parse and splitName).
func (a *admin) parseName(fs *flag.FlagSet, args []string, n int, what, argsUsage string) ([]string, error) {
	pos, err := a.parse(fs, args, 1, 1, argsUsage)
	if err != nil {
		return nil, err
	}
	return a.splitName(pos[0], n, what)
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func splitList(s string) []string {
	out := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// ts renders a timestamp in UTC to the second; "" for none.
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
