#!/bin/bash
# Quiet window 2 of the engine-speed comparison: alternated rounds of our anchor/GEMM benchmarks
# (one process per GOMAXPROCS), PyTorch's bench/anchor.py at 1 and 2 threads,
# and the DPZO / Dual-Priv step benchmarks. pause.sh again at every round
# (it catches experiment processes started since).
set -u
O=${O:-bench-out}
mkdir -p $O
trap /work/small/resume.sh EXIT
T=${T:?set T to the absolute path of a test binary: go test -c -o nn.test ./nn}
P1='^(BenchmarkAnchor|BenchmarkGemm|BenchmarkGemmModel|BenchmarkPeak)$/^(nonprivate|dpsgd|64|256|1024|clock|avx2|qkv-32x64x64|fc1-32x256x64|fc2-32x64x256|dx-32x64x256|dw-256x64x32)$'
P2='^(BenchmarkAnchor|BenchmarkGemm)$/^(nonprivate|dpsgd|64|256|1024)$'
P3='^(BenchmarkZO|BenchmarkDualPriv)$'
TF="%C: wall %e user %U sys %S"
rounds() {
  cd "$(git rev-parse --show-toplevel)/nn"
  start=$(date +%s)
  for i in 1 2 3 4 5 6; do
    [ $(( $(date +%s) - start )) -gt 370 ] && break
    /work/small/pause.sh
    echo "round $i $(date -u +%T) $(cat /proc/loadavg)" >> $O/load.txt
    ps -eo pid,stat,ni,pcpu,args --sort=-pcpu | head -5 | cut -c1-110 >> $O/ps.txt
    GOMAXPROCS=1 /usr/bin/time -a -o $O/time.txt -f "$TF" $T -test.run '^$' -test.bench "$P1" -test.benchmem -test.cpu 1 >> $O/go-1.txt 2>&1
    /usr/bin/time -a -o $O/time.txt -f "$TF" /usr/bin/python3 ../bench/anchor.py --threads 1 --count 1 >> $O/torch-1.txt 2>&1
    GOMAXPROCS=2 /usr/bin/time -a -o $O/time.txt -f "$TF" $T -test.run '^$' -test.bench "$P2" -test.benchmem -test.cpu 2 >> $O/go-2.txt 2>&1
    /usr/bin/time -a -o $O/time.txt -f "$TF" /usr/bin/python3 ../bench/anchor.py --threads 2 --count 1 >> $O/torch-2.txt 2>&1
    GOMAXPROCS=1 /usr/bin/time -a -o $O/time.txt -f "$TF" $T -test.run '^$' -test.bench "$P3" -test.benchmem -test.cpu 1 >> $O/part3.txt 2>&1
  done
}
export -f rounds; export O T P1 P2 P3 TF
echo "start $(date -u +%T)" >> $O/load.txt
timeout 450 bash -c rounds
echo "end $(date -u +%T) $(cat /proc/loadavg)" >> $O/load.txt
