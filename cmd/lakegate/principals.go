package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"lakegate/authz"
	"lakegate/authz/oidc"
)

// processPrincipals are the principal maps one process holds in force (the
// gateway's and, under serve, the embedded metasrv's, which adds the
// gateway's own identity), all loaded from one file, reloaded together on
// SIGHUP and on an operator's reload call.
type processPrincipals struct {
	path string
	log  *slog.Logger
	keys authz.KeySets // one JWKS cache for the process, kept across reloads
	mu   sync.Mutex    // serialises reloads of the set
	sets []*authz.Principals
}

func newProcessPrincipals(path string, log *slog.Logger) *processPrincipals {
	return &processPrincipals{path: path, log: log, keys: oidc.NewRegistry(oidc.Options{})}
}

// load loads the file into a new Principals of the set; prepare, if not
// nil, derives the map in force from every loaded map.
func (pp *processPrincipals) load(prepare func(*authz.PrincipalMap) (*authz.PrincipalMap, error)) (*authz.Principals, error) {
	ps, err := authz.LoadPrincipals(pp.path, authz.PrincipalsConfig{Keys: pp.keys, Prepare: prepare})
	if err != nil {
		return nil, err
	}
	pp.mu.Lock()
	pp.sets = append(pp.sets, ps)
	pp.mu.Unlock()
	return ps, nil
}

// reload reloads the file into every Principals of the set, each whole or
// not at all: a map one refuses leaves it in force (a file the first
// accepts the others accept too, they validate alike). by names who asked
// ("SIGHUP" or an operator's id) for the log; the error never holds a
// token or a hash.
func (pp *processPrincipals) reload(by string) error {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	m, err := authz.LoadPrincipalMap(pp.path)
	if err == nil {
		for _, ps := range pp.sets {
			if err = ps.Replace(m); err != nil {
				break
			}
		}
	} else {
		// Count the refusal in every set (an empty map is refused).
		for _, ps := range pp.sets {
			_ = ps.Replace(nil)
		}
		err = fmt.Errorf("authz: reload refused, the previous principal map stays in force: %w", err)
	}
	if err != nil {
		pp.log.Warn("principal map reload refused; the previous map stays in force", "by", by, "path", pp.path, "err", err)
		return err
	}
	pp.log.Info("principal map reloaded", "by", by, "path", pp.path, "generation", pp.sets[0].Generation())
	return nil
}

// watchSIGHUP reloads on every SIGHUP until ctx is done.
func (pp *processPrincipals) watchSIGHUP(ctx context.Context) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				_ = pp.reload("SIGHUP")
			}
		}
	}()
}

// metricReloads counts reloads by result: accepted or refused.
const metricReloads = "lakegate_principal_map_reloads_total"

// metricGeneration is the generation of the map in force.
const metricGeneration = "lakegate_principal_map_generation"

// Describe implements prometheus.Collector.
func (pp *processPrincipals) Describe(ch chan<- *prometheus.Desc) {
	ch <- reloadsDesc
	ch <- generationDesc
}

var (
	reloadsDesc = prometheus.NewDesc(metricReloads,
		"Reloads of the principal map (SIGHUP or an operator's reload call), by result: accepted, or refused (the previous map stays in force).",
		[]string{"result"}, nil)
	generationDesc = prometheus.NewDesc(metricGeneration,
		"Generation of the principal map in force: 1 at start, one more per accepted reload.", nil, nil)
)

// Collect implements prometheus.Collector: the first Principals of the set
// stands for all (they are reloaded together).
func (pp *processPrincipals) Collect(ch chan<- prometheus.Metric) {
	pp.mu.Lock()
	var first *authz.Principals
	if len(pp.sets) > 0 {
		first = pp.sets[0]
	}
	pp.mu.Unlock()
	var acc, ref, gen uint64
	if first != nil {
		acc, ref = first.Reloads()
		gen = first.Generation()
	}
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(acc), "accepted")
	ch <- prometheus.MustNewConstMetric(reloadsDesc, prometheus.CounterValue, float64(ref), "refused")
	ch <- prometheus.MustNewConstMetric(generationDesc, prometheus.GaugeValue, float64(gen))
}
