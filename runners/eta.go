// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"maps"
	"slices"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// eta predicts when a sweep's pending runs will have finished. It
// estimates each run's cost from its method, task and planned steps
// (experiments.Names.Steps): the seconds per step that the finished runs
// of the same method and task took in this invocation; until one has
// finished, those of the finished runs of the method's cost class (the
// first-order DP-SGD loop, zeroth-order steps, ...), then of every
// finished run. A run whose steps are not known before it runs costs the
// mean wall time of the finished runs of its method and task (else of its
// method, else of every run). It then replays the pool: the running runs
// hold their workers for what they have left, and the queued ones go, in
// the order the pool starts them, to the worker that frees first.
//
// The old estimate, elapsed / done × left, assumed that every run costs
// the same; in table1 at smoke a DPZO run takes a hundred times a DP-SGD
// one, so the estimate climbed from a minute to the sweep's real length
// as the slow runs came (TestETA replays the checked-in table).
type eta struct {
	workers int
	plan    func(*Run) (steps int64, class string)
	queued  []*Run // not started, in start order
	running map[*Run]time.Time
	// Learnt from the finished runs, by method/task, method, class and
	// "" (every run): seconds and steps of the runs with known steps,
	// seconds and count of all.
	perStep map[string]*rate
	perRun  map[string]*rate
	peak    int // most runs running at once
}

// rate sums seconds over a count (steps or runs).
type rate struct{ seconds, n float64 }

func (r *rate) mean() (float64, bool) {
	if r == nil || r.n == 0 {
		return 0, false
	}
	return r.seconds / r.n, true
}

// newETA returns the predictor of the runs pending, which workers run in
// that order (0 workers: as many as run at once). plan gives a run's
// planned steps and cost class (nil: the registered names' Steps).
func newETA(pending []*Run, workers int, plan func(*Run) (int64, string)) *eta {
	if plan == nil {
		plan = registeredPlan()
	}
	return &eta{workers: workers, plan: plan, queued: slices.Clone(pending),
		running: map[*Run]time.Time{}, perStep: map[string]*rate{}, perRun: map[string]*rate{}}
}

// registeredPlan returns the plan of the names registered with the
// experiments package; no steps where none are registered.
func registeredPlan() func(*Run) (int64, string) {
	steps := experiments.Registered().Steps
	return func(r *Run) (int64, string) {
		if steps == nil {
			return 0, ""
		}
		return steps(&r.Config)
	}
}

func (e *eta) start(r *Run, now time.Time) {
	if i := slices.Index(e.queued, r); i >= 0 {
		e.queued = slices.Delete(e.queued, i, i+1)
	}
	e.running[r] = now
	e.peak = max(e.peak, len(e.running))
}

// skip removes r, which does not run here, from the queue.
func (e *eta) skip(r *Run) {
	if i := slices.Index(e.queued, r); i >= 0 {
		e.queued = slices.Delete(e.queued, i, i+1)
	}
}

// finish records that r ended with manifest m (nil: interrupted). A run
// that finished ok teaches its cost: its wall time less the base stage
// (pretraining a base model is paid once, not per run).
func (e *eta) finish(r *Run, m *results.Manifest) {
	delete(e.running, r)
	if m == nil || m.Status != results.OK {
		return
	}
	secs := m.Seconds
	for _, s := range m.Stages {
		if s.Name == "base" {
			secs -= s.Seconds
		}
	}
	e.learn(r, max(secs, 0))
}

func (e *eta) learn(r *Run, secs float64) {
	steps, class := e.plan(r)
	add := func(m map[string]*rate, k string, n float64) {
		if m[k] == nil {
			m[k] = &rate{}
		}
		m[k].seconds += secs
		m[k].n += n
	}
	mt := r.Config.Method + "/" + r.Config.Task
	for _, k := range []string{mt, "method:" + r.Config.Method, ""} {
		add(e.perRun, k, 1)
	}
	if steps > 0 {
		for _, k := range []string{mt, "class:" + class, ""} {
			add(e.perStep, k, float64(steps))
		}
	}
}

// cost returns the predicted wall time of r in seconds, false when no
// finished run tells.
func (e *eta) cost(r *Run) (float64, bool) {
	steps, class := e.plan(r)
	mt := r.Config.Method + "/" + r.Config.Task
	if steps > 0 {
		for _, k := range []string{mt, "class:" + class, ""} {
			if s, ok := e.perStep[k].mean(); ok {
				return s * float64(steps), true
			}
		}
	}
	for _, k := range []string{mt, "method:" + r.Config.Method, ""} {
		if s, ok := e.perRun[k].mean(); ok {
			return s, true
		}
	}
	return 0, false
}

// left returns the predicted time until every run has finished, false
// when it cannot tell yet (no run has finished).
func (e *eta) left(now time.Time) (time.Duration, bool) {
	w := e.workers
	if w <= 0 {
		w = max(e.peak, 1)
	}
	free := make([]float64, w) // seconds from now until each worker is free
	i := 0
	for _, r := range slices.SortedFunc(maps.Keys(e.running), func(a, b *Run) int { return e.running[a].Compare(e.running[b]) }) {
		c, ok := e.cost(r)
		if !ok {
			return 0, false
		}
		left := max(c-now.Sub(e.running[r]).Seconds(), 0)
		if i < w {
			free[i] = left
		} else {
			free[slices.Index(free, slices.Min(free))] += left
		}
		i++
	}
	for _, r := range e.queued {
		c, ok := e.cost(r)
		if !ok {
			return 0, false
		}
		free[slices.Index(free, slices.Min(free))] += c
	}
	return time.Duration(slices.Max(free) * float64(time.Second)), true
}
