package duckdb

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// DefaultBudgetPercent is the share of the machine's memory the default
// budget takes (DefaultMemoryBudget); the rest is the Go heap, the
// statements' values outside DuckDB's memory limit and the kernel's.
const DefaultBudgetPercent = 75

// fallbackMachineMemory is assumed when the machine's memory cannot be
// read (not Linux): small enough to be safe on a developer's laptop.
const fallbackMachineMemory = 8 << 30

// MachineMemory returns the memory this process may use: the physical
// memory (/proc/meminfo MemTotal) or, if lower, the cgroup v2 limit
// (memory.max of the process's cgroup; v1's memory.limit_in_bytes). ok is false when neither can be
// read; then it returns 8 GiB.
func MachineMemory() (n int64, ok bool) {
	n = meminfoTotal()
	if c := cgroupMax(); c > 0 && (n == 0 || c < n) {
		n = c
	}
	if n <= 0 {
		return fallbackMachineMemory, false
	}
	return n, true
}

// DefaultMemoryBudget is DefaultBudgetPercent of MachineMemory.
func DefaultMemoryBudget() int64 {
	n, _ := MachineMemory()
	return n / 100 * DefaultBudgetPercent
}

// meminfoTotal reads MemTotal from /proc/meminfo (0 if it cannot).
func meminfoTotal() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// cgroupMax reads the memory.max of the process's cgroup v2 (0 when there
// is none, it says "max", or it cannot be read).
func cgroupMax() int64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var limit int64
	for _, line := range strings.Split(string(data), "\n") {
		// cgroup v2 is the "0::<path>" line; v1's memory controller the
		// "<n>:memory:<path>" one.
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			limit = minLimit(limit, parseCgroupMax("/sys/fs/cgroup"+strings.TrimSpace(path)+"/memory.max"))
		} else if _, path, ok := strings.Cut(line, ":memory:"); ok {
			limit = minLimit(limit, parseCgroupMax("/sys/fs/cgroup/memory"+strings.TrimSpace(path)+"/memory.limit_in_bytes"))
		}
	}
	return limit
}

// minLimit is the lower of two limits, 0 meaning none.
func minLimit(a, b int64) int64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// parseCgroupMax reads a cgroup memory limit file: bytes, or "max" (v2)
// or a huge number (v1, 2^63 rounded down to pages) for none.
func parseCgroupMax(file string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0 // "max" or v1's unlimited
	}
	return n
}
