#!/bin/bash
# Runs an off/on engine benchmark of package nn (BENCH: VecKernels, Thin,
# ...; the DPZO and DP-SGD steps with a change off and on, alternated in
# one process) in RUNS processes on one core, appending its output to
# OUT/FILE and each process's load to OUT/load.txt; offon.py pairs each
# round's off and on. The per-benchmark inproc.sh scripts set these.
#
#   $ BENCH=Thin FILE=thin.txt OUT=/tmp/thin RUNS=6 bench/engine/offon.sh
set -e
: "${BENCH:?set BENCH}" "${FILE:?set FILE}" "${OUT:?set OUT}"
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "$OUT")
tmp=$(mktemp -d)
mkdir -p "$out"
(cd "$root" && go test -c -o "$tmp/nn.test" ./nn)
cd "$root/nn"
for i in $(seq "${RUNS:-6}"); do
  echo "# run $i $(date -u +%T) $(uptime)" >> "$out/load.txt"
  GOMAXPROCS=1 nice -n 5 "$tmp/nn.test" -test.run '^$' -test.bench "$BENCH" \
    -test.cpu 1 -test.benchmem -test.benchtime 5x -test.count 1 >> "$out/$FILE"
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
