// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	// Backend executes the pending runs; nil means Local{Jobs}. A
	// [Remote] backend's runs execute in other processes.
	Backend Backend
	// NoRunsFile leaves runs.parquet alone: the sweep of one run that a
	// Remote backend's task makes, whose submitter writes the file.
	NoRunsFile bool
	// Progress receives progress lines; nil means none. On a terminal
	// it is one line, updated in place; otherwise a line every
	// ProgressInterval (0 means 10s) and one per failed run.
	Progress io.Writer
	// Device names the hardware the runs train on, recorded in their
	// manifests (results.Provenance.Device); "" means "cpu". The caller
	// selects it (internal/device.Use) before the sweep: the sweep only
	// records it, and it does not enter the run ids.
	Device string
	// Timings are the run tables (EXP-SCALE.parquet files) whose
	// recorded seconds the ETA falls back on where no run table of the
	// sweep's scale under Root tells how long a run takes (see
	// checkedInPrior); nil means those checked in with the code, which
	// the binary embeds ([repro.Baselines]).
	Timings fs.FS
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

// A Summary counts the outcome of a sweep.
type Summary struct {
	Experiment string
	// Planned is the number of runs of the spec; Selected the number
	// --only selected; Cached the selected runs already finished, Reused
	// of which were copied from another experiment's finished run with
	// the same id.
	Planned, Selected, Cached, Reused int
	// CachedRevisions counts the cached runs by the code revision their
	// manifests record (Provenance.Revision, "+dirty" appended for a
	// modified tree).
	CachedRevisions map[string]int
	// Damaged lists the selected runs whose manifest said ok but whose
	// files did not verify, or whose manifest did not read back: they
	// were run again (they are pending).
	Damaged []Failure
	// OK, Failed and NotStarted count the pending runs by outcome.
	// NotStarted includes the runs an interrupt stopped (pretraining
	// their base, or before they started) and runs a killed backend
	// left "running". Adopted counts the runs another process sweeping
	// the same folder finished while this one waited for them; Busy the
	// runs it still held when this sweep stopped waiting (interrupted).
	OK, Failed, NotStarted, Adopted, Busy int
	// Failures lists the failed runs: id, config and error.
	Failures []Failure
	// Elapsed is the wall time of the sweep.
	Elapsed time.Duration
}

// A Failure is a failed (or damaged) run.
type Failure struct {
	ID     string
	Config string
	Err    string
}

// Sweep executes the runs of spec as described in the package
// documentation and returns a summary. The error is non-nil if a run
// failed, if ctx was cancelled before every pending run was recorded, or
// if the sweep could not be started or recorded; the summary is valid
// whenever the sweep started.
//
// The stages are: plan (expand the spec, select, find the cached and the
// damaged runs), prepare (copy runs other experiments finished, check the
// executors, make the folders), dispatch (execute the pending runs on the
// backend, waiting for the runs another process holds), record
// (runs.parquet) and summarise.
func Sweep(ctx context.Context, spec *experiments.Spec, opts *Options) (*Summary, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := newSweep(spec, opts)
	if err := s.plan(); err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	// The ETA predicts the pending runs' costs (see eta), which the
	// workers run in order; the prior (what runs recorded before tell)
	// gives the first progress line an estimate.
	workers := s.jobs
	_, remote := opts.Backend.(Remote)
	if remote {
		workers = 0 // as many as the backend runs at once
	}
	// The checked-in timings, of any scale, fill what the recorded runs
	// of the sweep's scale do not tell.
	var priors []*etaPrior
	if len(s.pending) > 0 {
		plan := registeredPlan()
		checked := embeddedRows()
		if opts.Timings != nil {
			checked = readTables(opts.Timings)
		}
		today := sweepLoad(currentLoad(), s.jobs, remote)
		priors = []*etaPrior{loadPrior(opts.root(), spec.Scale, plan, today), convertPrior(checked, spec.Scale, plan, today)}
	}
	s.prog = newProgress(opts.Progress, opts.ProgressInterval, spec.Name, len(s.pending), s.sum.Cached, s.now,
		newETA(s.pending, workers, nil, priors...))
	defer s.prog.close()
	dispatchErr := s.dispatch(ctx)
	recErr := s.record()
	s.prog.summary(s.sum)
	return s.sum, s.summarise(ctx, dispatchErr, recErr)
}

// sweep is the state of one Sweep.
type sweep struct {
	spec  *experiments.Spec
	opts  *Options
	now   func() time.Time
	start time.Time
	jobs  int
	prov  results.Provenance
	prog  *progress
	sum   *Summary

	all, pending []*Run

	mu sync.Mutex
	// ran holds the final manifest of each run executed here; nil for a
	// run an interrupt stopped (its folder is removed).
	ran map[*Run]*results.Manifest
	// others holds the manifest of each run another process executed
	// while this sweep waited for it.
	others map[*Run]*results.Manifest
	// busy holds the runs another process held when this sweep looked.
	busy []*Run
}

func newSweep(spec *experiments.Spec, opts *Options) *sweep {
	now := opts.now
	if now == nil {
		now = time.Now
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	prov := results.CurrentProvenance()
	prov.Jobs = jobs
	prov.Device = opts.Device
	if prov.Device == "" {
		prov.Device = "cpu"
	}
	return &sweep{spec: spec, opts: opts, now: now, start: now(), jobs: jobs, prov: prov,
		sum:    &Summary{Experiment: spec.Name},
		ran:    map[*Run]*results.Manifest{},
		others: map[*Run]*results.Manifest{},
	}
}

// plan expands the spec, selects the runs, and sorts the selected ones
// into cached and pending, naming the damaged ones.
func (s *sweep) plan() error {
	all, err := Plan(s.spec, s.opts)
	if err != nil {
		return err
	}
	selected, err := Select(all, s.opts.Only)
	if err != nil {
		return err
	}
	s.all = all
	s.sum.Planned, s.sum.Selected = len(all), len(selected)
	for _, r := range selected {
		if s.opts.Fresh {
			s.pending = append(s.pending, r)
			continue
		}
		m, err := results.Check(r.Dir)
		switch {
		case err == nil && m.Status == results.OK:
			s.cached(m)
			continue
		case errors.As(err, new(*results.DamagedError)):
			s.sum.Damaged = append(s.sum.Damaged, Failure{ID: r.ID, Config: r.Config.String(), Err: err.Error()})
		}
		s.pending = append(s.pending, r)
	}
	return nil
}

// cached counts a finished run that is not run again.
func (s *sweep) cached(m *results.Manifest) {
	s.sum.Cached++
	if s.sum.CachedRevisions == nil {
		s.sum.CachedRevisions = map[string]int{}
	}
	rev := m.Provenance.Revision
	if m.Provenance.Modified {
		rev += "+dirty"
	}
	s.sum.CachedRevisions[rev]++
}

// prepare copies the pending runs another experiment has finished, checks
// that the others have an executor, and makes the experiment's folders.
// It reports what the plan found on the progress writer.
func (s *sweep) prepare() error {
	root := s.opts.root()
	if !s.opts.Fresh {
		// Every pending run needs an executor, unless another experiment
		// has already run it: fail before starting any.
		elsewhere := map[*Run]string{}
		for _, r := range s.pending {
			if src := finishedElsewhere(root, r); src != "" {
				elsewhere[r] = src
			}
		}
		if err := CheckExecutors(slices.DeleteFunc(slices.Clone(s.pending), func(r *Run) bool { return elsewhere[r] != "" }), s.opts); err != nil {
			return err
		}
		var left []*Run
		for _, r := range s.pending {
			if src := elsewhere[r]; src != "" && copyRun(src, r) == nil {
				if m, err := results.Check(r.Dir); err == nil {
					s.cached(m)
					s.sum.Reused++
					continue
				}
			}
			left = append(left, r)
		}
		s.pending = left
	}
	if err := CheckExecutors(s.pending, s.opts); err != nil {
		return err
	}
	expDir := filepath.Join(root, s.spec.Name)
	for _, d := range []string{"runs", ".locks"} {
		if err := os.MkdirAll(filepath.Join(expDir, d), 0o755); err != nil {
			return fmt.Errorf("runners: %w", err)
		}
	}
	// A sweep killed while writing runs.parquet leaves its temporary
	// file behind (run folders are emptied before a run starts).
	stale, _ := filepath.Glob(filepath.Join(expDir, "."+results.RunsFile+".tmp*"))
	for _, f := range stale {
		os.Remove(f)
	}
	s.report()
	return nil
}

// report writes what the plan found: the damaged runs, by name, and the
// cached runs with the revisions that made them.
func (s *sweep) report() {
	w := s.opts.Progress
	if w == nil {
		return
	}
	for _, d := range s.sum.Damaged {
		fmt.Fprintf(w, "%s: run %s (%s) is damaged, running it again: %s\n", s.spec.Name, d.ID, d.Config, d.Err)
	}
	if s.sum.Cached == 0 {
		return
	}
	var revs []string
	for _, rev := range slices.Sorted(maps.Keys(s.sum.CachedRevisions)) {
		revs = append(revs, fmt.Sprintf("%s (%d)", rev, s.sum.CachedRevisions[rev]))
	}
	fmt.Fprintf(w, "%s: reusing %d cached runs made by revision %s from code %.12s (the code on the runs' path is in their ids)\n",
		s.spec.Name, s.sum.Cached, strings.Join(revs, ", "), s.prov.Code)
}

// dispatch executes the pending runs on the backend. Runs another process
// holds are waited for: adopted if it finishes them, executed here if it
// leaves them unfinished.
func (s *sweep) dispatch(ctx context.Context) error {
	backend := s.opts.Backend
	if backend == nil {
		backend = Local{Jobs: s.jobs}
	}
	// stop is cancelled by ctx or by the first failure under FailFast;
	// the runs in progress get a context that neither cancels, carrying
	// stop for the work an interrupt may discard (StopContext).
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	if rb, ok := backend.(Remote); ok {
		return rb.Submit(stop, s.pending, &Tracker{prog: s.prog, since: s.start})
	}
	todo := s.pending
	for {
		err := backend.Dispatch(stop, todo, func(r *Run) { s.exec(stop, cancel, r) })
		s.mu.Lock()
		busy := s.busy
		s.busy = nil
		s.mu.Unlock()
		if err != nil || len(busy) == 0 || stop.Err() != nil {
			s.busy = busy
			return err
		}
		if todo = s.await(stop, busy); len(todo) == 0 {
			return nil
		}
	}
}

// exec executes r unless another process holds it or has finished it.
func (s *sweep) exec(stop context.Context, cancel context.CancelFunc, r *Run) {
	e := s.opts.Executor
	if e == nil {
		e, _ = Lookup(r.Config.Method)
	}
	// Another repro process sweeping the same folder may hold the run, or
	// have finished it since we looked. A lock that cannot be taken at all
	// (a read-only or full disk) does not stop the run.
	unlock, ok, err := tryLock(lockFile(r))
	if err == nil && !ok {
		s.mu.Lock()
		s.busy = append(s.busy, r)
		s.mu.Unlock()
		return
	}
	if ok {
		defer unlock()
	}
	if !s.opts.Fresh {
		if m, err := results.Check(r.Dir); err == nil && m.Status == results.OK {
			s.adopt(r, m)
			return
		}
	}
	s.prog.started(r)
	ctx := withSweep(context.WithoutCancel(stop), stop, func(note string) { s.prog.note(r, note) })
	m := execute(ctx, r, e, s.prov, s.now)
	s.mu.Lock()
	s.ran[r] = m
	s.mu.Unlock()
	s.prog.finished(r, m)
	if (m == nil || m.Status != results.OK) && s.opts.FailFast {
		cancel()
	}
}

// adopt records that another process finished r, with manifest m.
func (s *sweep) adopt(r *Run, m *results.Manifest) {
	s.mu.Lock()
	s.others[r] = m
	s.mu.Unlock()
	s.prog.skipped(r)
}

// await waits until another process releases each of the runs in busy, or
// ctx is done; it adopts those the other process ended and returns the
// others, to be executed here. Runs still held when ctx is done stay busy.
func (s *sweep) await(ctx context.Context, busy []*Run) []*Run {
	var todo []*Run
	for i, r := range busy {
		if waitLock(ctx, lockFile(r)) != nil && ctx.Err() != nil {
			s.busy = append(s.busy, busy[i:]...)
			return nil
		}
		m, err := results.Check(r.Dir)
		if err == nil && m.Status != results.Running && !m.Started.Before(s.start) {
			s.adopt(r, m)
			continue
		}
		if err == nil && m.Status == results.OK {
			s.adopt(r, m) // finished before this sweep started: cached
			continue
		}
		todo = append(todo, r)
	}
	return todo
}

// record counts the outcome of every pending run and writes runs.parquet.
// Runs executed here are counted from their manifests in memory (a run
// whose manifest could not be written still failed); runs a backend
// executed elsewhere, from their manifests on disk.
func (s *sweep) record() error {
	sum := s.sum
	fail := func(r *Run, m *results.Manifest, by string) {
		sum.Failed++
		sum.Failures = append(sum.Failures, Failure{ID: r.ID, Config: r.Config.String(), Err: by + m.Error})
	}
	for _, r := range s.pending {
		if m, ok := s.ran[r]; ok {
			switch {
			case m == nil:
				sum.NotStarted++
			case m.Status == results.OK:
				sum.OK++
			default:
				fail(r, m, "")
			}
			continue
		}
		if m, ok := s.others[r]; ok {
			if m.Status == results.OK {
				sum.Adopted++
			} else {
				fail(r, m, "(run by another process) ")
			}
			continue
		}
		if slices.Contains(s.busy, r) {
			sum.Busy++
			continue
		}
		// Not executed in this process: a remote backend's, or not run.
		m, err := results.Check(r.Dir)
		switch {
		case err != nil || m.Status == results.Running || m.Started.Before(s.start):
			sum.NotStarted++
		case m.Status == results.OK:
			sum.OK++
		default:
			fail(r, m, "")
		}
	}
	sum.Elapsed = s.now().Sub(s.start)
	if s.opts.NoRunsFile {
		return nil
	}
	return WriteRuns(s.opts.root(), s.spec.Name, s.all)
}

// summarise returns the sweep's error: the failed runs, the runs not run
// and why, and a failure to record.
func (s *sweep) summarise(ctx context.Context, dispatchErr, recErr error) error {
	sum, name := s.sum, s.spec.Name
	var errs []error
	if sum.Failed > 0 {
		errs = append(errs, fmt.Errorf("runners: %d of %d runs of %s failed (first: %s: %s)", sum.Failed, len(s.pending), name, sum.Failures[0].ID, sum.Failures[0].Err))
	}
	if sum.Busy > 0 {
		errs = append(errs, fmt.Errorf("runners: %d runs of %s are being run by another process; run again when it is done", sum.Busy, name))
	}
	if sum.NotStarted > 0 {
		var cause string
		var err error
		switch {
		case ctx.Err() != nil:
			cause, err = "interrupted", context.Cause(ctx)
		case sum.Failed > 0 && s.opts.FailFast:
			cause = "stopped by --fail-fast"
		default:
			cause, err = "stopped", dispatchErr
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
	return errors.Join(errs...)
}
