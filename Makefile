# Makefile for repro. `make test` is the test command CI runs (.ci/run).

GO      ?= go
BIN     ?= bin/repro
PKGS    ?= ./...
# Tests use the smoke preset; the whole suite must stay under 10 minutes on two cores.
TESTFLAGS ?= -timeout 15m

.PHONY: all build test test-short check fmt-check vet bench run clean

all: build

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/repro

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

clean:
	rm -rf bin
