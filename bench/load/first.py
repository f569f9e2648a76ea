#!/usr/bin/env python3
"""The first ETA of a fresh table1 smoke sweep on a two-core machine, by hand.

From table1-smoke-runs.tsv (results/baselines/table1-smoke.parquet as text, see
loso.py): each method and task's seconds per step, Σ wall × share / Σ steps with
share = min(1, 2/(J·c), (2/max(L, 1))^b) at each run's recorded load L and
jobs (b = 0.668, runners.loadExponent, or the second argument; c = 1.33,
runners.runCores); then the table's runs, in row order, at that cost times
their steps over today's share (today's load, the third argument, 0.1 for a
quiet machine unless given, plus 1.33 per job, J jobs), replayed on J workers,
each run going to the worker that frees first. runners.TestETAQuietJobs
checks the Go estimate against these numbers.

  $ python3 bench/load/first.py bench/load/table1-smoke-runs.tsv
  $ python3 bench/load/first.py bench/load/table1-smoke-runs.tsv 0.748 16.58
"""
import sys

B, C, N = 0.668, 1.33, 2


def share(load, jobs):
    return min(1.0, N / (max(jobs, 1) * min(C, N)), (N / max(load, 1.0)) ** B)


def main(path, today_load=0.1):
    rows = []
    for line in open(path):
        m, t, _, status, steps, secs, a, b, _, jobs = line.split("\t")
        if status == "ok":
            rows.append(dict(mt=m + "/" + t, steps=int(steps), secs=float(secs),
                             load=(float(a) + float(b)) / 2, jobs=int(jobs)))
    num, den = {}, {}
    for r in rows:
        num[r["mt"]] = num.get(r["mt"], 0) + r["secs"] * share(r["load"], r["jobs"])
        den[r["mt"]] = den.get(r["mt"], 0) + r["steps"]
    for jobs in (1, 2):
        today = share(today_load + jobs * C, jobs)
        free = [0.0] * jobs
        for r in rows:
            i = free.index(min(free))
            free[i] += num[r["mt"]] / den[r["mt"]] * r["steps"] / today
        print(f"--jobs {jobs}: share {today!r}, first ETA {max(free)!r} s")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        B = float(sys.argv[2])
    main(sys.argv[1], *map(float, sys.argv[3:4]))
