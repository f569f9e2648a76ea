// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/repro-dp/repro/internal/results"
)

// A Recorder collects what one run produces: metrics, attack scores, final
// results, the privacy record, stage timings and warnings. The runner
// writes them to disk when the Executor returns. Its methods are safe for
// concurrent use. Invalid input (a bad name, a second privacy record) is
// remembered and fails the run when it ends.
type Recorder struct {
	mu       sync.Mutex
	now      func() time.Time
	start    time.Time
	stages   []results.Stage
	stageAt  time.Time
	stage    string
	steps    int64
	metrics  []results.Metric
	scores   []results.Score
	preds    []results.Prediction
	results  map[string]float64
	privacy  *results.Privacy
	warnings []string
	errs     []error
}

func newRecorder(now func() time.Time) *Recorder {
	t := now()
	return &Recorder{now: now, start: t, stageAt: t, results: make(map[string]float64)}
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func (r *Recorder) checkName(what, name string) bool {
	if nameRE.MatchString(name) {
		return true
	}
	r.errs = append(r.errs, fmt.Errorf("runners: %s name %q must match [a-z][a-z0-9_]*", what, name))
	return false
}

// Stage marks the start of the named stage (base, fine-tune, attacks, ...),
// which ends the previous one. The manifest records each stage's wall
// time; the time per step is the fine-tune stage's time over the steps.
func (r *Recorder) Stage(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endStage()
	r.stage = name
}

// endStage records the current stage, if any. r.mu is held.
func (r *Recorder) endStage() {
	t := r.now()
	if r.stage != "" {
		r.stages = append(r.stages, results.Stage{Name: r.stage, Seconds: t.Sub(r.stageAt).Seconds()})
	}
	r.stage, r.stageAt = "", t
}

// Steps records the number of optimisation steps the run took.
func (r *Recorder) Steps(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = n
}

// Metric records the value of a metric on a split at a step; it becomes a
// row of metrics.parquet. Names must match [a-z][a-z0-9_]*.
func (r *Recorder) Metric(step int64, split, name string, value float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checkName("metric", name) && r.checkName("split", split) {
		r.metrics = append(r.metrics, results.Metric{Step: step, Split: split, Name: name, Value: value})
	}
}

// Result records a final result of the run (acc, img, mia_auc, ...): a
// float column of runs.parquet and an entry of the manifest's results.
// Recording the same name again replaces the value.
func (r *Recorder) Result(name string, value float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checkName("result", name) {
		r.results[name] = value
	}
}

// Scores records per-example scores of an attack; they become rows of
// scores.parquet. The Attack field of each score is set to attack. The
// Recorder copies scores; the caller keeps ownership of the slice.
func (r *Recorder) Scores(attack string, scores []results.Score) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range scores {
		s.Attack = attack
		r.scores = append(r.scores, s)
	}
}

// Predictions records per-example outputs of the trained model; they
// become rows of predictions.parquet. An example (split and id) recorded
// twice fails the run. The Recorder copies rows.
func (r *Recorder) Predictions(rows []results.Prediction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.preds = append(r.preds, rows...)
}

// Privacy records the run's privacy record. If EpsilonTarget or Delta is
// zero, the runner fills it in from the config; if it is set, it must match
// the config. The achieved Epsilon must not exceed EpsilonTarget: the
// runner fails the run otherwise. It may be called once, and must be
// called by every run whose config has a finite ε.
func (r *Recorder) Privacy(p results.Privacy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.privacy != nil {
		r.errs = append(r.errs, errors.New("runners: privacy recorded twice"))
		return
	}
	p.Caveats = slices.Clone(p.Caveats)
	r.privacy = &p
}

// Warn records a warning: something to show beside the results, not an
// error (for example "accountant bound not tight").
func (r *Recorder) Warn(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}
