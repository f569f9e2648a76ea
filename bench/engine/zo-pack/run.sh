#!/bin/bash
# Before/after of the packed-weight cache of the inference path:
# BenchmarkZOStep, BenchmarkEvalPass and BenchmarkLiRAScore
# (nn/engine_bench_test.go) in the test binaries of BEFORE (the commit
# before the cache) and of the working tree, alternated round by round on
# one core. Writes old.txt, new.txt and load.txt (uptime before each run)
# beside this script; summary.py (bench/engine/zo-infer) takes the medians.
#
#   $ ROUNDS=12 BENCH=ZOStep bench/engine/zo-pack/run.sh          # BEFORE=ed6aeec by default
#   $ ROUNDS=6 BENCH=ZOStep/small BEFORE=83c8ebe OUT=bench/engine/zo-pack/table-code \
#       bench/engine/zo-pack/run.sh                               # against the table's code
#   $ GOMAXPROCS=1 ./nn.test -test.run '^$' -test.bench PackCache -test.cpu 1 -test.benchtime 10x   # ×3: packcache.txt
set -e
root=$(git rev-parse --show-toplevel)
out=$(realpath -m "${OUT:-$root/bench/engine/zo-pack}")
before=${BEFORE:-ed6aeec}
tmp=$(mktemp -d)
mkdir -p "$tmp/src"
git -C "$root" archive "$before" | tar -x -C "$tmp/src"
# The old binary runs the working tree's benchmarks, less BenchmarkPackCache
# (the cache's own switch); code from before the inference tapes (no
# nn/infer.go) runs the LiRA pass on an ordinary tape, as the attacks did.
sed -e '/^\/\/ BenchmarkPackCache/,$d' "$root/nn/engine_bench_test.go" > "$tmp/src/nn/engine_bench_test.go"
if ! grep -q 'PackWeights()' "$tmp/src/nn/packcache.go" 2>/dev/null; then
  sed -i -e '/PackWeights()/d' -e '/^\t*end()$/d' "$tmp/src/nn/engine_bench_test.go"
fi
if [ ! -f "$tmp/src/nn/infer.go" ]; then
  sed -i -e 's/NewInferenceTape()/NewTape(nil, nil)/' -e '/t\.Release()/d' "$tmp/src/nn/engine_bench_test.go"
fi
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
