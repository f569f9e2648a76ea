// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// TestETA replays the checked-in table1 run table at smoke (its runs'
// wall times, in the order the pool starts them, which is the table's
// row order) on a simulated pool of 1 and 2 workers, and checks the
// estimate at every completion against the true time left (the replay's
// end less now): within a factor of 2.5. The worst, 2.26, comes at the
// first two completions, when only the first non-private runs (slowed by
// the process warming up: 4 s against 1.1–1.5 s later) tell the cost of
// a step; from the third completion on the estimate is within 1.9. The
// throughput estimate the progress line used before, elapsed / done ×
// left, is off by a factor of 29 on this table (DPZO's runs take a
// hundred times DP-SGD's), which the test logs beside it.
func TestETA(t *testing.T) {
	rows, err := results.ReadRuns("../results/baselines/table1-smoke.parquet")
	if err != nil {
		t.Fatal(err)
	}
	runs := make([]*Run, len(rows))
	secs := map[*Run]float64{}
	steps := map[*Run]int64{}
	for i, row := range rows {
		runs[i] = &Run{ID: row.RunID, Config: experiments.Config{Method: row.Method, Task: row.Task, Scale: row.Scale}}
		secs[runs[i]], steps[runs[i]] = row.Seconds, row.Steps
	}
	// The cost classes of methods.Stepper: DPZO's steps are
	// zeroth-order, the others' first-order.
	plan := func(r *Run) (int64, string) {
		if r.Config.Method == "dpzo" {
			return steps[r], "zeroth-order"
		}
		return steps[r], "first-order"
	}
	for _, workers := range []int{1, 2} {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
		e := newETA(runs, workers, plan)
		// The replay: each worker takes the next run when it frees.
		type end struct {
			r *Run
			t float64
		}
		var ends []end
		free := make([]float64, workers)
		started := map[*Run]float64{}
		for _, r := range runs {
			w := slices.Index(free, slices.Min(free))
			started[r] = free[w]
			free[w] += secs[r]
			ends = append(ends, end{r, free[w]})
		}
		total := slices.Max(free)
		slices.SortStableFunc(ends, func(a, b end) int { return cmpFloat(a.t, b.t) })
		worst, worstOld := 1.0, 1.0
		next := 0 // next run to start
		startUpTo := func(t float64) {
			for next < len(runs) && started[runs[next]] <= t {
				e.start(runs[next], at(started[runs[next]]))
				next++
			}
		}
		for i, en := range ends {
			startUpTo(en.t)
			e.finish(en.r, &results.Manifest{Status: results.OK, Seconds: secs[en.r]})
			// The freed worker starts the next run at once.
			startUpTo(en.t)
			truth := total - en.t
			got, ok := e.left(at(en.t))
			if !ok {
				t.Fatalf("%d workers: no estimate after %d runs finished", workers, i+1)
			}
			old := en.t / float64(i+1) * float64(len(runs)-i-1)
			if i == len(runs)-1 {
				if got != 0 {
					t.Errorf("%d workers: estimate %v after the last run", workers, got)
				}
				continue
			}
			f := factor(got.Seconds(), truth)
			worst, worstOld = max(worst, f), max(worstOld, factor(old, truth))
			if f > 2.5 {
				t.Errorf("%d workers: after %d runs (%s %s) at %.0f s: estimate %.0f s, truth %.0f s (factor %.2f)",
					workers, i+1, en.r.Config.Method, en.r.Config.Task, en.t, got.Seconds(), truth, f)
			}
		}
		t.Logf("%d workers: %.0f s in all; worst factor %.2f (throughput estimate: %.1f)", workers, total, worst, worstOld)
	}
}

func factor(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return math.Inf(1)
	}
	return max(a/b, b/a)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
