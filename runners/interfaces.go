// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// A Run is one run of an experiment: a resolved config with its inputs,
// its id and its folder.
type Run struct {
	Experiment string
	ID         string
	Config     experiments.Config
	Inputs     experiments.Inputs
	// Dir is the run's folder (results/<exp>/runs/<id>). It exists while
	// the Executor runs, which may write extra files there, atomically
	// (internal/results.Write).
	Dir string
}

// An Executor executes one run: it builds or loads the pretrained base,
// fine-tunes it with the run's method, attacks the trained model and
// records everything on rec. It marks each stage with rec.Stage. It must
// take its seeds from run.Config.Seed only. A returned error or a panic
// fails the run; the runner records it and goes on with the other runs.
// ctx is not cancelled by the first interrupt: the run is expected to
// finish.
type Executor func(ctx context.Context, run *Run, rec *Recorder) error

var registry = struct {
	sync.Mutex
	m map[string]Executor
}{m: make(map[string]Executor)}

// Register makes e the Executor of method. It is meant to be called from
// init functions; it panics if method already has an Executor.
func Register(method string, e Executor) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[method]; dup {
		panic(fmt.Sprintf("runners: executor for method %q registered twice", method))
	}
	registry.m[method] = e
}

// Lookup returns the Executor registered for method.
func Lookup(method string) (Executor, bool) {
	registry.Lock()
	defer registry.Unlock()
	e, ok := registry.m[method]
	return e, ok
}

// Registered returns the methods that have an Executor, sorted.
func Registered() []string {
	registry.Lock()
	defer registry.Unlock()
	return slices.Sorted(maps.Keys(registry.m))
}

var defaultInputs struct {
	sync.Mutex
	f func(*experiments.Config) (experiments.Inputs, error)
}

// RegisterInputs makes f the function that computes each run's [Inputs]
// (data fingerprint, base checkpoint hash) when Options.Inputs is nil. The
// code that builds the data and the pretrained base calls it from an init
// function; until then, runs have zero Inputs. It panics if called twice.
func RegisterInputs(f func(*experiments.Config) (experiments.Inputs, error)) {
	defaultInputs.Lock()
	defer defaultInputs.Unlock()
	if defaultInputs.f != nil {
		panic("runners: RegisterInputs called twice")
	}
	defaultInputs.f = f
}

func registeredInputs() func(*experiments.Config) (experiments.Inputs, error) {
	defaultInputs.Lock()
	defer defaultInputs.Unlock()
	return defaultInputs.f
}

// An Analysis derives results from several finished runs of an
// experiment at once, where one run alone cannot give them (LiRA: the
// other runs of a configuration are a run's shadow models). It gets the
// runs that have a manifest and their runs.parquet rows, in the same
// order, and adds its results to the rows' Results; it reads only what the
// runs wrote to disk. It returns an error for a failed check (a privacy
// bound violated) after adding every result it could.
type Analysis func(runs []*Run, rows []results.Run) error

var analyses struct {
	sync.Mutex
	fs []Analysis
}

// RegisterAnalysis adds a to the analyses WriteRuns applies, in order of
// registration. It is meant to be called from init functions.
func RegisterAnalysis(a Analysis) {
	analyses.Lock()
	defer analyses.Unlock()
	analyses.fs = append(analyses.fs, a)
}

func registeredAnalyses() []Analysis {
	analyses.Lock()
	defer analyses.Unlock()
	return slices.Clone(analyses.fs)
}

// A Backend executes a batch of pending runs.
//
// Dispatch calls exec once for each run it starts, and returns when every
// call it started has returned. It starts no new run once ctx is done. The
// runner reads each run's outcome from its manifest, so a backend that
// runs elsewhere need not call exec at all: such a backend is a [Remote]
// (package runners/slurm submits a job array whose tasks each execute one
// run into the shared results folder).
type Backend interface {
	Dispatch(ctx context.Context, runs []*Run, exec func(*Run)) error
}

// Local is the in-process Backend: a pool of Jobs workers taking the runs
// in order. Jobs ≤ 0 means runtime.NumCPU().
type Local struct {
	Jobs int
}

var _ Backend = Local{}

// Dispatch implements Backend.
func (l Local) Dispatch(ctx context.Context, runs []*Run, exec func(*Run)) error {
	jobs := l.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	next := make(chan *Run)
	var wg sync.WaitGroup
	for range min(jobs, len(runs)) {
		wg.Go(func() {
			for r := range next {
				exec(r)
			}
		})
	}
	defer wg.Wait()
	defer close(next)
	for _, r := range runs {
		// Check first: select picks at random among ready cases.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case next <- r:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
