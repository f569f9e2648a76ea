#!/usr/bin/env python3
"""Checks ldpfl's epsilon_pld against the exact ε of its composed randomised responses.

ldpfl-pld.tsv holds, per setting, the target ε, the release count n (d·L), δ, the
per-coordinate ε_w that methods.ldpflEpsilon calibrates (RDP) and the ε that
methods.mmEpsilon("pld", ...) gives on the aligned grid (privacy.PureInterval),
printed with %.17g from the code at the commit that added this file.

n ε_w-DP randomised responses are dominated by the binomial pair: K ~ Bin(n, p),
p = e^ε_w/(1 + e^ε_w), privacy loss L_k = (2k − n)·ε_w, and
δ(ε) = Σ_k P(k)·(1 − e^(ε − L_k))₊ (the hockey-stick divergence). For each row
this script computes, independently of the Go code (mpmath, 30 digits, the
binomial over its mean ± 50 standard deviations, by the pmf's ratio recurrence):
  - δ_exact at the recorded epsilon_pld, which must be at most δ (the PLD's ε is
    then at least the exact ε: an upper bound, as it must be);
  - the exact ε by bisection (numpy, from the same pmf), and the relative excess.
Needs python3-mpmath and python3-numpy (Debian: apt-get install python3-mpmath python3-numpy).
"""
import os, sys
import mpmath as mp
import numpy as np

mp.mp.dps = 30


def check(eps_w, n, delta, eps_pld):
    e = mp.mpf(eps_w)
    p = mp.e**e / (1 + mp.e**e)
    q = 1 - p
    mean, sd = n * p, mp.sqrt(n * p * q)
    lo, hi = max(0, int(mean - 50 * sd)), min(n, int(mean + 50 * sd) + 1)
    lpk = mp.loggamma(n + 1) - mp.loggamma(lo + 1) - mp.loggamma(n - lo + 1) + lo * mp.log(p) + (n - lo) * mp.log(q)
    r = mp.log(p / q)
    logs = []
    for k in range(lo, hi + 1):
        logs.append(lpk)
        if k < n:
            lpk += mp.log(mp.mpf(n - k) / (k + 1)) + r
    mass = mp.fsum(mp.e**l for l in logs)
    pl = mp.mpf(eps_pld)
    d_at = mp.fsum(mp.e**logs[i] * (1 - mp.e**(pl - (2 * (lo + i) - n) * e))
                   for i in range(len(logs)) if (2 * (lo + i) - n) * e > pl)
    pk = np.array([float(mp.e**l) for l in logs])
    L = (2 * np.arange(lo, hi + 1) - n) * eps_w

    def d(x):
        m = L > x
        return float(np.sum(pk[m] * -np.expm1(x - L[m])))

    a, b = 0.0, 2 * eps_pld
    while b - a > 1e-13:
        mid = (a + b) / 2
        if d(mid) > delta:
            a = mid
        else:
            b = mid
    return float(mass), d_at, b


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "ldpfl-pld.tsv")
    ok = True
    print("target  n  delta  eps_w  eps_pld  delta_exact(eps_pld)  exact_eps  rel_excess")
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        t, n, delta, eps_w, eps_pld = line.split()
        n, delta, eps_w, eps_pld = int(n), float(delta), float(eps_w), float(eps_pld)
        mass, d_at, exact = check(eps_w, n, delta, eps_pld)
        good = d_at <= delta and abs(mass - 1) < 1e-12
        ok = ok and good
        print(f"{t}  {n}  {delta:g}  {eps_w:.6g}  {eps_pld:.10f}  {float(d_at):.10e}  {exact:.10f}  {(eps_pld - exact) / exact:+.2e}{'' if good else '  BELOW THE EXACT ε'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
