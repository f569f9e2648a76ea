// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// Options configures [Plan] and [Sweep]. A nil *Options means the zero
// value, whose defaults are given with each field.
type Options struct {
	// Root is the results folder; "" means "results".
	Root string
	// Jobs is the number of runs executed at once by the default Local
	// backend; ≤ 0 means runtime.NumCPU().
	Jobs int
	// Only selects runs; see [Select]. Empty means every run.
	Only []string
	// Fresh runs the selected runs again even if they are finished.
	Fresh bool
	// FailFast stops starting runs after the first failed one.
	FailFast bool
	// Executor executes every run; nil means the Executor registered for
	// each run's method ([Register]).
	Executor Executor
	// Inputs returns the inputs of a run (data fingerprint, base
	// checkpoint hash), which are part of its id; nil means the function
	// given to [RegisterInputs], or zero Inputs if there is none.
	Inputs func(*experiments.Config) (experiments.Inputs, error)
	// Backend executes the pending runs; nil means Local{Jobs}.
	Backend Backend
	// Progress receives progress lines; nil means none. On a terminal
	// it is one line, updated in place; otherwise a line every
	// ProgressInterval (0 means 10s) and one per failed run.
	Progress io.Writer
	// ProgressInterval is the interval between progress lines when
	// Progress is not a terminal; 0 means 10 seconds.
	ProgressInterval time.Duration
	// now is the clock; nil means time.Now (tests replace it).
	now func() time.Time
}

func (o *Options) root() string {
	if o.Root == "" {
		return "results"
	}
	return o.Root
}

func defaultJobs() int { return runtime.NumCPU() }

// Plan returns the runs of spec with their inputs, ids and folders, in
// expansion order.
func Plan(spec *experiments.Spec, opts *Options) ([]*Run, error) {
	if opts == nil {
		opts = &Options{}
	}
	inputs := opts.Inputs
	if inputs == nil {
		inputs = registeredInputs()
	}
	var runs []*Run
	seen := make(map[string]bool)
	for _, c := range spec.Expand() {
		var in experiments.Inputs
		if inputs != nil {
			var err error
			if in, err = inputs(&c); err != nil {
				return nil, fmt.Errorf("runners: inputs of %v: %w", &c, err)
			}
		}
		id := c.ID(in)
		if seen[id] {
			// Expand never repeats a config; equal ids would be a
			// hash collision or a bug.
			return nil, fmt.Errorf("runners: two runs of %s have the id %s", spec.Name, id)
		}
		seen[id] = true
		runs = append(runs, &Run{Experiment: spec.Name, ID: id, Config: c, Inputs: in, Dir: results.RunDir(opts.root(), spec.Name, id)})
	}
	return runs, nil
}

// Select returns the runs that match any of the filters in only (all runs
// if only is empty). A filter is a run id prefix, or comma-separated
// key=value conditions that must all hold: method, task, scale, seed,
// epsilon (inf for ∞), or any param (`method=dpsgd,epsilon=8`). A filter
// that matches no run is an error.
func Select(runs []*Run, only []string) ([]*Run, error) {
	if len(only) == 0 {
		return runs, nil
	}
	keep := make([]bool, len(runs))
	for _, f := range only {
		n := 0
		for i, r := range runs {
			ok, err := matches(r, f)
			if err != nil {
				return nil, err
			}
			if ok {
				n++
				keep[i] = true
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("runners: no run matches %q", f)
		}
	}
	var out []*Run // in the plan's order
	for i, r := range runs {
		if keep[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

func matches(r *Run, filter string) (bool, error) {
	if !strings.Contains(filter, "=") {
		if filter == "" {
			return false, errors.New("runners: empty --only filter")
		}
		return strings.HasPrefix(r.ID, filter), nil
	}
	for cond := range strings.SplitSeq(filter, ",") {
		k, v, ok := strings.Cut(cond, "=")
		if !ok || k == "" {
			return false, fmt.Errorf("runners: bad --only condition %q: want key=value", cond)
		}
		var got string
		switch k {
		case "method":
			got = r.Config.Method
		case "task":
			got = r.Config.Task
		case "scale":
			got = r.Config.Scale
		case "seed":
			got = strconv.FormatInt(r.Config.Seed, 10)
		case "epsilon", "epsilon_target":
			got = r.Config.Epsilon.String()
		default:
			p, ok := r.Config.Params[k]
			if !ok {
				return false, nil
			}
			if f, ok := p.(float64); ok {
				got = experiments.FormatFloat(f)
			} else {
				got = fmt.Sprint(p)
			}
		}
		if got != v && !numEqual(got, v) {
			return false, nil
		}
	}
	return true, nil
}

// numEqual reports whether a and b are equal numbers (8 and 8.0).
func numEqual(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// A Summary counts the outcome of a sweep.
type Summary struct {
	Experiment string
	// Planned is the number of runs of the spec; Selected the number
	// --only selected; Cached the selected runs already finished, Reused
	// of which were copied from another experiment's finished run with
	// the same id.
	Planned, Selected, Cached, Reused int
	// OK, Failed and NotStarted count the pending runs by outcome.
	// NotStarted includes runs a killed backend left "running"; Busy
	// counts the runs another process was running (they are locked).
	OK, Failed, NotStarted, Busy int
	// Failures lists the failed runs: id, config and error.
	Failures []Failure
	// Elapsed is the wall time of the sweep.
	Elapsed time.Duration
}

// A Failure is a failed run.
type Failure struct {
	ID     string
	Config string
	Err    string
}

// Sweep executes the runs of spec as described in the package
// documentation and returns a summary. The error is non-nil if a run
// failed, if ctx was cancelled before every pending run started, or if the
// sweep could not be started or recorded; the summary is valid whenever
// the sweep started.
func Sweep(ctx context.Context, spec *experiments.Spec, opts *Options) (*Summary, error) {
	if opts == nil {
		opts = &Options{}
	}
	now := opts.now
	if now == nil {
		now = time.Now
	}
	start := now()
	all, err := Plan(spec, opts)
	if err != nil {
		return nil, err
	}
	selected, err := Select(all, opts.Only)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Experiment: spec.Name, Planned: len(all), Selected: len(selected)}
	var pending []*Run
	for _, r := range selected {
		if !opts.Fresh && results.Finished(r.Dir) {
			sum.Cached++
			continue
		}
		pending = append(pending, r)
	}
	// Every pending run needs an executor, unless another experiment has
	// already run it: fail before starting any.
	if !opts.Fresh {
		if err := CheckExecutors(slices.DeleteFunc(slices.Clone(pending), func(r *Run) bool { return finishedElsewhere(opts.root(), r) != "" }), opts); err != nil {
			return nil, err
		}
		var left []*Run
		for _, r := range pending {
			if src := finishedElsewhere(opts.root(), r); src != "" {
				if err := copyRun(src, r); err == nil {
					sum.Cached++
					sum.Reused++
					continue
				}
			}
			left = append(left, r)
		}
		pending = left
	}
	exec := opts.Executor
	if err := CheckExecutors(pending, opts); err != nil {
		return nil, err
	}
	expDir := filepath.Join(opts.root(), spec.Name)
	for _, d := range []string{"runs", ".locks"} {
		if err := os.MkdirAll(filepath.Join(expDir, d), 0o755); err != nil {
			return nil, fmt.Errorf("runners: %w", err)
		}
	}
	// A sweep killed while writing runs.parquet leaves its temporary
	// file behind (run folders are emptied before a run starts).
	if stale, _ := filepath.Glob(filepath.Join(expDir, "."+results.RunsFile+".tmp*")); len(stale) > 0 {
		for _, f := range stale {
			os.Remove(f)
		}
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	backend := opts.Backend
	if backend == nil {
		backend = Local{Jobs: jobs}
	}
	prog := newProgress(opts.Progress, opts.ProgressInterval, spec.Name, len(pending), sum.Cached, now)
	defer prog.close()

	// stop is cancelled by ctx or by the first failure under FailFast;
	// the runs in progress get a context that neither cancels.
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	runCtx := context.WithoutCancel(ctx)
	prov := results.CurrentProvenance()
	prov.Jobs = jobs
	var (
		mu   sync.Mutex
		busy []*Run // runs another process holds
	)
	dispatchErr := backend.Dispatch(stop, pending, func(r *Run) {
		e := exec
		if e == nil {
			e, _ = Lookup(r.Config.Method)
		}
		// Another repro process sweeping the same folder may hold the
		// run, or have finished it since we looked.
		unlock, ok, err := tryLock(lockFile(r))
		if err == nil && !ok {
			mu.Lock()
			busy = append(busy, r)
			mu.Unlock()
			prog.skipped()
			return
		}
		if ok {
			defer unlock()
		}
		if !opts.Fresh && results.Finished(r.Dir) {
			prog.skipped()
			return
		}
		prog.started()
		m := execute(runCtx, r, e, prov, now)
		prog.finished(r, m)
		if m.Status != results.OK && opts.FailFast {
			cancel()
		}
	})

	// Outcomes come from disk, whichever backend ran the runs. A
	// manifest from before this sweep is a previous attempt's.
	for _, r := range pending {
		m, err := results.ReadManifest(r.Dir)
		switch {
		case slices.Contains(busy, r):
			sum.Busy++
		case err == nil && m.Status == results.OK && m.Started.Before(start):
			sum.Cached++ // finished by another process since we looked
		case err != nil || m.Status == results.Running || m.Started.Before(start):
			sum.NotStarted++
		case m.Status == results.OK:
			sum.OK++
		default:
			sum.Failed++
			sum.Failures = append(sum.Failures, Failure{ID: r.ID, Config: r.Config.String(), Err: m.Error})
		}
	}
	recErr := WriteRuns(opts.root(), spec.Name, all)
	sum.Elapsed = now().Sub(start)
	prog.summary(sum)

	var errs []error
	if sum.Failed > 0 {
		errs = append(errs, fmt.Errorf("runners: %d of %d runs of %s failed (first: %s: %s)", sum.Failed, len(pending), spec.Name, sum.Failures[0].ID, sum.Failures[0].Err))
	}
	if sum.Busy > 0 {
		errs = append(errs, fmt.Errorf("runners: %d runs of %s are being run by another process; run again when it is done", sum.Busy, spec.Name))
	}
	if sum.NotStarted > 0 {
		cause := "stopped"
		if ctx.Err() != nil {
			cause = "interrupted"
		} else if sum.Failed > 0 && opts.FailFast {
			cause = "stopped by --fail-fast"
		}
		var err error
		switch {
		case ctx.Err() != nil:
			err = context.Cause(ctx)
		case cause == "stopped":
			err = dispatchErr
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("runners: %s: %d runs not run: %w", cause, sum.NotStarted, err))
		} else {
			errs = append(errs, fmt.Errorf("runners: %s: %d runs not run", cause, sum.NotStarted))
		}
	} else if dispatchErr != nil && !errors.Is(dispatchErr, context.Canceled) {
		errs = append(errs, fmt.Errorf("runners: %w", dispatchErr))
	}
	if recErr != nil {
		errs = append(errs, recErr)
	}
	return sum, errors.Join(errs...)
}

// CheckExecutors returns an error naming the methods of runs that have no
// Executor: none if opts.Executor is set, else those not registered.
func CheckExecutors(runs []*Run, opts *Options) error {
	if opts != nil && opts.Executor != nil {
		return nil
	}
	var missing []string
	for _, r := range runs {
		if _, ok := Lookup(r.Config.Method); !ok && !slices.Contains(missing, r.Config.Method) {
			missing = append(missing, r.Config.Method)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("runners: no executor for method %s: not implemented in this build (registered: %s); --dry-run lists the runs",
			strings.Join(missing, ", "), orNone(Registered()))
	}
	return nil
}

// Pending returns the runs that [Sweep] would execute: all of them if
// opts.Fresh, else those that are not finished, here or in another
// experiment under opts.Root.
func Pending(runs []*Run, opts *Options) []*Run {
	if opts == nil {
		opts = &Options{}
	}
	var out []*Run
	for _, r := range runs {
		if opts.Fresh || !results.Finished(r.Dir) && finishedElsewhere(opts.root(), r) == "" {
			out = append(out, r)
		}
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// WriteRuns writes root/exp/runs.parquet from the manifests of runs; runs
// without a manifest are left out.
func WriteRuns(root, exp string, runs []*Run) error {
	var rows []results.Run
	for _, r := range runs {
		m, err := results.ReadManifest(r.Dir)
		if err != nil {
			continue
		}
		rows = append(rows, results.RunOf(m))
	}
	if err := results.WriteRuns(filepath.Join(root, exp, results.RunsFile), rows); err != nil {
		return fmt.Errorf("runners: %w", err)
	}
	return nil
}

// lockFile returns the lock file of r, results/<exp>/.locks/<id>.lock (not
// in the run's folder, which is emptied when the run starts).
func lockFile(r *Run) string {
	return filepath.Join(filepath.Dir(filepath.Dir(r.Dir)), ".locks", r.ID+".lock")
}

// finishedElsewhere returns the folder of a finished run with r's id in
// another experiment under root, or "".
func finishedElsewhere(root string, r *Run) string {
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "runs", r.ID))
	for _, d := range dirs {
		if filepath.Clean(d) != filepath.Clean(r.Dir) && results.Finished(d) {
			return d
		}
	}
	return ""
}

// copyRun copies the finished run in src to r.Dir: the same id means the
// same config and inputs, hence the same results. Every file is copied
// atomically, the manifest last, with r's experiment and CopiedFrom set.
func copyRun(src string, r *Run) error {
	m, err := results.ReadManifest(src)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || n == results.ManifestFile || strings.HasPrefix(n, ".") {
			continue
		}
		err := results.Write(filepath.Join(r.Dir, n), func(w io.Writer) error {
			f, err := os.Open(filepath.Join(src, n))
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
		if err != nil {
			return err
		}
	}
	if m.CopiedFrom == "" {
		m.CopiedFrom = m.Experiment
	}
	m.Experiment = r.Experiment
	return results.WriteManifest(r.Dir, m)
}

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

// execute runs r with e and records it; it returns the final manifest.
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
	}
	fail := func(err error) *results.Manifest {
		m.Status, m.Error = results.Failed, err.Error()
		if pe, ok := errors.AsType[*PanicError](err); ok {
			m.Stack = string(pe.Stack)
		}
		m.Finished = now().UTC()
		m.Seconds = m.Finished.Sub(m.Started).Seconds()
		// The manifest is the only record of the failure: if even it
		// cannot be written, the run counts as not run.
		results.WriteManifest(r.Dir, m)
		return m
	}
	// A previous attempt (failed, killed, or --fresh) may have left
	// files; start from an empty folder.
	if err := os.RemoveAll(r.Dir); err != nil {
		return fail(fmt.Errorf("runners: %w", err))
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return fail(fmt.Errorf("runners: %w", err))
	}
	if err := results.WriteManifest(r.Dir, m); err != nil {
		return fail(err)
	}
	rec := newRecorder(now)
	err := call(ctx, e, r, rec)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.endStage()
	m.Finished = now().UTC()
	m.Seconds = m.Finished.Sub(m.Started).Seconds()
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
	// Metrics are written even for a failed run: they help to see why.
	if len(rec.metrics) > 0 {
		errs = append(errs, results.WriteMetrics(filepath.Join(r.Dir, results.MetricsFile), rec.metrics))
	}
	if len(rec.scores) > 0 {
		errs = append(errs, results.WriteScores(filepath.Join(r.Dir, results.ScoresFile), rec.scores))
	}
	if err := errors.Join(errs...); err != nil {
		if pe, ok := errors.AsType[*PanicError](err); ok {
			m.Stack = string(pe.Stack)
		}
		m.Status, m.Error = results.Failed, err.Error()
	} else {
		m.Status = results.OK
	}
	if err := results.WriteManifest(r.Dir, m); err != nil {
		return fail(err)
	}
	return m
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
	case math.IsNaN(float64(p.Epsilon)) || p.Epsilon <= 0:
		return fmt.Errorf("runners: privacy record: achieved ε is %v", float64(p.Epsilon))
	case p.Epsilon > p.EpsilonTarget:
		return fmt.Errorf("runners: privacy record: achieved ε %v exceeds the target %v", float64(p.Epsilon), float64(p.EpsilonTarget))
	case math.IsNaN(p.Sigma) || math.IsInf(p.Sigma, 0) || p.Sigma < 0:
		return fmt.Errorf("runners: privacy record: σ is %v", p.Sigma)
	}
	return nil
}
