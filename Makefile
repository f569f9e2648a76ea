# Makefile for repro. `make test` is the test command CI runs (.ci/run).

GO      ?= go
BIN     ?= bin/repro
PKGS    ?= ./...
# Tests use the smoke preset; the whole suite must stay under 10 minutes on two cores.
TESTFLAGS ?= -timeout 15m
# Results are reproduced bit for bit, and the vector kernels are tested bit
# for bit against pure-Go loops. At GOAMD64=v3 the compiler fuses a*b+c in
# those loops into one FMA, which rounds once instead of twice, so builds and
# tests use the baseline level (Go's default) even where the environment says
# otherwise. The loops are also written so that they cannot be fused (an
# explicit conversion of each product, docs/engine.md), as arm64 needs; the
# pin stays as belt and braces.
export GOAMD64 = v1

.PHONY: all build test test-short check fmt-check vet fusion-check bench run clean nightly baselines cuda-build gpu-check-build gpu-check

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

# No fused multiply-add on the results' path (docs/engine.md): builds the
# module for arm64 with the compiler's assembly listing and fails on any
# FMADD, FMSUB, FNMADD or FNMSUB from the repository's Go code outside the
# allow-list in internal/lint/fma_test.go. Seconds on a warm build cache,
# about three CPU-minutes on a cold one (the standard library and the
# dependencies compiled for arm64), so it is not part of check; .ci/run
# runs it.
fusion-check:
	REPRO_FUSION_CHECK=1 $(GO) test -count 1 -run 'TestNoFusedMultiplyAdd|TestFusionCheckFinds' ./internal/lint

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

# The cuda build tag (docs/gpu.md): the GPU backend, nn/cuda on the CUDA
# driver API. It needs cgo and the CUDA headers (cuda.h) where it is built;
# the driver's library (libcuda.so.1) is loaded at first use of the GPU, so
# the binary starts, and runs on the CPU, on a machine without the driver.
# CI does not build it. `make cuda-build` compiles and vets every package
# with the tag, writes bin/repro-cuda and checks that it starts here
# (scripts/cuda-start-check.sh).
# `make gpu-check-build` writes the test binaries of the device check to
# bin/gpu-check; `make gpu-check` runs scripts/gpu-check.sh, which needs no
# Go toolchain on the GPU machine.
CUDA_MISSING = cuda-build: the CUDA headers (cuda.h) are missing. \
On Debian bookworm, enable the non-free component and run \
'apt-get install nvidia-cuda-dev nvidia-cuda-toolkit' as root (CUDA 11.8, with nvcc for go generate); \
elsewhere install the CUDA toolkit 11.8 or later and set CGO_CFLAGS to its include folder.
cuda-build:
	@printf '#include <cuda.h>\nCUresult (*f)(unsigned int) = cuInit;\n' | \
		$${CC:-cc} $${CGO_CFLAGS:-} -I/usr/local/cuda/include -fsyntax-only -x c - 2>/dev/null || { echo "$(CUDA_MISSING)" >&2; exit 1; }
	$(GO) build -tags cuda ./...
	$(GO) vet -tags cuda ./nn/cuda/... ./internal/device ./cmd/repro
	$(GO) build -tags cuda -buildvcs=auto -ldflags '$(LDFLAGS)' -o bin/repro-cuda ./cmd/repro
	scripts/cuda-start-check.sh bin/repro-cuda

GPU_CHECK_BIN ?= bin/gpu-check
gpu-check-build: cuda-build
	@mkdir -p $(GPU_CHECK_BIN)
	$(GO) test -c -tags cuda -o $(GPU_CHECK_BIN)/cuda.test ./nn/cuda
	$(GO) test -c -o $(GPU_CHECK_BIN)/ptx.test ./nn/cuda/ptx
	@{ echo "revision: $(REVISION)"; $(GO) version; \
		(nvcc --version 2>/dev/null | tail -1 || echo "nvcc: none"); } > $(GPU_CHECK_BIN)/BUILD
	@cat $(GPU_CHECK_BIN)/BUILD

gpu-check:
	OUT=$${OUT:-results/gpu-check} GPU_CHECK_BIN=$(GPU_CHECK_BIN) scripts/gpu-check.sh

clean:
	rm -rf bin
