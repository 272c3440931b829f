package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lakegate/metasrv/api"
)

// benchPrefix is what --prefix accepts: the run's tag is PREFIX and its
// catalogs PREFIX_NNNN, so it must make plain names by itself.
var benchPrefix = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// benchReport is what `lakegate admin bench writes` measured; --json
// prints it as is.
type benchReport struct {
	Writes          int     `json:"writes"`
	Writers         int     `json:"writers"`
	Seconds         float64 `json:"seconds"`
	WritesPerSecond float64 `json:"writesPerSecond"`
	P50Ms           float64 `json:"p50Ms"`
	P90Ms           float64 `json:"p90Ms"`
	P99Ms           float64 `json:"p99Ms"`
	P999Ms          float64 `json:"p999Ms"`
	MaxMs           float64 `json:"maxMs"`
}

// adminBenchWrites is `lakegate admin bench writes`: a load generator
// for a metasrv cluster, as etcd's `check perf` is for etcd. Every write
// is a committed change (writer w attaches PREFIX=vw to its own catalog,
// then detaches it), so the run measures the Raft path end to end:
// proposal, replication, the disks' syncs and the apply on every node.
//
// The run creates what it writes to and drops it afterwards — also when
// it fails or is interrupted — and refuses to start if any of those names
// exists already, so it never changes an object it did not create.
func adminBenchWrites(a *admin, args []string) error {
	fs := a.flags()
	writers := fs.Int("writers", 64, "concurrent writers, each with its own connection and catalog (1–1024)")
	writes := fs.Int("writes", 20000, "writes to time, across all writers (after one untimed attach and detach per writer)")
	prefix := fs.String("prefix", "lgbench", "name of the tag, and prefix of the catalogs (PREFIX_NNNN), the run creates and drops")
	keep := fs.Bool("keep", false, "leave the tag and catalogs in place afterwards")
	minRate := fs.Float64("min-rate", 0, "fail unless at least this many writes/s were committed (0: no check)")
	maxP99 := fs.Duration("max-p99", 0, "fail if the 99th percentile latency exceeds this (0: no check)")
	if _, err := a.parse(fs, args, 0, 0, "[--writers N] [--writes N] [--prefix P] [--keep] [--min-rate R] [--max-p99 D]"); err != nil {
		return err
	}
	switch {
	case *writers < 1 || *writers > 1024:
		return fmt.Errorf("%w: %s: --writers must be 1–1024, not %d", errUsage, a.name, *writers)
	case *writes < 1 || *writes > 100_000_000:
		return fmt.Errorf("%w: %s: --writes must be 1–100000000, not %d", errUsage, a.name, *writes)
	case !benchPrefix.MatchString(*prefix):
		return fmt.Errorf("%w: %s: --prefix must be a lower-case letter, then up to 39 of a-z, 0-9 and _, not %q", errUsage, a.name, *prefix)
	case *minRate < 0 || *maxP99 < 0:
		return fmt.Errorf("%w: %s: --min-rate and --max-p99 cannot be negative", errUsage, a.name)
	}
	// A load generator writes only where it is told to: no default metalake.
	if a.metalake == "" {
		return fmt.Errorf("%w: %s needs --metalake (or $LAKEGATE_METALAKE): it creates and drops objects there", errUsage, a.name)
	}
	// One kept-alive connection per writer: the default transport keeps
	// two per host and would open a new one for most requests.
	if tr, ok := a.hc.Transport.(*http.Transport); ok {
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = *writers, *writers
	}
	defer a.hc.CloseIdleConnections()

	b := &benchRun{a: a, prefix: *prefix, writers: *writers}
	err := b.setUp()
	var rep benchReport
	if err == nil {
		rep, err = b.measure(*writes)
	}
	if !*keep {
		// Also after a failure or an interrupt: the run leaves nothing
		// behind it created.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), time.Minute)
		defer cancel()
		if cerr := b.tearDown(ctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleaning up (drop tag %s and catalogs %s_*, or run again with the same --prefix after dropping them): %w", b.prefix, b.prefix, cerr))
		}
	}
	if err != nil {
		return err
	}
	if a.json {
		out, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", out)
	} else {
		ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " ms" }
		a.fields("writes", fmt.Sprintf("%d (%d writers)", rep.Writes, rep.Writers),
			"elapsed", strconv.FormatFloat(rep.Seconds, 'f', 2, 64)+" s",
			"writes/s", strconv.FormatFloat(rep.WritesPerSecond, 'f', 0, 64),
			"latency p50", ms(rep.P50Ms), "latency p90", ms(rep.P90Ms), "latency p99", ms(rep.P99Ms),
			"latency p99.9", ms(rep.P999Ms), "latency max", ms(rep.MaxMs))
	}
	var short []string
	if *minRate > 0 && rep.WritesPerSecond < *minRate {
		short = append(short, fmt.Sprintf("%.0f writes/s is below --min-rate %g", rep.WritesPerSecond, *minRate))
	}
	if *maxP99 > 0 && rep.P99Ms > float64(*maxP99)/float64(time.Millisecond) {
		short = append(short, fmt.Sprintf("p99 %.2f ms is above --max-p99 %s", rep.P99Ms, *maxP99))
	}
	if len(short) > 0 {
		return fmt.Errorf("%w: %s", errBenchShort, strings.Join(short, "; "))
	}
	return nil
}

// errBenchShort is a bench run that completed but missed --min-rate or
// --max-p99.
var errBenchShort = errors.New("the cluster missed the target")

// benchRun is one `admin bench writes` run against a metalake.
type benchRun struct {
	a       *admin
	prefix  string
	writers int

	tagCreated bool
	catalogs   []string // created by this run, in order
}

func (b *benchRun) catalogName(w int) string { return fmt.Sprintf("%s_%04d", b.prefix, w) }

// setUp creates the run's tag and one catalog per writer. A name that
// exists already stops the run: it may be someone's object.
func (b *benchRun) setUp() error {
	create := func(kind, name string, segs ...string) error {
		p, err := b.a.lake(segs...)
		if err != nil {
			return err
		}
		body, err := json.Marshal(map[string]string{"name": name, "comment": "created by lakegate admin bench writes; dropped when it ends"})
		if err != nil {
			return err
		}
		if _, err := b.a.send(b.a.ctx, "POST", p, body, ""); err != nil {
			var ae *api.Error
			if errors.As(err, &ae) && ae.Status == http.StatusConflict {
				return fmt.Errorf("%s %s exists already; the run creates its own objects and changes no other: drop it or choose another --prefix", kind, name)
			}
			return fmt.Errorf("creating %s %s: %w", kind, name, err)
		}
		return nil
	}
	if err := create("tag", b.prefix, "tags"); err != nil {
		return err
	}
	b.tagCreated = true
	for w := range b.writers {
		name := b.catalogName(w)
		if err := create("catalog", name, "catalogs"); err != nil {
			return err
		}
		b.catalogs = append(b.catalogs, name)
	}
	return nil
}

// tearDown drops what setUp created: the tag first (which detaches it
// from every catalog), then the then empty catalogs.
func (b *benchRun) tearDown(ctx context.Context) error {
	drop := func(segs ...string) error {
		p, err := b.a.lake(segs...)
		if err != nil {
			return err
		}
		_, err = b.a.send(ctx, "DELETE", p, nil, "")
		return err
	}
	var errs []error
	if b.tagCreated {
		if err := drop("tags", b.prefix); err != nil {
			errs = append(errs, fmt.Errorf("tag %s: %w", b.prefix, err))
		}
	}
	for _, c := range b.catalogs {
		if err := drop("catalogs", c); err != nil {
			errs = append(errs, fmt.Errorf("catalog %s: %w", c, err))
		}
	}
	return errors.Join(errs...)
}

// measure runs one untimed attach and detach per writer (opening its
// connection), then writes timed writes across the writers, and
// reports. The first failed write stops the run.
func (b *benchRun) measure(writes int) (benchReport, error) {
	ctx, cancel := context.WithCancelCause(b.a.ctx)
	defer cancel(nil)
	type writer struct {
		path       string
		bodies     [2][]byte // attach, detach
		latency    []time.Duration
		sinceStart int // writes sent, timed or not: even attaches, odd detaches
	}
	ws := make([]*writer, b.writers)
	for i := range ws {
		p, err := b.a.lake("objects", "catalog", b.catalogName(i), "tags")
		if err != nil {
			return benchReport{}, err
		}
		w := &writer{path: p}
		for k, op := range []string{"tagsToAdd", "tagsToRemove"} {
			body, err := json.Marshal(map[string]any{op: []map[string]string{{"name": b.prefix, "value": "v" + strconv.Itoa(i)}}})
			if err != nil {
				return benchReport{}, err
			}
			w.bodies[k] = body
		}
		ws[i] = w
	}
	write := func(w *writer) error {
		_, err := b.a.send(ctx, "POST", w.path, w.bodies[w.sinceStart%2], "application/vnd.gravitino.v2+json")
		w.sinceStart++
		if err != nil {
			return fmt.Errorf("write %d to %s: %w", w.sinceStart, w.path, err)
		}
		return nil
	}
	fail := func(err error) {
		if context.Cause(ctx) == nil {
			cancel(err)
		}
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			for range 2 {
				if err := write(w); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return benchReport{}, err
	}

	var left atomic.Int64
	left.Store(int64(writes))
	start := time.Now()
	for _, w := range ws {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				if err := write(w); err != nil {
					fail(err)
					return
				}
				w.latency = append(w.latency, time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return benchReport{}, err
	}
	var all []time.Duration
	for _, w := range ws {
		all = append(all, w.latency...)
	}
	slices.Sort(all)
	// The nearest-rank percentile: the smallest latency at least q of the
	// writes did not exceed.
	at := func(q float64) float64 {
		i := max(0, min(int(math.Ceil(q*float64(len(all))))-1, len(all)-1))
		return float64(all[i]) / float64(time.Millisecond)
	}
	return benchReport{
		Writes: len(all), Writers: b.writers, Seconds: elapsed.Seconds(),
		WritesPerSecond: float64(len(all)) / elapsed.Seconds(),
		P50Ms:           at(0.50), P90Ms: at(0.90), P99Ms: at(0.99), P999Ms: at(0.999), MaxMs: at(1),
	}, nil
}
