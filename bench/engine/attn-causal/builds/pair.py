#!/usr/bin/env python3
"""Pairs run.sh's processes (before i, after i): for each step of
BenchmarkZOStep, the medians (fastest) of each side's CPU ms a step, the
median of the paired after/before ratios, the pairs where after was
faster, and allocations a step.

    pair.py bench/engine/attn-causal/builds/zostep.txt"""
import re, statistics, sys

procs = []
for line in open(sys.argv[1]):
    if line.startswith("# "):
        side, i = line.split()[1:3]
        procs.append((side, int(i), {}))
    m = re.match(r"BenchmarkZOStep/(\w+/\w+)(?:-\d+)?\s", line)
    if m and procs:
        f = line.split()
        procs[-1][2][m.group(1)] = (float(f[f.index("cpu-ns/op") - 1]) / 1e6, int(f[f.index("allocs/op") - 1]))
med = statistics.median
for step in ["small/dpzo", "small/dpsgd", "anchor/dpzo", "anchor/dpsgd"]:
    # Each after process pairs with the before process just ahead of it.
    b, a = {}, {}
    for j in range(1, len(procs)):
        (s0, _, r0), (s1, _, r1) = procs[j - 1], procs[j]
        if s0 == "before" and s1 == "after" and step in r0 and step in r1:
            b[j], a[j] = r0[step], r1[step]
    keys = sorted(a)
    if not keys:
        continue
    rb, ra = [b[k][0] for k in keys], [a[k][0] for k in keys]
    ratio = [a[k][0] / b[k][0] for k in keys]
    print(f"{step}: {len(keys)} pairs, before {med(rb):.1f} ({min(rb):.1f}) ms, after {med(ra):.1f} ({min(ra):.1f}) ms, "
          f"after/before {med(ratio):.3f}, faster in {sum(x < 1 for x in ratio)} of {len(ratio)}; "
          f"allocs {med([b[k][1] for k in keys]):.0f} -> {med([a[k][1] for k in keys]):.0f}")
