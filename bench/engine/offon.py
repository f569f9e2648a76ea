#!/usr/bin/env python3
"""Pairs an off/on engine benchmark's rounds (BenchmarkVecKernels,
BenchmarkThin, ...: sub-benchmarks SHAPE/STEP/off|on, alternated in one
process; see offon.sh): for each step, the median over rounds of on's CPU
time over off's in the same round, the rounds where on was faster, the
medians of each, and the DPZO/DP-SGD ratio of the medians.

    offon.py BENCH FILE      e.g. offon.py Thin bench/engine/zo-thin/inproc/thin.txt"""
import re, statistics, sys

if len(sys.argv) != 3:
    sys.exit("usage: offon.py BENCH FILE")
prefix, path = "Benchmark" + sys.argv[1] + "/", sys.argv[2]
runs, cur = [], None
for line in open(path):
    if line.startswith("goos:"):
        cur = {}
        runs.append(cur)
    if line.startswith(prefix):
        f = line.split()
        name = re.sub(r"-\d+$", "", f[0])[len(prefix):]
        m = re.match(r"(\w+)/(\w+)/(off|on)(?:#(\d+))?$", name)
        shape, step, mode, k = m.group(1), m.group(2), m.group(3), int(m.group(4) or 0)
        cpu = float(f[f.index("cpu-ns/op") - 1])
        cur[(shape, step, mode, k)] = cpu / 1e6
med = statistics.median
print(f"processes: {len(runs)}")
print("step | rounds | off median (fastest) ms | on median (fastest) ms | on/off per round: median, rounds faster")
meds = {}
for shape in ["anchor", "small"]:
    for step in ["dpzo", "dpsgd"]:
        off, on, ratio = [], [], []
        for r in runs:
            for k in range(4):
                a, b = r.get((shape, step, "off", k)), r.get((shape, step, "on", k))
                if a and b:
                    off.append(a)
                    on.append(b)
                    ratio.append(b / a)
        if not ratio:
            continue
        meds[(shape, step)] = (med(off), med(on))
        print(f"{shape}/{step} | {len(ratio)} | {med(off):.1f} ({min(off):.1f}) | {med(on):.1f} ({min(on):.1f}) | "
              f"{med(ratio):.3f}, {sum(x < 1 for x in ratio)} of {len(ratio)}")
for shape in ["anchor", "small"]:
    if (shape, "dpzo") in meds and (shape, "dpsgd") in meds:
        z, s = meds[(shape, "dpzo")], meds[(shape, "dpsgd")]
        print(f"DPZO/DP-SGD, {shape}: off {z[0] / s[0]:.3f}, on {z[1] / s[1]:.3f} (medians)")
