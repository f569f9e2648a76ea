#!/usr/bin/env python3
"""Pairs a sweep's runs with the CPU time the repro process spent on each.

cpu.txt holds one line a second while the sweep runs (--jobs 1): the wall
clock (Unix seconds), the process's utime + stime (clock ticks, 100 a
second) and the 1-minute load, as

  while [ -r /proc/$PID/stat ]; do
    echo "$(date +%s.%N) $(cut -d')' -f2 /proc/$PID/stat | awk '{print $12+$13}') $(cut -d' ' -f1 /proc/loadavg)"
    sleep 1
  done >> cpu.txt

writes it. For each run of DIR (DIR/runs/*/manifest.json) it interpolates
the CPU seconds between the run's start and finish and prints the run's
method, load (its manifest's mean of load_start and load_end), wall
seconds, CPU seconds and cores obtained (CPU / wall); then the sums by
method. A run shorter than a few seconds is too short for the 1-second
samples and is left out of the ratios.

  $ python3 bench/load/sweep.py results/table1 cpu.txt

sweep-table1-smoke.txt beside this script is its output for the sweep
checked in as results/baselines/table1-smoke.parquet (the sampling began
half a minute in, so the first runs are missing): its DPZO runs got
0.09–0.57 of a core at load 13–26.
"""
import bisect
import datetime
import glob
import json
import sys


def stamp(s):
    # RFC 3339 with nanoseconds: keep microseconds for fromisoformat.
    s = s.replace("Z", "+00:00")
    head, _, tail = s.partition(".")
    frac, _, tz = tail.partition("+")
    return datetime.datetime.fromisoformat(f"{head}.{frac[:6]}+{tz}").timestamp()


def main(folder, cpu):
    ts, ticks = [], []
    for line in open(cpu):
        f = line.split()
        ts.append(float(f[0]))
        ticks.append(float(f[1]) / 100)

    def at(t):
        i = bisect.bisect_left(ts, t)
        if i <= 0 or i >= len(ts):
            return None
        w = (t - ts[i - 1]) / (ts[i] - ts[i - 1])
        return ticks[i - 1] + w * (ticks[i] - ticks[i - 1])

    by = {}
    for f in sorted(glob.glob(folder + "/runs/*/manifest.json")):
        m = json.load(open(f))
        if m.get("status") != "ok" or "load_start" not in m:
            continue
        a, b = at(stamp(m["started"])), at(stamp(m["finished"]))
        if a is None or b is None:
            continue
        wall, cpu_s = m["seconds"], b - a
        load = (m["load_start"] + m["load_end"]) / 2
        meth = m["config"]["method"]
        print(f"{meth:10s} {load:6.2f} {wall:8.2f} {cpu_s:8.2f} {cpu_s / wall:5.2f}")
        if wall >= 5:
            s = by.setdefault(meth, [0, 0, 0, 0])
            s[0] += wall
            s[1] += cpu_s
            s[2] += load * wall
            s[3] += 1
    print("method, runs ≥ 5 s, wall, CPU, cores obtained, time-weighted load")
    for meth, (w, c, lw, n) in sorted(by.items()):
        print(f"{meth:10s} {n:3d} {w:8.1f} {c:8.1f} {c / w:5.2f} {lw / w:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
