package tablefiles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"lakegate/flight/backend"
	"lakegate/stage"
	"lakegate/stage/cache"
)

// ErrFile reports a committed data file that cannot be used: missing, not a
// regular file, or failing its checksum. The message names the key only.
var ErrFile = errors.New("tablefiles: data file unavailable")

// Config configures Files.
type Config struct {
	// Stage is the deployment's root stage; required.
	Stage stage.Descriptor
	// S3 carries credentials and transport for an S3 stage.
	S3 stage.Config
	// EngineRoot is the engine's data root: tenant t's engine may read
	// <EngineRoot>/tenants/<t>. For a local stage it must be the stage's
	// root; for S3 the cache of tenant t is <EngineRoot>/tenants/<t>/cache.
	EngineRoot string
	// CacheBytes bounds each tenant's S3 read cache; 0 means the cache's
	// default.
	CacheBytes int64
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
}

// Files opens tenants' child stages and localizes their table files. It is
// safe for use from multiple goroutines.
type Files struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	tenants map[string]*tenantFiles
}

type tenantFiles struct {
	store stage.Store
	child stage.Descriptor
	root  *os.Root     // local stages: the child root
	cache *cache.Cache // S3 stages
}

// New validates cfg and returns Files.
func New(cfg Config) (*Files, error) {
	if err := cfg.Stage.Validate(); err != nil {
		return nil, err
	}
	if cfg.EngineRoot == "" {
		return nil, errors.New("tablefiles: EngineRoot is required")
	}
	if cfg.Stage.Local != nil {
		a, err1 := filepath.EvalSymlinks(cfg.Stage.Local.Root)
		b, err2 := filepath.EvalSymlinks(cfg.EngineRoot)
		if err1 != nil || err2 != nil || a != b {
			return nil, errors.New("tablefiles: a local stage's root must be the engine's data root")
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Files{cfg: cfg, log: cfg.Logger, tenants: map[string]*tenantFiles{}}, nil
}

// Close closes every tenant store.
func (f *Files) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, t := range f.tenants {
		errs = append(errs, t.store.Close())
		if t.root != nil {
			errs = append(errs, t.root.Close())
		}
		if t.cache != nil {
			errs = append(errs, t.cache.Close())
		}
	}
	f.tenants = map[string]*tenantFiles{}
	return errors.Join(errs...)
}

// Descriptor returns the root stage descriptor.
func (f *Files) Descriptor() stage.Descriptor { return f.cfg.Stage }

// Store returns the tenant's child stage store.
func (f *Files) Store(ctx context.Context, tenant string) (stage.Store, error) {
	t, err := f.tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return t.store, nil
}

func (f *Files) tenant(ctx context.Context, tenant string) (*tenantFiles, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tenants[tenant]; ok {
		return t, nil
	}
	child, err := f.cfg.Stage.ForTenant(tenant)
	if err != nil {
		return nil, err
	}
	store, err := stage.Open(ctx, child, f.cfg.S3)
	if err != nil {
		return nil, fmt.Errorf("tablefiles: opening the stage of tenant %s: %w", tenant, err)
	}
	t := &tenantFiles{store: store, child: child}
	if child.Local != nil {
		if t.root, err = os.OpenRoot(child.Local.Root); err != nil {
			store.Close()
			return nil, fmt.Errorf("tablefiles: %w", err)
		}
	} else {
		dir := filepath.Join(f.cfg.EngineRoot, "tenants", tenant, "cache")
		if t.cache, err = cache.Open(cache.Config{Dir: dir, MaxBytes: f.cfg.CacheBytes, Logger: f.log}); err != nil {
			store.Close()
			return nil, fmt.Errorf("tablefiles: %w", err)
		}
	}
	f.tenants[tenant] = t
	return t, nil
}

// Acquire makes the files of every version available locally and returns
// the versions as the engine binds them, in order. The caller calls release
// once the statement no longer reads them (S3: until then the cache keeps
// them).
func (f *Files) Acquire(ctx context.Context, tenant string, versions []backend.TableVersion) (_ []backend.LocalTable, _ func(), err error) {
	t, err := f.tenant(ctx, tenant)
	if err != nil {
		return nil, nil, err
	}
	out := make([]backend.LocalTable, len(versions))
	var releases []func()
	release := func() {
		for _, r := range releases {
			r()
		}
	}
	// On failure, unpin what was pinned before it (the function's own
	// release result is nil then).
	defer func() {
		if err != nil {
			release()
		}
	}()
	for i := range versions {
		v := &versions[i]
		out[i] = backend.LocalTable{ID: v.ID(), Columns: v.Columns, Paths: make([]string, len(v.Files))}
		if t.root != nil {
			for j, df := range v.Files {
				p, err := t.localPath(df)
				if err != nil {
					return nil, nil, err
				}
				out[i].Paths[j] = p
			}
			continue
		}
		want := make([]cache.File, len(v.Files))
		for j, df := range v.Files {
			if _, err := t.child.Key(df.Key); err != nil {
				return nil, nil, fmt.Errorf("%w: %s", ErrFile, stage.SafeKey(df.Key))
			}
			want[j] = cache.File{Key: df.Key, Size: df.Size, SHA256: df.SHA256}
		}
		paths, rel, err := t.cache.Acquire(ctx, t.store, want)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrFile, err)
		}
		releases = append(releases, rel)
		out[i].Paths = paths
	}
	return out, release, nil
}

// localPath checks a committed key of a local stage and returns its path.
func (t *tenantFiles) localPath(df backend.DataFile) (string, error) {
	p, err := t.child.Key(df.Key)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrFile, stage.SafeKey(df.Key))
	}
	fi, err := t.root.Lstat(filepath.FromSlash(df.Key))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s is missing", ErrFile, stage.SafeKey(df.Key))
	case err != nil:
		return "", fmt.Errorf("%w: %s: %w", ErrFile, stage.SafeKey(df.Key), err)
	case !fi.Mode().IsRegular() || fi.Size() != df.Size:
		return "", fmt.Errorf("%w: %s is not the committed file", ErrFile, stage.SafeKey(df.Key))
	}
	return filepath.FromSlash(p), nil
}
