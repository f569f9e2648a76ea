// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

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
// without a manifest are left out. The registered analyses
// (RegisterAnalysis) add their results to the rows first; their errors are
// returned, joined, after the file is written.
func WriteRuns(root, exp string, runs []*Run) error {
	var rows []results.Run
	var done []*Run
	for _, r := range runs {
		m, err := results.ReadManifest(r.Dir)
		if err != nil {
			continue
		}
		rows = append(rows, results.RunOf(m))
		done = append(done, r)
	}
	var errs []error
	for _, a := range registeredAnalyses() {
		errs = append(errs, a(done, rows))
	}
	if err := results.WriteRuns(filepath.Join(root, exp, results.RunsFile), rows); err != nil {
		errs = append(errs, fmt.Errorf("runners: %w", err))
	}
	return errors.Join(errs...)
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
