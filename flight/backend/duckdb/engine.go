package duckdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lakegate/flight/backend"
)

// Errors returned by the package besides backend's sentinels.
var (
	// ErrClosed reports a call on an Engine after Close.
	ErrClosed = errors.New("duckdb: engine closed")
	// ErrInvalidName reports a tenant id, table version id or file key that
	// fails validation. The rejected value is not echoed.
	ErrInvalidName = errors.New("duckdb: invalid name")
)

// Engine-side names. Relations (the views Bind creates) live in relSchema;
// every connection's default schema is emptySchema, which holds nothing.
const (
	emptySchema = "lg_empty"
	relSchema   = "lg_rel"
)

// tenantRE is authz.TenantID's shape (alphanumeric at both ends), re-checked
// here because the id becomes a directory name.
var tenantRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$`)

func validTenant(id string) bool { return tenantRE.MatchString(id) }

// Engine runs authorized SQL on one locked-down DuckDB instance per tenant. It
// implements backend.Backend and is safe for use from multiple goroutines.
type Engine struct {
	cfg  Config
	root string // absolute, symlink-free
	log  *slog.Logger
	// reads allocates the batches Execute returns (coalesce.go).
	reads *bufferPool

	mu      sync.Mutex
	closed  bool
	tenants map[string]*tenantSlot
	budget  budget // the memory budget's accounting (budget.go)
}

var _ backend.Backend = (*Engine)(nil)

// tenantSlot lets one goroutine open a tenant while others wait for it without
// holding Engine.mu.
type tenantSlot struct {
	id   string
	done chan struct{}
	t    *tenant
	err  error
	used time.Time // last handed out; guarded by Engine.mu

	// The memory budget's view of the tenant (budget.go), guarded by
	// Engine.mu: the bytes it holds, its running statements, and whether
	// it was closed (evicted or swept) and left the engine.
	held   int64
	active int
	gone   bool
	// copies is the file bytes of the tenant's in-memory copies when
	// copyMem, what its buffer manager held idle, was measured.
	copies, copyMem int64
}

// New validates cfg, creates the data root and returns an Engine. Tenant
// instances are opened lazily.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("duckdb: root: %w", err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("duckdb: root: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("duckdb: root: %w", err)
	}
	limit, _ := ParseSize(cfg.MemoryLimit) // Validate checked it
	return &Engine{
		cfg:     cfg,
		root:    real,
		log:     cfg.Logger.With("component", "duckdb"),
		reads:   newBufferPool(cfg.Allocator),
		tenants: make(map[string]*tenantSlot),
		budget:  budget{total: cfg.MemoryBudget, idle: cfg.IdleTenantBytes, limitFor: cfg.IdleTenantBytes + limit},
	}, nil
}

// Close closes every tenant instance. Readers still outstanding keep their
// connection until released. Close is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	slots := e.tenants
	e.tenants = nil
	e.wakeBudgetWaiters() // they fail with ErrClosed
	e.mu.Unlock()

	var errs []error
	for _, s := range slots {
		<-s.done
		if s.t != nil {
			errs = append(errs, s.t.close())
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) tenantDir(id string) string {
	return filepath.Join(e.root, "tenants", id)
}

// tenant returns the open instance of id, opening it on first use.
func (e *Engine) tenant(ctx context.Context, id string) (*tenant, error) {
	if !validTenant(id) {
		return nil, fmt.Errorf("%w: tenant", ErrInvalidName)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	s, ok := e.tenants[id]
	if ok {
		s.used = e.now()
		e.mu.Unlock()
	} else {
		s = &tenantSlot{id: id, done: make(chan struct{}), used: e.now()}
		e.tenants[id] = s
		// An instance reserves its idle cost before it opens (budget.go).
		s.err = e.reserve(ctx, s, e.budget.idle)
		e.mu.Unlock()
		if s.err == nil {
			s.t, s.err = e.openTenant(ctx, s)
		}
		if s.err != nil {
			e.mu.Lock()
			if e.tenants != nil && e.tenants[id] == s {
				delete(e.tenants, id) // let a later call retry
			}
			e.giveBack(s, s.held)
			s.gone = true
			e.mu.Unlock()
		}
		close(s.done)
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return nil, mapCtxErr(ctx.Err())
	}
	return s.t, s.err
}

// CloseIdleTenants closes the instances of the tenants no call has used
// for longer than idle and that run no statement, giving back all they hold
// (memory, in-memory copies of table versions, cached plans); the next
// call for such a tenant opens a new instance. It returns how many it
// closed.
func (e *Engine) CloseIdleTenants(idle time.Duration) int {
	now := e.now()
	var idleOnes []*tenant
	e.mu.Lock()
	for id, s := range e.tenants {
		// A caller that got the instance before this point used it just
		// then (used is fresh) or still holds a connection (inUse).
		if t, ok := s.open(); ok && now.Sub(s.used) > idle && s.active == 0 && t.pool.inUseCount() == 0 {
			delete(e.tenants, id)
			s.gone = true
			e.giveBack(s, s.held)
			idleOnes = append(idleOnes, t)
		}
	}
	e.mu.Unlock()
	for _, t := range idleOnes {
		_ = t.close()
	}
	return len(idleOnes)
}

// open returns the slot's instance if it has finished opening without an
// error, without waiting for one still opening.
func (s *tenantSlot) open() (*tenant, bool) {
	select {
	case <-s.done:
		return s.t, s.err == nil
	default:
		return nil, false
	}
}

// now reads the engine's clock (Config.Now).
func (e *Engine) now() time.Time {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return time.Now()
}

// copied is a version copied into a tenant's memory.
type copied struct {
	size  int64     // its files' bytes, counted against MaterializeTotal
	bound time.Time // when a statement last bound it
}

// tenant is one tenant's locked-down instance and the table versions bound
// on it.
type tenant struct {
	id   string
	slot *tenantSlot   // its place in the engine and the memory budget
	dir  string        // absolute tenant directory
	pool *pool         // the tenant's DuckDB database and its connections
	gen  atomic.Uint64 // view generation: moves on with every view change
	eng  *Engine
	log  *slog.Logger

	mu           sync.Mutex                  // serializes view DDL; guards bound, inMemory and materialized
	bound        map[string][]string         // table versions with a view (Bind): id → column types
	inMemory     map[string]*copied          // the bound versions copied into memory
	materialized int64                       // file bytes of the versions copied into memory
	use          versionUse                  // who holds the bound versions (bind_release.go)
	facts        map[string]map[factKey]bool // ColumnFact's answers by version id (facts.go)

	verified verifyCache // statements that passed verify
}

func (e *Engine) openTenant(ctx context.Context, s *tenantSlot) (_ *tenant, err error) {
	id := s.id
	dir := e.tenantDir(id)
	for _, d := range []string{dir, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("duckdb: open tenant: %w", scrubErr(err, dir, e.root))
		}
	}
	// The tenant directory itself must not be a symlink out of the root.
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return nil, errors.New("duckdb: open tenant: tenant directory is not a plain directory under the root")
	}
	t := &tenant{
		id:    id,
		slot:  s,
		dir:   dir,
		eng:   e,
		log:   e.log.With("tenant", id),
		bound: make(map[string][]string), inMemory: make(map[string]*copied),
	}
	t.pool, err = openPool()
	if err != nil {
		return nil, fmt.Errorf("duckdb: open tenant: %w", err)
	}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if err := t.lockdown(); err != nil {
		return nil, err
	}
	// Connections opened after the lockdown (when every primed one is in
	// use) USE the empty schema too; they keep DuckDB's default streaming
	// buffer, since lock_configuration forbids setting it.
	t.pool.setup = func(c *dbConn) error { return c.query("USE " + emptySchema) }
	t.log.Info("tenant engine opened", "memory_limit", e.cfg.MemoryLimit, "threads", e.cfg.Threads)
	return t, nil
}

// lockdownStatements returns the database setup SQL in SQL_GATE §5 order,
// up to (not including) lockStatement. Settings are set GLOBAL: they belong
// to the database, not the setup connection.
func lockdownStatements(dir, memoryLimit, tempSize string, threads int) []string {
	return []string{
		"SET GLOBAL allowed_directories=[" + quoteString(dir) + "]",
		"SET GLOBAL temp_directory=" + quoteString(filepath.Join(dir, "tmp")),
		"SET GLOBAL memory_limit=" + quoteString(memoryLimit),
		// DuckDB's default is 90% of the disk's free space, for each
		// tenant's instance.
		"SET GLOBAL max_temp_directory_size=" + quoteString(tempSize),
		fmt.Sprintf("SET GLOBAL threads=%d", threads),
		// The file cache would keep the files a statement read in the
		// buffer manager after it ends, up to memory_limit, while the
		// memory budget counts an idle tenant at its idle cost; the
		// kernel's page cache still holds them, shared by every tenant.
		"SET GLOBAL enable_external_file_cache=false",
		"SET GLOBAL enable_external_access=false",
		"SET GLOBAL autoinstall_known_extensions=false",
		"SET GLOBAL autoload_known_extensions=false",
		"SET GLOBAL allow_community_extensions=false",
		"SET GLOBAL default_null_order='nulls_first_on_asc_last_on_desc'",
		"SET GLOBAL TimeZone='UTC'",
		// MySQL's default collation (utf8mb4_0900_ai_ci) ignores case and
		// accents in =, <, ORDER BY, GROUP BY, DISTINCT, IN and set
		// operations; the SQL gate handles what DuckDB does not collate
		// (LIKE, DISTINCT aggregates, REGEXP, LOCATE).
		"SET GLOBAL default_collation='nocase.noaccent'",
		"CREATE SCHEMA " + emptySchema,
		"CREATE SCHEMA " + relSchema,
	}
}

// lockStatement ends the lockdown. No setting of any connection can change
// after it, and nothing the engine runs afterwards is a SET.
const lockStatement = "SET GLOBAL lock_configuration=true"

// streamBuffer is the streaming_buffer_size of primed connections: how far
// DuckDB's worker threads may run ahead of the reader of a streaming result.
// DuckDB's default (about 1 MB) leaves them idle most of the time, so a
// result streams at roughly one thread's speed; 32 MB lets them keep up
// (measured on 2 threads: 15 → 24 M rows/s for a 4-column SELECT *). Each
// running query may buffer this much.
const streamBuffer = "32MB"

// primeStatements set up one primed connection. streaming_buffer_size and
// the default schema are per connection, and the former can only be set
// before lock_configuration.
var primeStatements = []string{
	"SET streaming_buffer_size='" + streamBuffer + "'",
	"USE " + emptySchema,
}

// primedConns is how many primed connections a tenant instance keeps: enough
// for the queries its threads can run at once, and a few more.
func primedConns(threads int) int { return max(4, 2*threads) }

// lockdown configures the fresh database on a dedicated connection that is
// closed afterwards, opens the primed connections, and locks the
// configuration. No statement from outside runs before it returns.
func (t *tenant) lockdown() error {
	c, err := t.pool.connect()
	if err != nil {
		return fmt.Errorf("duckdb: open tenant: %w", err)
	}
	defer c.close()
	for _, stmt := range lockdownStatements(t.dir, t.eng.cfg.MemoryLimit, t.eng.cfg.MaxTempSize, t.eng.cfg.Threads) {
		if err := c.query(stmt); err != nil {
			return fmt.Errorf("duckdb: open tenant: lockdown: %w", scrubErr(err, t.dir, t.eng.root))
		}
	}
	if err := t.pool.prime(primedConns(t.eng.cfg.Threads), primeStatements); err != nil {
		return fmt.Errorf("duckdb: open tenant: lockdown: %w", scrubErr(err, t.dir, t.eng.root))
	}
	if err := c.query(lockStatement); err != nil {
		return fmt.Errorf("duckdb: open tenant: lockdown: %w", scrubErr(err, t.dir, t.eng.root))
	}
	return nil
}

// close closes the tenant's database once its outstanding readers are
// released.
func (t *tenant) close() error {
	if t.pool != nil {
		t.pool.close()
	}
	return nil
}

// quoteString renders s as a DuckDB string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteIdent renders s as a DuckDB quoted identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
