#!/bin/bash
# BenchmarkLinearLoRA (nn/engine_bench_test.go, added by fused-lora.patch,
# which this script needs applied): the DPZO and DP-SGD steps
# with the fused LoRA kernels of inference tapes off and on,
# alternated in one process, in RUNS
# processes on one core. Writes lora.txt and load.txt into OUT
# (bench/engine/zo-lora/inproc by default); inproc.py pairs each round's off
# and on.
#
#   $ RUNS=6 bench/engine/zo-lora/inproc.sh && bench/engine/zo-lora/inproc.py
set -e
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "${OUT:-$root/bench/engine/zo-lora/inproc}")
tmp=$(mktemp -d)
mkdir -p "$out"
(cd "$root" && go test -c -o "$tmp/nn.test" ./nn)
cd "$root/nn"
for i in $(seq "${RUNS:-6}"); do
  echo "# run $i $(date -u +%T) $(uptime)" >> "$out/load.txt"
  GOMAXPROCS=1 nice -n 5 "$tmp/nn.test" -test.run '^$' -test.bench LinearLoRA \
    -test.cpu 1 -test.benchmem -test.benchtime 5x -test.count 1 >> "$out/lora.txt"
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
