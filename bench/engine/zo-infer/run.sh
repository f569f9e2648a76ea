#!/bin/bash
# Before/after of the inference tapes and of DPZO's perturbation in place:
# BenchmarkZOStep, BenchmarkEvalPass and BenchmarkLiRAScore (nn/engine_bench_test.go)
# in the test binary of the commit that added the benchmarks (old; with the
# working tree's benchmark file) and of the working tree (new), alternated
# round by round on one core. Writes old.txt,
# new.txt and load.txt (uptime before each run) beside this script.
#
#   $ bench/engine/zo-infer/run.sh            # ROUNDS=5 BEFORE=83c8ebe by default
set -e
root=$(git rev-parse --show-toplevel)
out="$root/bench/engine/zo-infer"
before=${BEFORE:-83c8ebe}
tmp=$(mktemp -d)
mkdir -p "$tmp/src"
git -C "$root" archive "$before" | tar -x -C "$tmp/src"
# Both binaries run the working tree's benchmarks; the old code has no
# inference tape, so its LiRA scoring pass runs on an ordinary one, as the
# attacks did.
sed -e 's/NewInferenceTape()/NewTape(nil, nil)/' -e '/t\.Release()/d' \
  "$root/nn/engine_bench_test.go" > "$tmp/src/nn/engine_bench_test.go"
(cd "$tmp/src" && go test -c -o "$tmp/old.test" ./nn)
(cd "$root" && go test -c -o "$tmp/new.test" ./nn)
cd "$root/nn"
for i in $(seq "${ROUNDS:-5}"); do
  for v in old new; do
    echo "# round $i $v $(date -u +%T) $(uptime)" >> "$out/load.txt"
    GOMAXPROCS=1 nice -n 5 "$tmp/$v.test" -test.run '^$' -test.bench 'ZOStep|EvalPass|LiRAScore' \
      -test.cpu 1 -test.benchmem -test.benchtime 5x -test.count 1 >> "$out/$v.txt"
  done
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
