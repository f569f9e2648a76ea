#!/bin/bash
# repro: the binary of 960a182; RESULTS: a results folder holding the small base; OUT: this folder
echo "# start $(date -u +%T) $(uptime)" >> OUT/load.txt
/usr/bin/time -v nice -n 5 repro run table1 --scale small --jobs 2 --only method=dpzo,seed=1,task=fashion-vqa --set params.epochs=4 --results RESULTS > OUT/dpzo.log 2> OUT/dpzo.time
echo "# dpzo done $(date -u +%T) $(uptime)" >> OUT/load.txt
/usr/bin/time -v nice -n 5 repro run table1 --scale small --jobs 2 --only method=dpsgd,seed=1,task=fashion-vqa --only method=dualpriv,seed=1,task=fashion-vqa --only method=nonprivate,seed=1,task=fashion-vqa --results RESULTS > OUT/first.log 2> OUT/first.time
echo "# first-order done $(date -u +%T) $(uptime)" >> OUT/load.txt
