package stagetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"lakegate/stage"
)

// errName names the package sentinel err wraps, for transcripts.
func errName(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{stage.ErrInvalidKey, "ErrInvalidKey"},
		{stage.ErrOutsideStage, "ErrOutsideStage"},
		{stage.ErrExists, "ErrExists"},
		{stage.ErrNotFound, "ErrNotFound"},
		{stage.ErrChecksum, "ErrChecksum"},
		{stage.ErrSize, "ErrSize"},
		{context.Canceled, "context.Canceled"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "error: " + err.Error()
}

func refused(err error) bool {
	var pe *stage.PathError
	return errors.As(err, &pe) && (errors.Is(err, stage.ErrInvalidKey) || errors.Is(err, stage.ErrOutsideStage))
}

func sha8(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// BadKeys are keys no Store may accept for any operation: each could leave
// the stage, or be read differently by some layer, if it were passed
// through. Empty is bad as a key (but a valid list prefix).
var BadKeys = []string{
	"", "..", "../b/canary", "../../tenants/b/canary", "a/../../b/canary", "./canary", "a/./b", ".",
	".hidden", "a/.tmp-x", "x//y", "//", "/", "/tenants/b/canary", "/canary", "canary/",
	`..\b\canary`, `a\b`, "%2F..%2Fb%2Fcanary", "..%2Fb%2Fcanary", "%2e%2e/b/canary", "a%5Cb", "%00",
	"canary\x00", "\x00../b", "ca\nnary", "ca\rnary", "ca\tnary", "ca\x1bnary", "ca\x7fnary", "ca nary",
	"..\u2215b\u2215canary", "..\u2044b\u2044canary", "..\uff0fb\uff0fcanary", "..\u29f8b\u29f8canary",
	"\u2024\u2024/b/canary", "canary\xff", "\xc0\xaf", "caf\u00e9",
	strings.Repeat("k", 2048), strings.Repeat("a/", 1024) + "k", strings.Repeat("s", 256),
}

// Run runs the operation case table against tenant "t1" of newStore and
// returns the transcript, one "case: outcome" line per case, so callers
// can also compare backends line by line. Each case states its expected
// outcome; a mismatch fails t.
func Run(t *testing.T, newStore func(t *testing.T, tenant string) stage.Store) []string {
	st := newStore(t, "t1")
	ctx := t.Context()
	put := func(key, data string, size int64) (string, error) {
		info, err := st.Put(ctx, key, strings.NewReader(data), size)
		if err != nil {
			return "", err
		}
		if info.SHA256 != fmt.Sprintf("%x", sha256.Sum256([]byte(data))) || info.Key != key {
			return "", fmt.Errorf("put info %+v", info)
		}
		return fmt.Sprintf("%d %s", info.Size, info.SHA256[:8]), nil
	}
	get := func(key string) (string, error) {
		b, err := readAll(ctx, st, key)
		return string(b), err
	}
	stat := func(key string) (string, error) {
		info, err := st.Stat(ctx, key)
		return fmt.Sprint(info.Size), err
	}
	list := func(prefix, after string, limit int) (string, error) {
		keys, err := st.List(ctx, prefix, after, limit)
		return strings.Join(keys, ","), err
	}
	none := func(err error) (string, error) { return "", err }
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	cases := []struct {
		name string
		do   func() (string, error)
		want string
	}{
		{"put", func() (string, error) { return put("a/b.txt", "hello", 5) }, "ok 5 " + sha8("hello")},
		{"put existing", func() (string, error) { return put("a/b.txt", "world", 5) }, "ErrExists"},
		{"get after refused overwrite", func() (string, error) { return get("a/b.txt") }, "ok hello"},
		{"put unknown size", func() (string, error) { return put("a/c.txt", "c", -1) }, "ok 1 " + sha8("c")},
		{"put sorts before a/", func() (string, error) { return put("a-x", "x", 1) }, "ok 1 " + sha8("x")},
		{"put short body", func() (string, error) { return put("a/short", "abc", 4) }, "ErrSize"},
		{"short body left nothing", func() (string, error) { return stat("a/short") }, "ErrNotFound"},
		{"put canceled", func() (string, error) {
			_, err := st.Put(canceled, "a/canceled", strings.NewReader("z"), 1)
			return none(err)
		}, "context.Canceled"},
		{"canceled left nothing", func() (string, error) { return stat("a/canceled") }, "ErrNotFound"},
		{"list all", func() (string, error) { return list("", "", 0) }, "ok a-x,a/b.txt,a/c.txt"},
		{"list start-after", func() (string, error) { return list("a/", "a/b.txt", 0) }, "ok a/c.txt"},
		{"list string prefix", func() (string, error) { return list("a", "", 2) }, "ok a-x,a/b.txt"},
		{"list limit", func() (string, error) { return list("a/", "", 1) }, "ok a/b.txt"},
		{"list partial name", func() (string, error) { return list("a/b", "", 0) }, "ok a/b.txt"},
		{"list nothing", func() (string, error) { return list("zzz/", "", 0) }, "ok "},
		{"stat", func() (string, error) { return stat("a/b.txt") }, "ok 5"},
		{"stat missing", func() (string, error) { return stat("nope") }, "ErrNotFound"},
		{"get missing", func() (string, error) { return get("nope") }, "ErrNotFound"},
		{"get directory-like prefix", func() (string, error) { return get("a") }, "ErrNotFound"},
		{"copy", func() (string, error) { return none(st.Copy(ctx, "a/b.txt", "a/d.txt")) }, "ok "},
		{"get copy", func() (string, error) { return get("a/d.txt") }, "ok hello"},
		{"copy onto existing", func() (string, error) { return none(st.Copy(ctx, "a/c.txt", "a/d.txt")) }, "ErrExists"},
		{"copy kept target", func() (string, error) { return get("a/d.txt") }, "ok hello"},
		{"copy missing source", func() (string, error) { return none(st.Copy(ctx, "nope", "a/e.txt")) }, "ErrNotFound"},
		{"delete batch with missing", func() (string, error) { return none(st.Delete(ctx, "a/b.txt", "a/nope")) }, "ok "},
		{"deleted", func() (string, error) { return get("a/b.txt") }, "ErrNotFound"},
		{"put after delete", func() (string, error) { return put("a/b.txt", "again", 5) }, "ok 5 " + sha8("again")},
		{"put empty", func() (string, error) { return put("e/empty", "", 0) }, "ok 0 " + sha8("")},
		{"get empty", func() (string, error) { return get("e/empty") }, "ok "},
		{"hive-style key", func() (string, error) { return put("t/date=2024-01-01/part-0.parquet", "p", 1) }, "ok 1 " + sha8("p")},
		{"list hive dir", func() (string, error) { return list("t/date=2024-01-01/", "", 0) }, "ok t/date=2024-01-01/part-0.parquet"},
		{"max segment", func() (string, error) { return put(strings.Repeat("s", 255), "s", 1) }, "ok 1 " + sha8("s")},
		{"concurrent create has one winner", func() (string, error) {
			var wg sync.WaitGroup
			errs := make([]error, 6)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = st.Put(ctx, "race/k", strings.NewReader(fmt.Sprint(i)), 1)
				})
			}
			wg.Wait()
			wins, winner := 0, ""
			for i, err := range errs {
				switch {
				case err == nil:
					wins, winner = wins+1, fmt.Sprint(i)
				case !errors.Is(err, stage.ErrExists):
					return "", err
				}
			}
			got, err := get("race/k")
			if err != nil || got != winner {
				return "", fmt.Errorf("winner %q, stored %q, %v", winner, got, err)
			}
			return fmt.Sprint(wins), nil
		}, "ok 1"},
	}
	var transcript []string
	for _, c := range cases {
		out, err := c.do()
		got := "ok " + out
		if err != nil {
			got = errName(err)
		}
		transcript = append(transcript, c.name+": "+got)
		if got != c.want {
			t.Errorf("%s: got %q, want %q (err %v)", c.name, got, c.want, err)
		}
	}
	// Every bad key is refused by every operation, with a *PathError
	// wrapping ErrInvalidKey or ErrOutsideStage.
	for _, k := range BadKeys {
		var open []string
		for op, err := range ops(ctx, st, k, "a/c.txt") {
			if !refused(err) {
				open = append(open, fmt.Sprintf("%s (%v)", op, err))
			}
		}
		line := "refused"
		if len(open) > 0 {
			line = "NOT refused by " + strings.Join(open, ", ")
			t.Errorf("key %s: %s", stage.SafeKey(k), line)
		}
		transcript = append(transcript, "bad key "+stage.SafeKey(k)+": "+line)
	}
	return transcript
}

// ops runs every operation with the bad key k in each position it can
// take, good being a valid existing key; it yields each operation's error.
func ops(ctx context.Context, st stage.Store, k, good string) func(func(string, error) bool) {
	return func(yield func(string, error) bool) {
		run := func(name string, err error) bool { return yield(name, err) }
		if !run("put", func() error { _, err := st.Put(ctx, k, strings.NewReader("x"), 1); return err }()) ||
			!run("get", func() error { _, _, err := st.Get(ctx, k); return err }()) ||
			!run("stat", func() error { _, err := st.Stat(ctx, k); return err }()) ||
			!run("delete", st.Delete(ctx, k)) ||
			!run("delete batch", st.Delete(ctx, good, k)) ||
			!run("copy source", st.Copy(ctx, k, "stolen")) ||
			!run("copy destination", st.Copy(ctx, good, k)) {
			return
		}
		if k != "" { // "" means "from the start"
			if !run("list start-after", func() error { _, err := st.List(ctx, "", k, 0); return err }()) {
				return
			}
		}
		if k != "" && k != "canary/" { // both are valid list prefixes
			if !run("list prefix", func() error { _, err := st.List(ctx, k, "", 0); return err }()) {
				return
			}
		}
		if up, ok := st.(stage.Uploads); ok {
			if !run("abort upload", up.AbortUpload(ctx, stage.Upload{Key: k, ID: "some-upload-id"})) {
				return
			}
			if k != "" && k != "canary/" {
				run("list uploads", func() error { _, err := up.ListUploads(ctx, k); return err }())
			}
		}
	}
}

// RunIsolation is the two-tenant isolation suite. Tenants a, b and ab share
// b.Root. Acting as a — through a store from b.Open and through one reopened
// from a's descriptor after a JSON round trip, as an SDK user would — every
// attack is refused before any request leaves the process, or (for keys
// that are valid but only look like another tenant's) stays inside a's
// prefix; the recorded client requests and the server log show no request
// outside a's prefix; b's and ab's canaries keep contents and ETags.
// Controls show each escape would be real without the stage layer.
func RunIsolation(t *testing.T, b *Backend) {
	ctx := t.Context()
	A, B, AB := b.Open(t, "a"), b.Open(t, "b"), b.Open(t, "ab")
	mustPut := func(st stage.Store, key, data string) {
		t.Helper()
		if _, err := st.Put(ctx, key, strings.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
	}
	mustPut(B, "canary", "b-secret")
	mustPut(B, "tables/t/1/part-0.parquet", "b-table")
	mustPut(AB, "canary", "ab-secret")
	mustPut(A, "mine", "a-data")
	canaries := []struct {
		st   stage.Store
		key  string
		info stage.Info
		data string
	}{{st: B, key: "canary", data: "b-secret"}, {st: B, key: "tables/t/1/part-0.parquet", data: "b-table"}, {st: AB, key: "canary", data: "ab-secret"}}
	for i, c := range canaries {
		info, err := c.st.Stat(ctx, c.key)
		if err != nil {
			t.Fatal(err)
		}
		canaries[i].info = info
	}
	var bUpload string
	if b.StartUpload != nil {
		bUpload = b.StartUpload(t, "tenants/b/big")
	}
	if b.Symlink != nil {
		b.Symlink(t, "tenants/a/link", "tenants/b/canary")
		b.Symlink(t, "tenants/a/linkdir", "tenants/b")
	}
	aPrefix := b.Abs("tenants/a") + "/"

	count := func() (int, int) {
		var s, r int
		if b.Sent != nil {
			s = len(b.Sent())
		}
		if b.Received != nil {
			r = len(b.Received())
		}
		return s, r
	}
	since := func(s0, r0 int) []Request {
		var reqs []Request
		if b.Sent != nil {
			reqs = append(reqs, b.Sent()[s0:]...)
		}
		if b.Received != nil {
			reqs = append(reqs, b.Received()[r0:]...)
		}
		return reqs
	}

	attack := func(t *testing.T, A stage.Store) {
		s0, r0 := count()
		// Refused before any request leaves the process.
		for _, k := range BadKeys {
			for op, err := range ops(ctx, A, k, "mine") {
				if !refused(err) {
					t.Errorf("%s %s: not refused: %v", op, stage.SafeKey(k), err)
				}
			}
		}
		for _, k := range []string{"../b/big", "/tenants/b/big", "tenants/../b/big"} {
			if up, ok := A.(stage.Uploads); ok {
				if err := up.AbortUpload(ctx, stage.Upload{Key: k, ID: bUpload}); !refused(err) {
					t.Errorf("abort b's upload at %q: %v", k, err)
				}
			}
		}
		if s, r := count(); s != s0 || r != r0 {
			t.Errorf("refused attacks sent %d requests and the server got %d: %+v", s-s0, r-r0, since(s0, r0))
		}
		if _, err := readAll(ctx, A, "mine"); err != nil {
			t.Errorf("a refused delete batch still deleted a's key: %v", err)
		}

		// Valid keys that only look like another tenant's stay inside a.
		for _, p := range []string{"tenants/", "tenants/b", "tenants/a", "tenants/b/", ""} {
			keys, err := A.List(ctx, p, "", 0)
			if err != nil {
				t.Errorf("list %q: %v", p, err)
			}
			for _, k := range keys {
				if k != "mine" && k != "mine2" {
					t.Errorf("list %q as a returned %q", p, k)
				}
			}
		}
		if _, err := readAll(ctx, A, "tenants/b/canary"); !errors.Is(err, stage.ErrNotFound) {
			t.Errorf("get tenants/b/canary as a: %v", err)
		}
		if err := A.Copy(ctx, "tenants/b/canary", "stolen"); !errors.Is(err, stage.ErrNotFound) {
			t.Errorf("copy from tenants/b/canary as a: %v", err)
		}
		mustPut(A, "mine2", "a-data-2")
		if err := A.Delete(ctx, "mine2", "tenants/b/canary", "tenants/ab/canary"); err != nil {
			t.Errorf("delete batch of a's names: %v", err)
		}
		if _, err := A.Stat(ctx, "mine2"); !errors.Is(err, stage.ErrNotFound) {
			t.Errorf("mine2 not deleted: %v", err)
		}
		if up, ok := A.(stage.Uploads); ok {
			for _, k := range []string{"tenants/b/big", "big"} {
				if err := up.AbortUpload(ctx, stage.Upload{Key: k, ID: bUpload}); !errors.Is(err, stage.ErrNotFound) {
					t.Errorf("abort b's upload id at a's %q: %v", k, err)
				}
			}
			if ups, err := up.ListUploads(ctx, ""); err != nil || len(ups) != 0 {
				t.Errorf("a's uploads: %v %v", ups, err)
			}
		}
		if b.Symlink != nil {
			for _, k := range []string{"link", "linkdir/canary", "linkdir/tables/t/1/part-0.parquet"} {
				if data, err := readAll(ctx, A, k); err == nil {
					t.Errorf("get %q through a symlink into b: %q", k, data)
				}
				if err := A.Copy(ctx, k, "stolen-"+strings.ReplaceAll(k, "/", "-")); err == nil {
					t.Errorf("copy %q through a symlink into b succeeded", k)
				}
			}
			if _, err := A.Put(ctx, "linkdir/planted", strings.NewReader("p"), 1); err == nil {
				t.Error("put through a symlinked directory into b succeeded")
			}
			_ = A.Delete(ctx, "linkdir/canary")
		}
		if bad := outside(since(s0, r0), aPrefix); len(bad) > 0 {
			t.Errorf("requests outside %q while acting as a: %+v", aPrefix, bad)
		}
		if s, _ := count(); b.Sent != nil && s == s0 {
			t.Error("the recorder saw no requests at all: it is not wired to the store")
		}
	}
	t.Run("store", func(t *testing.T) { attack(t, A) })
	t.Run("sdk", func(t *testing.T) {
		js, err := json.Marshal(A.Descriptor())
		if err != nil {
			t.Fatal(err)
		}
		d, err := stage.ParseDescriptor(js)
		if err != nil {
			t.Fatal(err)
		}
		attack(t, b.OpenDescriptor(t, d))
	})

	// Canaries: contents and ETags unchanged; b's upload still open.
	for _, c := range canaries {
		info, err := c.st.Stat(ctx, c.key)
		if err != nil || info.ETag != c.info.ETag || info.Size != c.info.Size {
			t.Errorf("canary %s changed: %+v -> %+v (%v)", c.key, c.info, info, err)
		}
		if data, err := readAll(ctx, c.st, c.key); err != nil || string(data) != c.data {
			t.Errorf("canary %s: %q %v", c.key, data, err)
		}
	}
	if up, ok := B.(stage.Uploads); ok && bUpload != "" {
		ups, err := up.ListUploads(ctx, "")
		if err != nil || !slices.ContainsFunc(ups, func(u stage.Upload) bool { return u.Key == "big" && u.ID == bUpload }) {
			t.Errorf("b's upload was touched: %v %v", ups, err)
		}
	}
	if _, ok := b.RawGet(t, "tenants/b/planted"); ok {
		t.Error("a planted a file in b")
	}

	// Controls: without the stage layer each escape is real.
	t.Run("controls", func(t *testing.T) {
		if data, ok := b.RawGet(t, "tenants/b/canary"); !ok || !bytes.Equal(data, []byte("b-secret")) {
			t.Error("control: the backend's own access cannot read b's canary, so the suite proves nothing")
		}
		if keys := b.RawList(t, "tenants/a"); !slices.Contains(keys, "tenants/ab/canary") {
			t.Errorf("control: list prefix tenants/a without '/' should reach tenants/ab: %v", keys)
		}
		if b.Symlink != nil {
			if data, ok := b.RawGet(t, "tenants/a/../b/canary"); !ok || string(data) != "b-secret" {
				t.Error("control: a naive join of a/../b should reach b")
			}
			if data, ok := b.RawGet(t, "tenants/a/link"); !ok || string(data) != "b-secret" {
				t.Error("control: the planted symlink should reach b")
			}
			if data, ok := b.RawGet(t, "tenants/a/linkdir/canary"); !ok || string(data) != "b-secret" {
				t.Error("control: the planted directory symlink should reach b")
			}
		}
	})
}
