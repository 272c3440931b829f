# lakegate build entry points. `make help` lists the targets.

# duckdb-go's Arrow API is behind the duckdb_arrow build tag; every go
# command run from here (and from .ci/run) needs it.
export GOFLAGS := -tags=duckdb_arrow

GO       ?= go
PKGS     ?= ./...
DATA_DIR ?= ./data
BENCH    ?= .
COUNT    ?= 1
FUZZTIME ?= 30s
SF       ?= 1
TPCH_ROUNDS ?= 7
ROUNDS   ?= 5
ROWS     ?= 10000000
POINTS   ?= 1000
ONLY     ?=

STATICCHECK_VERSION := v0.8.2
STATICCHECK         := $(CURDIR)/bin/staticcheck

GREMLINS_VERSION := v0.6.0
GREMLINS         := $(CURDIR)/bin/gremlins
MUTATE_REPORT    ?= $(CURDIR)/bin/mutate
MUTATE_PKGS      ?=

.PHONY: all help build run test race lint bench bench-tpch bench-compare fuzz mutate clean

all: build

help:
	@echo 'build  go build -o bin/lakegate ./cmd/lakegate'
	@echo 'run    build, then serve with --data-dir $$(DATA_DIR) (default ./data)'
	@echo 'test   go vet, then every test including integration (PKGS=./...)'
	@echo 'race   every test but integration under the race detector (RACE_PKGS=...)'
	@echo 'lint   gofmt check, go vet, staticcheck $(STATICCHECK_VERSION) (installed into bin/)'
	@echo 'bench  benchmarks matching BENCH (default .), COUNT times (default 1)'
	@echo 'bench-tpch  TPC-H at scale factor SF (default 1): go-tpc'"'"'s 22 queries through lakegate serve,'
	@echo '       checked against go-tpc'"'"'s SF 1 answers, timed against DuckDB on the same Parquet in TPCH_ROUNDS'
	@echo '       (default 7) alternating rounds (data cached in bin/tpch-sf$(SF))'
	@echo 'bench-compare  lakegate against its baselines in ROUNDS (default 5) alternating rounds: SELECT * of ROWS'
	@echo '       (default 10000000) rows against a minimal DuckDB-to-Flight pipe and a bare Flight server, SELECT 1 and a'
	@echo '       point query (POINTS a round, default 1000) against arrow-go'"'"'s SQLite server, ingest of ROWS rows'
	@echo '       against DuckDB COPY; prints one markdown table (ONLY=select,point,ingest for some parts)'
	@echo 'fuzz   each fuzz target for FUZZTIME (default 30s)'
	@echo 'mutate mutation testing of the security core with gremlins $(GREMLINS_VERSION) (installed into bin/);'
	@echo '       MUTATE_PKGS="authz catalog" for some packages; report in $$(MUTATE_REPORT) (default bin/mutate)'
	@echo 'clean  remove bin/'

build:
	$(GO) build -o bin/lakegate ./cmd/lakegate

run: build
	./bin/lakegate serve --data-dir $(DATA_DIR)

test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 60m $(PKGS)

# The race detector over every package but integration, whose servers run as
# separate processes built without it (about 5 minutes on 2 cores; not part
# of make test, which it would double).
race:
	$(GO) test -race -count=1 -timeout 60m $(or $(RACE_PKGS),$$($(GO) list ./... | grep -v /integration))

lint: $(STATICCHECK)
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo 'gofmt -l reports unformatted files:'; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) -tags duckdb_arrow $(PKGS)

$(STATICCHECK):
	GOBIN=$(CURDIR)/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count=$(COUNT) $(PKGS)

# TPC-H (integration/tpch_test.go): generates scale factor SF once into
# bin/tpch-sf$(SF), loads it into lakegate serve with the issue's 4 GB
# memory limit, checks the 22 answers and prints the per-query timings and
# ratios against DuckDB on the same Parquet files. SF 1 takes minutes.
bench-tpch:
	$(GO) test -run '^$$' -bench '^BenchmarkTPCH$$' -benchtime 1x -timeout 3h ./integration/ \
		-args -tpch.sf=$(SF) -tpch.memory=4GB -tpch.rounds=$(TPCH_ROUNDS)

# lakegate against its baselines (integration/benchcompare_test.go), in
# alternating rounds; prints one markdown table of min/median/max and of the
# ratio within each round (docs/performance.md, "How to reproduce"). About
# 5–7 minutes at the defaults on the reference machine.
bench-compare:
	$(GO) test -run '^$$' -bench '^BenchmarkCompare$$' -benchtime 1x -timeout 30m ./integration/ \
		-args -compare.rounds=$(ROUNDS) -compare.rows=$(ROWS) -compare.points=$(POINTS) -compare.only=$(ONLY)

# go test -fuzz takes one target in one package per run, so loop. Every
# target runs even when one fails; the failures are listed at the end. A
# failure counts only if it wrote a reproducer under the target's
# testdata/fuzz: Go 1.26's fuzzing coordinator can report "context deadline
# exceeded" when -fuzztime ends mid-execution (go.dev/issue/75804, fixed in
# Go 1.27) without any failing input, and that run is only noted.
fuzz:
	@failed=""; for pkg in $$($(GO) list $(PKGS)); do \
		dir="$$($(GO) list -f '{{.Dir}}' $$pkg)"; \
		list="$$($(GO) test -list 'Fuzz.*' $$pkg)"; \
		for target in $$(printf '%s\n' "$$list" | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			before="$$(ls "$$dir/testdata/fuzz/$$target" 2>/dev/null | wc -l)"; \
			if ! $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; then \
				if [ "$$(ls "$$dir/testdata/fuzz/$$target" 2>/dev/null | wc -l)" -gt "$$before" ]; then \
					failed="$$failed $$pkg.$$target"; \
				else \
					echo "== $$pkg $$target: failed without a failing input (the toolchain's deadline race), not counted"; \
				fi; \
			fi; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets with failing inputs:$$failed"; exit 1; fi

# Mutation testing of the security core (docs/testing.md): each package's
# listed files are mutated and each mutant runs that package's tests
# (scripts/mutate.sh holds the scope). Long (see docs/testing.md for the
# time per package); not part of make test.
mutate: $(GREMLINS)
	GREMLINS=$(GREMLINS) MUTATE_REPORT=$(MUTATE_REPORT) MUTATE_PKGS="$(MUTATE_PKGS)" ./scripts/mutate.sh

$(GREMLINS):
	GOBIN=$(CURDIR)/bin $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)

clean:
	rm -rf bin
