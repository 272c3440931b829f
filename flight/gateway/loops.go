package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"lakegate/authz"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/tablefiles"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// What the engine gives back, checked every engineSweep: copies of small
// table versions no statement has bound for idleCopy, and the whole
// instance of a tenant unused for idleEngine. A tenant that stopped
// querying does not keep either for the life of the process.
const (
	idleCopy    = 10 * time.Minute
	idleEngine  = 30 * time.Minute
	engineSweep = time.Minute
)

// sweepEngine gives back the engine's idle copies and instances until ctx
// ends.
func sweepEngine(ctx context.Context, e *duckdb.Engine, log *slog.Logger) {
	tick := time.NewTicker(engineSweep)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if n := e.CloseIdleTenants(idleEngine); n > 0 {
				log.Debug("closed idle tenant engines", "tenants", n)
			}
			if freed := e.DropIdleCopies(ctx, idleCopy); freed > 0 {
				log.Debug("gave back idle in-memory table versions", "bytes", freed)
				// Tenants without copies now reserve only their idle cost.
				e.SettleBudget()
			}
		}
	}
}

// collectOrphans deletes orphaned table files of every tenant now and then
// every interval (never when interval is 0), until ctx ends.
func collectOrphans(ctx context.Context, interval, grace time.Duration, tenants []authz.TenantID, files *tablefiles.Files, mc *client.Client, log *slog.Logger) {
	if interval == 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, tenant := range tenants {
			tn := tenant.String()
			st, err := files.Store(ctx, tn)
			if err != nil {
				log.Warn("orphan collection skipped", "tenant", tn, "err", err)
				continue
			}
			refs := func(ctx context.Context) (map[string]bool, error) {
				_, fs, err := mc.ReferencedFiles(ctx, tn)
				if errors.Is(err, client.ErrNotFound) {
					return nil, fmt.Errorf("tenant %s has no metalake: %w", tn, err) // never treat "unknown" as "nothing referenced"
				}
				if err != nil {
					return nil, err
				}
				m := make(map[string]bool, len(fs))
				for _, f := range fs {
					m[f.Path] = true
				}
				return m, nil
			}
			rep, err := stage.CollectOrphans(ctx, st, refs, time.Now().Add(-grace))
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				log.Warn("orphan collection failed", "tenant", tn, "err", err)
			case rep.Deleted > 0 || rep.Aborted > 0:
				log.Info("orphaned table files deleted", "tenant", tn, "scanned", rep.Scanned, "deleted", rep.Deleted, "young", rep.Young, "aborted_uploads", rep.Aborted)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// waitMetasrv calls metasrv until it answers the gateway, retrying with
// backoff while it cannot be reached. Any answer for tenant — a 404 for a
// tenant without a metalake included — proves metasrv is reachable and
// accepted the token; 401 and 403 mean the token or its principal is wrong
// and are returned at once, wrapping ErrMetasrvRefused. It returns ctx's
// error when ctx ends first.
func waitMetasrv(ctx context.Context, mc *client.Client, tenant string, log *slog.Logger) error {
	const maxBackoff = 5 * time.Second
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := mc.Generation(callCtx, tenant)
		cancel()
		switch {
		case err == nil, errors.Is(err, client.ErrNotFound):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, client.ErrUnauthenticated):
			return fmt.Errorf("%w: it rejected the gateway's token (check --metasrv-token-file and metasrv's principal map): %w", ErrMetasrvRefused, err)
		case errors.Is(err, client.ErrForbidden):
			return fmt.Errorf("%w: it refused the gateway's principal for tenant %s (it must be a query_service principal whose delegate_tenants include every tenant of --principals): %w", ErrMetasrvRefused, tenant, err)
		}
		log.Warn("not ready: waiting for metasrv", "attempt", attempt, "retry_in", backoff.String(), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}
