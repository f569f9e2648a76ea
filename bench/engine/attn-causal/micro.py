#!/usr/bin/env python3
"""Pairs BenchmarkCausalAttend's rounds (T=N/off|on, alternated: rounds of
off, on, on, off): for each T, the median over rounds of on's CPU time over
off's in the same round, the rounds where on was faster, and the medians
(fastest) of each, in µs.

    micro.py FILE"""
import re, statistics, sys

rounds = {}  # (T, round) -> {mode: µs}
seen = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkCausalAttend/T=(\d+)/(off|on)(?:#(\d+))?(?:-\d+)?\s", line)
    if not m:
        continue
    f = line.split()
    T, mode = int(m.group(1)), m.group(2)
    k = seen.get((T, mode), 0)
    seen[(T, mode)] = k + 1
    rounds.setdefault((T, k), {})[mode] = float(f[f.index("cpu-ns/op") - 1]) / 1e3
med = statistics.median
for T in sorted({t for t, _ in rounds}):
    pairs = [r for (t, _), r in sorted(rounds.items()) if t == T and len(r) == 2]
    off, on = [r["off"] for r in pairs], [r["on"] for r in pairs]
    ratio = [r["on"] / r["off"] for r in pairs]
    print(f"T={T}: {len(pairs)} rounds, off {med(off):.1f} ({min(off):.1f}) µs, on {med(on):.1f} ({min(on):.1f}) µs, "
          f"on/off per round {med(ratio):.3f}, on faster in {sum(x < 1 for x in ratio)} of {len(ratio)}")
