#!/bin/bash
# BenchmarkSlab (nn/engine_bench_test.go): the DPZO and DP-SGD steps with
# the inference tapes' nodes, shapes and parameter map kept in their
# arenas (slabOff) off and on, alternated in one process, in RUNS
# processes on one core. Writes slab.txt and load.txt into OUT
# (bench/engine/slab/inproc by default); ../offon.py pairs each round's
# off and on.
#
#   $ RUNS=6 bench/engine/slab/inproc.sh
#   $ bench/engine/offon.py Slab bench/engine/slab/inproc/slab.txt
set -e
here=$(dirname "$(realpath "$0")")
BENCH=Slab FILE=slab.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
