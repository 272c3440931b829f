package duckdb

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestCgroupLimit: memory.max and memory.limit_in_bytes are read as
// bytes; "max" and v1's unlimited value are no limit.
func TestCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{
		"1073741824\n":          1 << 30,
		"max\n":                 0,
		"9223372036854771712\n": 0,
		"garbage":               0,
	} {
		f := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := parseCgroupMax(f); got != want {
			t.Errorf("%q: %d, want %d", content, got, want)
		}
	}
	if got := parseCgroupMax(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("a missing file: %d", got)
	}
	if got := minLimit(0, 5); got != 5 || minLimit(5, 0) != 5 || minLimit(7, 5) != 5 {
		t.Errorf("minLimit")
	}
	n, ok := MachineMemory()
	if runtime.GOOS == "linux" && (!ok || n <= 0) {
		t.Errorf("MachineMemory() = %d, %v on Linux", n, ok)
	}
	if b := DefaultMemoryBudget(); b <= 0 || b > n {
		t.Errorf("DefaultMemoryBudget() = %d of %d", b, n)
	}
}
