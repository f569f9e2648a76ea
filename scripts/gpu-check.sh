#!/usr/bin/env bash
# The device check of the cuda build (docs/gpu.md, "The device check"): on
# a machine with one NVIDIA GPU (compute capability 8.0 or later) and its
# driver, it runs, from test binaries built elsewhere with
# `make gpu-check-build` (no Go toolchain, no CUDA toolkit and no network
# needed here):
#
#   1. the CPU-side checks of the kernels (PTX, argument packing, launch
#      shapes, clipping), as CI runs them;
#   2. the device correctness tests: the matrix product against the CPU's
#      bits; GELU, softmax and LayerNorm against closed forms; one DP-SGD
#      step of the smoke TinyMLLM, CPU against GPU, every trainable tensor
#      within the stated tolerance; the same step twice, the same bits;
#   3. one DP-SGD step at small and at full, CPU against GPU: time,
#      examples per second, host and device memory (go test -bench).
#
# Everything it prints goes to $OUT/gpu-check.txt as well ($OUT defaults to
# results/gpu-check). It takes about 5 minutes and at most 10 (a time limit
# on each phase); it exits 0 when every phase passed, 1 when one failed,
# and 2 or 3 before running anything when the binaries or the driver are
# missing.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${GPU_CHECK_BIN:-bin/gpu-check}
out=${OUT:-results/gpu-check}

fail() { # fail STATUS MESSAGE: say why nothing ran, and exit
	echo "gpu-check: $2" >&2
	exit "$1"
}

for f in cuda.test ptx.test; do
	[ -x "$bin/$f" ] || fail 2 "$bin/$f is missing: build the test binaries with \`make gpu-check-build\` on a machine with Go and the CUDA toolkit, and carry $bin here"
done
# The test binary loads libcuda.so.1 (the driver's library) at its first
# use of the GPU; check for the driver and a GPU first, to stop with a
# reason before running anything.
libcuda=$(ldconfig -p 2>/dev/null | grep -c 'libcuda\.so\.1 ')
for f in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1; do
	[ -e "$f" ] && libcuda=1
done
if [ "${libcuda:-0}" = 0 ]; then
	fail 3 "no NVIDIA driver library (libcuda.so.1): this check needs a machine with an NVIDIA GPU and its driver"
fi
if [ ! -e /proc/driver/nvidia/version ] && ! nvidia-smi -L >/dev/null 2>&1; then
	fail 3 "no NVIDIA GPU: the driver's kernel module is not loaded (no /proc/driver/nvidia/version) and nvidia-smi sees no GPU"
fi

mkdir -p "$out" || fail 2 "cannot create $out"
report=$out/gpu-check.txt
: >"$report"
say() { echo "$@" | tee -a "$report"; }
status=0
# phase NAME LIMIT DIR COMMAND...: runs COMMAND in DIR for at most LIMIT
# seconds, its output to the report; a failure or a timeout fails the check.
phase() {
	local name=$1 limit=$2 dir=$3
	shift 3
	say ""
	say "== $name (limit ${limit}s)"
	local start=$SECONDS rc
	(cd "$dir" && timeout --kill-after=10 "$limit" "$@") 2>&1 | tee -a "$report"
	rc=${PIPESTATUS[0]}
	say "== $name: exit status $rc after $((SECONDS - start))s"
	if [ "$rc" -ne 0 ]; then
		status=1
	fi
}

say "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
[ -f "$bin/BUILD" ] && tee -a "$report" <"$bin/BUILD"
say "CPUs: $(nproc)"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 | tee -a "$report"
fi
abs=$(cd "$bin" && pwd)
phase "CPU-side kernel checks" 60 nn/cuda/ptx "$abs/ptx.test" -test.v -test.count=1
# REPRO_GPU_REQUIRED=1: the device tests fail, not skip, if the GPU cannot
# be opened.
export REPRO_GPU_REQUIRED=1
phase "device correctness" 180 . "$abs/cuda.test" -test.v -test.count=1 -test.run '^(TestOpen|TestGemmBits|TestOps|TestAdamStep|TestDPSGDStep|TestDPSGDStepDeterministic)$'
phase "DP-SGD step, CPU against GPU" 300 . "$abs/cuda.test" -test.run '^$' -test.bench '^Benchmark(Gemm|Private|DPSGDStep)$' -test.benchtime 2x -test.benchmem
say ""
if [ "$status" -eq 0 ]; then
	say "gpu-check: ok; the report is $report"
else
	say "gpu-check: FAILED (see above); the report is $report"
fi
exit "$status"
