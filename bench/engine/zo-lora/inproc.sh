#!/bin/bash
# BenchmarkLinearLoRA (nn/engine_bench_test.go, added by fused-lora.patch,
# which this script needs applied): the DPZO and DP-SGD steps
# with the fused LoRA kernels of inference tapes off and on,
# alternated in one process, in RUNS
# processes on one core. Writes lora.txt and load.txt into OUT
# (bench/engine/zo-lora/inproc by default); inproc.py pairs each round's off
# and on.
#
#   $ RUNS=6 bench/engine/zo-lora/inproc.sh && bench/engine/zo-lora/inproc.py
set -e
here=$(dirname "$(realpath "$0")")
BENCH=LinearLoRA FILE=lora.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
