// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/runners"
	"github.com/repro-dp/repro/runners/slurm"
)

// slurmOptions holds the flags of repro run for the slurm executor.
type slurmOptions struct {
	wait        bool
	partition   string
	time        string
	mem         string
	cpusPerTask int
	arrayLimit  int
	sbatchArgs  []string
	retries     int
}

// check returns a usage error for flags of repro run that do not go with
// --executor slurm, or that are out of range.
func (s *slurmOptions) check(a *cmdArgs) error {
	for _, name := range []string{"jobs", "fail-fast"} {
		if slices.Contains(a.Given(), name) {
			return fmt.Errorf("run: --%s applies only to --executor local (--array-limit caps the tasks that run at once)", name)
		}
	}
	switch {
	case s.cpusPerTask < 0:
		return errors.New("run: --cpus-per-task must be ≥ 0")
	case s.arrayLimit < 0:
		return errors.New("run: --array-limit must be ≥ 0")
	case s.retries < 0:
		return errors.New("run: --retries must be ≥ 0")
	}
	return nil
}

// slurmJob returns what the tasks of a submission of spec s execute; arg
// is the experiment as the user named it.
func slurmJob(o runOptions, s *experiments.Spec, arg string, runs []*runners.Run) (*slurm.Job, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, fmt.Errorf("run: the path of the repro binary, which the tasks run: %w", err)
	}
	root, err := filepath.Abs(o.results)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	spec := arg
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		if spec, err = filepath.Abs(arg); err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
	}
	var args []string
	if o.scale != "" {
		args = append(args, "--scale", o.scale)
	}
	if o.seeds != "" {
		args = append(args, "--seeds", o.seeds)
	}
	for _, v := range o.set {
		args = append(args, "--set", v)
	}
	return &slurm.Job{Exe: exe, Root: root, Experiment: s.Name, Spec: spec, SpecArgs: args, Fresh: o.fresh, Bases: basesOf(runs)}, nil
}

// basesOf returns the pretrained bases that runs need, as arguments of
// repro pretrain, in a fixed order.
func basesOf(runs []*runners.Run) [][]string {
	var keys []string
	for _, r := range runs {
		m, ok := methods.Lookup(r.Config.Method)
		if !ok {
			continue
		}
		k := r.Config.Scale + " " + methods.BaseArch(m, r.Config.Params)
		if mode, ok := r.Config.Params["fusion"].(string); ok && mode != "" {
			k += " " + mode // the federated methods' fusion base of that mode
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var bases [][]string
	for _, k := range keys {
		f := strings.Fields(k)
		base := []string{"--scale", f[0], "--arch", f[1]}
		if len(f) > 2 {
			base = append(base, "--fusion-mode", f[2])
		}
		bases = append(bases, base)
	}
	return bases
}

func (s *slurmOptions) options(log io.Writer) slurm.Options {
	return slurm.Options{Partition: s.partition, Time: s.time, Mem: s.mem, CPUsPerTask: s.cpusPerTask,
		ArrayLimit: s.arrayLimit, SbatchArgs: s.sbatchArgs, Retries: s.retries, Log: log}
}

// slurmBackend returns the backend of repro run --executor slurm --wait
// for spec s.
func slurmBackend(o runOptions, s *experiments.Spec, arg string, runs []*runners.Run, wErr io.Writer) (*slurm.Backend, error) {
	if err := slurm.Available(); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	job, err := slurmJob(o, s, arg, runs)
	if err != nil {
		return nil, err
	}
	return &slurm.Backend{Job: *job, Options: o.slurm.options(wErr)}, nil
}

// submitExperiments submits the unfinished runs of each spec to Slurm and
// returns without waiting; the tasks copy runs another experiment has
// finished rather than run them again.
func submitExperiments(ctx context.Context, w, wErr io.Writer, o runOptions, specs []*experiments.Spec, plans [][]*runners.Run) error {
	if err := slurm.Available(); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	for i, s := range specs {
		var todo []*runners.Run
		busy := 0
		for _, r := range plans[i] {
			st, _ := runners.State(r.Dir)
			switch {
			case st == string(results.Running):
				busy++
			case o.fresh || st != string(results.OK):
				todo = append(todo, r)
			}
		}
		if busy > 0 {
			fmt.Fprintf(wErr, "%s: %d runs are being executed by an earlier submission; not submitting them again\n", s.Name, busy)
		}
		if len(todo) == 0 {
			fmt.Fprintf(w, "%s: all %d runs are finished or running; nothing to submit\n", s.Name, len(plans[i]))
			continue
		}
		job, err := slurmJob(o, s, o.experiments[i], todo)
		if err != nil {
			return err
		}
		so := o.slurm.options(wErr)
		sub, err := slurm.Submit(ctx, job, &so, todo)
		if err != nil {
			return fmt.Errorf("run: %s: %w", s.Name, err)
		}
		fmt.Fprintf(w, "%s: %d runs submitted as job %s; repro status %s shows them, repro cancel %s cancels them;\n", s.Name, len(todo), strings.Join(sub.Arrays, ", "), o.experiments[i], o.experiments[i])
		fmt.Fprintf(w, "%s: once they are done, repro run %s writes the tables and plots (it runs nothing that is finished)\n", s.Name, o.experiments[i])
	}
	return nil
}
