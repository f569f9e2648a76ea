// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

const testSpec = `name: exp
description: a test sweep
scale: smoke
tasks: [fashion-vqa, shapes-vqa]
methods:
  - name: nonprivate
    sweep: {epsilon: [inf]}
  - name: dpsgd
sweep:
  epsilon: [1, 8]
  seed: [1, 2, 3]
attacks: [loss-mia]
`

func parse(t *testing.T, set ...string) *experiments.Spec {
	t.Helper()
	s, err := experiments.Parse("exp.yaml", []byte(testSpec), &experiments.Options{Overrides: set})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fake is an executor whose results depend only on the run's config. It
// sleeps a little, by an amount that does not depend on the config, so that
// runs finish in a different order from the one they started in.
func fake(ctx context.Context, r *Run, rec *Recorder) error {
	rng := rand.New(rand.NewPCG(uint64(r.Config.Seed), 1))
	rec.Stage("base")
	rec.Stage("fine-tune")
	for step := range int64(5) {
		rec.Metric(step, "train", "loss", rng.Float64())
	}
	rec.Steps(5)
	time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	rec.Stage("attacks")
	rec.Scores("loss-mia", []results.Score{{ExampleID: 1, Member: true, Score: rng.NormFloat64()}, {ExampleID: 2, Score: rng.NormFloat64()}})
	rec.Predictions([]results.Prediction{{Split: "test", ExampleID: "t/0", Prediction: "a", Correct: true, Loss: rng.Float64()},
		{Split: "test", ExampleID: "t/1", Prediction: "b", Loss: rng.Float64()}})
	acc := rng.Float64()
	if r.Config.Task == "shapes-vqa" {
		acc += 1
	}
	rec.Result("acc", acc)
	eps := float64(r.Config.Epsilon)
	if !r.Config.Epsilon.Inf() {
		eps *= 0.99
	}
	rec.Privacy(results.Privacy{Accountant: "rdp", Epsilon: results.Float(eps), Sigma: 1, SampleRate: 0.01, Steps: 5, Sampling: "poisson", Neighbouring: "add-remove", ClipNorm: 1})
	return nil
}

func TestSweep(t *testing.T) {
	root := t.TempDir()
	s := parse(t)
	var calls atomic.Int64
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		calls.Add(1)
		return fake(ctx, r, rec)
	}
	sum, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 3, Executor: exec})
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	// nonprivate: 2 tasks × 3 seeds; dpsgd: 2 tasks × 2 ε × 3 seeds.
	want := &Summary{Experiment: "exp", Planned: 18, Selected: 18, OK: 18}
	if diff := cmp.Diff(want, sum, cmpopts.IgnoreFields(Summary{}, "Elapsed")); diff != "" {
		t.Errorf("Sweep summary (-want +got):\n%s", diff)
	}
	runs, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 18 {
		t.Fatalf("runs.parquet has %d rows, want 18", len(runs))
	}
	plan, _ := Plan(s, &Options{Root: root})
	for i, r := range runs {
		p := plan[i]
		if r.RunID != p.ID || r.Status != results.OK || r.Method != p.Config.Method || r.Seed != p.Config.Seed || r.EpsilonTarget != float64(p.Config.Epsilon) {
			t.Errorf("runs.parquet row %d = %+v, want run %s %v ok", i, r, p.ID, &p.Config)
		}
		if r.Epsilon > r.EpsilonTarget || r.Delta != 1e-5 || r.Sigma != 1 || r.Steps != 5 {
			t.Errorf("runs.parquet row %d: ε %v (target %v), δ %v, σ %v, steps %d", i, r.Epsilon, r.EpsilonTarget, r.Delta, r.Sigma, r.Steps)
		}
		m, err := results.ReadManifest(p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		var stages []string
		for _, st := range m.Stages {
			stages = append(stages, st.Name)
		}
		if diff := cmp.Diff([]string{"base", "fine-tune", "attacks"}, stages); diff != "" {
			t.Errorf("run %s stages (-want +got):\n%s", p.ID, diff)
		}
		if m.Provenance.Jobs != 3 || m.Provenance.GoVersion == "" || m.Provenance.Device != "cpu" || m.PeakMemoryBytes == 0 || m.Finished.Before(m.Started) {
			t.Errorf("run %s manifest: provenance %+v, peak memory %d, %v → %v", p.ID, m.Provenance, m.PeakMemoryBytes, m.Started, m.Finished)
		}
		// What the run's time was measured under, in the manifest and
		// its row: the load where the system reports one.
		if _, ok := loadAvg(); ok != (m.LoadStart != nil) || ok != (m.LoadEnd != nil) {
			t.Errorf("run %s manifest: load %v → %v, want both recorded exactly when %s reads (%v)", p.ID, m.LoadStart, m.LoadEnd, loadavgFile, ok)
		}
		if m.LoadStart != nil && (r.LoadStart != *m.LoadStart || r.LoadEnd != *m.LoadEnd) {
			t.Errorf("runs.parquet row %d: load %v → %v, manifest %v → %v", i, r.LoadStart, r.LoadEnd, *m.LoadStart, *m.LoadEnd)
		}
		if r.GOMAXPROCS != int64(m.Provenance.GOMAXPROCS) || r.GOMAXPROCS < 1 || r.Jobs != 3 {
			t.Errorf("runs.parquet row %d: GOMAXPROCS %d, jobs %d; want the manifest's %d and 3", i, r.GOMAXPROCS, r.Jobs, m.Provenance.GOMAXPROCS)
		}
		scores, err := results.ReadScores(filepath.Join(p.Dir, results.ScoresFile))
		if err != nil || len(scores) != 2 || scores[0].Attack != "loss-mia" {
			t.Errorf("run %s scores: %v, %v", p.ID, scores, err)
		}
		preds, err := results.ReadPredictions(filepath.Join(p.Dir, results.PredictionsFile))
		if err != nil || len(preds) != 2 || preds[0].ExampleID != "t/0" || !preds[0].Correct || preds[1].Correct {
			t.Errorf("run %s predictions: %+v, %v", p.ID, preds, err)
		}
		if !slices.ContainsFunc(m.Files, func(f results.File) bool { return f.Name == results.PredictionsFile }) {
			t.Errorf("run %s: the manifest records no hash of %s: %+v", p.ID, results.PredictionsFile, m.Files)
		}
	}

	// Resume: a second sweep runs nothing; --fresh runs everything again;
	// --only selects.
	calls.Store(0)
	sum, err = Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: exec})
	if err != nil || calls.Load() != 0 || sum.Cached != 18 {
		t.Errorf("second Sweep: %d executor calls, %d cached, %v; want 0 calls, 18 cached", calls.Load(), sum.Cached, err)
	}
	calls.Store(0)
	sum, err = Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: exec, Fresh: true, Only: []string{"method=dpsgd,epsilon=8,task=shapes-vqa", plan[0].ID[:6]}})
	if err != nil || calls.Load() != 4 || sum.Selected != 4 || sum.OK != 4 {
		t.Errorf("fresh Sweep --only: %d executor calls, summary %+v, %v; want 4 calls", calls.Load(), sum, err)
	}
	// A run killed half way (manifest "running") is run again.
	m, _ := results.ReadManifest(plan[5].Dir)
	m.Status = results.Running
	results.WriteManifest(plan[5].Dir, m)
	calls.Store(0)
	if sum, err := Sweep(t.Context(), s, &Options{Root: root, Executor: exec}); err != nil || calls.Load() != 1 || sum.OK != 1 {
		t.Errorf("Sweep after a killed run: %d calls, %+v, %v; want 1 call", calls.Load(), sum, err)
	}
}

// TestDeviceProvenance checks that Options.Device is recorded in the
// manifest of every run, and that it does not enter the run ids: a run
// finished on the CPU counts as finished when the sweep asks for cuda.
func TestDeviceProvenance(t *testing.T) {
	root := t.TempDir()
	only := []string{"method=nonprivate,task=fashion-vqa,seed=1"}
	sum, err := Sweep(t.Context(), parse(t), &Options{Root: root, Executor: fake, Only: only, Device: "cuda"})
	if err != nil || sum.OK != 1 {
		t.Fatalf("Sweep on cuda: %+v, %v; want one run ok", sum, err)
	}
	cpu, _ := Plan(parse(t), &Options{Root: root})
	gpu, _ := Plan(parse(t), &Options{Root: root, Device: "cuda"})
	for i, p := range cpu {
		if gpu[i].ID != p.ID {
			t.Errorf("run %d: id %s on cuda, %s on the cpu; want the same", i, gpu[i].ID, p.ID)
		}
		if p.Config.Method == "nonprivate" && p.Config.Task == "fashion-vqa" && p.Config.Seed == 1 {
			m, err := results.ReadManifest(p.Dir)
			if err != nil || m.Provenance.Device != "cuda" {
				t.Errorf("manifest of run %s: %+v, %v; want device cuda", p.ID, m, err)
			}
		}
	}
	sum, err = Sweep(t.Context(), parse(t), &Options{Root: root, Executor: fake, Only: only})
	if err != nil || sum.Cached != 1 || sum.OK != 0 {
		t.Errorf("Sweep on the cpu after cuda: %+v, %v; want the run cached", sum, err)
	}
}

// TestPredictionsTwice checks that a run that records an example's
// prediction twice fails: its predictions could not pair with another
// run's.
func TestPredictionsTwice(t *testing.T) {
	root := t.TempDir()
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		rec.Predictions([]results.Prediction{{Split: "test", ExampleID: "t/0"}})
		return fake(ctx, r, rec)
	}
	sum, _ := Sweep(t.Context(), parse(t), &Options{Root: root, Executor: exec, Only: []string{"method=nonprivate,task=fashion-vqa,seed=1"}})
	plan, _ := Plan(parse(t), &Options{Root: root})
	var m *results.Manifest
	for _, p := range plan {
		if p.Config.Method == "nonprivate" && p.Config.Task == "fashion-vqa" && p.Config.Seed == 1 {
			m, _ = results.ReadManifest(p.Dir)
		}
	}
	if sum == nil || sum.Failed != 1 || m == nil || m.Status != results.Failed || !strings.Contains(m.Error, "recorded twice") {
		t.Errorf("got summary %+v, manifest %+v; want one run failed for a prediction recorded twice", sum, m)
	}
}

// TestReuse checks that a run finished by one experiment is copied, not
// run again, by another experiment with the same run.
func TestReuse(t *testing.T) {
	root := t.TempDir()
	if _, err := Sweep(t.Context(), parse(t), &Options{Root: root, Executor: fake}); err != nil {
		t.Fatal(err)
	}
	other := parse(t, "name=other", "sweep.seed=[2, 3, 4]")
	var calls atomic.Int64
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		calls.Add(1)
		return fake(ctx, r, rec)
	}
	sum, err := Sweep(t.Context(), other, &Options{Root: root, Executor: exec})
	// Seeds 2 and 3 are copied; seed 4 runs: 6 of 18 runs.
	if err != nil || calls.Load() != 6 || sum.Reused != 12 || sum.Cached != 12 || sum.OK != 6 {
		t.Fatalf("Sweep of another experiment: %d calls, %+v, %v; want 6 calls, 12 reused", calls.Load(), sum, err)
	}
	runs, err := results.ReadRuns(filepath.Join(root, "other", results.RunsFile))
	if err != nil || len(runs) != 18 {
		t.Fatalf("runs.parquet: %d rows, %v", len(runs), err)
	}
	for _, r := range runs {
		m, err := results.ReadManifest(results.RunDir(root, "other", r.RunID))
		if err != nil {
			t.Fatal(err)
		}
		wantFrom := ""
		if r.Seed != 4 {
			wantFrom = "exp"
			orig, err := results.ReadMetrics(filepath.Join(results.RunDir(root, "exp", r.RunID), results.MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			got, err := results.ReadMetrics(filepath.Join(results.RunDir(root, "other", r.RunID), results.MetricsFile))
			if err != nil || !cmp.Equal(orig, got) {
				t.Errorf("copied run %s: metrics differ from the original (%v)", r.RunID, err)
			}
		}
		if r.Experiment != "other" || m.CopiedFrom != wantFrom {
			t.Errorf("run %s (seed %d): experiment %s, copied from %q; want other, %q", r.RunID, r.Seed, r.Experiment, m.CopiedFrom, wantFrom)
		}
	}
	// Without executors, only the runs that were not copied are missing.
	if err := CheckExecutors(Pending(mustPlan(t, parse(t, "name=third", "sweep.seed=[3, 4, 5]"), root), &Options{Root: root}), nil); err == nil || !strings.Contains(err.Error(), "no executor") {
		t.Errorf("CheckExecutors: got %v, want an error for seed 5", err)
	}
	if err := CheckExecutors(Pending(mustPlan(t, parse(t, "name=third", "sweep.seed=[3, 4]"), root), &Options{Root: root}), nil); err != nil {
		t.Errorf("CheckExecutors for runs done elsewhere: %v", err)
	}
}

func mustPlan(t *testing.T, s *experiments.Spec, root string) []*Run {
	t.Helper()
	runs, err := Plan(s, &Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestDeterminism checks that results do not depend on the worker count.
func TestDeterminism(t *testing.T) {
	s := parse(t)
	read := func(jobs int) map[string]any {
		root := t.TempDir()
		if _, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: jobs, Executor: fake}); err != nil {
			t.Fatal(err)
		}
		runs, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]any)
		for _, r := range runs {
			metrics, err := results.ReadMetrics(filepath.Join(results.RunDir(root, "exp", r.RunID), results.MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			out[r.RunID] = []any{r.Results, r.Epsilon, metrics}
		}
		return out
	}
	one, four := read(1), read(4)
	if len(one) != 18 {
		t.Fatalf("got %d runs, want 18", len(one))
	}
	if diff := cmp.Diff(one, four); diff != "" {
		t.Errorf("results with 1 and 4 workers differ (-1 +4):\n%s", diff)
	}
}

func TestFailures(t *testing.T) {
	s := parse(t)
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		switch {
		case r.Config.Method == "dpsgd" && r.Config.Seed == 2 && r.Config.Epsilon == 1:
			rec.Metric(0, "train", "loss", 1)
			return errors.New("diverged")
		case r.Config.Method == "nonprivate" && r.Config.Seed == 3:
			var m map[string]int
			//lint:ignore SA5000 a real runtime panic is the point
			m["x"]++
		case r.Config.Method == "dpsgd" && r.Config.Seed == 3 && r.Config.Epsilon == 8:
			rec.Privacy(results.Privacy{Epsilon: 9}) // exceeds the target
			return nil
		case r.Config.Method == "dpsgd" && r.Config.Seed == 1 && r.Config.Epsilon == 8:
			rec.Result("Bad Name", 1)
		case r.Config.Method == "dpsgd" && r.Config.Seed == 1 && r.Config.Epsilon == 1:
			return nil // a DP run without a privacy record
		}
		return fake(ctx, r, rec)
	}
	root := t.TempDir()
	var progress bytes.Buffer
	sum, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: exec, Progress: &progress})
	if err == nil || !strings.Contains(err.Error(), "10 of 18 runs of exp failed") {
		t.Errorf("Sweep: got error %v, want 10 of 18 failed", err)
	}
	if sum.OK != 8 || sum.Failed != 10 || len(sum.Failures) != 10 {
		t.Errorf("Sweep summary %+v, want 8 ok and 10 failed", sum)
	}
	runs, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
	if err != nil || len(runs) != 18 {
		t.Fatalf("runs.parquet: %d rows, %v; want 18", len(runs), err)
	}
	var msgs []string
	for _, r := range runs {
		if r.Status != results.Failed {
			continue
		}
		m, err := results.ReadManifest(results.RunDir(root, "exp", r.RunID))
		if err != nil {
			t.Fatal(err)
		}
		if m.Error != r.Error {
			t.Errorf("run %s: runs.parquet error %q, manifest %q", r.RunID, r.Error, m.Error)
		}
		if strings.HasPrefix(m.Error, "panic:") != (m.Stack != "") || strings.HasPrefix(m.Error, "panic:") && !strings.Contains(m.Stack, "sweep_test.go") {
			t.Errorf("run %s: error %q with stack %q", r.RunID, m.Error, m.Stack)
		}
		msgs = append(msgs, firstLine(m.Error))
		if m.Error == "diverged" {
			// The failed run's metrics are kept.
			metrics, err := results.ReadMetrics(filepath.Join(results.RunDir(root, "exp", r.RunID), results.MetricsFile))
			if err != nil || len(metrics) != 1 {
				t.Errorf("failed run %s: metrics %v, %v; want the one recorded", r.RunID, metrics, err)
			}
		}
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{"diverged", "panic: assignment to entry in nil map", "achieved ε 9 exceeds the target 8", `result name "Bad Name"`, "finite target ε = 1 but recorded no privacy record"} {
		if !strings.Contains(got, want) {
			t.Errorf("failed runs' errors:\n%s\nwant one containing %q", got, want)
		}
	}
	if !strings.Contains(progress.String(), "failed: diverged") || !strings.Contains(progress.String(), "18 runs: 8 ok, 10 failed, 0 not run, 0 cached") {
		t.Errorf("progress output:\n%s\nwant a line per failure and a summary", progress.String())
	}

	// Resume reruns only the failed runs.
	var calls atomic.Int64
	sum, err = Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: func(ctx context.Context, r *Run, rec *Recorder) error {
		calls.Add(1)
		return fake(ctx, r, rec)
	}})
	if err != nil || calls.Load() != 10 || sum.Cached != 8 {
		t.Errorf("Sweep after failures: %d calls, %+v, %v; want 10 calls", calls.Load(), sum, err)
	}
}

func TestFailFast(t *testing.T) {
	s := parse(t)
	var calls atomic.Int64
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		if calls.Add(1) == 2 {
			return errors.New("boom")
		}
		return fake(ctx, r, rec)
	}
	root := t.TempDir()
	sum, err := Sweep(t.Context(), s, &Options{Root: root, Jobs: 1, Executor: exec, FailFast: true})
	if err == nil || !strings.Contains(err.Error(), "stopped by --fail-fast: 16 runs not run") || errors.Is(err, context.Canceled) {
		t.Errorf("Sweep --fail-fast: got %v, want 16 runs not run", err)
	}
	if sum.OK != 1 || sum.Failed != 1 || sum.NotStarted != 16 || calls.Load() != 2 {
		t.Errorf("Sweep --fail-fast: %+v after %d calls; want 1 ok, 1 failed, 16 not run", sum, calls.Load())
	}
	// Interrupted at once, the second attempt runs nothing: the failed
	// run's old manifest does not count as a failure of this sweep.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sum, err = Sweep(ctx, s, &Options{Root: root, Jobs: 1, Executor: exec})
	if !errors.Is(err, context.Canceled) || sum.Failed != 0 || sum.NotStarted != 17 || sum.Cached != 1 {
		t.Errorf("interrupted Sweep after a failure: %+v, %v; want 17 not run, 0 failed", sum, err)
	}
}

// TestInterrupt checks the first-signal behaviour: no new run starts, the
// runs in progress finish and are recorded.
func TestInterrupt(t *testing.T) {
	s := parse(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var started sync.WaitGroup
	started.Add(2)
	var calls atomic.Int64
	exec := func(c context.Context, r *Run, rec *Recorder) error {
		calls.Add(1)
		started.Done()
		started.Wait() // both workers are busy: now interrupt
		cancel()
		time.Sleep(10 * time.Millisecond)
		if c.Err() != nil {
			return errors.New("the executor's context was cancelled by the first interrupt")
		}
		return fake(c, r, rec)
	}
	root := t.TempDir()
	sum, err := Sweep(ctx, s, &Options{Root: root, Jobs: 2, Executor: exec})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted: 16 runs not run") {
		t.Errorf("interrupted Sweep: got %v, want interrupted, 16 runs not run, wrapping context.Canceled", err)
	}
	if sum.OK != 2 || sum.NotStarted != 16 || calls.Load() != 2 {
		t.Errorf("interrupted Sweep: %+v after %d calls; want 2 ok, 16 not run", sum, calls.Load())
	}
	runs, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
	if err != nil || len(runs) != 2 {
		t.Errorf("runs.parquet after an interrupt: %d rows, %v; want 2", len(runs), err)
	}
}

func TestNoExecutor(t *testing.T) {
	root := t.TempDir()
	_, err := Sweep(t.Context(), parse(t), &Options{Root: root})
	if err == nil || !strings.Contains(err.Error(), "no executor for method nonprivate, dpsgd") {
		t.Errorf("Sweep with no executors: got %v, want an error naming nonprivate and dpsgd", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("Sweep with no executors wrote %d entries, want none", len(ents))
	}
}

var registerCount atomic.Int64

func TestRegister(t *testing.T) {
	name := fmt.Sprint("test-method-", registerCount.Add(1)) // -count=N registers anew
	Register(name, fake)
	if _, ok := Lookup(name); !ok {
		t.Errorf("Lookup after Register: not found")
	}
	defer func() {
		if recover() == nil {
			t.Errorf("second Register: no panic")
		}
	}()
	Register(name, fake)
}

func TestSelect(t *testing.T) {
	s := parse(t, "sweep.beta=[0.5, 1]")
	runs, err := Plan(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		only []string
		want int
		err  string
	}{
		{nil, 36, ""},
		{[]string{"method=nonprivate"}, 12, ""},
		{[]string{"method=dpsgd,epsilon=1,seed=2"}, 4, ""},
		{[]string{"epsilon=inf"}, 12, ""},
		{[]string{"beta=0.50"}, 18, ""},
		{[]string{"task=shapes-vqa,beta=1", "method=nonprivate"}, 9 + 12 - 3, ""},
		{[]string{runs[7].ID}, 1, ""},
		{[]string{"method=dpzo"}, 0, `no run matches "method=dpzo"`},
		{[]string{"method"}, 0, `no run matches "method"`},
		{[]string{"=x"}, 0, "bad --only condition"},
	} {
		got, err := Select(runs, tc.only)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Select(%q): got %v, want error %q", tc.only, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != tc.want {
			t.Errorf("Select(%q): got %d runs, %v; want %d", tc.only, len(got), err, tc.want)
		}
	}
}

func TestPlanInputs(t *testing.T) {
	s := parse(t)
	a, _ := Plan(s, nil)
	b, err := Plan(s, &Options{Inputs: func(c *experiments.Config) (experiments.Inputs, error) {
		return experiments.Inputs{Data: "data-" + c.Task, Base: "base-" + c.Scale}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].ID == b[i].ID || b[i].ID != b[i].Config.ID(b[i].Inputs) || b[i].Inputs.Data != "data-"+b[i].Config.Task {
			t.Errorf("run %d: id %s without inputs, %s with %+v", i, a[i].ID, b[i].ID, b[i].Inputs)
		}
	}
	_, err = Plan(s, &Options{Inputs: func(*experiments.Config) (experiments.Inputs, error) {
		return experiments.Inputs{}, errors.New("no data")
	}})
	if err == nil || !strings.Contains(err.Error(), "no data") {
		t.Errorf("Plan with failing inputs: got %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	var b bytes.Buffer
	p := newProgress(&b, time.Hour, "exp", 10, 2, now, nil)
	defer p.close()
	p.started(nil)
	clock = clock.Add(30 * time.Second)
	p.finished(&Run{}, &results.Manifest{Status: results.OK})
	p.started(nil)
	p.mu.Lock()
	got := p.line()
	p.mu.Unlock()
	// 1 run in 30 s, 9 left: ETA 4m30s.
	want := "exp: 1/10 runs done (0 failed, 1 running, 2 cached), 30s elapsed, ETA 4m30s"
	if got != want {
		t.Errorf("progress line:\n got %q\nwant %q", got, want)
	}
	if first := strings.Split(b.String(), "\n")[0]; first != "exp: 0/10 runs done (0 failed, 0 running, 2 cached), 0s elapsed, ETA ?" {
		t.Errorf("first progress line %q", first)
	}
}

// TestProgressFirstLinePrior checks that the first progress line of a
// sweep carries the estimate of a prior, marked as such, not "ETA ?",
// which it shows only without one: the runs recorded before under the
// same results folder, else the checked-in timings (Options.Timings, here
// a table at small converted to smoke: nonprivate's 100 s run at small,
// times the ratio of dpsgd's runs, 10 s at smoke against 40 s at small,
// is 25 s a run, 50 s for two on one worker).
func TestProgressFirstLinePrior(t *testing.T) {
	root := t.TempDir()
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		rec.Stage("fine-tune")
		time.Sleep(time.Millisecond) // a run's recorded seconds must be > 0 to teach the prior
		rec.Result("acc", 0.5)
		return nil
	}
	none := fstest.MapFS{}
	tables := t.TempDir()
	ok := func(method, scale string, secs float64) results.Run {
		return results.Run{Status: results.OK, Method: method, Task: "fashion-vqa", Scale: scale, Seconds: secs}
	}
	if err := results.WriteRuns(filepath.Join(tables, "x-small.parquet"), []results.Run{ok("nonprivate", "small", 100), ok("dpsgd", "small", 40)}); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteRuns(filepath.Join(tables, "x-smoke.parquet"), []results.Run{ok("dpsgd", "smoke", 10)}); err != nil {
		t.Fatal(err)
	}
	first := func(name, seeds string, timings fs.FS) string {
		t.Helper()
		spec, err := experiments.Parse(name+".yaml", []byte("name: "+name+`
description: a test
scale: smoke
tasks: [fashion-vqa]
methods: [{name: nonprivate}]
sweep: {seed: [`+seeds+`]}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := Sweep(context.Background(), spec, &Options{Root: root, Jobs: 1, Executor: exec, Progress: &b, ProgressInterval: time.Hour, Timings: timings}); err != nil {
			t.Fatal(err)
		}
		return strings.Split(b.String(), "\n")[0]
	}
	// Nothing recorded yet, nothing checked in: nothing to tell.
	if l := first("a", "1, 2", none); !strings.HasPrefix(l, "a: 0/2 runs done") || !strings.HasSuffix(l, ", ETA ?") {
		t.Errorf("first line without a prior: %q, want 0/2 runs done and ETA ?", l)
	}
	// The runs of a: a prior for nonprivate/fashion-vqa, which the
	// checked-in timings do not override.
	for i, timings := range []fs.FS{none, os.DirFS(tables)} {
		l := first("b", fmt.Sprintf("%d, %d", 3+2*i, 4+2*i), timings)
		if !strings.HasPrefix(l, "b: 0/2 runs done") || !strings.Contains(l, ", ETA ~") || !strings.HasSuffix(l, " (from recorded runs)") {
			t.Errorf("first line with a recorded prior: %q, want 0/2 runs done and an ETA from the recorded runs", l)
		}
	}
	// A fresh results folder: the checked-in timings.
	root = t.TempDir()
	if l, want := first("c", "1, 2", os.DirFS(tables)), "c: 0/2 runs done (0 failed, 0 running, 0 cached), 0s elapsed, ETA ~50s (from checked-in timings)"; !strings.HasPrefix(l, "c: 0/2 runs done") || !strings.HasSuffix(l, "elapsed, ETA ~50s (from checked-in timings)") {
		t.Errorf("first line with the checked-in timings: %q, want %q", l, want)
	}
}

func ExampleSweep() {
	spec, err := experiments.Parse("example.yaml", []byte(`name: example
description: an example
tasks: [fashion-vqa]
methods: [{name: dpsgd}]
sweep: {epsilon: [1, 8], seed: [1, 2]}
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	root, _ := os.MkdirTemp("", "repro-example")
	defer os.RemoveAll(root)
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		rec.Stage("fine-tune")
		rec.Result("acc", 0.5+0.01*float64(r.Config.Epsilon))
		rec.Privacy(results.Privacy{Accountant: "rdp", Epsilon: results.Float(r.Config.Epsilon) * 0.99, Sigma: 1, SampleRate: 0.01, Steps: 100, Sampling: "poisson", Neighbouring: "add-remove", ClipNorm: 1})
		return nil
	}
	sum, err := Sweep(context.Background(), spec, &Options{Root: root, Jobs: 2, Executor: exec})
	fmt.Println(sum.OK, sum.Failed, err)
	runs, _ := results.ReadRuns(filepath.Join(root, "example", "runs.parquet"))
	for _, r := range runs {
		fmt.Printf("%s ε=%v/%v seed=%d acc=%.2f\n", r.Method, r.Epsilon, r.EpsilonTarget, r.Seed, r.Results["acc"])
	}
	// Output:
	// 4 0 <nil>
	// dpsgd ε=0.99/1 seed=1 acc=0.51
	// dpsgd ε=0.99/1 seed=2 acc=0.51
	// dpsgd ε=7.92/8 seed=1 acc=0.58
	// dpsgd ε=7.92/8 seed=2 acc=0.58
}

// TestProgressTerminal checks the terminal mode: one line rewritten in
// place (carriage return, erase to end of line), failures on lines of
// their own, and the summary on a fresh line.
func TestProgressTerminal(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	p := &progress{w: &b, tty: true, exp: "exp", total: 2, now: func() time.Time { return clock }, start: clock}
	p.started(nil)
	clock = clock.Add(time.Second)
	p.finished(&Run{ID: "abc", Config: experiments.Config{Method: "dpsgd", Task: "t", Epsilon: 1}}, &results.Manifest{Status: results.Failed, Error: "boom\nmore"})
	p.summary(&Summary{Experiment: "exp", Selected: 2, OK: 1, Failed: 1, Elapsed: 2 * time.Second})
	want := "\rexp: 0/2 runs done (0 failed, 1 running, 0 cached), 0s elapsed, ETA ?\x1b[K" +
		"\r\x1b[Kexp: run abc (dpsgd t ε=1 seed=0) failed: boom\n" +
		"\rexp: 1/2 runs done (1 failed, 0 running, 0 cached), 1s elapsed, ETA 1s\x1b[K" +
		"\r\x1b[Kexp: 2 runs: 1 ok, 1 failed, 0 not run, 0 cached; 2s\n"
	if got := b.String(); got != want {
		t.Errorf("terminal progress:\n got %q\nwant %q", got, want)
	}
}

// TestBusy checks that a run another process holds is waited for: adopted
// if the other process finishes it, run here if it leaves it unfinished,
// and reported as busy if the sweep is interrupted while it waits.
func TestBusy(t *testing.T) {
	if _, ok, _ := tryLock(filepath.Join(t.TempDir(), "probe")); !ok {
		t.Skip("no file locks here")
	}
	for _, tc := range []struct {
		desc      string
		other     func(t *testing.T, r *Run) // what the holder does before it lets go
		interrupt bool
		want      counts
		err       string
	}{
		{"the holder finishes it", func(t *testing.T, r *Run) {
			if m := execute(context.Background(), r, fake, results.CurrentProvenance(), time.Now); m.Status != results.OK {
				t.Errorf("the holder's run: %+v", m)
			}
		}, false, counts{OK: 17, Adopted: 1}, ""},
		{"the holder gives up", func(*testing.T, *Run) {}, false, counts{OK: 18}, ""},
		{"interrupted while waiting", nil, true, counts{OK: 17, Busy: 1}, "1 runs of exp are being run by another process"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			root := t.TempDir()
			s := parse(t)
			plan := mustPlan(t, s, root)
			os.MkdirAll(filepath.Dir(lockFile(plan[3])), 0o755)
			unlock, ok, err := tryLock(lockFile(plan[3])) // a separate open file: flock(2) locks conflict
			if err != nil || !ok {
				t.Fatalf("tryLock: %v, %v", ok, err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var done atomic.Int64
			exec := func(ctx context.Context, r *Run, rec *Recorder) error {
				defer done.Add(1)
				return fake(ctx, r, rec)
			}
			go func() {
				// Let go once the sweep has run everything else.
				for done.Load() < 17 {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
				if tc.interrupt {
					cancel()
					return
				}
				tc.other(t, plan[3])
				unlock()
			}()
			sum, err := Sweep(ctx, s, &Options{Root: root, Jobs: 2, Executor: exec})
			if tc.interrupt {
				unlock()
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Sweep: %v, want error %q", err, tc.err)
			}
			got := counts{OK: sum.OK, Adopted: sum.Adopted, Busy: sum.Busy, Failed: sum.Failed, NotStarted: sum.NotStarted}
			if got != tc.want {
				t.Errorf("Sweep with a locked run: %+v, want %+v", got, tc.want)
			}
			if rows, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile)); err != nil || len(rows) != 18-tc.want.Busy {
				t.Errorf("runs.parquet: %d rows, %v; want %d", len(rows), err, 18-tc.want.Busy)
			}
		})
	}
}

// counts are the outcome counts of a Summary.
type counts struct{ OK, Failed, NotStarted, Adopted, Busy int }

// TestConcurrentSweeps runs two sweeps of one folder at once (flock(2)
// locks of separate open files conflict as between processes): every run
// is executed once, each sweep accounts for every run, neither fails, and
// both see the final state.
func TestConcurrentSweeps(t *testing.T) {
	if _, ok, _ := tryLock(filepath.Join(t.TempDir(), "probe")); !ok {
		t.Skip("no file locks here")
	}
	root := t.TempDir()
	s := parse(t)
	var calls atomic.Int64
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		calls.Add(1)
		time.Sleep(2 * time.Millisecond)
		return fake(ctx, r, rec)
	}
	var wg sync.WaitGroup
	sums := make([]*Summary, 2)
	errs := make([]error, 2)
	for i := range sums {
		wg.Go(func() { sums[i], errs[i] = Sweep(t.Context(), s, &Options{Root: root, Jobs: 2, Executor: exec}) })
	}
	wg.Wait()
	ok := 0
	for i, sum := range sums {
		if errs[i] != nil {
			t.Errorf("sweep %d: %v", i, errs[i])
		}
		if n := sum.OK + sum.Adopted + sum.Cached; n != 18 || sum.Failed+sum.Busy+sum.NotStarted != 0 {
			t.Errorf("sweep %d: %+v, want ok + adopted + cached = 18", i, sum)
		}
		ok += sum.OK
	}
	if ok != 18 || calls.Load() != 18 {
		t.Errorf("the two sweeps executed %d runs and counted %d ok, want 18 each", calls.Load(), ok)
	}
	rows, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
	if err != nil || len(rows) != 18 {
		t.Errorf("runs.parquet: %d rows, %v; want 18", len(rows), err)
	}
	for _, r := range rows {
		if r.Status != results.OK {
			t.Errorf("runs.parquet: run %s is %s", r.RunID, r.Status)
		}
	}
}
