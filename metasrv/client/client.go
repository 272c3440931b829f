package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"lakegate/metasrv/api"
)

// Privileges a reference may need.
const (
	SelectTable = api.SelectTable
	ModifyTable = api.ModifyTable
)

// Sentinel errors matched by errors.Is on an *Error (by HTTP status, and
// for 409 by Gravitino code) and on failover errors (ErrUnavailable).
var (
	ErrUnauthenticated = api.ErrUnauthenticated
	ErrForbidden       = api.ErrForbidden
	ErrNotFound        = api.ErrNotFound
	ErrBadRequest      = api.ErrBadRequest
	ErrUnavailable     = api.ErrUnavailable
	ErrAlreadyExists   = api.ErrAlreadyExists
	ErrVersionConflict = api.ErrVersionConflict
)

// Error is a non-2xx answer of metasrv; the client's errors wrap it with
// the base URL that answered.
type Error = api.Error

// Config configures a Client.
type Config struct {
	// Addrs are the metasrv nodes: base URLs ("https://10.0.0.1:8816") or
	// host:port (then Scheme applies). At least one.
	Addrs []string
	// Scheme for Addrs without one. Empty means "https".
	Scheme string
	// Token is the query_service bearer token. Required.
	Token string
	// HTTPClient sends the requests (TLS configuration goes here). Nil
	// means a client with a keep-alive transport sized for a gateway.
	HTTPClient *http.Client
	// MaxResponseBytes bounds a response body. Zero means 64 MiB.
	MaxResponseBytes int64
}

// Client calls metasrv's internal API (reads) and its REST API (writes, as
// a delegated user). Safe for concurrent use.
//
// Failover: a request goes to the node that answered last. A read fails
// over to the next node on any connection error or a 503, trying each node
// once. A write fails over only when the connection to a node could not be
// established at all (dial error: refused, unreachable, DNS), so the
// request was never sent; any later failure (a reset after sending, a
// timeout, a 503 — which for a write may mean "outcome unknown") is
// returned to the caller without trying another node, because the write
// may have been applied. Writes that are safe to retry detect a previous
// success themselves: CreateTable answers ErrAlreadyExists, CommitVersion
// ErrVersionConflict (re-read the table's version), DropTable dropped=false.
type Client struct {
	bases []string
	token string
	hc    *http.Client
	max   int64
	cur   atomic.Uint32 // index of the base that answered last
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("metasrv client: no addresses")
	}
	if cfg.Token == "" {
		return nil, errors.New("metasrv client: no token")
	}
	scheme := cfg.Scheme
	if scheme == "" {
		scheme = "https"
	}
	c := &Client{token: cfg.Token, hc: cfg.HTTPClient, max: cfg.MaxResponseBytes}
	for _, a := range cfg.Addrs {
		if !strings.Contains(a, "://") {
			a = scheme + "://" + a
		}
		u, err := url.Parse(a)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("metasrv client: bad address %q", a)
		}
		c.bases = append(c.bases, strings.TrimRight(a, "/"))
	}
	if c.hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 256
		tr.MaxIdleConnsPerHost = 128
		tr.IdleConnTimeout = 90 * time.Second
		tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		c.hc = &http.Client{Transport: tr}
	}
	if c.max == 0 {
		c.max = 64 << 20
	}
	return c, nil
}

// CloseIdleConnections closes the client's idle connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Wire types of the internal API (package api declares them).
type (
	// Ref is one table reference and the privilege it needs (SelectTable
	// or ModifyTable).
	Ref = api.ResolveRef
	// DataFile is one immutable data file of a table version.
	DataFile = api.DataFile
	// Column is one column of a Table.
	Column = api.Column
	// ColumnMask is the mask of one column for the subject.
	ColumnMask = api.ColumnMask
	// Upstream says where a table of an upstream catalog lives.
	Upstream = api.Upstream
	// TableInfo is one table of a Listing.
	TableInfo = api.ListedTable
	// Listing is the answer of ListTables, decided at Generation.
	Listing = api.ListTablesResponse
	// FileRef is one data file referenced by a retained table version.
	FileRef = api.FileRef
	// Table is a resolved, authorized table.
	Table = api.TableDescriptor
)

// RefResult is the answer for one Ref: exactly one of Unavailable (missing
// or forbidden, indistinguishable), Conflict (conflicting policies: the
// query must be refused) and Table is set.
type RefResult struct {
	Unavailable bool
	Conflict    bool
	Table       *Table
}

// Result is the answer of Resolve: one RefResult per Ref, in order, all
// decided at Generation.
type Result struct {
	Generation uint64
	Refs       []RefResult
}

// Resolve resolves and authorizes refs (all in catalog) for subject, a
// user of tenant's metalake, in one call.
func (c *Client) Resolve(ctx context.Context, tenant, subject, catalog string, refs []Ref) (Result, error) {
	return c.ResolveAt(ctx, tenant, subject, catalog, 0, refs)
}

// ResolveAt is Resolve on a snapshot at generation ≥ minGeneration (0: any).
func (c *Client) ResolveAt(ctx context.Context, tenant, subject, catalog string, minGeneration uint64, refs []Ref) (Result, error) {
	if refs == nil {
		refs = []Ref{}
	}
	body, err := json.Marshal(api.ResolveRequest{Subject: subject, Catalog: catalog, MinGeneration: minGeneration, Refs: refs})
	if err != nil {
		return Result{}, err
	}
	var out api.ResolveAnswer
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}, {api.DelegateUserHeader, subject}}
	if _, err := c.do(ctx, http.MethodPost, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/resolve", hdr, body, false, &out); err != nil {
		return Result{}, err
	}
	if len(out.Results) != len(refs) {
		return Result{}, fmt.Errorf("metasrv client: %d results for %d refs", len(out.Results), len(refs))
	}
	res := Result{Generation: out.Generation, Refs: make([]RefResult, len(refs))}
	for i, w := range out.Results {
		switch {
		case w.Unavailable:
			res.Refs[i].Unavailable = true
		case w.Error == api.ConflictError:
			res.Refs[i].Conflict = true
		case w.Error != "" || w.FullName == "":
			return Result{}, fmt.Errorf("metasrv client: result %d: unexpected answer", i)
		default:
			d := w.TableDescriptor
			res.Refs[i].Table = &d
		}
	}
	return res, nil
}

// Generation returns tenant's current governance generation on the node
// that answers.
func (c *Client) Generation(ctx context.Context, tenant string) (uint64, error) {
	var out api.GenerationResponse
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}}
	if _, err := c.do(ctx, http.MethodGet, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/generation", hdr, nil, false, &out); err != nil {
		return 0, err
	}
	return out.Generation, nil
}

// WatchGenerations returns the node's generation of every metalake in
// known (0 for one that does not exist) as soon as one of them differs from
// the generation known gives for it, or once wait (capped by the node) has
// passed. It is a read: it fails over like Resolve. ctx should outlast
// wait.
func (c *Client) WatchGenerations(ctx context.Context, known map[string]uint64, wait time.Duration) (map[string]uint64, error) {
	body, err := json.Marshal(api.WatchRequest{Known: known, WaitMillis: wait.Milliseconds()})
	if err != nil {
		return nil, err
	}
	var out api.WatchResponse
	if _, err := c.do(ctx, http.MethodPost, "/internal/v1/generations", nil, body, false, &out); err != nil {
		return nil, err
	}
	return out.Generations, nil
}

// ListTables lists, for subject (a user of tenant's metalake), the schemas
// of catalog it may see and the tables it may SELECT, from a snapshot at
// generation ≥ minGeneration (0: any). A missing catalog and one the
// subject may not see both give an empty Listing.
func (c *Client) ListTables(ctx context.Context, tenant, subject, catalog string, minGeneration uint64) (Listing, error) {
	body, err := json.Marshal(api.ListTablesRequest{Subject: subject, Catalog: catalog, MinGeneration: minGeneration})
	if err != nil {
		return Listing{}, err
	}
	var out Listing
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}, {api.DelegateUserHeader, subject}}
	if _, err := c.do(ctx, http.MethodPost, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/tables", hdr, body, false, &out); err != nil {
		return Listing{}, err
	}
	return out, nil
}

// ReferencedFiles returns every data file referenced by a retained version
// of any table of tenant's metalake, and the generation it was computed
// at: the garbage collector's keep list. It needs no subject.
func (c *Client) ReferencedFiles(ctx context.Context, tenant string) (generation uint64, files []FileRef, err error) {
	var out api.FilesResponse
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}}
	if _, err := c.do(ctx, http.MethodGet, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/files", hdr, nil, false, &out); err != nil {
		return 0, nil, err
	}
	return out.Generation, out.Files, nil
}

// AccessLogTable returns the storage id and current version of the access
// log table of catalog in tenant's metalake ("" and 0 while it does not
// exist), as the node that answers knows it. It is a read: it fails over
// like Resolve.
func (c *Client) AccessLogTable(ctx context.Context, tenant, catalog string) (storageID string, version uint64, err error) {
	var out api.AccessLogResponse
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}}
	path := "/internal/v1/metalakes/" + url.PathEscape(tenant) + "/access-log?catalog=" + url.QueryEscape(catalog)
	if _, err := c.do(ctx, http.MethodGet, path, hdr, nil, false, &out); err != nil {
		return "", 0, err
	}
	return out.StorageID, out.Version, nil
}

// AccessLogFile is one file of the access log table's current version:
// its path and its size as committed (-1 when the node did not say).
type AccessLogFile struct {
	Path string
	Size int64
}

// AccessLogFiles is AccessLogTable with the current version's files, for
// retention and compaction.
func (c *Client) AccessLogFiles(ctx context.Context, tenant, catalog string) (storageID string, files []AccessLogFile, err error) {
	var out api.AccessLogResponse
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}}
	path := "/internal/v1/metalakes/" + url.PathEscape(tenant) + "/access-log?files=true&catalog=" + url.QueryEscape(catalog)
	if _, err := c.do(ctx, http.MethodGet, path, hdr, nil, false, &out); err != nil {
		return "", nil, err
	}
	files = make([]AccessLogFile, len(out.Files))
	for i, p := range out.Files {
		files[i] = AccessLogFile{Path: p, Size: -1}
		if len(out.Sizes) == len(out.Files) && out.Sizes[i] >= 0 {
			files[i].Size = out.Sizes[i]
		}
	}
	return out.StorageID, files, nil
}

// CommitAccessLog commits files, which the gateway wrote into tenant's
// stage under storageID, as the next version of catalog's access log table
// (<catalog>.system.access_events), creating it with storageID when it does
// not exist. The gateway commits as itself (its token's query_service,
// delegated for tenant). It returns the version the files made and the
// generation it was applied at. Files of the current version named in
// expire are left out of the new one (retention; unknown paths are
// ignored). ErrVersionConflict: the table has another
// storage id (read it again with AccessLogTable). A write: it fails over
// only when the request was never sent.
func (c *Client) CommitAccessLog(ctx context.Context, tenant, catalog, storageID string, files []DataFile, expire ...string) (version, generation uint64, err error) {
	if files == nil {
		files = []DataFile{}
	}
	return c.commitAccessLog(ctx, tenant, api.CommitAccessLogRequest{Catalog: catalog, StorageID: storageID, Files: files, Expire: expire})
}

// CompactAccessLog commits merged, files the gateway wrote into tenant's
// stage under storageID by merging the files replaced, as the next version
// of catalog's access log table: the current files but replaced, then
// merged. metasrv refuses it (409) when a file of replaced is no longer
// current, and (400) when merged and replaced hold different numbers of
// events.
func (c *Client) CompactAccessLog(ctx context.Context, tenant, catalog, storageID string, merged []DataFile, replaced []string) (version, generation uint64, err error) {
	return c.commitAccessLog(ctx, tenant, api.CommitAccessLogRequest{Catalog: catalog, StorageID: storageID, Files: merged, Expire: replaced, Compact: true})
}

// commitAccessLog posts req to tenant's access-log commit.
func (c *Client) commitAccessLog(ctx context.Context, tenant string, req api.CommitAccessLogRequest) (version, generation uint64, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return 0, 0, err
	}
	var out api.CommitAccessLogResponse
	hdr := [][2]string{{"Accept", "application/vnd.gravitino.v1+json"}}
	if _, err := c.do(ctx, http.MethodPost, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/access-log", hdr, body, true, &out); err != nil {
		return 0, 0, err
	}
	return out.Version, out.Generation, nil
}

// restPath is the REST path of a catalog-tree collection or item of tenant,
// each part path-escaped: parts alternate collection names and item names.
func restPath(tenant string, parts ...string) string {
	var b strings.Builder
	b.WriteString("/api/metalakes/")
	b.WriteString(url.PathEscape(tenant))
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// write sends a REST write as subject, delegated for tenant, and returns
// the metalake generation the write was applied at (Lakegate-Generation).
func (c *Client) write(ctx context.Context, tenant, subject, method, path string, body any, out any) (uint64, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return 0, err
		}
	}
	hdr := [][2]string{{api.DelegateTenantHeader, tenant}, {api.DelegateUserHeader, subject}, {"Accept", "application/vnd.gravitino.v1+json"}}
	h, err := c.do(ctx, method, path, hdr, b, true, out)
	if err != nil {
		return 0, err
	}
	g, err := strconv.ParseUint(h.Get(api.GenerationHeader), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("metasrv client: write answered without a valid %s header", api.GenerationHeader)
	}
	return g, nil
}

// CreateSchema creates schema in catalog as subject (a user of tenant's
// metalake, who needs CREATE_SCHEMA) and returns the generation it was
// applied at. An existing schema gives ErrAlreadyExists.
func (c *Client) CreateSchema(ctx context.Context, tenant, subject, catalog, schema string) (generation uint64, err error) {
	var out api.SchemaResponse
	return c.write(ctx, tenant, subject, http.MethodPost, restPath(tenant, "catalogs", catalog, "schemas"),
		api.CreateSchemaRequest{Name: schema}, &out)
}

// CreateTable creates catalog.schema.table with columns as subject (who
// needs CREATE_TABLE on the schema) and returns the generation it was
// applied at. storageID names the table's directory "tables/<storageID>/"
// in the tenant's stage: one the gateway drew at random for files it wrote
// (metasrv takes a storage id and files from a query_service only), or
// empty for metasrv to mint one no table of the metalake ever had. With a
// storageID or non-nil files (even empty) the table starts at version 1
// made of files; otherwise at version 0. An existing table (or a storage id in use) gives
// ErrAlreadyExists.
func (c *Client) CreateTable(ctx context.Context, tenant, subject, catalog, schema, table string, columns []Column, storageID string, files []DataFile) (generation uint64, err error) {
	body := api.CreateTableRequest{Name: table, Columns: columnDTOs(columns), StorageID: storageID, Files: files}
	if body.Columns == nil {
		body.Columns = []api.ColumnDTO{}
	}
	var out api.TableResponse
	return c.write(ctx, tenant, subject, http.MethodPost, restPath(tenant, "catalogs", catalog, "schemas", schema, "tables"), body, &out)
}

// CommitVersion commits a new version of catalog.schema.table as subject
// (who needs MODIFY_TABLE, or ownership): base must be the table's current
// version, else ErrVersionConflict and nothing changes. Without replace,
// files are appended to base's files (columns must then be nil or the
// table's columns); with replace, the version is exactly files with the
// schema columns (required). It returns the new version (base+1) and the
// generation it was applied at.
func (c *Client) CommitVersion(ctx context.Context, tenant, subject, catalog, schema, table string, base uint64, replace bool, columns []Column, files []DataFile) (version, generation uint64, err error) {
	if files == nil {
		files = []DataFile{}
	}
	body := api.CommitVersionRequest{Base: &base, Replace: replace, Columns: columnDTOs(columns), Files: files}
	var out api.CommitVersionResponse
	g, err := c.write(ctx, tenant, subject, http.MethodPost,
		restPath(tenant, "catalogs", catalog, "schemas", schema, "tables", table, "versions"), body, &out)
	if err != nil {
		return 0, 0, err
	}
	if out.Generation != 0 {
		g = out.Generation
	}
	return out.Version, g, nil
}

// DropTable drops catalog.schema.table as subject (who needs ownership of
// it or an ancestor). dropped is false when the table does not exist or
// the subject may not see it. generation is the metalake's generation after
// the drop (or the current one when nothing was dropped).
func (c *Client) DropTable(ctx context.Context, tenant, subject, catalog, schema, table string) (dropped bool, generation uint64, err error) {
	var out api.DropResponse
	g, err := c.write(ctx, tenant, subject, http.MethodDelete,
		restPath(tenant, "catalogs", catalog, "schemas", schema, "tables", table), nil, &out)
	if err != nil {
		return false, 0, err
	}
	return out.Dropped, g, nil
}

// columnDTOs is columns as the REST API's table columns (nil for nil).
func columnDTOs(columns []Column) []api.ColumnDTO {
	if columns == nil {
		return nil
	}
	out := make([]api.ColumnDTO, len(columns))
	for i, c := range columns {
		out[i] = api.ColumnDTO{Name: c.Name, Type: c.Type, Nullable: &c.Nullable}
	}
	return out
}

// do sends the request to the current base and returns the answer's
// headers. It fails over to the next base, each at most once: for a read
// (write false) on a connection error or a 503; for a write only when the
// connection could not be established, so the request was not sent (see
// Client).
func (c *Client) do(ctx context.Context, method, path string, hdr [][2]string, body []byte, write bool, out any) (http.Header, error) {
	start := int(c.cur.Load())
	var last error
	for k := range c.bases {
		i := (start + k) % len(c.bases)
		h, err := c.once(ctx, c.bases[i], method, path, hdr, body, out)
		if err == nil {
			if i != start {
				c.cur.Store(uint32(i))
			}
			return h, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if write && !notSent(err) {
			var ce connError
			if errors.As(err, &ce) { // sent, or maybe sent: do not resend elsewhere
				return nil, fmt.Errorf("%w: write outcome unknown: %w", ErrUnavailable, err)
			}
			return nil, err
		}
		if !retryable(err) {
			return nil, err
		}
		last = err
	}
	return nil, fmt.Errorf("%w: no metasrv node answered: %w", ErrUnavailable, last)
}

// connError marks a failure to talk to a node at all.
type connError struct{ err error }

func (e connError) Error() string { return e.err.Error() }
func (e connError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var ce connError
	if errors.As(err, &ce) {
		return true
	}
	var ae *Error
	return errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable
}

// notSent reports whether err is a failure to establish the connection: the
// request never left this process.
func notSent(err error) bool {
	var ce connError
	if !errors.As(err, &ce) {
		return false
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

func (c *Client) once(ctx context.Context, base, method, path string, hdr [][2]string, body []byte, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	delegated := false
	for _, h := range hdr {
		req.Header.Set(h[0], h[1])
		delegated = delegated || h[0] == api.DelegateUserHeader
	}
	// The delegated user's own JWT, for metasrv to verify itself.
	if tok := api.DelegateTokenFrom(ctx); delegated && tok != "" {
		req.Header.Set(api.DelegateTokenHeader, tok)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, connError{fmt.Errorf("metasrv client: %s: %w", base, err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	if err != nil {
		return nil, connError{fmt.Errorf("metasrv client: %s: reading answer: %w", base, err)}
	}
	if int64(len(b)) > c.max {
		return nil, fmt.Errorf("metasrv client: %s: answer larger than %d bytes", base, c.max)
	}
	if resp.StatusCode != http.StatusOK {
		e := api.DecodeError(resp.StatusCode, b)
		if e.Message == "" {
			e.Message = string(bytes.TrimSpace(b[:min(len(b), 512)]))
		}
		return nil, fmt.Errorf("metasrv client: %s: %w", base, e)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("metasrv client: %s: decoding answer: %w", base, err)
	}
	return resp.Header, nil
}
