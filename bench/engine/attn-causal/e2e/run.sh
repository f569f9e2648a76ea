#!/bin/bash
# base then new, the same selection: base is the branch point (95bb3ba) built from
# git archive into /tmp/repro-base, new is 631f4f3 (/tmp/repro-e9); both results folders
# start with the smoke TinyMLLM base copied into pretrain/. Then:
#   repro compare /tmp/e9-base/table1 /tmp/e9-new/table1   (compare.txt)
# and the sha256 of each run's predictions.parquet and scores.parquet (digests.txt).
sel=(--only method=dpzo,seed=1,task=fashion-vqa --only method=dpsgd,seed=1,task=fashion-vqa,epsilon=8 --only method=dualpriv,seed=1,task=fashion-vqa,epsilon=8 --only method=nonprivate,seed=1,task=fashion-vqa)
for side in base new; do
  bin=/tmp/repro-$side; [ $side = new ] && bin=/tmp/repro-e9
  echo "# $side start $(date -u +%T) $(uptime)"
  /usr/bin/time -v nice -n 5 $bin run table1 --scale smoke --jobs 1 --results /tmp/e9-$side "${sel[@]}" > /tmp/e9-e2e-$side.log 2>&1
  echo "# $side rc $? end $(date -u +%T) $(uptime)"
done
