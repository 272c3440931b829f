package accesslog

import "time"

// FileInfo is one data file of a tenant's system.access_events as
// retention sees it: Newest is the time of its newest event (or, when
// unknown, when the file was written).
type FileInfo struct {
	Path    string
	Version uint64
	Newest  time.Time
}

// Expired returns the files whose every event is older than keep at now
// (Newest before now-keep), in the order given: the files a retention
// sweep drops. keep <= 0 keeps everything (no retention). It is pure: the
// caller lists the files, drops the returned ones from the table's next
// version and deletes them.
func Expired(files []FileInfo, now time.Time, keep time.Duration) []FileInfo {
	if keep <= 0 {
		return nil
	}
	cutoff := now.Add(-keep)
	var out []FileInfo
	for _, f := range files {
		if f.Newest.Before(cutoff) {
			out = append(out, f)
		}
	}
	return out
}
