#!/usr/bin/env python3
"""Paired rounds of old.txt and new.txt in the folder named by the first
argument: for each benchmark, in how many rounds the new binary took less
CPU time, the median of the per-round ratios new/old, and the medians and
fastest rounds of cpu-ns/op (ms)."""
import os, statistics, sys

here = sys.argv[1]

def read(name):
    d = {}
    for line in open(os.path.join(here, name)):
        if line.startswith("Benchmark"):
            f = line.split()
            d.setdefault(f[0], []).append(float(f[f.index("cpu-ns/op") - 1]) / 1e6)
    return d

old, new = read("old.txt"), read("new.txt")
for b in old:
    r = [n / o for o, n in zip(old[b], new[b])]
    print(f"{b} | faster in {sum(x < 1 for x in r)} of {len(r)} | median ratio {statistics.median(r):.3f} | "
          f"median {statistics.median(old[b]):.1f} → {statistics.median(new[b]):.1f} | fastest {min(old[b]):.1f} → {min(new[b]):.1f}")
