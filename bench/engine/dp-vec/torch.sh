#!/bin/bash
# The first-order step beside PyTorch 1.13 (bench/anchor.py; torch.func
# per-sample gradients, Opacus is not installable here), alternated round
# by round, with the first-order step's kernels (dp-vec): our
# BenchmarkAnchor/{dpsgd,nonprivate} at GOMAXPROCS 1 and 2 and
# bench/anchor.py at --threads 1 and 2. Writes go-1.txt, go-2.txt,
# torch-1.txt, torch-2.txt, time.txt (/usr/bin/time of each process) and
# load.txt into OUT (bench/engine/dp-vec/torch by default).
#
#   $ bench/engine/dp-vec/torch.sh            # ROUNDS=5 by default
set -e
root=$(git rev-parse --show-toplevel)
OUT="${OUT:-$root/bench/engine/dp-vec/torch}" exec "$root/bench/engine/torch-zo/run.sh"
