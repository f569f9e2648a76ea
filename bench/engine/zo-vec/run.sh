#!/bin/bash
# Before/after of the per-element vector kernels (nn/vrow_amd64.s: LayerNorm's
# last pass, residual sums, smeared keys, the attention softmax's maximum and
# scaling; LayerNorm statistics eight rows at a time): BenchmarkZOStep
# (nn/engine_bench_test.go) in the test binaries of BEFORE (old), of the
# working tree (new) and, with PATCH set, of the working tree with that patch
# applied (patched; bench/engine/zo-bias/prefetch-cond.patch re-measures the
# bias in the matrix product's store on top of the kernels), on one core, the
# order of the binaries rotated from round to round. Writes old.txt, new.txt,
# patched.txt and load.txt (uptime before each run) into OUT; summary.py
# takes medians, fastest rounds and per-round ratios.
#
#   $ PATCH=bench/engine/zo-bias/prefetch-cond.patch ROUNDS=12 bench/engine/zo-vec/run.sh   # BEFORE=bf09c5e
#   $ bench/engine/zo-vec/summary.py bench/engine/zo-vec
set -e
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "${OUT:-$root/bench/engine/zo-vec}")
before=${BEFORE:-bf09c5e}
tmp=$(mktemp -d)
mkdir -p "$tmp/old" "$tmp/patched" "$out"
git -C "$root" archive "$before" | tar -x -C "$tmp/old"
(cd "$tmp/old" && go test -c -o "$tmp/old.test" ./nn)
(cd "$root" && go test -c -o "$tmp/new.test" ./nn)
vs=(old new)
if [ -n "$PATCH" ]; then
  git -C "$root" archive HEAD | tar -x -C "$tmp/patched"
  (cd "$root" && git diff HEAD) | (cd "$tmp/patched" && git apply --allow-empty)
  (cd "$tmp/patched" && git apply "$root/$PATCH" && go test -c -o "$tmp/patched.test" ./nn)
  vs=(old new patched)
fi
cd "$root/nn"
for i in $(seq "${ROUNDS:-12}"); do
  n=${#vs[@]}
  for j in $(seq 0 $((n - 1))); do
    v=${vs[$(((i + j) % n))]}
    echo "# round $i $v $(date -u +%T) $(uptime)" >> "$out/load.txt"
    GOMAXPROCS=1 nice -n 5 "$tmp/$v.test" -test.run '^$' -test.bench "${BENCH:-ZOStep}" \
      -test.cpu 1 -test.benchmem -test.benchtime 5x -test.count 1 >> "$out/$v.txt"
  done
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
