// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports/specout"
	"github.com/repro-dp/repro/runners"
)

// expOptions holds the flags of repro table and repro plot that apply when
// their argument is an experiment: what repro run takes to sweep it.
type expOptions struct {
	name    string
	scale   string
	results string
	jobs    int
	set     []string
	noRun   bool
	from    string // a run table to draw from instead of the runs
	// declared leaves out of the run table from the runs that s does not
	// declare at its scales, and warns of them and of the declared runs it
	// lacks (checkDeclared); allRuns keeps them, still warning.
	declared, allRuns bool
}

// expFlags returns the experiment flags of repro table and repro plot. The
// values of --set are kept whole: a value is never split at commas
// (--set sweep.epsilon=[1,8]). Each call returns a fresh, empty --set
// value, which one parse of the command's arguments fills.
func expFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "scale", Usage: "EXP: run at preset `scale` (smoke, small or full) instead of the spec's"},
		&cli.StringFlag{Name: "results", Value: "results", Usage: "EXP: results are under `dir`"},
		&cli.IntFlag{Name: "jobs", Usage: "EXP: execute `n` runs at once", DefaultText: "the number of CPUs"},
		&cli.GenericFlag{Name: "set", Value: new(stringsValue), Usage: "EXP: override a spec value: `key=value`, a dotted path and a YAML value; repeatable"},
		&cli.BoolFlag{Name: "no-run", Usage: "EXP: run nothing; use the runs finished so far and warn how many are missing"},
		&cli.StringFlag{Name: "from", Usage: "EXP: run nothing; read the runs from the run table `FILE.parquet` (a checked-in baseline, or a results folder such as results/EXP) instead, writing any tables and plots into a temporary folder"},
	}
}

// fromDeclaredHelp is the paragraph of repro table's and repro plot's
// help on how --from compares a run table with the spec (fromRunTable).
const fromDeclaredHelp = "With --from, the runs are compared with the runs the spec declares at their\n" +
	"scale, by configuration (method, task, seed, ε, δ and every hyperparameter,\n" +
	"variant included), not by run id, which moves with the code: runs the spec no\n" +
	"longer declares (a table checked in before the spec changed) are left out, with\n" +
	"a warning that counts them and names their cells, and the declared runs the\n" +
	"table lacks are counted. They are dropped rather than kept and marked because a\n" +
	"table row or a plot's point names only a few keys: a stale run would be averaged\n" +
	"into a cell or point that looks declared. --all-runs keeps them (still warning).\n" +
	"repro verify reads every run: its claims select runs by their column values.\n\n"

// allRunsFlag returns the --all-runs flag of repro table and repro plot.
func allRunsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "all-runs", Usage: "EXP with --from: keep the runs the spec does not declare at their scale (default: leave them out, with a warning)"}
}

// checkAllRuns returns a usage error of command cmd (table or plot) if a
// gives --all-runs other than with an experiment argument and --from:
// only then is a run table compared with a spec.
func checkAllRuns(cmd string, a *cmdArgs, experiment bool) error {
	if a.Bool("all-runs") && (!experiment || a.String("from") == "") {
		return fmt.Errorf("%s: --all-runs applies only to an experiment argument with --from, whose run table is compared with the spec", cmd)
	}
	return nil
}

// checkArgFlags returns a usage error of command cmd (table or plot) if a
// holds flags that do not apply to its argument. With an experiment
// argument only the experiment flags (expFlags) and keep apply: the others
// shape a table or plot drawn from a run table, and an experiment's spec
// sets its own. With a run table (FILE.parquet or RESULTS-DIR) the
// experiment flags do not apply: a run table is only read.
func checkArgFlags(cmd string, a *cmdArgs, experiment bool, keep ...string) error {
	var bad []string
	for _, name := range a.Given() {
		exp := slices.ContainsFunc(expFlags(), func(f cli.Flag) bool { return f.Names()[0] == name })
		if exp != experiment && !slices.Contains(keep, name) {
			bad = append(bad, "--"+name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	flags := "flag " + bad[0] + " applies"
	if len(bad) > 1 {
		flags = "flags " + strings.Join(bad, ", ") + " apply"
	}
	if experiment {
		return fmt.Errorf("%s: %s only to a FILE.parquet or RESULTS-DIR argument; %q is neither, so it names an experiment, whose spec sets its %ss", cmd, flags, a.Args()[0], cmd)
	}
	return fmt.Errorf("%s: %s only to an experiment argument; %q is a run table (FILE.parquet or RESULTS-DIR), which is only read", cmd, flags, a.Args()[0])
}

// isPath reports whether arg names an existing file or directory, or a
// .parquet file, which repro table and repro plot read as a run table
// rather than as an experiment; a .yaml or .yml file is an experiment.
func isPath(arg string) bool {
	switch {
	case strings.HasSuffix(arg, ".parquet"):
		return true
	case strings.HasSuffix(arg, ".yaml"), strings.HasSuffix(arg, ".yml"):
		return false
	}
	_, err := os.Stat(arg)
	return err == nil
}

// writeRuns writes the run table of experiment exp under root; tests
// replace it.
var writeRuns = runners.WriteRuns

// readOnly reports whether err comes from writing where one may not.
func readOnly(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// prepareExperiment loads the experiment o.name and, unless o.noRun,
// executes its runs that are not finished, as repro run does; with o.noRun
// it rewrites the experiment's run table from the runs finished so far and
// warns on wErr how many are missing, or fails if none is. It returns the
// spec, the results folder to read the run table from and write the
// outputs to, whether some runs are not finished (with o.noRun: running in
// another process, interrupted, failed or not started, counted on wErr
// once), and the error of the sweep (a failed run), if any: the run table
// is written even then.
//
// With o.noRun, a results folder that cannot be written (read-only, or
// another user's) is still read: the run table goes to a new temporary
// folder instead, which is returned as root, and wErr says so.
func prepareExperiment(ctx context.Context, wErr io.Writer, cmd string, o expOptions) (s *experiments.Spec, root string, partial bool, sweepErr error, err error) {
	root = o.results
	if o.jobs < 0 {
		return nil, "", false, nil, fmt.Errorf("%s: --jobs must be ≥ 0", cmd)
	}
	specOpts, err := specOverrides(o.scale, "", o.set)
	if err != nil {
		return nil, "", false, nil, err
	}
	s, err = experiments.Load(o.name, specOpts)
	if err != nil {
		return nil, "", false, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	warnCollapses(wErr, s)
	if o.from != "" {
		root, err := fromRunTable(wErr, cmd, s, o)
		return s, root, false, nil, err
	}
	ropts := &runners.Options{Root: o.results, Jobs: o.jobs, Progress: wErr, Inputs: runInputs}
	plan, err := runners.Plan(s, ropts)
	if err != nil {
		return nil, "", false, nil, err
	}
	if o.noRun {
		finished := 0
		for _, r := range plan {
			if results.Finished(r.Dir) {
				finished++
			}
		}
		others := otherScales(o.results, s.Name, s.Scale)
		if finished == 0 {
			return nil, "", false, nil, fmt.Errorf("%s: %s: none of its %d runs at scale %s is finished under %s%s (drop --no-run, or repro run %s)", cmd, s.Name, len(plan), s.Scale, o.results, others, o.name)
		}
		if unfinished := len(plan) - finished; unfinished > 0 {
			partial = true
			fmt.Fprintf(wErr, "%s: warning: %d of %d runs at scale %s are not finished (--no-run): %s; showing the %d finished%s\n", s.Name, unfinished, len(plan), s.Scale, unfinishedStates(plan), finished, others)
		}
		if err := writeRuns(o.results, s.Name, plan); err != nil {
			if !readOnly(err) {
				return nil, "", false, nil, err
			}
			tmp, terr := os.MkdirTemp("", "repro-"+s.Name+"-")
			if terr != nil {
				return nil, "", false, nil, errors.Join(err, terr)
			}
			if werr := os.MkdirAll(filepath.Join(tmp, s.Name), 0o755); werr != nil {
				return nil, "", false, nil, werr
			}
			if werr := writeRuns(tmp, s.Name, plan); werr != nil {
				return nil, "", false, nil, werr
			}
			fmt.Fprintf(wErr, "%s: warning: %s cannot be written (%v); its finished runs are read, and the run table and outputs go to %s\n", s.Name, o.results, err, tmp)
			return s, tmp, partial, nil, nil
		}
		return s, root, partial, nil, nil
	}
	if err := runners.CheckExecutors(runners.Pending(plan, ropts), ropts); err != nil {
		return nil, "", false, nil, err
	}
	_, sweepErr = runners.Sweep(ctx, s, ropts)
	if ctx.Err() != nil {
		return nil, "", false, nil, sweepErr
	}
	return s, root, false, sweepErr, nil
}

// fromRunTable copies the run table o.from (a file, or a results folder's
// runs.parquet), which must hold runs of experiment s, to a new temporary
// results folder and returns it, for the outputs of s to be drawn from it;
// wErr says where they go. Outputs that read the runs' folders (roc and
// grid plots) have none there. With o.declared, the runs that s does not
// declare at their scale are left out (unless o.allRuns), and wErr counts
// them and the declared runs the table lacks.
func fromRunTable(wErr io.Writer, cmd string, s *experiments.Spec, o expOptions) (string, error) {
	file := o.from
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		file = filepath.Join(file, results.RunsFile)
	}
	runs, err := results.ReadRuns(file)
	if err != nil {
		return "", fmt.Errorf("%s: --from: %w", cmd, err)
	}
	scales := map[string]int{}
	for _, r := range runs {
		if r.Experiment != s.Name {
			return "", fmt.Errorf("%s: --from %s holds runs of experiment %s, not %s", cmd, file, r.Experiment, s.Name)
		}
		scales[r.Scale]++
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: --from: %w", cmd, err)
	}
	var check *declaredCheck
	if o.declared {
		check, err = checkDeclared(runs, func(scale string) ([]experiments.Config, error) {
			if scale == s.Scale {
				return s.Expand(), nil
			}
			opts, err := specOverrides(scale, "", o.set)
			if err != nil {
				return nil, err
			}
			at, err := experiments.Load(o.name, opts)
			if err != nil {
				return nil, fmt.Errorf("%s: --from %s: runs at scale %s: %w", cmd, file, scale, err)
			}
			return at.Expand(), nil
		})
		if err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp("", "repro-"+s.Name+"-")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(tmp, s.Name), 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(tmp, s.Name, results.RunsFile)
	if check != nil && len(check.undeclared) > 0 && !o.allRuns {
		err = results.WriteRuns(dst, check.keep)
	} else {
		err = results.WriteFile(dst, data)
	}
	if err != nil {
		return "", err
	}
	var at []string
	for _, sc := range slices.Sorted(maps.Keys(scales)) {
		at = append(at, fmt.Sprintf("%d at scale %s", scales[sc], sc))
	}
	fmt.Fprintf(wErr, "%s: reading %d runs from %s (%s); the outputs go to %s\n", s.Name, len(runs), file, strings.Join(at, ", "), tmp)
	if check != nil {
		for _, w := range check.warnings(s.Name, o.allRuns) {
			fmt.Fprintf(wErr, "%s: warning: %s\n", s.Name, w)
		}
		if len(check.keep) == 0 && !o.allRuns {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("%s: --from %s: none of its %d runs is declared by %s (--all-runs keeps them)", cmd, file, len(runs), s.Name)
		}
	}
	return tmp, nil
}

// unfinishedStates returns the states of the runs of plan that are not
// finished, counted: "2 running, 38 missing". A run is running while
// another process holds it (runners.State), interrupted when the process
// that ran it is gone, and missing when it was never started.
func unfinishedStates(plan []*runners.Run) string {
	count := map[string]int{}
	for _, r := range plan {
		st, _ := runners.State(r.Dir)
		count[st]++
	}
	var parts []string
	for _, st := range []string{string(results.Running), runners.StateInterrupted, string(results.Failed), runners.StateDamaged, runners.StateToRun} {
		if n := count[st]; n > 0 {
			if st == runners.StateToRun {
				st = "missing"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return strings.Join(parts, ", ")
}

// warnCollapses prints to wErr the warnings of s's sweep whose distinct
// values give runs one effective setting at its scale
// (experiments.Spec.Collapses).
func warnCollapses(wErr io.Writer, s *experiments.Spec) {
	for _, w := range s.Collapses() {
		fmt.Fprintf(wErr, "%s: warning: %s\n", s.Name, w)
	}
}

// otherScales returns, for a message, the finished runs of experiment exp
// under root at scales other than scale ("; results/exp holds 54
// finished runs at scale smoke (--scale smoke reads them)"), or "".
func otherScales(root, exp, scale string) string {
	names, _ := filepath.Glob(filepath.Join(root, exp, "runs", "*", results.ManifestFile))
	count := map[string]int{}
	for _, n := range names {
		if m, err := results.ReadManifest(filepath.Dir(n)); err == nil && m.Status == results.OK && m.Config.Scale != scale {
			count[m.Config.Scale]++
		}
	}
	var parts []string
	for _, sc := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%d finished %s at scale %s (--scale %s reads them)", count[sc], plural(count[sc], "run", "runs"), sc, sc))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s holds %s", filepath.Join(root, exp), strings.Join(parts, ", "))
}

// writeSpecOutputs writes the outputs of s under root, keeping only its
// tables (tables) or only its plots (!tables), and returns the paths
// written; warnings go to wErr. With partial (runs not finished, already
// counted on wErr), tables do not warn of the paper values and running
// runs those may account for (specout.WritePartial).
func writeSpecOutputs(wErr io.Writer, cmd, root string, s *experiments.Spec, tables, partial bool) ([]string, error) {
	only := *s
	if tables {
		only.Plots = nil
		if len(s.Tables) == 0 {
			return nil, fmt.Errorf("%s: experiment %s has no tables", cmd, s.Name)
		}
	} else {
		only.Tables = nil
		if len(s.Plots) == 0 {
			return nil, fmt.Errorf("%s: experiment %s has no plots", cmd, s.Name)
		}
	}
	write := specout.Write
	if partial {
		write = specout.WritePartial
	}
	paths, warnings, err := write(root, &only)
	for _, warn := range warnings {
		fmt.Fprintf(wErr, "%s: warning: %s\n", s.Name, warn)
	}
	if err != nil {
		return paths, fmt.Errorf("%s: %s: %w", cmd, s.Name, err)
	}
	return paths, nil
}
