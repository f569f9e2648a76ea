#!/bin/bash
# Before/after of the exponentials four lanes at a time, the last block's
# queries on the kept rows and the PassShare of DPZO's two passes:
# BenchmarkZOStep, BenchmarkEvalPass and BenchmarkLiRAScore
# (nn/engine_bench_test.go) in the test binaries of BEFORE and of the
# working tree, each with its own benchmark file (the old one's DPZO step
# has no PassShare), alternated round by round on one core. Writes
# old.txt, new.txt and load.txt (uptime before each run) beside this
# script; bench/engine/zo-infer/summary.py takes the medians.
#
#   $ ROUNDS=8 bench/engine/zo-share/run.sh          # BEFORE=285dec7 by default
set -e
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "${OUT:-$root/bench/engine/zo-share}")
before=${BEFORE:-285dec7}
tmp=$(mktemp -d)
mkdir -p "$tmp/src"
git -C "$root" archive "$before" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go test -c -o "$tmp/old.test" ./nn)
(cd "$root" && go test -c -o "$tmp/new.test" ./nn)
cd "$root/nn"
for i in $(seq "${ROUNDS:-8}"); do
  for v in old new; do
    echo "# round $i $v $(date -u +%T) $(uptime)" >> "$out/load.txt"
    GOMAXPROCS=1 nice -n 5 "$tmp/$v.test" -test.run '^$' -test.bench "${BENCH:-ZOStep|EvalPass|LiRAScore}" \
      -test.cpu 1 -test.benchmem -test.benchtime 5x -test.count 1 >> "$out/$v.txt"
  done
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
