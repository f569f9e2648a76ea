#!/usr/bin/env python3
"""The first ETA of a fresh table1 smoke sweep on a two-core machine, by hand.

From table1-smoke-runs.tsv (results/baselines/table1-smoke.parquet as text, see
loso.py): each method and task's seconds per step, counted at today's load
(wall x share(L)/share(today) with share = min(1, 2/(J*c), (2/max(L, 1))^b) at
each run's recorded load L and jobs; b = 0.668, runners.loadExponent, or the
second argument; c = 1.33, runners.runCores), averaged by prior.py's rule (and
by the rule before it, beyond 10 times the median left out); then the table's
runs, in row order, at that cost times their steps, replayed on J workers, each
run going to the worker that frees first. Today's load is the third argument,
0.1 for a quiet machine unless given, plus 1.33 per job. runners.TestETAQuietJobs
checks the Go estimate against these numbers.

  $ python3 bench/load/first.py bench/load/table1-smoke-runs.tsv
  $ python3 bench/load/first.py bench/load/table1-smoke-runs.tsv 0.668 16.58
"""
import sys

import prior


def main(path, today_load=0.1):
    rows = [r for r in prior.read(path) if r["ok"]]
    for jobs in (1, 2):
        today = prior.share(today_load + jobs * prior.C, jobs)
        groups = {}
        for r in rows:
            rec = prior.share(r["load"], r["jobs"])
            groups.setdefault(r["mt"], []).append((r["secs"] * rec / today, r["steps"], rec))
        for old in (True, False):
            cost = {mt: prior.mean(rs, today, old) for mt, rs in groups.items()}
            free = [0.0] * jobs
            for r in rows:
                i = free.index(min(free))
                free[i] += cost[r["mt"]] * r["steps"]
            rule = "10x median" if old else "outlier rule"
            print(f"--jobs {jobs} ({rule}): share {today!r}, first ETA {max(free)!r} s")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        prior.B = float(sys.argv[2])
    main(sys.argv[1], *map(float, sys.argv[3:4]))
