#!/usr/bin/env python3
"""Medians of old.txt and new.txt in this folder or the one named by the first
argument (benchstat is not in the module cache here):
for each benchmark, the median over rounds of cpu-ns/op, ns/op, B/op and
allocs/op, old → new and the change, and the DPZO/DP-SGD ratio of CPU time."""
import os, re, statistics, sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

def read(name):
    runs = {}
    for line in open(os.path.join(here, name)):
        if not line.startswith("Benchmark"):
            continue
        f = line.split()
        bench = re.sub(r"-\d+$", "", f[0])
        vals = {f[i + 1]: float(f[i]) for i in range(2, len(f) - 1, 2)}
        runs.setdefault(bench, []).append(vals)
    return {b: {u: statistics.median(v[u] for v in vs) for u in vs[0]} | {"n": len(vs)} for b, vs in runs.items()}

old, new = read("old.txt"), read("new.txt")
units = ["cpu-ns/op", "ns/op", "B/op", "allocs/op"]
print("benchmark | rounds | " + " | ".join(f"{u} old → new" for u in units))
for b in old:
    cells = []
    for u in units:
        o, n = old[b].get(u), new.get(b, {}).get(u)
        if o is None or n is None:
            cells.append("-")
            continue
        scale = 1e6 if u.endswith("ns/op") else 1
        cells.append(f"{o/scale:.4g} → {n/scale:.4g} ({100*(n-o)/o:+.0f}%)")
    print(f"{b} | {old[b]['n']}/{new.get(b, {}).get('n', 0)} | " + " | ".join(cells))
print("(ns/op columns in ms)")
for shape in ["anchor", "small"]:
    for name, d in [("old", old), ("new", new)]:
        z, s = d.get(f"BenchmarkZOStep/{shape}/dpzo"), d.get(f"BenchmarkZOStep/{shape}/dpsgd")
        if z and s:
            print(f"DPZO/DP-SGD CPU time, {shape}, {name}: {z['cpu-ns/op']/s['cpu-ns/op']:.2f}")

def mins(name):
    runs = {}
    for line in open(os.path.join(here, name)):
        if line.startswith("Benchmark"):
            f = line.split()
            vals = {f[i + 1]: float(f[i]) for i in range(2, len(f) - 1, 2)}
            runs.setdefault(re.sub(r"-\d+$", "", f[0]), []).append(vals["cpu-ns/op"])
    return {b: min(v) for b, v in runs.items()}

# The fastest round of each: on a loaded machine other work only ever adds
# time, so the minimum is the least disturbed measurement.
omin, nmin = mins("old.txt"), mins("new.txt")
print("benchmark | min cpu-ns/op old → new (ms)")
for b in omin:
    if b in nmin:
        print(f"{b} | {omin[b]/1e6:.4g} → {nmin[b]/1e6:.4g} ({100*(nmin[b]-omin[b])/omin[b]:+.0f}%)")
for shape in ["anchor", "small"]:
    for name, d in [("old", omin), ("new", nmin)]:
        z, s = d.get(f"BenchmarkZOStep/{shape}/dpzo"), d.get(f"BenchmarkZOStep/{shape}/dpsgd")
        if z and s:
            print(f"DPZO/DP-SGD min CPU time, {shape}, {name}: {z/s:.2f}")
