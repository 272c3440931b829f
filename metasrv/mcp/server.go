package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool tags, selectable with Config.Tags.
const (
	TagDomain  = "domain"
	TagTag     = "tag"
	TagCatalog = "catalog"
	TagSchema  = "schema"
	TagTable   = "table"
	TagPolicy  = "policy"
)

// AllTags lists every tool tag, in the order tools are registered.
var AllTags = []string{TagDomain, TagTag, TagCatalog, TagSchema, TagTable, TagPolicy}

// Config configures a server.
type Config struct {
	// Server is metasrv's REST address: http://host:port or https://….
	Server string
	// Metalake is the metalake (tenant) every tool works in.
	Metalake string
	// HTTPClient calls metasrv (TLS roots, timeouts). Nil: a client with
	// a 60 s timeout and the system roots.
	HTTPClient *http.Client
	// Token, when set, is the bearer token of every REST call (stdio).
	// When empty, each call forwards the Authorization header of the MCP
	// request that carried it (streamable HTTP); a call without one fails.
	Token string
	// Tags selects the tool tags to serve (AllTags when empty).
	Tags []string
	// Version is reported to clients as the server's version.
	Version string
	// BodyTimeout bounds how long the body of a streamable HTTP request
	// may take to arrive once its headers have (408 and the connection
	// closed after it). Zero means 30s.
	BodyTimeout time.Duration
}

// check validates cfg and returns the REST client and the selected tags.
func (cfg Config) check() (*restClient, map[string]bool, error) {
	u, err := url.Parse(cfg.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("mcp: metasrv address %q is not an http:// or https:// URL", cfg.Server)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return nil, nil, fmt.Errorf("mcp: metasrv address %q must be scheme://host[:port] only", cfg.Server)
	}
	if cfg.Metalake == "" {
		return nil, nil, errors.New("mcp: no metalake")
	}
	tags, err := ParseTags(cfg.Tags)
	if err != nil {
		return nil, nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &restClient{base: u.Scheme + "://" + u.Host, metalake: cfg.Metalake, hc: hc}, tags, nil
}

// ParseTags validates tool tags (case-insensitive, blanks ignored) and
// returns the selected set; none selects AllTags.
func ParseTags(list []string) (map[string]bool, error) {
	sel := map[string]bool{}
	for _, t := range list {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if !slices.Contains(AllTags, t) {
			return nil, fmt.Errorf("mcp: unknown tool tag %q (known: %s)", t, strings.Join(AllTags, ","))
		}
		sel[t] = true
	}
	if len(sel) == 0 {
		for _, t := range AllTags {
			sel[t] = true
		}
	}
	return sel, nil
}

// server is what the tool handlers share.
type server struct {
	rest  *restClient
	token string // fixed token (stdio), or "" to forward the caller's header
	tags  map[string]bool
	mcp   *sdk.Server
}

// NewServer returns an MCP server holding the tools of the selected tags.
// Run it over stdio with srv.Run(ctx, &mcp.StdioTransport{}), or serve it
// over streamable HTTP with NewHTTPHandler.
func NewServer(cfg Config) (*sdk.Server, error) {
	rest, tags, err := cfg.check()
	if err != nil {
		return nil, err
	}
	v := cfg.Version
	if v == "" {
		v = "dev"
	}
	s := &server{rest: rest, token: cfg.Token, tags: tags}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "lakegate", Title: "lakegate metadata", Version: v}, &sdk.ServerOptions{
		Instructions: "Tools over lakegate's governed metadata (metalake " + cfg.Metalake + "): business domains, tags, " +
			"catalogs, schemas, tables and policies. Every answer is what metasrv's REST API answers for the caller: " +
			"objects the caller may not see are left out or reported as not found. Full names are dot-joined " +
			"(catalog.schema.table). All tools are read-only except associate_tag_with_metadata.",
	})
	s.register()
	return s.mcp, nil
}

// NewHTTPHandler returns the streamable HTTP handler of a server for cfg.
// Every tool call is sent to metasrv with the Authorization header of the
// HTTP request that carried it; a request without one is answered 401
// before it reaches the MCP layer. cfg.Token must be empty: one token for
// every HTTP caller would let anyone who can reach the listener act as
// its owner.
func NewHTTPHandler(cfg Config) (http.Handler, error) {
	if cfg.Token != "" {
		return nil, errors.New("mcp: a streamable HTTP server forwards each caller's Authorization header; it takes no token")
	}
	srv, err := NewServer(cfg)
	if err != nil {
		return nil, err
	}
	// Stateless: no session outlives its request. The handler checks only
	// that credentials are present, so sessions kept in memory could be
	// opened by anyone, with made-up tokens, without bound; and no tool
	// needs one (each call carries its own Authorization).
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true})
	timeout := cfg.BodyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return http.NewCrossOriginProtection().Handler(requireAuthorization(bodyWithin(h, timeout))), nil
}

// maxBodyBytes bounds a streamable HTTP request's body (tool arguments are
// small).
const maxBodyBytes = 1 << 20

// bodyWithin reads a request's body, at most maxBodyBytes, within timeout
// of the call, before next sees it: anyone with an Authorization header
// gets this far, and a body sent a byte at a time would otherwise hold the
// connection and its goroutine without end. Too slow: 408, too large:
// 413; either closes the connection.
func bodyWithin(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		timed := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			status, msg := http.StatusBadRequest, "the request body could not be read"
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxBodyBytes)
			case errors.Is(err, os.ErrDeadlineExceeded):
				status, msg = http.StatusRequestTimeout, fmt.Sprintf("the request body was not received within %s", timeout)
			}
			w.Header().Set("Connection", "close")
			writeRPCError(w, status, -32600, msg)
			return
		}
		if timed {
			_ = rc.SetReadDeadline(time.Time{})
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}

// writeRPCError answers status with a JSON-RPC error without an id.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// requireAuthorization answers 401 to a request without exactly one
// Authorization header (with two, which one is forwarded would depend on
// who reads them). It checks presence only: metasrv decides whether the
// credentials are valid, on every call.
func requireAuthorization(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if vs := r.Header.Values("Authorization"); len(vs) != 1 || strings.TrimSpace(vs[0]) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lakegate"`)
			writeRPCError(w, http.StatusUnauthorized, -32001, "unauthenticated: send Authorization: Bearer <lakegate token>")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// auth returns the Authorization header value for a call.
func (s *server) auth(req *sdk.CallToolRequest) string {
	if s.token != "" {
		return "Bearer " + s.token
	}
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		return strings.TrimSpace(req.Extra.Header.Get("Authorization"))
	}
	return ""
}

// validator is an input with checks beyond its JSON schema.
type validator interface{ validate() error }

// toolSpec describes one tool.
type toolSpec struct {
	tag, name, title, desc string
	write                  bool                        // not read-only
	schema                 func(js *jsonschema.Schema) // tightens the inferred input schema
}

// answer is a REST answer without the envelope's code, and its summary.
type answer struct {
	body    map[string]json.RawMessage
	summary string
}

// addTool registers a tool whose input is In, unless its tag is not
// selected. run makes the REST call(s) with the caller's credentials.
func addTool[In any](s *server, spec toolSpec, run func(ctx context.Context, auth string, in In) (answer, error)) {
	if !s.tags[spec.tag] {
		return
	}
	js, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: %v", spec.name, err))
	}
	for _, p := range js.Properties {
		// A Go slice infers ["null","array"]; an omitted list is the
		// same as an empty one, so ask for an array.
		if slices.Equal(p.Types, []string{"null", "array"}) {
			p.Types, p.Type = nil, "array"
		}
	}
	if spec.schema != nil {
		spec.schema(js)
	}
	t := &sdk.Tool{Name: spec.name, Title: spec.title, Description: spec.desc, InputSchema: js,
		Annotations: &sdk.ToolAnnotations{Title: spec.title, ReadOnlyHint: !spec.write, IdempotentHint: !spec.write,
			DestructiveHint: new(spec.write), OpenWorldHint: new(false)},
		Meta: sdk.Meta{"lakegate/tag": spec.tag}}
	sdk.AddTool(s.mcp, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		if v, ok := any(&in).(validator); ok {
			if err := v.validate(); err != nil {
				return nil, nil, fmt.Errorf("invalid arguments: %v", err)
			}
		}
		auth := s.auth(req)
		if auth == "" {
			return nil, nil, errNoCredentials
		}
		a, err := run(ctx, auth, in)
		if err != nil {
			return nil, nil, s.redact(err, auth)
		}
		raw, err := json.Marshal(a.body)
		if err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: a.summary}, &sdk.TextContent{Text: string(raw)}},
			StructuredContent: json.RawMessage(raw),
		}, nil, nil
	})
}

// redact returns err with the credentials removed from its text, should a
// message ever echo them.
func (s *server) redact(err error, auth string) error {
	msg := err.Error()
	for _, secret := range []string{auth, strings.TrimSpace(strings.TrimPrefix(auth, "Bearer ")), s.token} {
		if len(secret) >= 8 {
			msg = strings.ReplaceAll(msg, secret, "[redacted]")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// summarize describes an answer in one line: the number and first names
// of the items of its list field, or the name of its object field.
func summarize(what string, body map[string]json.RawMessage) string {
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var list []json.RawMessage
		if json.Unmarshal(body[k], &list) == nil && list != nil {
			names := make([]string, 0, min(len(list), 20))
			for _, it := range list[:min(len(list), 20)] {
				names = append(names, itemName(it))
			}
			s := fmt.Sprintf("%d %s", len(list), what)
			if len(names) > 0 {
				s += ": " + strings.Join(names, ", ")
				if len(list) > len(names) {
					s += fmt.Sprintf(", … (%d more)", len(list)-len(names))
				}
			}
			return s
		}
	}
	for _, k := range keys {
		var obj map[string]json.RawMessage
		if json.Unmarshal(body[k], &obj) == nil && obj != nil {
			return fmt.Sprintf("%s %s", what, itemName(body[k]))
		}
	}
	return what
}

// itemName is the name of a list item: a string, or an object's
// fullName or name (with its status or type when present).
func itemName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Name     string `json:"name"`
		FullName string `json:"fullName"`
		Status   string `json:"status"`
		Type     string `json:"type"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return "?"
	}
	n := o.FullName
	if n == "" {
		n = o.Name
	}
	switch {
	case o.Status != "":
		n += " (" + o.Status + ")"
	case o.FullName != "" && o.Type != "":
		n += " (" + o.Type + ")"
	}
	return n
}
