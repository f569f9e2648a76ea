// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// table1Smoke returns the runs of a recorded table1 sweep at smoke
// (testdata/table1-smoke-steady.parquet: the run table checked in as
// results/baselines/table1-smoke.parquet before the tables recorded their
// load, with an older, slower engine, at a load that held steady enough
// that its DPZO runs took 96 ± 40 s on fashion-vqa; the table that
// replaced it ran while the load went from 12 to 27, its DPZO runs from
// 0.09 to 0.57 of a core, which no estimate that assumes today's load
// holds follows: replayed here, its worst factor is 2.8), in row order
// (the order the pool starts them), their recorded wall times, and a plan
// that gives their recorded steps and the cost classes of
// methods.Stepper: DPZO's steps are zeroth-order, the others'
// first-order.
func table1Smoke(t *testing.T) (rows []results.Run, runs []*Run, secs map[*Run]float64, plan func(*Run) (int64, string)) {
	t.Helper()
	rows, err := results.ReadRuns("testdata/table1-smoke-steady.parquet")
	if err != nil {
		t.Fatal(err)
	}
	runs = make([]*Run, len(rows))
	secs = map[*Run]float64{}
	steps := map[*Run]int64{}
	for i, row := range rows {
		runs[i] = &Run{ID: row.RunID, Config: experiments.Config{Method: row.Method, Task: row.Task, Scale: row.Scale, Seed: row.Seed}}
		secs[runs[i]], steps[runs[i]] = row.Seconds, row.Steps
	}
	plan = func(r *Run) (int64, string) {
		if r.Config.Method == "dpzo" {
			return steps[r], "zeroth-order"
		}
		return steps[r], "first-order"
	}
	return rows, runs, secs, plan
}

// TestETA replays a recorded table1 sweep at smoke (its runs'
// wall times, in the order the pool starts them, which is the table's
// row order) on a simulated pool of 1 and 2 workers, with no prior, and
// checks the estimate at every completion against the true time left
// (the replay's end less now): none while DPZO runs are to come and no
// zeroth-order step has finished (a first-order step's cost is never
// used for one), then within a factor of 1.9 (or 15 s). The throughput estimate the
// progress line used before, elapsed / done × left, is off by a factor of
// 29 on this table (DPZO's runs take a hundred times DP-SGD's), which the
// test logs beside it.
func TestETA(t *testing.T) {
	_, runs, secs, plan := table1Smoke(t)
	worst := replayETA(t, runs, secs, plan, nil, 1.9)
	t.Logf("worst factor with no prior: %.2f", worst)
}

// TestETAPrior predicts a DPZO-heavy plan from a prior: seeds 2 and 3 of
// table1 at smoke (52 runs, 96% of their 1,467 s in DPZO's 16), with the
// runs of seed 1 as the runs already recorded under the results folder.
// Before any run has finished, the prediction of the plan's length is
// within a factor of 1.35 of the recorded one (1.05: 1,541 s against
// 1,467; DPZO's runs of the table took 96 ± 40 s on fashion-vqa and
// 83 ± 34 s on shapes-vqa on a loaded machine, and the prior is seed 1's
// per-step mean; its median said 1,570 s), and at every completion within
// 1.3 (or 15 s) with 1 and 2 workers (1.22 and 1.13). Without the prior (TestETA) there is no
// estimate at all until the first DPZO run finishes. loadPrior reads the
// same kind of prior from the checked-in tables under the results folder.
func TestETAPrior(t *testing.T) {
	rows, runs, secs, plan := table1Smoke(t)
	var seen []results.Run
	var pending []*Run
	for i, r := range runs {
		if r.Config.Seed == 1 {
			seen = append(seen, rows[i])
		} else {
			pending = append(pending, r)
		}
	}
	prior := newPrior(seen, plan, load{})
	if prior == nil {
		t.Fatal("no prior from the runs of seed 1")
	}
	if p := loadPrior("../results", "smoke", plan, load{}); p == nil || p.perStep["dpzo/fashion-vqa"] <= 0 || p.perStep["class:zeroth-order"] <= 0 {
		t.Errorf("loadPrior(../results, smoke) = %+v, want DPZO's seconds per step from results/baselines/table1-smoke.parquet", p)
	}
	total, zo := 0.0, 0.0
	for _, r := range pending {
		total += secs[r]
		if r.Config.Method == "dpzo" {
			zo += secs[r]
		}
	}
	e := newETA(pending, 1, plan, prior)
	got, ok := e.left(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if !ok {
		t.Fatal("no estimate before any run finished, with a prior")
	}
	if f := factor(got.Seconds(), total); f > 1.35 {
		t.Errorf("before any run finished: estimate %.0f s, recorded %.0f s (factor %.2f), want within 1.35", got.Seconds(), total, f)
	} else {
		t.Logf("before any run finished: estimate %.0f s, recorded %.0f s (%.0f s of it DPZO's), factor %.2f", got.Seconds(), total, zo, f)
	}
	worst := replayETA(t, pending, secs, plan, prior, 1.3)
	t.Logf("worst factor with the prior: %.2f", worst)
}

// slack is the error of an estimate that replayETA accepts whatever the
// factor: in the last seconds of a sweep (7 s left against 17 s), a
// factor says nothing a user needs.
const slack = 15.0

// replayETA replays runs on a simulated pool of 1 and 2 workers and
// checks the estimate of eta (with prior) at every completion against the
// true time left: within a factor of tol or slack seconds; with no prior, none while a
// zeroth-order run is to come and none has finished. It returns the worst
// factor.
func replayETA(t *testing.T, runs []*Run, secs map[*Run]float64, plan func(*Run) (int64, string), prior *etaPrior, tol float64) float64 {
	t.Helper()
	worstAll := 1.0
	for _, workers := range []int{1, 2} {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
		e := newETA(runs, workers, plan, prior)
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
		zoDone, zoLeft := 0, 0
		for _, r := range runs {
			if _, class := plan(r); class == "zeroth-order" {
				zoLeft++
			}
		}
		for i, en := range ends {
			startUpTo(en.t)
			e.finish(en.r, &results.Manifest{Status: results.OK, Seconds: secs[en.r]})
			if _, class := plan(en.r); class == "zeroth-order" {
				zoDone++
				zoLeft--
			}
			// The freed worker starts the next run at once.
			startUpTo(en.t)
			truth := total - en.t
			got, ok := e.left(at(en.t))
			if prior == nil && zoDone == 0 && zoLeft > 0 {
				if ok {
					t.Errorf("%d workers: after %d runs, no zeroth-order one: estimate %v, want none", workers, i+1, got)
				}
				continue
			}
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
			if math.Abs(got.Seconds()-truth) <= slack {
				f = 1 // the last seconds: a user reads no factor there
			}
			worst, worstOld = max(worst, f), max(worstOld, factor(old, truth))
			if f > tol {
				t.Errorf("%d workers: after %d runs (%s %s) at %.0f s: estimate %.0f s, truth %.0f s (factor %.2f)",
					workers, i+1, en.r.Config.Method, en.r.Config.Task, en.t, got.Seconds(), truth, f)
			}
		}
		t.Logf("%d workers: %.0f s in all; worst factor %.2f (throughput estimate: %.1f)", workers, total, worst, worstOld)
		worstAll = max(worstAll, worst)
	}
	return worstAll
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

// TestETAPriorUnknownSteps checks the cost of runs whose steps are not
// known before they run (mia's -lira tasks draw their member sets): the
// prior's runs of the same method and task tell it, and a method's runs
// on another task do not (table1's DPZO runs take 90 s at smoke, mia's
// 3–9 s), so with only those there is no estimate until a run finishes.
func TestETAPriorUnknownSteps(t *testing.T) {
	plan := func(r *Run) (int64, string) {
		if r.Config.Task == "shapes-vqa-lira" {
			return 0, "zeroth-order"
		}
		return 4000, "zeroth-order"
	}
	seen := []results.Run{
		{Status: results.OK, Method: "dpzo", Task: "fashion-vqa", Scale: "smoke", Seconds: 90, Steps: 4000},
		{Status: results.OK, Method: "dpzo", Task: "fashion-vqa", Scale: "smoke", Seconds: 96, Steps: 4000},
	}
	lira := &Run{Config: experiments.Config{Method: "dpzo", Task: "shapes-vqa-lira", Scale: "smoke"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got, ok := newETA([]*Run{lira}, 1, plan, newPrior(seen, plan, load{})).left(now); ok {
		t.Errorf("a run of unknown steps, prior of its method on another task only: estimate %v, want none", got)
	}
	seen = append(seen, results.Run{Status: results.OK, Method: "dpzo", Task: "shapes-vqa-lira", Scale: "smoke", Seconds: 6})
	got, ok := newETA([]*Run{lira, lira}, 1, plan, newPrior(seen, plan, load{})).left(now)
	if !ok || got != 12*time.Second {
		t.Errorf("two runs of unknown steps, prior of 6 s for their method and task: estimate %v (%v), want 12s", got, ok)
	}
}

// TestCheckedInPrior checks how checkedInPrior converts timings recorded
// at other scales, by hand: a method and task recorded at the target scale
// keep their median; one recorded only at another scale takes its
// seconds times the median ratio of the methods and tasks recorded at
// both; with none at both, a step takes the ratio of the presets'
// multiply-adds per token (smoke: 12·32²·1 + 12·32²·1 = 24,576; small:
// 12·96²·3 + 12·64²·2 = 430,080; 17.5 times), and a run of unknown steps
// is not converted.
func TestCheckedInPrior(t *testing.T) {
	plan := func(r *Run) (int64, string) { return 0, "first-order" }
	ok := func(method, scale string, secs float64, steps int64) results.Run {
		return results.Run{Status: results.OK, Method: method, Task: "fashion-vqa", Scale: scale, Seconds: secs, Steps: steps}
	}
	dir := t.TempDir()
	write := func(name string, rows ...results.Run) {
		t.Helper()
		if err := results.WriteRuns(filepath.Join(dir, name), rows); err != nil {
			t.Fatal(err)
		}
	}
	// Per step: dpsgd 0.1 s at smoke, 0.3 at small (×3); nonprivate
	// 0.2 and 0.8 (×4): the median ratio is 3.5. dpzo is at smoke
	// only: 2 s a step, 7 s at small. fedavg is at small only.
	write("a-smoke.parquet", ok("dpsgd", "smoke", 10, 100), ok("nonprivate", "smoke", 20, 100), ok("dpzo", "smoke", 200, 100))
	write("a-small.parquet", ok("dpsgd", "small", 60, 200), ok("nonprivate", "small", 160, 200), ok("fedavg", "small", 50, 10))
	if err := os.WriteFile(filepath.Join(dir, "damaged-small.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := checkedInPrior(os.DirFS(dir), "small", plan, load{})
	if p == nil || p.from != fromCheckedIn {
		t.Fatalf("checkedInPrior = %+v, want a checked-in prior", p)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	for k, want := range map[string]float64{"dpsgd/fashion-vqa": 0.3, "nonprivate/fashion-vqa": 0.8, "dpzo/fashion-vqa": 7, "fedavg/fashion-vqa": 5} {
		if got := p.perStep[k]; !near(got, want) {
			t.Errorf("small, per step of %s = %v, want %v", k, got, want)
		}
	}
	// Per run: dpsgd 10 → 60 s (×6), nonprivate 20 → 160 (×8): median 7.
	if got := p.perRun["dpzo/fashion-vqa"]; !near(got, 1400) {
		t.Errorf("small, per run of dpzo = %v, want 200 × 7 = 1400", got)
	}
	// full: nothing at full, small nearest (fedavg and the rest at
	// small's seconds), smoke only for what small lacks; no method
	// recorded at both, so the presets' ratio.
	full, small, smoke := 0.0, 0.0, 0.0
	for _, c := range []struct {
		s string
		v *float64
	}{{"full", &full}, {"small", &small}, {"smoke", &smoke}} {
		var ok bool
		if *c.v, ok = modelCost(c.s); !ok {
			t.Fatalf("modelCost(%s) unknown", c.s)
		}
	}
	if !near(small, 430080) || !near(smoke, 24576) || !near(full, 12*256*256*6*2) {
		t.Errorf("modelCost smoke, small, full = %v, %v, %v, want 24576, 430080, %v", smoke, small, full, 12*256*256*6*2)
	}
	p = checkedInPrior(os.DirFS(dir), "full", plan, load{})
	for k, want := range map[string]float64{"dpsgd/fashion-vqa": 0.3 * full / small, "fedavg/fashion-vqa": 5 * full / small} {
		if got := p.perStep[k]; !near(got, want) {
			t.Errorf("full, per step of %s = %v, want small's × %v = %v", k, got, full/small, want)
		}
	}
	if got, want := p.perStep["dpzo/fashion-vqa"], 2*full/smoke; !near(got, want) {
		t.Errorf("full, per step of dpzo (smoke only) = %v, want %v", got, want)
	}
	if _, ok := p.perRun["dpsgd/fashion-vqa"]; ok {
		t.Errorf("full: a run of unknown steps converted by the presets' ratio: %v", p.perRun)
	}
	if got := nearestScales("full", []string{"smoke", "custom", "small", "full"}); !slices.Equal(got, []string{"small", "smoke", "custom"}) {
		t.Errorf("nearestScales(full) = %v, want small, smoke, custom", got)
	}
	if p := checkedInPrior(fstest.MapFS{}, "small", plan, load{}); p != nil {
		t.Errorf("checkedInPrior of no tables = %+v, want nil", p)
	}
}

// TestETASource checks where an estimate comes from: the checked-in
// timings until this invocation's own run of the method and task has
// finished, the recorded runs before the checked-in ones, and the
// progress line's mark.
func TestETASource(t *testing.T) {
	plan := func(r *Run) (int64, string) { return 100, "first-order" }
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Run{Config: experiments.Config{Method: "dpsgd", Task: "fashion-vqa", Scale: "small", Seed: 1}}
	b := &Run{Config: experiments.Config{Method: "dpsgd", Task: "fashion-vqa", Scale: "small", Seed: 2}}
	checked := &etaPrior{perStep: map[string]float64{"dpsgd/fashion-vqa": 0.5}, perRun: map[string]float64{}, from: fromCheckedIn}
	e := newETA([]*Run{a, b}, 1, plan, nil, checked)
	if d, from, ok := e.estimate(at); !ok || d != 100*time.Second || from != fromCheckedIn {
		t.Errorf("before any run: %v from %v (%v), want 1m40s from the checked-in timings", d, from, ok)
	}
	recorded := &etaPrior{perStep: map[string]float64{"dpsgd/fashion-vqa": 0.2}, perRun: map[string]float64{}, from: fromRecorded}
	if d, from, ok := newETA([]*Run{a, b}, 1, plan, recorded, checked).estimate(at); !ok || d != 40*time.Second || from != fromRecorded {
		t.Errorf("with a recorded prior: %v from %v (%v), want 40s from the recorded runs", d, from, ok)
	}
	// a takes 80 s: b costs 80 s, this invocation's own.
	e.start(a, at)
	e.learn(a, 80)
	delete(e.running, a)
	if d, from, ok := e.estimate(at); !ok || d != 80*time.Second || from != fromOwn {
		t.Errorf("after a run: %v from %v (%v), want 1m20s, own", d, from, ok)
	}
	var buf bytes.Buffer
	p := &progress{w: &buf, exp: "exp", total: 2, now: func() time.Time { return at }, start: at,
		eta: newETA([]*Run{a, b}, 1, plan, nil, checked)}
	if got, want := p.line(), "exp: 0/2 runs done (0 failed, 0 running, 0 cached), 0s elapsed, ETA ~1m40s (from checked-in timings)"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	p.eta = e
	p.done = 1
	if got, want := p.line(), "exp: 1/2 runs done (0 failed, 0 running, 0 cached), 0s elapsed, ETA 1m20s"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}

// TestETAPriorExperiment checks, by hand on a fake checked-in table, the
// cost of runs whose steps are not known: the median of their own
// experiment's runs of the same method, task and variant at the scale
// (x: 500, 520, 540 s, mean 520 s; x's variant v2: 900 s), before the
// mean of every run of the method and task at the scale (x's and y's:
// 100, 110, 120, 500, 520, 540, 900; 2,790 / 7 = 398.571 s), which is what runs of an experiment with no
// table at the scale cost (z; w, whose table is at smoke only, is not
// converted), and a variant with no runs (v3).
func TestETAPriorExperiment(t *testing.T) {
	plan := func(r *Run) (int64, string) { return 0, "first-order" }
	row := func(exp, scale string, secs float64, variant string) results.Run {
		r := results.Run{Status: results.OK, Experiment: exp, Method: "nonprivate", Task: "records", Scale: scale, Seconds: secs}
		if variant != "" {
			r.Params = map[string]any{experiments.VariantParam: variant}
		}
		return r
	}
	dir := t.TempDir()
	write := func(name string, rows ...results.Run) {
		t.Helper()
		if err := results.WriteRuns(filepath.Join(dir, name), rows); err != nil {
			t.Fatal(err)
		}
	}
	write("x-small.parquet", row("x", "small", 500, ""), row("x", "small", 540, ""), row("x", "small", 520, ""), row("x", "small", 900, "v2"))
	write("y-small.parquet", row("y", "small", 100, ""), row("y", "small", 120, ""), row("y", "small", 110, ""))
	write("x-smoke.parquet", row("x", "smoke", 50, ""), row("x", "smoke", 52, ""), row("y", "smoke", 10, ""))
	write("w-smoke.parquet", row("w", "smoke", 5000, ""))
	prior := checkedInPrior(os.DirFS(dir), "small", plan, load{})
	every := time.Duration(2790 * time.Second / 7)
	run := func(exp, variant string) *Run {
		r := &Run{Experiment: exp, Config: experiments.Config{Method: "nonprivate", Task: "records", Scale: "small", Params: map[string]any{}}}
		if variant != "" {
			r.Config.Params[experiments.VariantParam] = variant
		}
		return r
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		runs []*Run
		want time.Duration
	}{
		{"two runs of x", []*Run{run("x", ""), run("x", "")}, 1040 * time.Second},
		{"a run of x's variant v2", []*Run{run("x", "v2")}, 900 * time.Second},
		{"a run of x's variant v3", []*Run{run("x", "v3")}, every},
		{"two runs of z", []*Run{run("z", ""), run("z", "")}, 2 * every},
		{"a run of w", []*Run{run("w", "")}, every},
	} {
		d, from, ok := newETA(c.runs, 1, plan, prior).estimate(at)
		if !ok || (d-c.want).Abs() > time.Millisecond || from != fromCheckedIn {
			t.Errorf("%s: %v from %v (%v), want %v from the checked-in timings", c.name, d, from, ok, c.want)
		}
	}
	// The experiment's checked-in runs come before the method and task's
	// recorded under the results folder.
	recorded := newPrior([]results.Run{row("y", "small", 200, "")}, plan, load{})
	if d, from, ok := newETA([]*Run{run("x", "")}, 1, plan, recorded, prior).estimate(at); !ok || d != 520*time.Second || from != fromCheckedIn {
		t.Errorf("a run of x, y recorded: %v from %v (%v), want 8m40s from the checked-in timings", d, from, ok)
	}
	if d, from, ok := newETA([]*Run{run("z", "")}, 1, plan, recorded, prior).estimate(at); !ok || d != 200*time.Second || from != fromRecorded {
		t.Errorf("a run of z, y recorded: %v from %v (%v), want 3m20s from the recorded runs", d, from, ok)
	}
}

// TestETAPriorRecipe checks, by hand on a fake checked-in table, the cost
// of a run whose steps are not known and whose experiment has no runs at
// the scale: the median of the runs of its method and task whose
// hyperparameters it has, with the same values, the most of them (c:
// epochs 100 and train_embeddings, 550, 560, 570 s: mean 560 s, before
// e's epochs 100 alone, 300 s, for a run with both), else of the nearest
// recipe (c's for a run with train_embeddings and other epochs), else of
// every run of its method and task (190, 300, 550, 560, 570: mean 434 s;
// the median, 550 s, was what the prior said before it took means).
func TestETAPriorRecipe(t *testing.T) {
	plan := func(r *Run) (int64, string) { return 0, "first-order" }
	row := func(exp string, secs float64, params map[string]any) results.Run {
		return results.Run{Status: results.OK, Experiment: exp, Method: "nonprivate", Task: "records", Scale: "small", Seconds: secs, Params: params}
	}
	long := map[string]any{"epochs": int64(100), "train_embeddings": true}
	dir := t.TempDir()
	if err := results.WriteRuns(filepath.Join(dir, "c-small.parquet"), []results.Run{row("c", 550, long), row("c", 570, long), row("c", 560, long)}); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteRuns(filepath.Join(dir, "d-small.parquet"), []results.Run{row("d", 190, map[string]any{"epochs": int64(30)})}); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteRuns(filepath.Join(dir, "e-small.parquet"), []results.Run{row("e", 300, map[string]any{"epochs": int64(100)})}); err != nil {
		t.Fatal(err)
	}
	prior := checkedInPrior(os.DirFS(dir), "small", plan, load{})
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		params map[string]any
		want   time.Duration
	}{
		{map[string]any{"epochs": 100.0, "train_embeddings": true, "train_holdout": int64(1)}, 560 * time.Second},
		{map[string]any{"epochs": int64(100), "train_holdout": int64(1)}, 300 * time.Second},
		{map[string]any{"epochs": int64(30)}, 190 * time.Second},
		// No recipe is a subset: c's is the nearest (train_embeddings
		// in common, see TestETANearestRecipe).
		{map[string]any{"epochs": int64(50), "train_embeddings": true}, 560 * time.Second},
		{nil, 434 * time.Second},
	} {
		r := &Run{Experiment: "chance", Config: experiments.Config{Method: "nonprivate", Task: "records", Scale: "small", Params: c.params}}
		d, from, ok := newETA([]*Run{r}, 1, plan, prior).estimate(at)
		if !ok || d != c.want || from != fromCheckedIn {
			t.Errorf("a run with %v: %v from %v (%v), want %v from the checked-in timings", c.params, d, from, ok, c.want)
		}
	}
}

// TestETANearestRecipe checks, by hand on a fake checked-in table, the
// cost of a run whose steps are not known, whose experiment has no runs
// at the scale and no recipe of whose method and task is a subset of its
// hyperparameters: the nearest recipe's, the one with the most
// hyperparameters in common (then the fewest others, then the first by
// key), and that the progress line says so. The recipes: c {epochs 100,
// train_embeddings} 560 s, e {epochs 100, lr 0.1} 300 s, f {epochs 30,
// lr 0.1, wd 0} 900 s; every run's mean is 1,760 / 3 = 586.667 s.
func TestETANearestRecipe(t *testing.T) {
	t.Parallel()
	plan := func(r *Run) (int64, string) { return 0, "first-order" }
	row := func(exp string, secs float64, params map[string]any) results.Run {
		return results.Run{Status: results.OK, Experiment: exp, Method: "nonprivate", Task: "records", Scale: "small", Seconds: secs, Params: params}
	}
	dir := t.TempDir()
	rows := []results.Run{
		row("c", 560, map[string]any{"epochs": int64(100), "train_embeddings": true}),
		row("e", 300, map[string]any{"epochs": int64(100), "lr": 0.1}),
		row("f", 900, map[string]any{"epochs": int64(30), "lr": 0.1, "wd": 0.0}),
	}
	for _, r := range rows {
		if err := results.WriteRuns(filepath.Join(dir, r.Experiment+"-small.parquet"), []results.Run{r}); err != nil {
			t.Fatal(err)
		}
	}
	prior := checkedInPrior(os.DirFS(dir), "small", plan, load{})
	every := time.Duration(1760 * time.Second / 3)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(params map[string]any) *Run {
		return &Run{Experiment: "new", Config: experiments.Config{Method: "nonprivate", Task: "records", Scale: "small", Params: params}}
	}
	for _, c := range []struct {
		desc   string
		params map[string]any
		want   time.Duration
		near   int
	}{
		{"two in common with f, one with e", map[string]any{"epochs": int64(30), "lr": 0.1, "wd": 1.0}, 900 * time.Second, 1},
		{"one in common with c and e, one other each: e's key first", map[string]any{"epochs": int64(100), "lr": 0.5}, 300 * time.Second, 1},
		{"epochs as a float, in common with c and e: e's key first", map[string]any{"epochs": 100.0, "lr": 0.2, "seed_data": int64(3)}, 300 * time.Second, 1},
		{"c is a subset: no nearest", map[string]any{"epochs": int64(100), "lr": 0.5, "train_embeddings": true}, 560 * time.Second, 0},
		{"nothing in common: every run's mean", map[string]any{"epochs": int64(50)}, every, 0},
		{"no hyperparameters", nil, every, 0},
	} {
		d, from, near, ok := newETA([]*Run{run(c.params)}, 1, plan, prior).estimateNear(at)
		if !ok || (d-c.want).Abs() > time.Millisecond || from != fromCheckedIn || near != c.near {
			t.Errorf("%s: %v from %v, %d nearest (%v); want %v from the checked-in timings, %d nearest", c.desc, d, from, near, ok, c.want, c.near)
		}
	}

	// The progress line says how many runs are costed so: f's 900 s and
	// the mean's 586.667 s on one worker, 1,486.667 s, ~24m47s.
	e := newETA([]*Run{run(map[string]any{"epochs": int64(30), "lr": 0.1}), run(map[string]any{"epochs": int64(50)})}, 1, plan, prior)
	var b bytes.Buffer
	p := newProgress(&b, time.Hour, "new", 2, 0, func() time.Time { return at }, e)
	p.close()
	if l, want := strings.Split(b.String(), "\n")[0], "ETA ~24m47s (from checked-in timings; 1 run costed as its nearest recipe)"; !strings.HasSuffix(l, want) {
		t.Errorf("first line %q, want it to end in %q", l, want)
	}
}

// TestPriorMean checks the prior's per-step and per-run costs by hand:
// per step Σ seconds / Σ steps, which weighs a run by its steps (10 s
// over 100 steps and 60 s over 400: 70 / 500 = 0.14 s, where the mean of
// the two rates is 0.125 and their median too); a run over ten times the
// median seconds per unit is left out (0.1, 0.12, 0.3 and 50 s a step:
// median 0.21, so the 50 s goes, 52 / 300 = 0.17333 s); per run the mean
// seconds (4, 5 and 9 s: 6 s, median 5 s).
func TestPriorMean(t *testing.T) {
	t.Parallel()
	plan := func(r *Run) (int64, string) { return 0, "first-order" }
	row := func(task string, secs float64, steps int64) results.Run {
		return results.Run{Status: results.OK, Method: "dpsgd", Task: task, Scale: "smoke", Seconds: secs, Steps: steps}
	}
	p := newPrior([]results.Run{
		row("a", 10, 100), row("a", 60, 400),
		row("b", 10, 100), row("b", 12, 100), row("b", 30, 100), row("b", 5000, 100),
		row("c", 4, 0), row("c", 9, 0), row("c", 5, 0),
	}, plan, load{})
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*want }
	for k, want := range map[string]float64{"dpsgd/a": 0.14, "dpsgd/b": 52.0 / 300} {
		if got := p.perStep[k]; !near(got, want) {
			t.Errorf("per step of %s = %v, want %v", k, got, want)
		}
	}
	if got := p.perRun["dpsgd/c"]; !near(got, 6) {
		t.Errorf("per run of dpsgd/c = %v, want 6", got)
	}
	if got := p.medStep["dpsgd/b"]; !near(got, 0.21) {
		t.Errorf("median per step of dpsgd/b = %v, want 0.21", got)
	}
}

// TestETALeaveOneSeedOut predicts each seed's runs of the checked-in
// table1 smoke table from the other two seeds' (the prior learnt at each
// predicted run's own recorded load), against bench/load/loso.py's
// numbers for the prior's mean with its outlier rule (Python, from the
// same table as text: 482.7791296342587, 539.90372299741 and
// 490.3496840564675 s, where the runs recorded 581.16, 471.00 and
// 539.15 s; the mean with runs beyond ten times the median left out said
// 495.23, 550.34 and 509.26, the median 375.19, 387.99 and 377.91).
func TestETALeaveOneSeedOut(t *testing.T) {
	t.Parallel()
	rows, err := results.ReadRuns("../results/baselines/table1-smoke.parquet")
	if err != nil {
		t.Fatal(err)
	}
	plan := func(r *Run) (int64, string) { return 0, "" }
	want := map[int64]float64{1: 482.7791296342587, 2: 539.90372299741, 3: 490.3496840564675}
	for seed, w := range want {
		var train, test []results.Run
		for _, r := range rows {
			if r.Seed == seed {
				test = append(test, r)
			} else {
				train = append(train, r)
			}
		}
		got, rec := 0.0, 0.0
		for _, r := range test {
			if _, ok := loadOf(r).share(); !ok {
				t.Fatalf("run %s: no load recorded", r.RunID)
			}
			p := newPrior(train, plan, loadOf(r))
			got += p.perStep[r.Method+"/"+r.Task] * float64(r.Steps)
			rec += r.Seconds
		}
		if math.Abs(got-w) > 1e-9*w {
			t.Errorf("seed %d: predicted %v s, want %v", seed, got, w)
		}
		t.Logf("seed %d: predicted %.1f s, recorded %.1f s (%.3f)", seed, got, rec, got/rec)
	}
}

// TestPriorOutliers works the prior's outlier rule (see outlierMADs) by
// hand. Logs are natural; the MAD is scaled by madScale (1.4826).
//
//   - tight: 1, 1.1, 0.9, 1 and 4 s a step, 100 steps each. Logs 0,
//     0.0953, −0.1054, 0, 1.3863; median 0; deviations sorted 0, 0,
//     0.0953, 0.1054, 1.3863, MAD 0.0953; 3 × 1.4826 × 0.0953 = 0.424 is
//     under ln 2, so the limit is 2 s a step and the 4 s run is the
//     outlier. The others' mean is 400 / 400 = 1 s a step; with the
//     outlier's excess (300 s) at weight w the mean is (400 + 100 +
//     300w) / 500: 1 at w = 0, 1.3 at 0.5, 1.6 at 1. A sixth run of 15 s
//     a step (beyond 10 times the median) is left out at any weight.
//   - wide: 1, 1.5, 2, 2.5, 3 and 9 s a step, 10 steps each. Logs 0,
//     0.4055, 0.6931, 0.9163, 1.0986, 2.1972; median 0.8047; deviations
//     0.8047, 0.3992, 0.1116, 0.1116, 0.2939, 1.3925, MAD (0.2939 +
//     0.3992)/2 = 0.3466; width 3 × 1.4826 × 0.3466 = 1.5414; limit
//     exp(2.3461) = 10.45 s a step: the spread holds the 9, no outlier,
//     the mean 190 / 60.
//   - equal: 1, 1, 1, 1 and 1.9 s a step: MAD 0, the limit 2 (outlierMin),
//     no outlier; with 2.5 instead, the 2.5 is one.
func TestPriorOutliers(t *testing.T) {
	t.Parallel()
	group := func(n float64, w float64, per ...float64) *costs {
		var c *costs
		for _, x := range per {
			c = c.add(x*n, n, w)
		}
		return c
	}
	for _, tc := range []struct {
		desc      string
		c         *costs
		lim, want float64
	}{
		{"tight, w 0", group(100, 0, 1, 1.1, 0.9, 1, 4), 2, 1},
		{"tight, w 0.5", group(100, 0.5, 1, 1.1, 0.9, 1, 4), 2, 1.3},
		{"tight, w 1", group(100, 1, 1, 1.1, 0.9, 1, 4), 2, 1.6},
		{"tight, far run", group(100, 0.5, 1, 1.1, 0.9, 1, 4, 15), math.Exp((math.Log(1)+math.Log(1.1))/2 + math.Log(2)), 0},
		{"wide", group(10, 0, 1, 1.5, 2, 2.5, 3, 9), 10.445, 190.0 / 60},
		{"equal", group(10, 0, 1, 1, 1, 1, 1.9), 2, 5.9 / 5},
		{"equal, one out", group(10, 0, 1, 1, 1, 1, 2.5), 2, 1},
	} {
		lim, far := tc.c.limit()
		if tc.desc == "tight, far run" {
			// Six runs: the median log is between 1 and 1.1; the MAD
			// still under ln 2 / (3 × 1.4826).
			if math.Abs(lim-tc.lim) > 1e-12 || math.Abs(far-5*tc.lim) > 1e-12 {
				t.Errorf("%s: limit %v and far %v, want %v and %v", tc.desc, lim, far, tc.lim, 5*tc.lim)
			}
			// The 15 is left out; the 4 counts as (in, in + 0.5 × excess).
			in := 400.0 / 400
			want := (400 + 100*in + 0.5*(400-100*in)) / 500
			if got := tc.c.mean(); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: mean %v, want %v", tc.desc, got, want)
			}
			continue
		}
		if math.Abs(lim-tc.lim) > 1e-3*tc.lim {
			t.Errorf("%s: limit %v, want %v", tc.desc, lim, tc.lim)
		}
		if got := tc.c.mean(); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("%s: mean %v, want %v", tc.desc, got, tc.want)
		}
	}
}

// TestExcessWeight checks excessWeight against its formula worked by
// hand: a run recorded at share 0.25 (a slowdown of 4, 3 over quiet) counts
// 1/3 of its excess today at share 0.5 (slowdown 2, 1 over quiet), all of
// it at share 0.2 (4/3, capped at 1), none on a quiet machine or when
// today's load is unknown, and a run recorded at a quiet share none.
func TestExcessWeight(t *testing.T) {
	t.Parallel()
	// (2/L)^b = s at L = 2 / s^(1/b), one job on 2 cores.
	at := func(s float64) load { return load{avg: 2 / math.Pow(s, 1/loadExponent), procs: 2, jobs: 1} }
	for _, tc := range []struct {
		desc  string
		rec   float64
		today load
		want  float64
	}{
		{"today half speed", 0.25, at(0.5), 1.0 / 3},
		{"today slower than recorded", 0.25, at(0.2), 1},
		{"today quiet", 0.25, load{avg: 0.1, procs: 2, jobs: 1}, 0},
		{"today unknown", 0.25, load{avg: math.NaN()}, 0},
		{"recorded quiet", 1, at(0.5), 0},
	} {
		if got := excessWeight(tc.rec, tc.today); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: excessWeight(%v, %+v) = %v, want %v", tc.desc, tc.rec, tc.today, got, tc.want)
		}
	}
}
