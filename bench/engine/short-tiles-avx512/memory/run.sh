#!/bin/bash
# Peak memory (bench/engine/short-tiles-avx512/memory; T is nn.test built at 9bf2882) (max RSS) of one process per configuration, three times each, one at a time.
cd "$(git rev-parse --show-toplevel)/nn"
T=/tmp/nn-new.test
rss() { # name, command...
  local name=$1; shift
  for i in 1 2 3; do
    /usr/bin/time -v "$@" > /tmp/m9/$name.$i.out 2> /tmp/m9/$name.$i.time
    echo "$name $i $(grep 'Maximum resident' /tmp/m9/$name.$i.time | awk '{print $NF}') kB $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/m9/rss.txt
  done
}
rss py-import /usr/bin/python3 -c 'import torch'
rss py-import1 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 -c 'import torch'
rss py-setup /usr/bin/python3 ../bench/anchor.py --threads 1 --count 3 --bench none
rss py-dpsgd /usr/bin/python3 ../bench/anchor.py --threads 1 --count 3 --bench 'Anchor/dpsgd$'
rss py-nonprivate /usr/bin/python3 ../bench/anchor.py --threads 1 --count 3 --bench 'Anchor/nonprivate$'
export GOMAXPROCS=1
rss go-empty $T -test.run '^$' -test.bench '^$'
rss go-setup $T -test.run '^$' -test.bench 'Anchor/^none$' -test.cpu 1
rss go-dpsgd $T -test.run '^$' -test.bench 'Anchor/^dpsgd$' -test.cpu 1 -test.count 3 -test.benchmem
rss go-nonprivate $T -test.run '^$' -test.bench 'Anchor/^nonprivate$' -test.cpu 1 -test.count 3 -test.benchmem
echo done >> /tmp/m9/rss.txt
