//go:build unix

package authz_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lakegate/authz"
)

func TestLoadPrincipalMap(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // defeat the umask
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", validMap, 0o600)

	// Control: the same content loads when the file is safe, so every
	// refusal below is caused by the property under test.
	if m, err := authz.LoadPrincipalMap(good); err != nil || m.Len() != 2 {
		t.Fatalf("control: %v, %v", m, err)
	}
	if _, err := authz.LoadPrincipalMap(write("readonly.yaml", validMap, 0o400)); err != nil {
		t.Fatalf("control 0400: %v", err)
	}

	symlink := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(good, symlink); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	subdir := filepath.Join(dir, "dir.yaml")
	if err := os.Mkdir(subdir, 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		is   error  // errors.Is target
		want string // substring of the error
	}{
		{"group readable", write("g.yaml", validMap, 0o640), authz.ErrUnsafeMapFile, "group or other"},
		{"group writable", write("gw.yaml", validMap, 0o620), authz.ErrUnsafeMapFile, "group or other"},
		{"other readable", write("o.yaml", validMap, 0o604), authz.ErrUnsafeMapFile, "group or other"},
		{"symlink to 0600 file", symlink, authz.ErrUnsafeMapFile, "symbolic link"},
		{"directory", subdir, authz.ErrUnsafeMapFile, "not a regular file"},
		{"fifo", fifo, authz.ErrUnsafeMapFile, "not a regular file"},
		{"missing", filepath.Join(dir, "missing.yaml"), fs.ErrNotExist, "no such file"},
		{"oversized", write("big.yaml", validMap+"#"+strings.Repeat("x", 1<<20), 0o600), authz.ErrUnsafeMapFile, "larger than"},
		{"unknown field", write("unknown.yaml", validMap+"extra: "+tokAlice+"\n", 0o600), authz.ErrInvalidMap, "field extra not found"},
		{"duplicate hash same principal", write("dup1.yaml", "principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: "+hAlice+"}, {sha256: "+hAlice+"}]}\n", 0o600), authz.ErrInvalidMap, "duplicate sha256"},
		{"duplicate hash across principals", write("dup2.yaml", "principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: "+hAlice+"}]}\n  - {id: b, tenant: acme, role: operator, tokens: [{sha256: "+strings.ToUpper(hAlice)+"}]}\n", 0o600), authz.ErrInvalidMap, "duplicate sha256"},
		{"duplicate id", write("dupid.yaml", "principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: "+hAlice+"}]}\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: "+hGW+"}]}\n", 0o600), authz.ErrInvalidMap, "duplicate id"},
		{"user without namespaces", write("nons.yaml", "principals:\n  - {id: a, tenant: acme, role: user, tokens: [{sha256: "+hAlice+"}]}\n", 0o600), authz.ErrInvalidMap, "at least one namespace"},
		{"bad hash hex", write("badhex.yaml", "principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: "+"z"+hAlice[1:]+"}]}\n", 0o600), authz.ErrInvalidMap, "non-hex"},
		{"token instead of hash", write("tok.yaml", "principals:\n  - {id: a, tenant: acme, role: operator, tokens: [{sha256: "+tokAlice+"}]}\n", 0o600), authz.ErrInvalidMap, "64 hex"},
		{"multiple documents", write("multi.yaml", validMap+"---\n"+validMap, 0o600), authz.ErrInvalidMap, "exactly one YAML document"},
		{"empty", write("empty.yaml", "", 0o600), authz.ErrInvalidMap, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := authz.LoadPrincipalMap(tt.path)
			if err == nil {
				t.Fatalf("loaded %v", m)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Errorf("error %v is not a *fs.PathError for the path", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

func TestWritePrincipalMapRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.yaml")
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(target, link); err != nil { // dangling
		t.Fatal(err)
	}
	specs := []authz.PrincipalSpec{{ID: "admin", Tenant: "platform", Role: "operator", TokenHashes: []string{hAlice}}}
	if err := authz.WritePrincipalMap(link, specs); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WritePrincipalMap through a symlink: err = %v, want ErrExist", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("symlink target was created: %v", err)
	}
	// The written file passes the loader's checks.
	path := filepath.Join(dir, "map.yaml")
	if err := authz.WritePrincipalMap(path, specs); err != nil {
		t.Fatal(err)
	}
	if m, err := authz.LoadPrincipalMap(path); err != nil || m.Len() != 1 {
		t.Errorf("LoadPrincipalMap = %v, %v", m, err)
	}
}
