#!/bin/bash
# BenchmarkVecKernels (nn/engine_bench_test.go): the DPZO and DP-SGD steps
# with the vector kernels off and on, alternated in one process, in RUNS
# processes on one core. Writes vec.txt and load.txt into OUT
# (bench/engine/zo-vec/inproc by default); inproc.py pairs each round's off
# and on.
#
#   $ RUNS=6 bench/engine/zo-vec/inproc.sh && bench/engine/zo-vec/inproc.py
set -e
here=$(dirname "$(realpath "$0")")
BENCH=VecKernels FILE=vec.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
