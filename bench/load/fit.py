#!/usr/bin/env python3
"""Fits what the machine's load does to a run's wall time (stdlib only).

Reads the lines measure.sh writes (procs cell wall user sys load_before
load_after run_seconds run_load). A GOMAXPROCS=1 process runs on one
thread, so on a quiet machine its wall time is its CPU time, and its
slowdown at load L is wall / (user + sys). With N = 2 cores it fits

  share(L) = min(1, N / max(L, 1))          the runner's old model (no parameter)
  share(L) = min(1, a·N / max(L, 1))        a fitted
  share(L) = min(1, (N / max(L, 1))^b)      b fitted

by least squares on log slowdown (= −log share), and prints each model's
parameter and root-mean-square log error. GOMAXPROCS=2 processes give the
cores a run obtained, (user + sys) / wall, and the quiet parallelism each
model implies, (user + sys) / (wall · share(L)), which must lie in [1, 2].

  $ python3 bench/load/fit.py /tmp/load/runs.txt

runs.txt beside this script holds the measurements runners.loadExponent
was fitted on (ten GOMAXPROCS=1 processes at load 17–26: b = 0.668, rms
log error 0.18 against N/L's 0.81); runners.TestLoadExponentFit refits
it. paired.py checks it on the same runs timed loaded and quiet.
check.txt holds three processes measured after the fit (load 18–21):
their slowdowns, 4.0–4.4, are 7% below what b = 0.668 predicts
(root-mean-square log error 0.08) and half what N/L does (error 0.83).
sweep.py gives the cores each run of a whole sweep obtained.
"""
import math
import sys

N = 2.0


def read(path):
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) != 9 or line.startswith("#"):
            continue
        procs, cell = int(f[0]), f[1]
        wall, user, sys_, lb, la, rs, rl = map(float, f[2:])
        rows.append(dict(procs=procs, cell=cell, wall=wall, cpu=user + sys_, load=rl, before=lb, after=la))
    return rows


def rms(xs):
    return math.sqrt(sum(x * x for x in xs) / len(xs))


def main(path):
    rows = read(path)
    one = [r for r in rows if r["procs"] == 1]
    two = [r for r in rows if r["procs"] == 2]
    print("GOMAXPROCS=1: load, slowdown wall/CPU, N/L's slowdown, cell")
    for r in one:
        r["slow"] = r["wall"] / r["cpu"]
        print(f"  {r['load']:6.2f} {r['slow']:6.2f} {max(1, r['load'] / N):6.2f}  {r['cell']}")
    x = [math.log(max(r["load"], 1) / N) for r in one]
    y = [math.log(r["slow"]) for r in one]
    # a: log s = log(L/N) − log a over the loaded points.
    a = math.exp(-sum(yi - xi for xi, yi in zip(x, y)) / len(x))
    b = sum(xi * yi for xi, yi in zip(x, y)) / sum(xi * xi for xi in x)
    models = {
        "min(1, N/L)": lambda L: min(1, N / max(L, 1)),
        f"min(1, {a:.3f}·N/L)": lambda L: min(1, a * N / max(L, 1)),
        f"min(1, (N/L)^{b:.3f})": lambda L: min(1, (N / max(L, 1)) ** b),
    }
    print(f"fit over {len(one)} processes, load {min(r['load'] for r in one):.1f}–{max(r['load'] for r in one):.1f}:")
    for name, share in models.items():
        res = [math.log(r["slow"]) + math.log(share(r["load"])) for r in one]
        print(f"  share = {name:24s} rms log error {rms(res):.3f} (mean {sum(res) / len(res):+.3f})")
    if two:
        print("GOMAXPROCS=2: load, cores obtained CPU/wall, quiet parallelism implied by each model, cell")
        for r in two:
            got = r["cpu"] / r["wall"]
            implied = " ".join(f"{got / share(r['load']):5.2f}" for share in models.values())
            print(f"  {r['load']:6.2f} {got:5.2f}  {implied}  {r['cell']}")


if __name__ == "__main__":
    main(sys.argv[1])
