// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/privacy"
)

// A PanicError is the error of a run whose Executor panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// call runs e, turning a panic into a *PanicError.
func call(ctx context.Context, e Executor, r *Run, rec *Recorder) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return e(ctx, r, rec)
}

// execute runs r with e and records it; it returns the final manifest,
// or nil if the run was interrupted (see [StopContext]), in which case its
// folder is removed. A run whose manifest cannot be written (a full disk)
// has its folder removed too, so that no stale "running" manifest stays
// behind, and is returned failed.
func execute(ctx context.Context, r *Run, e Executor, prov results.Provenance, now func() time.Time) *results.Manifest {
	m := &results.Manifest{
		Format:     results.Format,
		RunID:      r.ID,
		Experiment: r.Experiment,
		Status:     results.Running,
		Config:     r.Config,
		Inputs:     r.Inputs,
		Started:    now().UTC(),
		Provenance: prov,
		LoadStart:  loadNow(),
	}
	// A previous attempt (failed, killed, or --fresh) may have left
	// files; start from an empty folder.
	if err := os.RemoveAll(r.Dir); err != nil {
		return fail(r, m, fmt.Errorf("runners: %w", err), now)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return fail(r, m, fmt.Errorf("runners: %w", err), now)
	}
	if err := results.WriteManifest(r.Dir, m); err != nil {
		return fail(r, m, err, now)
	}
	rec := newRecorder(now)
	err := call(ctx, e, r, rec)
	if err != nil && StopContext(ctx).Err() != nil && errors.Is(err, context.Canceled) {
		// Interrupted before it could finish: nothing to keep.
		os.RemoveAll(r.Dir)
		return nil
	}
	err = finish(r, m, rec, err, now)
	if err == nil {
		m.Files, err = results.HashFiles(r.Dir)
	}
	if err != nil {
		if pe, ok := errors.AsType[*PanicError](err); ok {
			m.Stack = string(pe.Stack)
		}
		m.Status, m.Error, m.Files = results.Failed, err.Error(), nil
	} else {
		m.Status = results.OK
	}
	if err := results.WriteManifest(r.Dir, m); err != nil {
		return fail(r, m, err, now)
	}
	return m
}

// fail records r as failed with err. The manifest is the only record of
// the failure: if even it cannot be written, the run's folder is removed
// (the next sweep runs it again) and the failure is only returned.
func fail(r *Run, m *results.Manifest, err error, now func() time.Time) *results.Manifest {
	m.Status, m.Error, m.Files = results.Failed, err.Error(), nil
	if pe, ok := errors.AsType[*PanicError](err); ok {
		m.Stack = string(pe.Stack)
	}
	m.Finished = now().UTC()
	m.Seconds = m.Finished.Sub(m.Started).Seconds()
	m.LoadEnd = loadNow()
	if results.WriteManifest(r.Dir, m) != nil {
		os.RemoveAll(r.Dir)
	}
	return m
}

// finish fills in m from what rec collected and writes the run's metrics
// and scores (even for a failed run: they help to see why). It returns the
// run's error: err, the recorder's, a bad privacy record, or a failed
// write.
func finish(r *Run, m *results.Manifest, rec *Recorder, err error, now func() time.Time) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.endStage()
	m.Finished = now().UTC()
	m.Seconds = m.Finished.Sub(m.Started).Seconds()
	m.LoadEnd = loadNow()
	m.Stages, m.Steps, m.Warnings = rec.stages, rec.steps, rec.warnings
	if m.Steps > 0 {
		for _, s := range m.Stages {
			if s.Name == "fine-tune" {
				m.SecondsPerStep += s.Seconds / float64(m.Steps)
			}
		}
	}
	m.PeakMemoryBytes = peakMemory()
	if len(rec.results) > 0 {
		m.Results = make(map[string]results.Float, len(rec.results))
		for k, v := range rec.results {
			m.Results[k] = results.Float(v)
		}
	}
	errs := []error{err}
	errs = append(errs, rec.errs...)
	if rec.privacy != nil {
		p := *rec.privacy
		errs = append(errs, checkPrivacy(&p, &r.Config))
		m.Privacy = &p
	} else if err == nil && !r.Config.Epsilon.Inf() {
		errs = append(errs, fmt.Errorf("runners: the run has a finite target ε = %v but recorded no privacy record", r.Config.Epsilon))
	}
	if len(rec.metrics) > 0 {
		errs = append(errs, results.WriteMetrics(filepath.Join(r.Dir, results.MetricsFile), rec.metrics))
	}
	if len(rec.scores) > 0 {
		errs = append(errs, results.WriteScores(filepath.Join(r.Dir, results.ScoresFile), rec.scores))
	}
	if len(rec.preds) > 0 {
		if err := uniquePredictions(rec.preds); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, results.WritePredictions(filepath.Join(r.Dir, results.PredictionsFile), rec.preds))
		}
	}
	return errors.Join(errs...)
}

// uniquePredictions returns an error if two rows of preds are of the same
// example (split and id): they could not be paired with another run's.
func uniquePredictions(preds []results.Prediction) error {
	seen := make(map[[2]string]bool, len(preds))
	for _, p := range preds {
		k := [2]string{p.Split, p.ExampleID}
		if seen[k] {
			return fmt.Errorf("runners: prediction of %s example %q recorded twice", p.Split, p.ExampleID)
		}
		seen[k] = true
	}
	return nil
}

// readsNothing reports whether p's mechanism is the empty composition, a
// release that reads no private record (ε = 0: the zero-shot baseline).
func readsNothing(p *results.Privacy) bool {
	ev, err := privacy.UnmarshalEvent(p.Events)
	c, ok := ev.(privacy.Composed)
	return err == nil && ok && len(c) == 0
}

// checkPrivacy fills in the target ε and δ of p from c and checks that the
// record matches the config and that the achieved ε does not exceed the
// target.
func checkPrivacy(p *results.Privacy, c *experiments.Config) error {
	if p.EpsilonTarget == 0 {
		p.EpsilonTarget = results.Float(c.Epsilon)
	}
	if p.Delta == 0 {
		p.Delta = c.Delta
	}
	switch {
	case float64(p.EpsilonTarget) != float64(c.Epsilon):
		return fmt.Errorf("runners: privacy record: target ε %v, but the config says %v", float64(p.EpsilonTarget), c.Epsilon)
	case p.Delta != c.Delta:
		return fmt.Errorf("runners: privacy record: δ %v, but the config says %v", p.Delta, c.Delta)
	case math.IsNaN(float64(p.Epsilon)) || p.Epsilon < 0 || p.Epsilon == 0 && !readsNothing(p):
		return fmt.Errorf("runners: privacy record: achieved ε is %v", float64(p.Epsilon))
	case p.Epsilon > p.EpsilonTarget:
		return fmt.Errorf("runners: privacy record: achieved ε %v exceeds the target %v", float64(p.Epsilon), float64(p.EpsilonTarget))
	case math.IsNaN(p.Sigma) || math.IsInf(p.Sigma, 0) || p.Sigma < 0:
		return fmt.Errorf("runners: privacy record: σ is %v", p.Sigma)
	}
	return nil
}
