package stage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Orphans. A table data file is an orphan when no committed version names
// it: the write that made it failed, was abandoned, or its process died
// before committing; or the version that named it was superseded beyond
// retention or its table was dropped. CollectOrphans deletes orphans that
// are older than a grace period. The grace period is what keeps it from
// deleting a file a running write has stored but not yet committed, so it
// must exceed the longest write (writers refuse to commit after
// MaxWriteAge).

// MaxWriteAge is the longest a write may take from its first stored part
// to its commit; writers must abort instead of committing later. A
// collector's grace period must be longer.
const MaxWriteAge = 6 * time.Hour

// tableFileRE matches the keys of the table layout; nothing else under the
// stage is ever collected.
var tableFileRE = regexp.MustCompile(`^tables/[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?/[0-9a-f]{32}/part-(0|[1-9][0-9]{0,8})\.parquet$`)

// IsTableFile reports whether key (relative to a child stage) has the
// table file layout's shape.
func IsTableFile(key string) bool { return tableFileRE.MatchString(key) }

// CollectReport says what a collection did.
type CollectReport struct {
	Scanned int // table files listed
	Deleted int // orphans deleted
	// Young counts orphans left because they are within the grace period.
	Young int
	// Aborted counts abandoned multipart uploads aborted.
	Aborted int
}

// CollectOrphans deletes, from the table files of st, every file that
// referenced does not name and that was last written before cutoff; on an
// S3 store it also aborts multipart uploads under tables/ started before
// cutoff. referenced is called once, after listing, so a file committed
// while the listing ran is seen as referenced. Keys outside the table
// layout are never touched.
func CollectOrphans(ctx context.Context, st Store, referenced func(ctx context.Context) (map[string]bool, error), cutoff time.Time) (CollectReport, error) {
	var rep CollectReport
	var keys []string
	after := ""
	for {
		page, err := st.List(ctx, "tables/", after, 0)
		if err != nil {
			return rep, fmt.Errorf("stage: collect: %w", err)
		}
		for _, k := range page {
			if IsTableFile(k) {
				keys = append(keys, k)
			}
		}
		if len(page) < DefaultListLimit {
			break
		}
		after = page[len(page)-1]
	}
	rep.Scanned = len(keys)
	refs, err := referenced(ctx)
	if err != nil {
		return rep, fmt.Errorf("stage: collect: referenced files: %w", err)
	}
	var doomed []string
	for _, k := range keys {
		if refs[k] {
			continue
		}
		info, err := st.Stat(ctx, k)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return rep, fmt.Errorf("stage: collect: %w", err)
		case info.Modified.IsZero() || !info.Modified.Before(cutoff):
			rep.Young++
			continue
		}
		doomed = append(doomed, k)
	}
	for len(doomed) > 0 {
		n := min(len(doomed), DefaultListLimit)
		if err := st.Delete(ctx, doomed[:n]...); err != nil {
			return rep, fmt.Errorf("stage: collect: %w", err)
		}
		rep.Deleted += n
		doomed = doomed[n:]
	}
	if up, ok := st.(Uploads); ok {
		open, err := up.ListUploads(ctx, "tables/")
		if err != nil {
			return rep, fmt.Errorf("stage: collect: %w", err)
		}
		for _, u := range open {
			if u.Initiated.IsZero() || !u.Initiated.Before(cutoff) || !IsTableFile(u.Key) {
				continue
			}
			if err := up.AbortUpload(ctx, u); err != nil && !errors.Is(err, ErrNotFound) {
				return rep, fmt.Errorf("stage: collect: %w", err)
			}
			rep.Aborted++
		}
	}
	return rep, nil
}
