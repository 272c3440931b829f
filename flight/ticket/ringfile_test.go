package ticket_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"lakegate/flight/ticket"
)

func keyLine(k []byte) string { return "lgk1:" + base64.RawURLEncoding.EncodeToString(k) }

// writeFile writes content with exactly mode perm.
func writeFile(t *testing.T, path, content string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // umask
		t.Fatal(err)
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	r := mustRing(t, key(1), key(2), key(3))
	path := filepath.Join(t.TempDir(), "ticket.keys")
	if err := ticket.WriteRingFile(path, r); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode())
	}
	loaded, err := ticket.LoadRing(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loaded.KeyIDs(), r.KeyIDs(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("KeyIDs = %v, want %v", got, want)
	}
	blob := mustSeal(t, r, claims())
	if _, err := loaded.Open(blob, now, "alice@acme", "acme"); err != nil {
		t.Fatal(err)
	}
	blob = mustSeal(t, loaded, claims())
	if _, err := r.Open(blob, now, "alice@acme", "acme"); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRingFileRefuses(t *testing.T) {
	r := mustRing(t, key(1))
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	writeFile(t, existing, "keep me", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{existing, link, filepath.Join(dir, "missing", "keys")} {
		err := ticket.WriteRingFile(path, r)
		var fe *ticket.RingFileError
		if !errors.As(err, &fe) || fe.Op != "write" || fe.Path != path {
			t.Errorf("WriteRingFile(%s) = %v, want *RingFileError", path, err)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("existing file overwritten: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteRingFile followed a symlink: %v", err)
	}
}

func TestLoadRingFormat(t *testing.T) {
	k1, k2 := key(1), key(2)
	content := "# ticket keys\r\n\n  " + keyLine(k1) + "  # active\r\n#" + keyLine(key(7)) + "\n\t" + keyLine(k2) + "\n"
	path := filepath.Join(t.TempDir(), "keys")
	writeFile(t, path, content, 0o400)
	r, err := ticket.LoadRing(path)
	if err != nil {
		t.Fatal(err)
	}
	want := mustRing(t, k1, k2)
	if got := r.KeyIDs(); len(got) != 2 || got[0] != want.KeyIDs()[0] || got[1] != want.KeyIDs()[1] {
		t.Fatalf("KeyIDs = %v, want %v (commented key must be skipped)", got, want.KeyIDs())
	}
}

func TestLoadRingRefuses(t *testing.T) {
	k1, k2 := key(1), key(2)
	good := keyLine(k1) + "\n"
	k3 := bytes.Repeat([]byte{0xfb}, ticket.KeySize) // '+' and '/' in the standard alphabet
	std := base64.StdEncoding.EncodeToString(k3)
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string)
		wantErr error // matched with errors.Is when set
	}{
		{"group readable", func(t *testing.T, p string) { writeFile(t, p, good, 0o640) }, ticket.ErrPermissions},
		{"other readable", func(t *testing.T, p string) { writeFile(t, p, good, 0o604) }, ticket.ErrPermissions},
		{"group writable", func(t *testing.T, p string) { writeFile(t, p, good, 0o620) }, ticket.ErrPermissions},
		{"world", func(t *testing.T, p string) { writeFile(t, p, good, 0o666) }, ticket.ErrPermissions},
		{"symlink", func(t *testing.T, p string) {
			target := p + ".target"
			writeFile(t, target, good, 0o600)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, ticket.ErrNotRegular},
		{"fifo", func(t *testing.T, p string) {
			if err := mkfifo(p); errors.Is(err, errors.ErrUnsupported) {
				t.Skip("this platform has no named pipes (mkfifo); the FIFO case runs on Unix")
			} else if err != nil {
				t.Fatal(err)
			}
		}, ticket.ErrNotRegular},
		{"missing", func(t *testing.T, p string) {}, fs.ErrNotExist},
		{"oversize", func(t *testing.T, p string) {
			writeFile(t, p, good+strings.Repeat("#", ticket.MaxRingFileSize), 0o600)
		}, ticket.ErrFileSize},
		{"empty", func(t *testing.T, p string) { writeFile(t, p, "", 0o600) }, ticket.ErrNoKeys},
		{"comments only", func(t *testing.T, p string) { writeFile(t, p, "# nothing\n\n", 0o600) }, ticket.ErrNoKeys},
		{"no prefix", func(t *testing.T, p string) {
			writeFile(t, p, good+base64.RawURLEncoding.EncodeToString(k2)+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"wrong prefix", func(t *testing.T, p string) {
			writeFile(t, p, good+"lgk2:"+base64.RawURLEncoding.EncodeToString(k2)+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"padded", func(t *testing.T, p string) {
			writeFile(t, p, good+"lgk1:"+base64.URLEncoding.EncodeToString(k2)+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"standard alphabet", func(t *testing.T, p string) {
			if !strings.ContainsAny(std, "+/") {
				t.Fatalf("test key %s has no +/", std)
			}
			writeFile(t, p, good+"lgk1:"+strings.TrimRight(std, "=")+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"short key", func(t *testing.T, p string) {
			writeFile(t, p, good+keyLine(k2[:31])+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"long key", func(t *testing.T, p string) {
			writeFile(t, p, good+keyLine(append(k2, 9))+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"trailing text", func(t *testing.T, p string) {
			writeFile(t, p, good+keyLine(k2)+" extra\n", 0o600)
		}, ticket.ErrMalformed},
		{"two keys on a line", func(t *testing.T, p string) {
			writeFile(t, p, keyLine(k1)+" "+keyLine(k2)+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"non-canonical trailing bits", func(t *testing.T, p string) {
			enc := []byte(base64.RawURLEncoding.EncodeToString(k2))
			// The last char carries 2 unused bits; set them.
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			enc[len(enc)-1] = alphabet[strings.IndexByte(alphabet, enc[len(enc)-1])|1]
			writeFile(t, p, good+"lgk1:"+string(enc)+"\n", 0o600)
		}, ticket.ErrMalformed},
		{"duplicate key", func(t *testing.T, p string) { writeFile(t, p, good+"#\n"+good, 0o600) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys")
			tt.setup(t, path)
			r, err := ticket.LoadRing(path)
			if err == nil {
				t.Fatalf("LoadRing = %v, want error", r)
			}
			t.Log(err)
			var fe *ticket.RingFileError
			if !errors.As(err, &fe) || fe.Op != "load" || fe.Path != path {
				t.Errorf("error %T %v, want *RingFileError for %s", err, err, path)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "ticket: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			msg := err.Error()
			for _, k := range [][]byte{k1, k2, k3, k2[:31]} {
				if containsKey(msg, k) {
					t.Errorf("error %q contains key material", msg)
				}
			}
			for _, s := range []string{std, strings.TrimRight(std, "="), base64.URLEncoding.EncodeToString(k2)} {
				if strings.Contains(msg, s) {
					t.Errorf("error %q contains key material", msg)
				}
			}
		})
	}
}

func TestLoadRingLineNumber(t *testing.T) {
	tests := []struct {
		content string
		line    int
	}{
		{"# c\n" + keyLine(key(1)) + "\n\nlgk1:nope\n", 4},
		{keyLine(key(1)) + "\n" + keyLine(key(2)) + "\n# x\n" + keyLine(key(1)) + "\n", 4},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "keys")
		writeFile(t, path, tt.content, 0o600)
		_, err := ticket.LoadRing(path)
		var fe *ticket.RingFileError
		if !errors.As(err, &fe) || fe.Line != tt.line {
			t.Fatalf("error = %v, want line %d", err, tt.line)
		}
		if strings.Contains(err.Error(), "nope") || strings.Count(err.Error(), "ticket:") != 1 {
			t.Fatalf("error %q echoes the line or repeats the prefix", err)
		}
	}
}
