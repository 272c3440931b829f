package raftnode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"go.etcd.io/bbolt"
)

// logStore is a Raft log and stable store the Node closes at shutdown.
type logStore interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// Where each kind of log store lives in DataDir.
const (
	boltFile = "raft.db"
	walDir   = "wal"
	walLock  = "wal.lock"
)

// openLogStore opens the kind of log store cfg names in cfg.DataDir. A
// DataDir holding the other kind is refused: switching kinds would start an
// empty log beside the real one, and the node would rejoin with no memory of
// what it acknowledged.
func openLogStore(cfg Config, hl hclog.Logger) (logStore, error) {
	other := map[string]string{LogStoreBolt: walDir, LogStoreWAL: boltFile}[cfg.LogStore]
	if _, err := os.Lstat(filepath.Join(cfg.DataDir, other)); err == nil {
		return nil, fmt.Errorf("raftnode: %s holds a Raft log of another kind (%s) than the one configured (%s); configure that kind, or move the data directory away so the node starts empty and catches up from the cluster", cfg.DataDir, other, cfg.LogStore)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("raftnode: inspect data dir: %w", err)
	}
	switch cfg.LogStore {
	case LogStoreWAL:
		// raft-wal's metadata database waits forever for its file lock: a
		// second process on the same DataDir fails here instead.
		unlock, err := lockDir(filepath.Join(cfg.DataDir, walLock))
		if err != nil {
			return nil, fmt.Errorf("raftnode: open log store: %w", err)
		}
		dir := filepath.Join(cfg.DataDir, walDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			unlock()
			return nil, fmt.Errorf("raftnode: open log store: %w", err)
		}
		// The node keeps the metadata database to close it when wal.Open
		// fails (the WAL closes it itself since v0.4.2; v0.4.0 did not, and
		// a restart in the same process then waited forever for bbolt's
		// lock on it). Closing it twice is harmless.
		meta := &metadb.BoltMetaDB{}
		w, err := wal.Open(dir, wal.WithLogger(hl.Named("wal")), wal.WithMetaStore(meta))
		if err != nil {
			_ = meta.Close()
			unlock()
			return nil, fmt.Errorf("raftnode: open log store: %w", err)
		}
		return &walStore{WAL: w, meta: meta, unlock: unlock}, nil
	default:
		store, err := raftboltdb.New(raftboltdb.Options{
			Path: filepath.Join(cfg.DataDir, boltFile),
			// A second process on the same DataDir fails instead of hanging.
			BoltOptions: &bbolt.Options{Timeout: time.Second},
		})
		if err != nil {
			return nil, fmt.Errorf("raftnode: open log store: %w", err)
		}
		return store, nil
	}
}

// walStore is a WAL that closes its metadata database and releases its
// directory lock when closed.
type walStore struct {
	*wal.WAL
	meta   *metadb.BoltMetaDB
	unlock func()
}

func (w *walStore) Close() error {
	err := errors.Join(w.WAL.Close(), w.meta.Close())
	w.unlock()
	return err
}
