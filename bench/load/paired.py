#!/usr/bin/env python3
"""Fits the load exponent on paired runs: the same runs loaded and quiet (stdlib only).

paired-table1-smoke.tsv beside this script holds table1 smoke's 78 runs twice:
as the checked-in table recorded them (results/baselines/table1-smoke.parquet:
one job, GOMAXPROCS 2, on the shared two-core machine at load 11–26) and as the
same runs took on the same two cores with every other session stopped (load
below 2, so a share of 1), paired by configuration (method, task, ε, δ, seed,
hyperparameters), not by run id, which moves with the code; the two tables'
results are identical. A run's slowdown is its loaded wall time over its quiet
one, which is what the runner's share(L) models (runners/load.go), with no
stand-in for the quiet time (fit.py's runs.txt divides by the loaded run's own
CPU time, which grows under load). With L the mean of the run's recorded
loads and N = 2 cores it fits, as fit.py does, log slowdown = b·log(L/N) by
least squares through the origin, and prints

  - b with its standard error, and a 95% interval by resampling the 26 cells
    (method, task, ε: a cell's three seeds ran one after another at about the
    same load, so they are not independent), 2000 resamples, seed 1;
  - the root-mean-square log error of b = 0.668 (runs.txt's fit), of the
    paired fit, of a joint fit over both data sets, and of N/L (b = 1), on
    each data set;
  - the fit by how long a run took quiet (the runs under a second, 10% of
    the time, pull the 78-run fit up), by load band (below 17, which
    runs.txt does not reach, and 17 or more) and by method, and a fit with
    an intercept, to see whether the slowdown below load 17 follows the
    same curve;
  - the b whose share turns the loaded table's seconds into the quiet ones in
    total, Σ wall·(N/L)^b = Σ quiet wall, that sum at each b, and the same
    sum without the three runs that slowed 12 times or more, which hold
    all of the excess at b = 0.668;
  - first.py's first estimate of the quiet sweep with the prior learnt from
    all 78 runs and without those three.

runners.TestLoadExponentFit checks the numbers the runner's choice rests on
(runners.loadExponent stays 0.668: docs/eta.md).

  $ python3 bench/load/paired.py
"""
import math
import os
import random

import prior as estimate
from fit import read

N = 2.0
OUTLIER = 12  # a slowdown this large is far beyond what any run's load says (the others: 11.5 at most)
HERE = os.path.dirname(os.path.abspath(__file__))


def paired(path):
    rows = []
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        rows.append(dict(cell=f"{f[0]}/{f[1]}/{f[2]}", method=f[0], seed=int(f[3]), mt=f"{f[0]}/{f[1]}",
                         steps=int(f[4]), jobs=int(f[9]),
                         load=(float(f[6]) + float(f[7])) / 2, loaded=float(f[5]),
                         quiet=float(f[10]), quiet_load=max(float(f[11]), float(f[12]))))
    return rows


def slope(pts):
    """Least squares through the origin: b = Σxy / Σx², its standard error."""
    sxx = sum(x * x for x, _ in pts)
    b = sum(x * y for x, y in pts) / sxx
    s2 = sum((y - b * x) ** 2 for x, y in pts) / (len(pts) - 1)
    return b, math.sqrt(s2 / sxx)


def rms(pts, b):
    return math.sqrt(sum((y - b * x) ** 2 for x, y in pts) / len(pts))


def mean_err(pts, b):
    return sum(y - b * x for x, y in pts) / len(pts)


def interval(pts, rows):
    """95% interval of b resampling the cells of rows (2000 resamples, seed 1)."""
    cells = sorted({r["cell"] for r in rows})
    by_cell = {c: [p for p, r in zip(pts, rows) if r["cell"] == c] for c in cells}
    rng = random.Random(1)
    boot = []
    for _ in range(2000):
        sample = [p for _ in cells for p in by_cell[rng.choice(cells)]]
        boot.append(slope(sample)[0])
    boot.sort()
    return boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]


def main():
    rows = paired(os.path.join(HERE, "paired-table1-smoke.tsv"))
    assert all(r["quiet_load"] < N for r in rows), "a quiet run above N: its share is not 1"
    pts = [(math.log(r["load"] / N), math.log(r["loaded"] / r["quiet"])) for r in rows]
    one = [r for r in read(os.path.join(HERE, "runs.txt")) if r["procs"] == 1]
    old = [(math.log(r["load"] / N), math.log(r["wall"] / r["cpu"])) for r in one]

    b, se = slope(pts)
    b_old, se_old = slope(old)
    b_joint, se_joint = slope(pts + old)
    cells = sorted({r["cell"] for r in rows})
    lo, hi = interval(pts, rows)

    print(f"paired: {len(rows)} runs in {len(cells)} cells, load {min(r['load'] for r in rows):.1f}–"
          f"{max(r['load'] for r in rows):.1f}, slowdown {min(math.exp(y) for _, y in pts):.2f}–"
          f"{max(math.exp(y) for _, y in pts):.2f}")
    print(f"  b = {b:.4f} ± {se:.4f} (standard error), 95% by resampling cells {lo:.3f}–{hi:.3f}")
    print(f"runs.txt: {len(old)} GOMAXPROCS=1 processes, b = {b_old:.4f} ± {se_old:.4f}")
    print(f"joint: {len(pts) + len(old)} points, b = {b_joint:.4f} ± {se_joint:.4f}")
    print("rms log error (mean error) of each exponent:   on the paired runs    on runs.txt")
    for name, bb in (("runs.txt's 0.668", 0.668), ("paired fit", b), ("joint fit", b_joint), ("N/L, b = 1", 1.0)):
        print(f"  {name:18s} b = {bb:.4f}    {rms(pts, bb):.3f} ({mean_err(pts, bb):+.3f})"
              f"       {rms(old, bb):.3f} ({mean_err(old, bb):+.3f})")

    print("by how long a run took quiet (b ± standard error, 95% resampling cells; rms log error at b, 0.668, the 78-run fit):")
    for name, sel in (("under 1 s", lambda r: r["quiet"] < 1), ("1 s or more", lambda r: r["quiet"] >= 1),
                      (f"1 s or more, slowed < {OUTLIER:g}×", lambda r: r["quiet"] >= 1 and r["loaded"] < OUTLIER * r["quiet"])):
        sub_rows = [r for r in rows if sel(r)]
        sub = [p for p, r in zip(pts, rows) if sel(r)]
        gb, gse = slope(sub)
        glo, ghi = interval(sub, sub_rows)
        q = sum(r["quiet"] for r in sub_rows)
        print(f"  {name:26s} {len(sub):2d} runs, {q:5.1f} quiet s ({q / sum(r['quiet'] for r in rows):.0%}): b = {gb:.3f} ± {gse:.3f}"
              f" ({glo:.3f}–{ghi:.3f}); rms {rms(sub, gb):.3f}, {rms(sub, 0.668):.3f}, {rms(sub, b):.3f}")
    print("by load band and method (b ± standard error, rms log error):")
    groups = [("load < 17", lambda r: r["load"] < 17), ("load ≥ 17", lambda r: r["load"] >= 17)]
    groups += [(m, lambda r, m=m: r["method"] == m) for m in ("nonprivate", "dpsgd", "dpzo", "dualpriv")]
    groups += [("dpzo, load < 17", lambda r: r["method"] == "dpzo" and r["load"] < 17),
               ("dpzo, load ≥ 17", lambda r: r["method"] == "dpzo" and r["load"] >= 17)]
    for name, sel in groups:
        sub = [p for p, r in zip(pts, rows) if sel(r)]
        loads = [r["load"] for r in rows if sel(r)]
        q = sum(r["quiet"] for r in rows if sel(r))
        gb, gse = slope(sub)
        print(f"  {name:16s} {len(sub):2d} runs, load {min(loads):4.1f}–{max(loads):4.1f}, {q:6.1f} quiet s:"
              f" b = {gb:.3f} ± {gse:.3f}, rms {rms(sub, gb):.3f}")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    b1 = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    a1 = my - b1 * mx
    res = math.sqrt(sum((y - a1 - b1 * x) ** 2 for x, y in pts) / len(pts))
    print(f"with an intercept: log slowdown = {a1:+.3f} + {b1:.3f}·log(L/N), rms {res:.3f}"
          f" (slowdown 1 at L = {N * math.exp(-a1 / b1):.1f})")

    quiet = sum(r["quiet"] for r in rows)
    loaded = sum(r["loaded"] for r in rows)

    def total(bb):
        return sum(r["loaded"] * min(1, (N / max(r["load"], 1)) ** bb) for r in rows)

    lo_b, hi_b = 0.0, 2.0
    for _ in range(60):
        mid = (lo_b + hi_b) / 2
        lo_b, hi_b = (mid, hi_b) if total(mid) > quiet else (lo_b, mid)
    print(f"sums: loaded {loaded:.1f} s, quiet {quiet:.1f} s; the loaded seconds counted at a quiet share:")
    for name, bb in (("0.668", 0.668), ("paired fit", b), ("joint fit", b_joint), ("1", 1.0)):
        print(f"  b = {bb:.4f} ({name}): {total(bb):.1f} s ({total(bb) / quiet - 1:+.1%})")
    print(f"  the b that matches the quiet sum: {lo_b:.4f}")
    out = [r for r in rows if r["loaded"] >= OUTLIER * r["quiet"]]
    rest = [r for r in rows if r["loaded"] < OUTLIER * r["quiet"]]
    print(f"the {len(out)} runs that slowed {OUTLIER:g} times or more (" +
          ", ".join(f"{r['cell']} seed {r['seed']}: {r['loaded'] / r['quiet']:.1f}× at load {r['load']:.1f}" for r in out) +
          f"): {sum(r['loaded'] for r in out):.1f} loaded s, {sum(r['quiet'] for r in out):.1f} quiet s;"
          f" the {len(rest)} others slowed at most {max(r['loaded'] / r['quiet'] for r in rest):.1f} times and,"
          f" {sum(r['quiet'] for r in rest):.1f} s quiet, count at")
    for bb in (0.668, b):
        t = sum(r["loaded"] * min(1, (N / max(r["load"], 1)) ** bb) for r in rest)
        print(f"  b = {bb:.4f}: {t:.1f} s ({t / sum(r['quiet'] for r in rest) - 1:+.1%})")
    # first.py's replay of all 78 runs on a quiet machine, the prior learnt
    # from every run and from the others only (rows are in table order).
    estimate.B = 0.668
    print("first estimate of the quiet sweep (first.py's replay, b = 0.668, c = 1.33), measured 247.6 s and 178 s:")
    for name, prior in (("prior from all 78 runs", rows), (f"prior without the {len(out)}", rest)):
        num, den = {}, {}
        for r in prior:
            num[r["mt"]] = num.get(r["mt"], 0) + r["loaded"] * estimate.share(r["load"], r["jobs"])
            den[r["mt"]] = den.get(r["mt"], 0) + r["steps"]
        est = []
        for jobs in (1, 2):
            today = estimate.share(0.1 + jobs * estimate.C, jobs)
            free = [0.0] * jobs
            for r in rows:
                i = free.index(min(free))
                free[i] += num[r["mt"]] / den[r["mt"]] * r["steps"] / today
            est.append(max(free))
        print(f"  {name}: --jobs 1 {est[0]:.1f} s, --jobs 2 {est[1]:.1f} s")


if __name__ == "__main__":
    main()
