package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
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

	duckdbdrv "github.com/duckdb/duckdb-go/v2"

	"lakegate/flight/backend"
)

// Errors returned by the package besides backend's sentinels.
var (
	// ErrClosed reports a call on an Engine after Close.
	ErrClosed = errors.New("duckdb: engine closed")
	// ErrInvalidName reports a tenant, schema or table name that fails validation.
	// The rejected value is not echoed.
	ErrInvalidName = errors.New("duckdb: invalid name")
)

// Engine-side names. Relations live in relSchema; every connection's default
// schema is emptySchema, which holds nothing.
const (
	emptySchema = "lg_empty"
	relSchema   = "lg_rel"
	dataFile    = "data.parquet"
)

var (
	// tenantRE is authz.TenantID's shape (alphanumeric at both ends), re-checked
	// here because the id becomes a directory name.
	tenantRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$`)
	nameRE   = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
)

func validTenant(id string) bool { return tenantRE.MatchString(id) }

// validSchemaName reports whether s may name a schema. Besides the table rules
// a schema may neither contain "__" nor end with "_": that keeps the relation
// name "<schema>__<table>" injective (otherwise "a_"+"b" and "a"+"_b" collide).
func validSchemaName(s string) bool {
	return validTableName(s) && !strings.Contains(s, "__") && !strings.HasSuffix(s, "_")
}

// validTableName reports whether s may name a table: 1–64 of [a-z0-9_], not
// starting with "__".
func validTableName(s string) bool {
	return nameRE.MatchString(s) && !strings.HasPrefix(s, "__")
}

func validTableRef(n backend.TableName) bool {
	return validSchemaName(n.Schema) && validTableName(n.Name)
}

// Engine runs authorized SQL on one locked-down DuckDB instance per tenant. It
// implements backend.Backend and is safe for use from multiple goroutines.
type Engine struct {
	cfg  Config
	root string // absolute, symlink-free
	log  *slog.Logger

	mu      sync.Mutex
	closed  bool
	tenants map[string]*tenantSlot
}

var _ backend.Backend = (*Engine)(nil)

// tenantSlot lets one goroutine open a tenant while others wait for it without
// holding Engine.mu.
type tenantSlot struct {
	done chan struct{}
	t    *tenant
	err  error
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
	return &Engine{
		cfg:     cfg,
		root:    real,
		log:     cfg.Logger.With("component", "duckdb"),
		tenants: make(map[string]*tenantSlot),
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
	if !ok {
		s = &tenantSlot{done: make(chan struct{})}
		e.tenants[id] = s
		e.mu.Unlock()
		s.t, s.err = e.openTenant(ctx, id)
		if s.err != nil {
			e.mu.Lock()
			if e.tenants != nil && e.tenants[id] == s {
				delete(e.tenants, id) // let a later call retry
			}
			e.mu.Unlock()
		}
		close(s.done)
	} else {
		e.mu.Unlock()
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return nil, mapCtxErr(ctx.Err())
	}
	return s.t, s.err
}

// tenant is one tenant's locked-down instance and its table cache.
type tenant struct {
	id   string
	dir  string   // absolute tenant directory
	fs   *os.Root // the tenant directory, for the package's own file access
	db   *sql.DB  // pool over one connector (one DuckDB database)
	eng  *Engine
	log  *slog.Logger
	lock atomic.Bool // set once lock_configuration=true has run

	mu     sync.Mutex // serializes view DDL; guards tables
	tables map[backend.TableName]*cachedTable
}

func (e *Engine) openTenant(ctx context.Context, id string) (_ *tenant, err error) {
	dir := e.tenantDir(id)
	for _, d := range []string{dir, filepath.Join(dir, "tmp"), filepath.Join(dir, "tables")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("duckdb: open tenant: %w", scrubErr(err, dir, e.root))
		}
	}
	// The tenant directory itself must not be a symlink out of the root.
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return nil, errors.New("duckdb: open tenant: tenant directory is not a plain directory under the root")
	}
	fsRoot, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("duckdb: open tenant: %w", scrubErr(err, dir, e.root))
	}
	t := &tenant{
		id:     id,
		dir:    dir,
		fs:     fsRoot,
		eng:    e,
		log:    e.log.With("tenant", id),
		tables: make(map[backend.TableName]*cachedTable),
	}
	// The init callback runs for every connection the pool opens. Settings are
	// per database, but the default schema is per connection: each one USEs the
	// empty schema once the lockdown has created it.
	connector, err := duckdbdrv.NewConnector("", func(ex driver.ExecerContext) error {
		if !t.lock.Load() {
			return nil // the lockdown connection itself
		}
		_, err := ex.ExecContext(context.Background(), "USE "+emptySchema, nil)
		return err
	})
	if err != nil {
		fsRoot.Close()
		return nil, fmt.Errorf("duckdb: open tenant: %w", err)
	}
	t.db = sql.OpenDB(connector) // owns connector from here: db.Close closes it
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if err := t.lockdown(ctx, connector); err != nil {
		return nil, err
	}
	idle := max(2, e.cfg.Threads)
	t.db.SetMaxIdleConns(idle)
	t.db.SetConnMaxIdleTime(5 * time.Minute)
	t.log.Info("tenant engine opened", "memory_limit", e.cfg.MemoryLimit, "threads", e.cfg.Threads)
	return t, nil
}

// lockdownStatements returns the setup SQL in SQL_GATE §5 order. Settings are
// set GLOBAL: they belong to the database, not the setup connection.
func lockdownStatements(dir, memoryLimit string, threads int) []string {
	return []string{
		"SET GLOBAL allowed_directories=[" + quoteString(dir) + "]",
		"SET GLOBAL temp_directory=" + quoteString(filepath.Join(dir, "tmp")),
		"SET GLOBAL memory_limit=" + quoteString(memoryLimit),
		fmt.Sprintf("SET GLOBAL threads=%d", threads),
		"SET GLOBAL enable_external_access=false",
		"SET GLOBAL autoinstall_known_extensions=false",
		"SET GLOBAL autoload_known_extensions=false",
		"SET GLOBAL allow_community_extensions=false",
		"SET GLOBAL default_null_order='nulls_first_on_asc_last_on_desc'",
		"SET GLOBAL TimeZone='UTC'",
		"CREATE SCHEMA " + emptySchema,
		"CREATE SCHEMA " + relSchema,
		"SET GLOBAL lock_configuration=true",
	}
}

// lockdown configures the fresh database on a dedicated connection that is
// closed afterwards; pooled connections are opened only after it.
func (t *tenant) lockdown(ctx context.Context, c *duckdbdrv.Connector) error {
	dc, err := c.Connect(ctx)
	if err != nil {
		return fmt.Errorf("duckdb: open tenant: %w", err)
	}
	defer dc.Close()
	ex := dc.(driver.ExecerContext)
	for _, stmt := range lockdownStatements(t.dir, t.eng.cfg.MemoryLimit, t.eng.cfg.Threads) {
		if _, err := ex.ExecContext(ctx, stmt, nil); err != nil {
			return fmt.Errorf("duckdb: open tenant: lockdown: %w", scrubErr(err, t.dir, t.eng.root))
		}
	}
	t.lock.Store(true)
	return nil
}

func (t *tenant) close() error {
	var errs []error
	if t.db != nil {
		errs = append(errs, t.db.Close())
	}
	errs = append(errs, t.fs.Close())
	return errors.Join(errs...)
}

// quoteString renders s as a DuckDB string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteIdent renders s as a DuckDB quoted identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
