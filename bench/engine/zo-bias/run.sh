#!/bin/bash
# Before/after of the bias added in the matrix product's store (Affine):
# BenchmarkZOStep (nn/engine_bench_test.go) in the test binaries of
# BEFORE and of the working tree, alternated round by round on one core.
# The change is not in the code (it was not faster): apply one of the
# patches beside this script to a tree at BEFORE first. Writes old.txt,
# new.txt and load.txt (uptime before each run) into OUT; paired.py
# counts the rounds and takes the medians.
#
#   $ git apply bench/engine/zo-bias/store.patch
#   $ OUT=/tmp/store ROUNDS=20 bench/engine/zo-bias/run.sh   # BEFORE=4bcb56d by default
#   $ bench/engine/zo-bias/paired.py /tmp/store
set -e
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "${OUT:-$root/bench/engine/zo-bias}")
before=${BEFORE:-4bcb56d}
tmp=$(mktemp -d)
mkdir -p "$tmp/src"
git -C "$root" archive "$before" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go test -c -o "$tmp/old.test" ./nn)
(cd "$root" && go test -c -o "$tmp/new.test" ./nn)
cd "$root/nn"
for i in $(seq "${ROUNDS:-20}"); do
  for v in old new; do
    echo "# round $i $v $(date -u +%T) $(uptime)" >> "$out/load.txt"
    GOMAXPROCS=1 nice -n 5 "$tmp/$v.test" -test.run '^$' -test.bench "${BENCH:-ZOStep}" \
      -test.cpu 1 -test.benchmem -test.benchtime 5x -test.count 1 >> "$out/$v.txt"
  done
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
