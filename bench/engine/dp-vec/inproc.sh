#!/bin/bash
# BenchmarkFirstOrder (nn/engine_bench_test.go): the DPZO and DP-SGD steps
# with the first-order step's kernels and changes (gradOff: vgrad_amd64.s,
# ClipAll's eight norms at once, Sum's four examples a pass, gradients
# written without clearing, the batched training tapes' packed frozen
# weights, LayerNorm's training rows) off and on, alternated in one
# process, in RUNS processes on one core. Writes first.txt and load.txt
# into OUT (bench/engine/dp-vec/inproc by default); ../offon.py pairs
# each round's off and on.
#
#   $ RUNS=6 bench/engine/dp-vec/inproc.sh
#   $ bench/engine/offon.py FirstOrder bench/engine/dp-vec/inproc/first.txt
set -e
here=$(dirname "$(realpath "$0")")
BENCH=FirstOrder FILE=first.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
