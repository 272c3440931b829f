package accesslog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	pqfile "github.com/apache/arrow-go/v18/parquet/file"

	"lakegate/stage"
)

// errSpoolFull: the spool has no room for a file.
var errSpoolFull = errors.New("accesslog: spool full")

// spool holds the files the Sink refused, one directory per tenant:
// <dir>/<tenant>/<seq>.parquet, seq a zero-padded counter that orders the
// files across tenants and restarts. A file is written to a temporary
// name, synced, renamed, and the directory synced, so after a crash a
// spooled file is whole or absent.
type spool struct {
	dir string
	max int64

	mu    sync.Mutex
	bytes int64
	files int64
	seq   uint64
}

const (
	spoolExt    = ".parquet"
	spoolTmpExt = ".tmp"
	seqDigits   = 20
)

// openSpool creates dir if needed and returns the spool with the files
// found in it, per tenant, oldest first. Temporary files of an interrupted
// write are removed; directories that are not valid tenant names and
// files that are not spool files are left alone and logged.
func openSpool(dir string, max int64, log *slog.Logger) (*spool, map[string][]file, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("accesslog: spool dir: %w", err)
	}
	s := &spool{dir: dir, max: max}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("accesslog: read spool dir: %w", err)
	}
	found := map[string][]file{}
	for _, te := range ents {
		tenant := te.Name()
		if !te.IsDir() || !stage.ValidTenant(tenant) {
			log.Warn("access log spool: ignoring an entry that is not a tenant directory", "path", filepath.Join(dir, tenant))
			continue
		}
		tdir := filepath.Join(dir, tenant)
		fes, err := os.ReadDir(tdir)
		if err != nil {
			return nil, nil, fmt.Errorf("accesslog: read spool of tenant %q: %w", tenant, err)
		}
		var files []file
		var seqs []uint64
		for _, fe := range fes {
			name := fe.Name()
			path := filepath.Join(tdir, name)
			if strings.HasSuffix(name, spoolTmpExt) {
				// An interrupted write: never renamed, never counted.
				_ = os.Remove(path)
				continue
			}
			seq, ok := parseSeq(name)
			if !ok || !fe.Type().IsRegular() {
				log.Warn("access log spool: ignoring a file that is not a spool file", "path", path)
				continue
			}
			// Numbers go on after every spool file's, readable or not, so
			// a new file never replaces one.
			if seq >= s.seq {
				s.seq = seq + 1
			}
			events, size, err := parquetRows(path)
			if err != nil {
				// A spooled file is renamed only once synced whole, so
				// this is damage from outside: keep it for an operator
				// rather than deliver or delete it.
				log.Error("access log spool: unreadable spool file left in place", "path", path, "error", err)
				continue
			}
			files = append(files, file{path: path, size: size, events: events})
			seqs = append(seqs, seq)
			s.bytes += size
			s.files++
		}
		sort.Sort(bySeq{files, seqs})
		if len(files) > 0 {
			found[tenant] = files
		}
	}
	return s, found, nil
}

type bySeq struct {
	f []file
	s []uint64
}

func (b bySeq) Len() int           { return len(b.f) }
func (b bySeq) Less(i, j int) bool { return b.s[i] < b.s[j] }
func (b bySeq) Swap(i, j int) {
	b.f[i], b.f[j] = b.f[j], b.f[i]
	b.s[i], b.s[j] = b.s[j], b.s[i]
}

// parseSeq parses "<seq>.parquet".
func parseSeq(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, spoolExt)
	if !ok || len(base) != seqDigits {
		return 0, false
	}
	n, err := strconv.ParseUint(base, 10, 64)
	return n, err == nil
}

// parquetRows returns a Parquet file's row count and size.
func parquetRows(path string) (int, int64, error) {
	r, err := pqfile.OpenParquetFile(path, false)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	return int(r.NumRows()), fi.Size(), nil
}

// put writes data as the tenant's next spool file and returns its path;
// errSpoolFull when it does not fit.
func (s *spool) put(tenant string, data []byte) (string, error) {
	// The tenant id names a directory: it must not climb out of the spool.
	if !stage.ValidTenant(tenant) {
		return "", fmt.Errorf("accesslog: spool: invalid tenant %q", tenant)
	}
	size := int64(len(data))
	s.mu.Lock()
	if s.bytes+size > s.max {
		s.mu.Unlock()
		return "", errSpoolFull
	}
	// Reserve the room and the sequence number before the I/O.
	s.bytes += size
	s.files++
	seq := s.seq
	s.seq++
	s.mu.Unlock()
	path, err := writeAtomic(filepath.Join(s.dir, tenant), fmt.Sprintf("%0*d%s", seqDigits, seq, spoolExt), data)
	if err != nil {
		s.mu.Lock()
		s.bytes -= size
		s.files--
		s.mu.Unlock()
		return "", err
	}
	return path, nil
}

// writeAtomic writes data to dir/name through a synced temporary file and
// a rename, then syncs dir.
func writeAtomic(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("accesslog: spool: %w", err)
	}
	path := filepath.Join(dir, name)
	tmp := path + spoolTmpExt
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("accesslog: spool: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("accesslog: spool: write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return path, nil
}

// read returns a spooled file's bytes.
func (s *spool) read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("accesslog: spool: %w", err)
	}
	return b, nil
}

// remove deletes a delivered spool file and releases its room.
func (s *spool) remove(f file) {
	// A file that cannot be removed would be delivered again after a
	// restart; the Sink accepts a file twice (see Sink), so this only
	// costs a duplicate.
	_ = os.Remove(f.path)
	s.mu.Lock()
	s.bytes -= f.size
	s.files--
	s.mu.Unlock()
}

// usage returns the spool's bytes and files.
func (s *spool) usage() (int64, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, s.files
}
