#!/bin/bash
# BenchmarkCausal (nn/engine_bench_test.go): the DPZO and DP-SGD steps
# with causal attention on the mask's tiles (causalOff: nn/causal.go) off
# and on, alternated in one process, in RUNS processes on one core.
# Writes causal.txt and load.txt into OUT (bench/engine/attn-causal/inproc
# by default); ../offon.py pairs each round's off and on.
#
#   $ RUNS=6 bench/engine/attn-causal/inproc.sh
#   $ bench/engine/offon.py Causal bench/engine/attn-causal/inproc/causal.txt
set -e
here=$(dirname "$(realpath "$0")")
BENCH=Causal FILE=causal.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
