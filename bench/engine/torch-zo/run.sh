#!/bin/bash
# The first-order step beside PyTorch 1.13 (bench/anchor.py; torch.func
# per-sample gradients, Opacus is not installable here), alternated round by
# round: our BenchmarkAnchor/{dpsgd,nonprivate} at GOMAXPROCS 1 and 2 and
# bench/anchor.py at --threads 1 and 2. Writes go-1.txt, go-2.txt,
# torch-1.txt, torch-2.txt, time.txt (/usr/bin/time of each process) and
# load.txt into OUT (beside this script by default).
#
#   $ bench/engine/torch-zo/run.sh            # ROUNDS=5 by default
set -e
root=$(git rev-parse --show-toplevel)
out="${OUT:-$root/bench/engine/torch-zo}"; mkdir -p "$out"
tmp=$(mktemp -d)
(cd "$root" && go test -c -o "$tmp/nn.test" ./nn)
cd "$root/nn"
B='Anchor/^(dpsgd|nonprivate)$'
TF="%C: wall %e user %U sys %S maxrss %M KiB"
for i in $(seq "${ROUNDS:-5}"); do
  echo "# round $i $(date -u +%T) $(uptime)" >> "$out/load.txt"
  GOMAXPROCS=1 /usr/bin/time -a -o "$out/time.txt" -f "$TF" "$tmp/nn.test" -test.run '^$' -test.bench "$B" -test.benchmem -test.cpu 1 >> "$out/go-1.txt" 2>&1
  /usr/bin/time -a -o "$out/time.txt" -f "$TF" /usr/bin/python3 ../bench/anchor.py --threads 1 --count 1 --bench 'Anchor/(dpsgd|nonprivate)$' >> "$out/torch-1.txt" 2>&1
  GOMAXPROCS=2 /usr/bin/time -a -o "$out/time.txt" -f "$TF" "$tmp/nn.test" -test.run '^$' -test.bench "$B" -test.benchmem -test.cpu 2 >> "$out/go-2.txt" 2>&1
  /usr/bin/time -a -o "$out/time.txt" -f "$TF" /usr/bin/python3 ../bench/anchor.py --threads 2 --count 1 --bench 'Anchor/(dpsgd|nonprivate)$' >> "$out/torch-2.txt" 2>&1
done
echo "# done $(date -u +%T) $(uptime)" >> "$out/load.txt"
