// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/internal/results"
)

// loadavgFile is where Linux reports the load average (proc(5)).
const loadavgFile = "/proc/loadavg"

// loadAvg returns the machine's 1-minute load average, false where the
// system reports none (no /proc/loadavg).
func loadAvg() (float64, bool) {
	b, err := os.ReadFile(loadavgFile)
	if err != nil {
		return 0, false
	}
	return parseLoadavg(b)
}

// parseLoadavg returns the first field of /proc/loadavg's contents b
// ("0.52 0.58 0.59 1/467 12345": the 1-minute average), false when it is
// no finite number ≥ 0.
func parseLoadavg(b []byte) (float64, bool) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	x, err := strconv.ParseFloat(f[0], 64)
	if err != nil || !(x >= 0) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

// loadNow returns the 1-minute load average as a manifest records it: nil
// where the system reports none.
func loadNow() *float64 {
	if x, ok := loadAvg(); ok {
		return &x
	}
	return nil
}

// A load is what a run's wall time was measured under: the machine's
// 1-minute load average (NaN: unknown), the cores the process could use
// (GOMAXPROCS; 0: unknown) and the runs it executed at once (0: unknown,
// taken as 1).
type load struct {
	avg   float64
	procs int
	jobs  int
}

// currentLoad returns the load of the machine now, for this process.
func currentLoad() load {
	l := load{avg: math.NaN(), procs: runtime.GOMAXPROCS(0)}
	if x, ok := loadAvg(); ok {
		l.avg = x
	}
	return l
}

// sweepLoad returns the load a sweep's runs will run under, from the
// machine's load now, before it starts them: now's average plus the
// threads of the jobs it is about to run at once (runCores each, at most
// the cores, which a recorded run's load counted too), on now's cores. A
// remote backend's runs execute on other machines, whose load is not
// known here: unknown.
func sweepLoad(now load, jobs int, remote bool) load {
	if remote {
		return load{avg: math.NaN()}
	}
	now.avg += float64(float64(jobs) * min(runCores, float64(now.procs)))
	now.jobs = jobs
	return now
}

// loadOf returns the load a recorded run ran under: the mean of its load
// averages at start and end (the one known, if only one is), and its
// GOMAXPROCS.
func loadOf(r results.Run) load {
	l := load{avg: math.NaN(), procs: int(r.GOMAXPROCS), jobs: int(r.Jobs)}
	switch a, b := r.LoadStart, r.LoadEnd; {
	case !math.IsNaN(a) && !math.IsNaN(b):
		l.avg = (a + b) / 2
	case !math.IsNaN(a):
		l.avg = a
	case !math.IsNaN(b):
		l.avg = b
	}
	return l
}

// loadExponent is b in share's (N/L)^b, fitted on the shared two-core
// development machine (bench/load: measure.sh, fit.py, runs.txt):
// table1 smoke's DPZO, DP-SGD and Dual-Priv cells of seed 1 run with
// GOMAXPROCS=1 at nice 5 and --jobs 1, whose slowdown is wall / (user +
// sys) since on a quiet machine a one-thread process's wall time is its
// CPU time, took 3.9–7.2 times their CPU time at load 17–26 where N/L
// says 8.6–13; the least-squares fit of log slowdown against log(L/N)
// over the ten processes gives b = 0.668 (root-mean-square log error
// 0.18, against 0.81 for N/L, which over-corrects by a factor of about
// 2.2 there). The two sessions of runs.txt alone give 0.726 (four
// processes) and 0.624 (six): the load average tells a run's share only
// roughly. The load average counts threads that run in bursts or
// wait (builds, I/O), not only ones that compete for the whole interval.
// A run's CPU time grows under load too (table1 smoke: 467 CPU-seconds
// at load 11–26 against 427 on two quiet cores, its base included), so
// wall / CPU understates the slowdown against a quiet run by a tenth or
// more (the quiet figure includes pretraining the base, which the loaded
// one did not), b by about 0.04 or more.
//
// Paired runs check it (bench/load: paired.py, paired-table1-smoke.tsv;
// TestLoadExponentFit): the 78 runs of the checked-in table1 smoke table
// (one job, GOMAXPROCS 2, load 11–26) and the same runs, identical results,
// on the same two cores with every other session stopped, slowdown loaded
// wall / quiet wall with no stand-in for the quiet time. The same fit
// over all 78 gives 0.748 (standard error 0.030; 0.65–0.84 resampling the
// 26 method, task and ε cells), pulled up by the 53 runs under a second
// quiet (0.78 alone); the 25 runs of a second or more, 90% of the quiet
// time, give 0.685 (0.57–0.82), where 0.668's root-mean-square log error
// is below 0.748's (0.530 against 0.548). The table counted at a quiet
// share is 35% over its quiet runs (332.8 s against 245.6) because of
// three DPZO runs that slowed 14.6–22.8 times at load 17–26; the other 75
// add up to 209.6 s against 210.1. So b stays 0.668: a larger one would
// cost the typical run short (0.748: 17% under on those 75) to offset a
// few runs whose load average did not say how slow they were; the prior's
// outlier rule handles those (see outlierMADs). Below load
// 17 the paired runs slowed less than the curve says (b = 0.58 at load
// 11–16, 0.84 at 17–26, method and load going together in this set).
const loadExponent = 0.668

// runCores is c, the cores a run keeps busy when it has them, on the
// two-core development machine (GOMAXPROCS 2): its CPU time over its
// quiet-equivalent wall time (wall × share at its load, below), summed
// over the 29 runs of 5 s or more of the checked-in table1 smoke sweep
// whose CPU time was sampled (bench/load/sweep-table1-smoke.txt: 381.2
// CPU-seconds over 287.3 quiet seconds, 1.327; single runs 0.5–2.5; all
// 44 sampled runs 1.325). The quiet two-job sweep agrees: 208 s of runs
// on two cores where the same runs one at a time are counted at 333 s,
// c = 2 × 208 / 333 = 1.25 (an older revision's time). A run's CPU time
// grows under load (see loadExponent), which makes c from loaded runs
// somewhat high. It is measured on table1 smoke's DPZO and Dual-Priv runs
// only, and on more cores a run may keep more of them busy. The two quiet
// whole sweeps (TestRunCoresQuiet) read 1.700 as CPU over wall with one
// job (CPU that buys no speed included: the same runs took 421
// CPU-seconds one at a time, 352 two at a time) and 1.438 as twice the
// two-job sweep's wall over the one-job one's (178 s and 247.6 s); they
// agree neither with each other nor with the loaded fit, so c stays 1.33
// (--jobs 1's first estimate does not depend on c; 1.438 would lengthen
// --jobs 2's by 8%, from 167.6 s to 181.2 s against the 178 s measured,
// since the prior's outlier rule closer than 1.33's −5.8%: one sweep, not
// enough to move c).
const runCores = 1.33

// share returns the fraction of its quiet speed (alone on a quiet
// machine) that a run gets at load l. A CPU-bound thread gets a whole
// core when L ≤ N (L runnable threads on N cores), else (N/L)^b with
// b = loadExponent (a fair scheduler with every thread always runnable
// would give N/L, b = 1; a measured run gets more, see loadExponent), so
// min(1, (N/max(L, 1))^b). A run keeps c = min(runCores, N) cores busy
// alone, so J runs at once on N cores share them, N/(J·c) each where J·c
// > N, however quiet the rest of the machine: a run gets
// min(1, N/(J·c), (N/max(L, 1))^b), where L counts the J runs' threads
// too (sweepLoad). False when the load or the cores are unknown.
//
// A run's quiet-equivalent time is its wall time × share (a run at load
// 8 on 2 cores took 1/0.40 = 2.5 times what it takes on a quiet machine),
// and the time it takes at another load is that divided by the other's
// share. This treats a run as CPU-bound and the load as steady over the
// run (the mean of its start and end averages); the 1-minute average
// lags by about a minute, and at one load a run's share varies (table1
// smoke's DPZO runs got 0.09–0.57 of a core at load 13–26).
func (l load) share() (float64, bool) {
	if l.procs <= 0 || !(l.avg >= 0) || math.IsInf(l.avg, 0) {
		return 0, false
	}
	n := float64(l.procs)
	fair := n / (float64(max(l.jobs, 1)) * min(runCores, n))
	return min(1, fair, math.Pow(n/max(l.avg, 1), loadExponent)), true
}

// atLoad returns by how much the wall time of a run recorded at load
// rec is multiplied at load today: share(rec) / share(today), 1 when
// rec's load is unknown (a row recorded before loads were: its time is
// taken as it is, unless newPrior gives it its tables' typical share).
// A today whose load is unknown counts as a quiet machine (share 1).
func atLoad(rec, today load) float64 {
	s, ok := rec.share()
	if !ok {
		return 1
	}
	return atShare(s, today)
}

// atShare returns by how much the wall time of a run that got share s of
// its quiet speed is multiplied at load today (see atLoad).
func atShare(s float64, today load) float64 {
	t, ok := today.share()
	if !ok {
		t = 1
	}
	return s / t
}
