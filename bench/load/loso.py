#!/usr/bin/env python3
"""Leave-one-seed-out check of the ETA's prior on the checked-in table1 smoke table.

table1-smoke-runs.tsv beside this script is results/baselines/table1-smoke.parquet
as text, one run a line: method, task, seed, status, steps, seconds, load_start,
load_end, gomaxprocs, jobs. For each seed k it learns each method and task's
seconds per step from the other two seeds' runs, counted at a quiet machine's
share (wall × min(1, (2/max(L, 1))^0.668), L the mean of the run's loads; see
runners.loadExponent), and predicts each run of seed k at its own load; it prints
the predicted and recorded seconds of seed k's runs, by three estimates of the
seconds per step: the median of the runs' (what the ETA used first), the mean,
Σ seconds / Σ steps (what it used next, runs beyond 10 times the median left
out), and prior.py's mean, its outliers' excess weighted by the test run's load
(what it uses now; its prior is learnt at each test run's own load).
runners.TestETALeaveOneSeedOut checks the Go code against the last one's
numbers.

  $ python3 bench/load/loso.py bench/load/table1-smoke-runs.tsv
"""
import statistics
import sys

import prior

B = 0.668


def share(load, cores=2):
    return min(1.0, (cores / max(load, 1.0)) ** B)


def robust(train, test):
    """prior.py's seconds per step of train's runs at test's load."""
    today = prior.share(test["load"], test["jobs"])
    runs = []
    for r in train:
        rec = prior.share(r["load"], r["jobs"])
        runs.append((r["secs"] * rec / today, r["steps"], rec))
    return prior.mean(runs, today)


def main(path):
    rows = []
    for line in open(path):
        m, t, seed, status, steps, secs, a, b, _, jobs = line.split("\t")
        rows.append(dict(mt=m + "/" + t, seed=int(seed), ok=status == "ok", steps=int(steps),
                         secs=float(secs), load=(float(a) + float(b)) / 2, jobs=int(jobs)))
    ests = {
        "median": lambda tr: statistics.median(r["secs"] * share(r["load"]) / r["steps"] for r in tr),
        "mean": lambda tr: sum(r["secs"] * share(r["load"]) for r in tr) / sum(r["steps"] for r in tr),
        "robust": None,
    }
    for name, est in ests.items():
        pred_all = rec_all = 0
        for k in sorted({r["seed"] for r in rows}):
            train = [r for r in rows if r["seed"] != k and r["ok"]]
            test = [r for r in rows if r["seed"] == k and r["ok"]]
            if name == "robust":
                pred = sum(robust([t for t in train if t["mt"] == r["mt"]], r) * r["steps"] for r in test)
            else:
                cost = {mt: est([r for r in train if r["mt"] == mt]) for mt in {r["mt"] for r in train}}
                pred = sum(cost[r["mt"]] * r["steps"] / share(r["load"]) for r in test)
            rec = sum(r["secs"] for r in test)
            pred_all, rec_all = pred_all + pred, rec_all + rec
            print(f"{name:6s} seed {k}: predicted {pred!r} s, recorded {rec!r} s ({pred / rec:.3f})")
        print(f"{name:6s} all: predicted {pred_all:.1f} s, recorded {rec_all:.1f} s ({pred_all / rec_all:.3f})")


if __name__ == "__main__":
    main(sys.argv[1])
