# Makefile for repro. `make test` is the test command CI runs (.ci/run).

GO      ?= go
BIN     ?= bin/repro
PKGS    ?= ./...
# Tests use the smoke preset; the whole suite must stay under 10 minutes on two cores.
TESTFLAGS ?= -timeout 15m

.PHONY: all build test test-short check fmt-check vet bench run clean nightly baselines

all: build

# The revision is stamped with the linker as well as by the Go command, so
# that manifests name it even where GOFLAGS=-buildvcs=false or the tree has
# no .git (package internal/buildinfo prefers the Go command's record).
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo +dirty)
LDFLAGS  ?= -X github.com/repro-dp/repro/internal/buildinfo.stamped=$(REVISION)

build:
	$(GO) build -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/repro

test:
	$(GO) test $(TESTFLAGS) $(PKGS)

test-short:
	$(GO) test -short $(TESTFLAGS) $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

check: fmt-check vet test

# Benchmarks: one pass by default; use BENCHCOUNT=10 and benchstat for comparisons.
BENCH      ?= .
BENCHCOUNT ?= 1
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(BENCHCOUNT) $(PKGS)

run: build
	./$(BIN) run table1

# Nightly regression: run the smoke experiments, check their papers' claims
# (repro verify fails only when a required claim FAILs), compare them
# with the baselines checked in under results/baselines/ (repro compare fails
# on a significant change for the worse beyond the spec's thresholds), and
# write each experiment's report page with the comparison first
# ($(NIGHTLY_RESULTS)/EXP/report.html, and $(NIGHTLY_RESULTS)/index.html).
# Every step runs; the target fails if any did. When a change of results is
# intended, `make baselines` reruns the experiments and copies their run
# tables over the baselines; commit them with the change.
NIGHTLY_EXPS    ?= table1
NIGHTLY_RESULTS ?= results/nightly
BASELINES       ?= results/baselines
nightly: build
	@status=0; for e in $(NIGHTLY_EXPS); do \
		./$(BIN) run $$e --scale smoke --results $(NIGHTLY_RESULTS) || status=1; \
		./$(BIN) verify $$e --scale smoke --results $(NIGHTLY_RESULTS) --no-run || status=1; \
		./$(BIN) compare $(BASELINES)/$$e-smoke.parquet $(NIGHTLY_RESULTS)/$$e || status=1; \
		./$(BIN) report $$e --scale smoke --results $(NIGHTLY_RESULTS) --baseline $(BASELINES)/$$e-smoke.parquet || status=1; \
	done; exit $$status

baselines: build
	@set -e; for e in $(NIGHTLY_EXPS); do \
		./$(BIN) run $$e --scale smoke --results $(NIGHTLY_RESULTS); \
		cp $(NIGHTLY_RESULTS)/$$e/runs.parquet $(BASELINES)/$$e-smoke.parquet; \
		echo "updated $(BASELINES)/$$e-smoke.parquet"; \
	done

clean:
	rm -rf bin
