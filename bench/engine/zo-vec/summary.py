#!/usr/bin/env python3
"""Summary of run.sh's old.txt, new.txt and (if present) patched.txt in this
folder or the one named by the first argument (benchstat is not in the module
cache here): for each benchmark and binary, the median and the fastest round
of cpu-ns/op, and the medians of B/op and allocs/op; the median over rounds
of each binary's CPU time over old's in the same round; and the DPZO/DP-SGD
ratio of CPU time, median over rounds of the ratio within one process (the two
steps measured seconds apart, so the machine's load moves both alike)."""
import os, re, statistics, sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

def read(name):
    """[round][bench] -> {unit: value}; one process per round."""
    rounds, cur = [], None
    path = os.path.join(here, name)
    if not os.path.exists(path):
        return None
    for line in open(path):
        if line.startswith("goos:"):
            cur = {}
            rounds.append(cur)
        if line.startswith("Benchmark"):
            f = line.split()
            cur[re.sub(r"-\d+$", "", f[0])] = {f[i + 1]: float(f[i]) for i in range(2, len(f) - 1, 2)}
    full = max((len(r) for r in rounds), default=0)
    return [r for r in rounds if r and len(r) == full]  # a round still running is left out

data = {v: read(f"{v}.txt") for v in ["old", "new", "patched"]}
data = {v: d for v, d in data.items() if d}
n = min(len(d) for d in data.values())
benches = list(data["old"][0])
med = statistics.median
print(f"rounds: {n} (" + ", ".join(f"{v} {len(d)}" for v, d in data.items()) + ")")
print("benchmark | " + " | ".join(f"{v}: median (fastest) CPU ms; B/op; allocs/op" for v in data))
for b in benches:
    cells = []
    for v, d in data.items():
        cpu = [r[b]["cpu-ns/op"] / 1e6 for r in d[:n] if b in r]
        cells.append(f"{med(cpu):.1f} ({min(cpu):.1f}); {med(r[b]['B/op'] for r in d[:n]) / 1e6:.2f} MB; "
                     f"{med(r[b]['allocs/op'] for r in d[:n]) / 1e3:.1f} k")
    print(f"{b} | " + " | ".join(cells))
print("per-round ratio to old (median; rounds faster than old)")
for b in benches:
    cells = []
    for v, d in data.items():
        if v == "old":
            continue
        rs = [d[i][b]["cpu-ns/op"] / data["old"][i][b]["cpu-ns/op"] for i in range(n)]
        cells.append(f"{v} {med(rs):.3f} ({sum(r < 1 for r in rs)} of {n})")
    print(f"{b} | " + " | ".join(cells))
print("DPZO/DP-SGD CPU time within one process: median (fastest round's pair)")
for shape in ["anchor", "small"]:
    cells = []
    for v, d in data.items():
        z, s = f"BenchmarkZOStep/{shape}/dpzo", f"BenchmarkZOStep/{shape}/dpsgd"
        rs = [r[z]["cpu-ns/op"] / r[s]["cpu-ns/op"] for r in d[:n] if z in r and s in r]
        if rs:
            zs = min(d[:n], key=lambda r: r[z]["cpu-ns/op"])
            ss = min(d[:n], key=lambda r: r[s]["cpu-ns/op"])
            cells.append(f"{v} {med(rs):.3f} ({zs[z]['cpu-ns/op'] / ss[s]['cpu-ns/op']:.3f})")
    print(f"{shape} | " + " | ".join(cells))
