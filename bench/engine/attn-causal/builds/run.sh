#!/bin/bash
# The branch point's nn test binary (before) and this branch's (after),
# alternated, RUNS processes each, BenchmarkZOStep on one core; appends
# to OUT/zostep.txt with a "# before|after" line ahead of each process.
#   $ (git archive 95bb3ba | tar -x -C /tmp/src && cd /tmp/src && go test -c -o /tmp/before.test ./nn)
#   $ go test -c -o /tmp/after.test ./nn
#   $ BEFORE=/tmp/before.test AFTER=/tmp/after.test RUNS=6 OUT=bench/engine/attn-causal/builds bench/engine/attn-causal/builds/run.sh
set -e
out=$(realpath -m "$OUT")
cd "$(git rev-parse --show-toplevel)/nn"
for i in $(seq "${RUNS:-6}"); do
  for side in before after; do
    bin=$BEFORE; [ $side = after ] && bin=$AFTER
    echo "# $side $i $(date -u +%T) $(uptime)" >> "$out/zostep.txt"
    GOMAXPROCS=1 nice -n 5 "$bin" -test.run '^$' -test.bench ZOStep -test.cpu 1 -test.benchtime 10x -test.count 1 -test.benchmem >> "$out/zostep.txt"
  done
done
