#!/bin/bash
# alternated rounds: old/new binaries, default kernel and REPRO_GEMM=avx2
cd "$(git rev-parse --show-toplevel)/nn"
for i in 1 2 3 4 5 6; do
  for v in old new; do
    echo "# round $i $v $(date -u +%T) $(uptime)" >> /tmp/b9/load.txt
    GOMAXPROCS=1 /tmp/nn-$v.test -test.run '^$' -test.bench 'GemmModel|Gemm/|Peak' -test.cpu 1 -test.count 1 >> /tmp/b9/$v.txt
    REPRO_GEMM=avx2 GOMAXPROCS=1 /tmp/nn-$v.test -test.run '^$' -test.bench 'GemmModel|Gemm/|Peak' -test.cpu 1 -test.count 1 >> /tmp/b9/$v-avx2.txt
  done
done
echo "# done $(date -u +%T) $(uptime)" >> /tmp/b9/load.txt
