#!/usr/bin/env bash
# The start-up check of a cuda build (make cuda-build runs it): the binary
# built with the cuda tag must start and work on the CPU on any machine,
# with or without the NVIDIA driver and a GPU; without them, only
# --device cuda fails, with an error that names what is missing.
#
#   scripts/cuda-start-check.sh [BINARY]    # default bin/repro-cuda
#
# It exits 0 when every check passed, 1 otherwise.
set -uo pipefail
bin=${1:-bin/repro-cuda}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
ok() { echo "cuda-start-check: ok: $*"; }
bad() { echo "cuda-start-check: FAIL: $*" >&2; status=1; }

[ -x "$bin" ] || { echo "cuda-start-check: $bin is missing: run make cuda-build" >&2; exit 1; }

# The driver's library is loaded at first use, not linked.
if ldd "$bin" 2>/dev/null | grep -q 'libcuda\.so'; then
	bad "$bin links libcuda.so (it must load it at first use)"
else
	ok "$bin does not link libcuda.so"
fi

# Commands that do not ask for the GPU run.
if "$bin" --version >"$tmp/out" 2>"$tmp/err" && grep -q '^repro version ' "$tmp/out"; then
	ok "$(cat "$tmp/out")"
else
	bad "$bin --version: $(cat "$tmp/out" "$tmp/err")"
fi
if "$bin" account --epsilon 8 --sample-rate 0.04 --steps 2250 --delta 1e-5 --json >"$tmp/out" 2>"$tmp/err" && grep -q '"sigma"' "$tmp/out"; then
	ok "repro account: $(tr -d '\n' <"$tmp/out" | cut -c1-80)"
else
	bad "$bin account: $(cat "$tmp/out" "$tmp/err")"
fi
if "$bin" run table1 --scale smoke --dry-run --device cpu --results "$tmp/results" >"$tmp/out" 2>"$tmp/err"; then
	ok "repro run table1 --scale smoke --dry-run --device cpu: $(grep -c . "$tmp/out") lines"
else
	bad "$bin run --dry-run --device cpu: $(cat "$tmp/err")"
fi

# Without a GPU, --device cuda fails before anything runs, saying why.
if nvidia-smi -L >/dev/null 2>&1; then
	ok "a GPU is here: --device cuda not checked for its error (scripts/gpu-check.sh checks the device)"
elif "$bin" run table1 --scale smoke --device cuda --results "$tmp/cuda" >"$tmp/out" 2>"$tmp/err"; then
	bad "$bin run --device cuda succeeded without a GPU"
elif grep -q 'no NVIDIA \(driver\|GPU\)' "$tmp/err" && ! grep -q 'Error in initialization' "$tmp/err"; then
	ok "--device cuda without a GPU: $(tail -1 "$tmp/err")"
else
	bad "$bin run --device cuda without a GPU did not name the missing driver or GPU: $(cat "$tmp/err")"
fi
exit $status
