#!/bin/bash
# BenchmarkAttnSoftmax (nn/engine_bench_test.go): the DPZO and DP-SGD
# steps with the attention softmax backward's kernels (attnOff:
# softDot4AVX2, softBackAVX2) off and on, alternated in one process, in
# RUNS processes on one core. Writes attn.txt and load.txt into OUT
# (bench/engine/attn-vec/inproc by default); ../offon.py pairs each
# round's off and on.
#
#   $ RUNS=6 bench/engine/attn-vec/inproc.sh
#   $ bench/engine/offon.py AttnSoftmax bench/engine/attn-vec/inproc/attn.txt
set -e
here=$(dirname "$(realpath "$0")")
BENCH=AttnSoftmax FILE=attn.txt OUT="${OUT:-$here/inproc}" exec "$here/../offon.sh"
