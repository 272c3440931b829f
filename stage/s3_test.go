package stage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// pattern returns n bytes that differ from part to part.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// interrupt is a reader that, once it has delivered after bytes, cancels
// the context (cancel != nil) or fails.
type interrupt struct {
	r      io.Reader
	after  int
	n      int
	cancel context.CancelFunc
}

var errReader = errors.New("reader failed")

func (i *interrupt) Read(p []byte) (int, error) {
	if i.n >= i.after {
		if i.cancel != nil {
			i.cancel()
			return 0, context.Canceled
		}
		return 0, errReader
	}
	p = p[:min(len(p), i.after-i.n)]
	n, err := i.r.Read(p)
	i.n += n
	return n, err
}

func TestS3Multipart(t *testing.T) {
	b := stagetest.S3(t)
	st := b.Open(t, "m")
	up := st.(stage.Uploads)
	ctx := t.Context()
	data := pattern(2*stage.PartSize + 1<<20) // three parts
	sum := sha256.Sum256(data)

	noUploads := func(t *testing.T) {
		t.Helper()
		if ups, err := up.ListUploads(ctx, ""); err != nil || len(ups) != 0 {
			t.Fatalf("open uploads after an interrupted put: %v %v", ups, err)
		}
	}
	cases := []struct {
		name    string
		size    int64
		reader  func(cancel context.CancelFunc) io.Reader
		wantErr error
	}{
		{"cancel midway", -1, func(c context.CancelFunc) io.Reader {
			return &interrupt{r: bytes.NewReader(data), after: stage.PartSize + 5<<20, cancel: c}
		}, context.Canceled},
		{"reader fails midway", -1, func(context.CancelFunc) io.Reader {
			return &interrupt{r: bytes.NewReader(data), after: 2*stage.PartSize + 10}
		}, errReader},
		{"short body", int64(len(data) + 1), func(context.CancelFunc) io.Reader { return bytes.NewReader(data) }, stage.ErrSize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			sent := len(b.Sent())
			_, err := st.Put(cctx, "big/"+strings.ReplaceAll(c.name, " ", "-"), c.reader(cancel), c.size)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("put: %v, want %v", err, c.wantErr)
			}
			if _, err := st.Stat(ctx, "big/"+strings.ReplaceAll(c.name, " ", "-")); !errors.Is(err, stage.ErrNotFound) {
				t.Fatalf("object after interrupted put: %v", err)
			}
			noUploads(t)
			var aborted bool
			for _, r := range b.Sent()[sent:] {
				aborted = aborted || r.Method == "DELETE"
			}
			if !aborted {
				t.Error("no AbortMultipartUpload was sent")
			}
		})
	}

	t.Run("complete", func(t *testing.T) {
		info, err := st.Put(ctx, "big/ok", bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != int64(len(data)) || info.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("info %+v", info)
		}
		rc, _, err := st.Get(ctx, "big/ok")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes, %v", len(got), err)
		}
		noUploads(t)
		// Create-only holds for multipart too, and leaves no upload open.
		if _, err := st.Put(ctx, "big/ok", bytes.NewReader(data), -1); !errors.Is(err, stage.ErrExists) {
			t.Fatalf("second multipart put: %v", err)
		}
		noUploads(t)
	})
}

func TestS3ChecksumVerifiedOnRead(t *testing.T) {
	b := stagetest.S3(t)
	st := b.Open(t, "c")
	wrong := sha256.Sum256([]byte("something else"))
	b.RawPut(t, "tenants/c/tampered", []byte("payload"), map[string]string{"lakegate-sha256": hex.EncodeToString(wrong[:])})
	rc, _, err := st.Get(t.Context(), "tampered")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, stage.ErrChecksum) {
		t.Fatalf("read of a corrupted object: %v, want ErrChecksum", err)
	}
	// Control: a correct checksum reads fine.
	right := sha256.Sum256([]byte("payload"))
	b.RawPut(t, "tenants/c/fine", []byte("payload"), map[string]string{"lakegate-sha256": hex.EncodeToString(right[:])})
	rc2, _, err := st.Get(t.Context(), "fine")
	if err != nil {
		t.Fatal(err)
	}
	defer rc2.Close()
	if got, err := io.ReadAll(rc2); err != nil || string(got) != "payload" {
		t.Fatalf("read: %q %v", got, err)
	}
}
