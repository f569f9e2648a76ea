#!/usr/bin/env python3
"""Pairs BenchmarkThin's off and on rounds in inproc/thin.txt (or the file
named by the first argument): for each step, the median over rounds of on's
CPU time over off's in the same round, the rounds where on was faster, the
medians of each, and the DPZO/DP-SGD ratio of the medians."""
import os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "inproc", "thin.txt")
sys.exit(subprocess.call([sys.executable, os.path.join(here, "..", "offon.py"), "Thin", path]))
