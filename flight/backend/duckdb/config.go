package duckdb

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/authz/sqlgate"
)

// Config configures an Engine. The zero value of every field except Root means
// the documented default.
type Config struct {
	// Root is the data root; a tenant's data lives at <Root>/tenants/<tenant>/.
	// Required. It is created if missing and resolved to an absolute path
	// without symlinks (DuckDB compares allowed_directories to real paths).
	Root string
	// MemoryLimit is DuckDB's memory_limit for each tenant instance, e.g.
	// "1GB" or "512MiB". "" means "1GB". Every open tenant gets its own limit.
	MemoryLimit string
	// Threads is DuckDB's threads setting for each tenant instance. 0 means 2.
	Threads int
	// QueryTimeout is the deadline of one Execute or Describe, including
	// reading the result. 0 means 5 minutes.
	QueryTimeout time.Duration
	// Logger receives operational logs. nil means discard.
	Logger *slog.Logger
	// Allocator allocates the merged record batches Execute returns. nil means
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// MaterializeBytes is the largest version (its data files' total size)
	// Bind copies into the tenant's memory instead of reading its files at
	// every query: a point query on a small table then costs about 0.5 ms
	// instead of 1.2 ms. 0 means 1 MiB; negative never copies. A copy is
	// uncompressed, and its scan evaluates a filter on every row where the
	// Parquet reader evaluates it once per dictionary entry: TPC-H's part
	// (4 MB of Parquet) answers q16 1.2–1.3× slower copied.
	MaterializeBytes int64
	// MaterializeTotal bounds what one tenant keeps copied (file bytes).
	// When a new version does not fit, copies no statement has bound for
	// longer than QueryTimeout (so none can still be reading them) are
	// dropped, least recently bound first; if that is not enough the new
	// version is read from its files. 0 means 64 MiB.
	MaterializeTotal int64
	// FoldUniqueValues bounds the distinct values (estimated) of a text
	// column whose backend.FactFoldUnique ColumnFact checks by grouping
	// it: above it the fact is answered false at the cost of the estimate
	// (a one-pass sketch, where grouping millions of values twice takes
	// seconds). 0 means 1,048,576.
	FoldUniqueValues int
	// Now is the clock that decides when a copy is idle; nil means
	// time.Now.
	Now func() time.Time
	// MaxParamBytes bounds a string or blob parameter value: a longer one
	// fails the statement with sqlgate.ErrLimit (ResourceExhausted). 0
	// means sqlgate.DefaultLiteralBytes, the gate's bound of a literal, which
	// the gate's accounting assumes.
	MaxParamBytes int
	// MaxTempSize is DuckDB's max_temp_directory_size for each tenant
	// instance: what it may spill to its tmp/ directory, e.g. "10GB". ""
	// means DefaultMaxTempSize.
	MaxTempSize string
	// MemoryBudget bounds, in bytes, what the tenant instances together
	// reserve: each open instance IdleTenantBytes, and one running a
	// statement or holding in-memory copies its MemoryLimit besides (see
	// budget.go). Idle instances are closed, least recently used first, to
	// make room; a statement that finds no room waits until its context
	// ends and fails with ErrMemoryBudget. 0 means no budget: every
	// instance has its own MemoryLimit and nothing bounds their sum. When
	// set, it must hold at least one instance at its limit. A statement
	// waits at most MemoryWait.
	MemoryBudget int64
	// MemoryWait bounds how long a statement (or a tenant's opening) waits
	// for room in MemoryBudget before it fails with ErrMemoryBudget; its
	// context may end it sooner. 0 means DefaultMemoryWait.
	MemoryWait time.Duration
	// IdleTenantBytes is what an open instance reserves from MemoryBudget
	// while it runs nothing. 0 means DefaultIdleTenantBytes.
	IdleTenantBytes int64
	// NoVerify turns off the check of every new statement with DuckDB's own
	// parser (see Execute). Only tests of the lockdown alone set it.
	NoVerify bool
}

// Defaults applied for zero Config fields.
const (
	DefaultMemoryLimit  = "1GB"
	DefaultThreads      = 2
	DefaultQueryTimeout = 5 * time.Minute

	DefaultMaterializeBytes = 1 << 20
	DefaultMaterializeTotal = 64 << 20

	DefaultFoldUniqueValues = 1 << 20

	DefaultMaxTempSize = "10GB"

	// DefaultMemoryWait is the Flight server's default queue timeout: a
	// statement waits for memory as long as for an execution slot.
	DefaultMemoryWait = 5 * time.Second
)

// DefaultConfig returns a Config with every default filled in except Root.
func DefaultConfig() Config {
	return Config{
		MemoryLimit:  DefaultMemoryLimit,
		Threads:      DefaultThreads,
		QueryTimeout: DefaultQueryTimeout,
		MaxTempSize:  DefaultMaxTempSize,
	}
}

// memoryLimitRE restricts memory_limit to what DuckDB parses; the value is
// spliced into a SET statement, so nothing else may pass.
var memoryLimitRE = regexp.MustCompile(`^[0-9]{1,12}(\.[0-9]{1,3})? ?(B|[KMGT]B|[KMGT]iB|bytes)$`)

// Validate reports every invalid field, naming the bad value.
func (c Config) Validate() error {
	var errs []error
	if c.Root == "" {
		errs = append(errs, errors.New("duckdb: Root is required"))
	}
	if c.MemoryLimit != "" && !memoryLimitRE.MatchString(c.MemoryLimit) {
		errs = append(errs, fmt.Errorf("duckdb: MemoryLimit %q is not a size like \"1GB\" or \"512MiB\"", c.MemoryLimit))
	}
	if c.MaxTempSize != "" && !memoryLimitRE.MatchString(c.MaxTempSize) {
		errs = append(errs, fmt.Errorf("duckdb: MaxTempSize %q is not a size like \"10GB\" or \"512MiB\"", c.MaxTempSize))
	}
	if c.FoldUniqueValues < 0 {
		errs = append(errs, fmt.Errorf("duckdb: FoldUniqueValues %d is negative", c.FoldUniqueValues))
	}
	if c.MaxParamBytes < 0 {
		errs = append(errs, fmt.Errorf("duckdb: MaxParamBytes %d is negative", c.MaxParamBytes))
	}
	if c.Threads < 0 || c.Threads > 1024 {
		errs = append(errs, fmt.Errorf("duckdb: Threads %d out of range [0, 1024]", c.Threads))
	}
	if c.MemoryBudget < 0 || c.IdleTenantBytes < 0 || c.MemoryWait < 0 {
		errs = append(errs, fmt.Errorf("duckdb: MemoryBudget %d, IdleTenantBytes %d and MemoryWait %v must not be negative", c.MemoryBudget, c.IdleTenantBytes, c.MemoryWait))
	} else if c.MemoryBudget > 0 {
		d := c.withDefaults()
		if limit, err := ParseSize(d.MemoryLimit); err == nil && c.MemoryBudget < limit+d.IdleTenantBytes {
			errs = append(errs, fmt.Errorf("duckdb: MemoryBudget %d bytes is less than one tenant at its MemoryLimit %s (%d bytes) plus IdleTenantBytes %d", c.MemoryBudget, d.MemoryLimit, limit, d.IdleTenantBytes))
		}
	}
	if c.QueryTimeout < 0 {
		errs = append(errs, fmt.Errorf("duckdb: QueryTimeout %v is negative", c.QueryTimeout))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.MemoryLimit == "" {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.Threads == 0 {
		c.Threads = DefaultThreads
	}
	if c.MaxTempSize == "" {
		c.MaxTempSize = DefaultMaxTempSize
	}
	if c.MaxParamBytes == 0 {
		c.MaxParamBytes = sqlgate.DefaultLiteralBytes
	}
	if c.QueryTimeout == 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.MaterializeBytes == 0 {
		c.MaterializeBytes = DefaultMaterializeBytes
	}
	if c.MaterializeTotal == 0 {
		c.MaterializeTotal = DefaultMaterializeTotal
	}
	if c.MemoryWait == 0 {
		c.MemoryWait = DefaultMemoryWait
	}
	if c.IdleTenantBytes == 0 {
		c.IdleTenantBytes = DefaultIdleTenantBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Allocator == nil {
		c.Allocator = memory.DefaultAllocator
	}
	return c
}

// ParseSize reads a size in DuckDB's notation, as MemoryLimit takes it:
// "1GB" (10^9 bytes), "512MiB" (2^29), "1.5GB", "100 B" or "4096bytes".
func ParseSize(s string) (int64, error) {
	if !memoryLimitRE.MatchString(s) {
		return 0, fmt.Errorf("duckdb: %q is not a size like \"1GB\" or \"512MiB\"", s)
	}
	num := strings.TrimRight(s, "BKMGTibytes ")
	unit := strings.TrimSpace(s[len(num):])
	mult := map[string]float64{"B": 1, "bytes": 1,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 {
		return 0, fmt.Errorf("duckdb: %q is not a size like \"1GB\" or \"512MiB\"", s)
	}
	return int64(f * mult), nil
}
