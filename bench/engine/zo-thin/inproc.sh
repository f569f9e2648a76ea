#!/bin/bash
# BenchmarkThin (nn/engine_bench_test.go): the DPZO and DP-SGD steps
# with the narrow AVX2 kernels, the doubling bias fill and the PassShare's
# values read in place off and on, alternated in one process, in RUNS
# processes on one core. Writes thin.txt and load.txt into OUT
# (bench/engine/zo-thin/inproc by default); inproc.py pairs each round's off
# and on.
#
#   $ RUNS=6 bench/engine/zo-thin/inproc.sh && bench/engine/zo-thin/inproc.py
set -e
here=$(dirname "$(realpath "$0")")
BENCH=Thin FILE=thin.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
