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
	now.avg += float64(jobs) * min(runCores, float64(now.procs))
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
// development machine on paired runs (bench/load: paired.py,
// paired-table1-smoke.tsv): the 78 runs of the checked-in table1 smoke
// table, recorded one job at a time with GOMAXPROCS 2 at load 11–26, and
// the same runs (same configurations, identical results) on the same two
// cores with every other session stopped (load below 2, share 1). A run's
// slowdown is its loaded wall time over its quiet one, 1.2–23; the
// least-squares fit of log slowdown against log(L/N) through the origin
// over the 78 runs gives b = 0.748 (standard error 0.030; 0.648–0.837 by
// resampling the 26 method, task and ε cells, whose three seeds ran one
// after another at about the same load), root-mean-square log error 0.58,
// against 0.60 at the earlier b = 0.668 and 0.79 for N/L (b = 1). The
// loaded table counted at a quiet share adds up to 276.4 s where the
// quiet runs took 245.6 s (+12%; 0.668 gave 332.8 s, +35%; b = 0.799
// would match the sum).
//
// The earlier fit, b = 0.668 (bench/load: measure.sh, fit.py, runs.txt),
// took ten GOMAXPROCS=1 processes at load 17–26 and their slowdown as
// wall / (user + sys), a one-thread process's quiet wall time being its
// CPU time; but a run's CPU time grows under load (table1 smoke: 467
// CPU-seconds at load 11–26 against 421 quiet, ×1.11), which that
// slowdown leaves out: about 0.045 of b at L/N ≈ 10. The paired runs
// measure what share models, a GOMAXPROCS 2 run's loaded time against
// its own quiet time, over more runs, methods and loads. A joint fit over
// both sets gives 0.737.
//
// The power law fits the loads only roughly. The load average counts
// threads that run in bursts or wait (builds, I/O), not only ones that
// compete for the whole interval, and at one load a run's slowdown varies
// (table1 smoke's DPZO runs at load 20–26: 3.2–23). Below load 17 the
// runs slowed less than the curve says (b = 0.58 over the 35 runs at load
// 11–16, 0.84 over the 43 at 17–26; DPZO alone 0.61 and 0.72), and with
// an intercept the fit is log slowdown = −2.56 + 1.93·log(L/N): the
// slowdown rises faster with the load than a power law through L = N
// does, so at loads well below 11, which no paired run covers, share
// likely underestimates a run's speed. Method and load go together in the
// paired set (DP-SGD ran at 12–16, Dual-Priv at 18–20), so the bands
// mix the two.
const loadExponent = 0.748

// runCores is c, the cores a run keeps busy when it has them, on the
// two-core development machine (GOMAXPROCS 2), used as the speed a run
// loses when J runs at once share N cores (N/(J·c) each where J·c > N).
// It was fitted as a run's CPU time over its quiet-equivalent wall time
// (wall × share at its load, below), summed over the 29 runs of 5 s or
// more of the checked-in table1 smoke sweep whose CPU time was sampled
// (bench/load/sweep-table1-smoke.txt: 381.2 CPU-seconds over 287.3
// quiet seconds at the earlier exponent 0.668, 1.327; single runs
// 0.5–2.5). At loadExponent 0.748 the same runs read 1.605
// (TestRunCoresFit), but that reading counts CPU that buys no speed and
// the CPU time a run gains under load (×1.11, see loadExponent: 1.605 /
// 1.11 = 1.45). The two quiet whole sweeps (TestRunCoresQuiet) read 1.700
// as CPU over wall with one job (the same runs took 421 CPU-seconds one
// at a time, 352 two at a time) and 1.438 as twice the two-job sweep's
// wall over the one-job one's (178 s and 247.6 s), the reading of the
// speed c stands for. c stays 1.33, which gives the two-job sweep 164.7
// s from the one-job one's 247.6 s (−7.5% of the 178 s measured): 1.438
// would lengthen --jobs 2's first estimate on a quiet machine from 183.8
// s to 198.7 s against 178 (+3% to +12%, as --jobs 1's 276.3 s against
// 247.6; --jobs 1's does not depend on c); 1.33 is closer because its
// −7.5% offsets the prior's +12%. It is measured on table1 smoke only,
// and on more cores a run may keep more of them busy.
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
// 8 on 2 cores took 1/0.35 = 2.8 times what it takes on a quiet machine),
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
