#!/usr/bin/env python3
"""The ETA prior's mean of a method and task's recorded runs, by hand.

A slow run is an outlier when its seconds per step exceed the group's median by
more than 3 robust standard deviations of the group's log seconds per step
(1.4826 x the median absolute deviation of the logs: Hampel's identifier), by at
least 2 times and always beyond 10 times (runners.outlierMADs, outlierMin,
outlierMax). The mean is sum(seconds) / sum(steps) with each outlier counted at
the other runs' mean per step times its steps, plus its excess over that times
w = (1/share(today) - 1) / (1/share(recorded) - 1) within [0, 1]
(runners.excessWeight); runs beyond 10 times the median are left out. With
old=True it is the rule before: runs beyond 10 times the median left out, the
others summed as they are.

Imported by first.py and loso.py; with a table as text it prints each group's
outliers:

  $ python3 bench/load/prior.py bench/load/table1-smoke-runs.tsv
"""
import math
import statistics
import sys

B, C, N = 0.668, 1.33, 2
MADS, LOW, HIGH = 3.0, 2.0, 10.0
MAD_SCALE = 1 / 0.6744897501960817  # 1 / scipy.stats.norm.ppf(0.75)


def share(load, jobs):
    return min(1.0, N / (max(jobs, 1) * min(C, N)), (N / max(load, 1.0)) ** B)


def limit(per):
    """The most seconds per step an inlier may take, and the least beyond
    which a run is left out, from the median of the logs."""
    logs = [math.log(x) for x in per]
    m = statistics.median(logs)
    mad = statistics.median(abs(x - m) for x in logs)
    width = min(max(MADS * MAD_SCALE * mad, math.log(LOW)), math.log(HIGH))
    return math.exp(m + width), math.exp(m + math.log(HIGH))


def mean(runs, today, old=False):
    """runs: (seconds at today's load, steps, recorded share); today: share."""
    per = [s / n for s, n, _ in runs]
    if old:
        far = statistics.median(per) * HIGH
        kept = [(s, n) for s, n, _ in runs if s / n <= far]
        return sum(s for s, _ in kept) / sum(n for _, n in kept)
    lim, far = limit(per)
    s_in = sum(s for s, n, _ in runs if s / n <= lim)
    n_in = sum(n for s, n, _ in runs if s / n <= lim)
    s, n, rate = s_in, n_in, s_in / n_in
    for secs, steps, rec in runs:
        if lim < secs / steps <= far:
            w = 0.0 if rec >= 1 else min(1.0, max(0.0, (1 / today - 1) / (1 / rec - 1)))
            s += rate * steps + w * (secs - rate * steps)
            n += steps
    return s / n


def read(path):
    rows = []
    for line in open(path):
        m, t, seed, status, steps, secs, a, b, _, jobs = line.split("\t")
        rows.append(dict(mt=m + "/" + t, seed=int(seed), ok=status == "ok", steps=int(steps),
                         secs=float(secs), load=(float(a) + float(b)) / 2, jobs=int(jobs)))
    return rows


def main(path):
    groups = {}
    for r in read(path):
        if r["ok"]:
            groups.setdefault(r["mt"], []).append(r)
    for mt, rs in groups.items():
        per = [r["secs"] * share(r["load"], r["jobs"]) / r["steps"] for r in rs]
        (lim, _), med = limit(per), statistics.median(per)
        out = [f"seed {r['seed']} x{p / med:.2f}" for r, p in zip(rs, per) if p > lim]
        print(f"{mt}: limit x{lim / med:.3f} of the median; outliers: {', '.join(out) or 'none'}")


if __name__ == "__main__":
    main(sys.argv[1])
