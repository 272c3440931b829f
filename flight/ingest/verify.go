package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"lakegate/stage"
)

// ErrNotAsWritten: a file about to be committed is not in the store as
// Verify was told it is (missing, outside the table's directory, of
// another size or SHA-256).
var ErrNotAsWritten = errors.New("ingest: a data file is not as written")

// Verify checks, just before a commit names them, that files are in store
// as written: each key has the table file layout's shape under
// stage.TablePrefix(storageID), and the stored object exists with the
// file's size and, when the store reports one (S3 single-part objects),
// its SHA-256. The SHA-256 of every file was computed over the bytes the
// writer stored and checked against the store's own when it reported one
// (see Writer.Close); Verify catches what changed since (a file collected
// or replaced in between). Errors wrap ErrNotAsWritten, or the store's.
func Verify(ctx context.Context, store stage.Store, storageID string, files []File) error {
	prefix, err := stage.TablePrefix(storageID)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotAsWritten, err)
	}
	for _, f := range files {
		if !strings.HasPrefix(f.Key, prefix) || !stage.IsTableFile(f.Key) {
			return fmt.Errorf("%w: %s is not a data file of storage id %s", ErrNotAsWritten, stage.SafeKey(f.Key), storageID)
		}
		info, err := store.Stat(ctx, f.Key)
		switch {
		case errors.Is(err, stage.ErrNotFound):
			return fmt.Errorf("%w: %s is missing", ErrNotAsWritten, stage.SafeKey(f.Key))
		case err != nil:
			return fmt.Errorf("ingest: checking %s: %w", stage.SafeKey(f.Key), err)
		case info.Size != f.Size:
			return fmt.Errorf("%w: %s has %d bytes, %d were written", ErrNotAsWritten, stage.SafeKey(f.Key), info.Size, f.Size)
		case info.SHA256 != "" && info.SHA256 != f.SHA256:
			return fmt.Errorf("%w: %s has SHA-256 %s, %s was written", ErrNotAsWritten, stage.SafeKey(f.Key), info.SHA256, f.SHA256)
		}
	}
	return nil
}
