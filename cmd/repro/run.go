// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/device"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners"
)

func init() { register(runCommand) }

// runOptions holds the parsed flags of repro run.
type runOptions struct {
	experiments []string
	scale       string
	jobs        int
	seeds       string
	set         []string
	only        []string
	dryRun      bool
	fresh       bool
	failFast    bool
	results     string
	executor    string
	device      string
	slurm       slurmOptions
}

// runFlags are the flags of repro run. --set and --only keep their values
// whole: a value is never split at commas (--set sweep.seed=[1,2]).
var runFlags = []cli.Flag{
	&cli.StringFlag{Name: "scale", Usage: "run at preset `scale` (smoke, small or full) instead of the spec's"},
	&cli.IntFlag{Name: "jobs", Usage: "execute `n` runs at once", DefaultText: "the number of CPUs"},
	&cli.StringFlag{Name: "seeds", Usage: "seeds: `n` for 1…n, or a comma-separated list (a trailing comma for one seed: 7, is seed 7 alone)"},
	stringsFlag{&cli.StringSliceFlag{Name: "set", Usage: "override a spec value: `key=value`, a dotted path and a YAML value; repeatable"}},
	stringsFlag{&cli.StringSliceFlag{Name: "only", Usage: "run only the runs matching `filter`: an id prefix or key=value conditions joined by commas; repeatable"}},
	&cli.BoolFlag{Name: "dry-run", Usage: "print the runs with their ids and whether they are finished; run nothing"},
	&cli.BoolFlag{Name: "fresh", Usage: "run the selected runs again even if they are finished"},
	&cli.BoolFlag{Name: "fail-fast", Usage: "start no new run after the first failure"},
	&cli.StringFlag{Name: "results", Value: "results", Usage: "write results under `dir`"},
	&cli.StringFlag{Name: "device", Value: "cpu", Usage: "train on `device`: cpu, or cuda (an NVIDIA GPU; needs a binary built with make cuda-build). The device is recorded in each run's manifest, not in its id"},
	&cli.StringFlag{Name: "executor", Value: "local", Usage: "the `kind` of executor: local (a pool of --jobs workers) or slurm (job arrays; see the slurm flags)"},
	&cli.BoolFlag{Name: "wait", Usage: "slurm: follow the jobs with the progress line, then write the tables and plots"},
	&cli.StringFlag{Name: "partition", Usage: "slurm: submit to partition `p`"},
	&cli.StringFlag{Name: "time", Usage: "slurm: the time `limit` of a task, as sbatch --time takes it (2:00:00)"},
	&cli.StringFlag{Name: "mem", Usage: "slurm: the memory `size` of a task, as sbatch --mem takes it (4G)"},
	&cli.IntFlag{Name: "cpus-per-task", Usage: "slurm: `n` CPUs for each task", DefaultText: "the cluster's default"},
	&cli.IntFlag{Name: "array-limit", Usage: "slurm: run at most `k` tasks of the array at once", DefaultText: "no limit"},
	stringsFlag{&cli.StringSliceFlag{Name: "sbatch-arg", Usage: "slurm: pass `arg` to sbatch as it is (--sbatch-arg=--qos=long); repeatable"}},
	&cli.IntFlag{Name: "retries", Usage: "slurm: execute a failed run again up to `n` times in its task"},
}

// slurmFlags are the flags of repro run that only the slurm executor takes.
var slurmFlags = []string{"wait", "partition", "time", "mem", "cpus-per-task", "array-limit", "sbatch-arg", "retries"}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run the experiments' runs that are not finished yet",
		ArgsUsage: "EXP...",
		Description: "Expands each experiment (an embedded spec such as table1, or a .yaml file) into\n" +
			"runs, skips the runs whose results exist, executes the others on a pool of workers\n" +
			"and writes results/EXP/runs/ID/manifest.json, metrics.parquet, scores.parquet,\n" +
			"predictions.parquet (each test example's output) and results/EXP/runs.parquet. The first interrupt stops after the running runs are\n" +
			"recorded; the second exits at once. The exit status is non-zero if any run failed,\n" +
			"or if a table or plot of the spec cannot be built; after a --only selection, which\n" +
			"may leave a table without the runs it needs, that is a warning instead.\n\n" +
			"The progress line's ETA costs each run left at the seconds per step that this\n" +
			"invocation's finished runs of its method and task took. Before one has finished it\n" +
			"takes their mean over the runs of the same scale recorded under --results, marked\n" +
			"\"ETA ~5m0s (from recorded runs)\", else from the run tables checked in with the\n" +
			"code (per step, any scale, converted by the ratio of the scales' costs; a run\n" +
			"without planned steps from its own experiment's runs at this scale, else from runs\n" +
			"of the same recipe, else of the nearest one: the same method and task and the most\n" +
			"hyperparameters in common, which the line adds, \"; 2 runs costed as their nearest\n" +
			"recipe\"), marked \"ETA ~12m0s (from checked-in timings)\"; \"ETA ?\"\n" +
			"only where neither knows the method. Each run records the load it ran under (the\n" +
			"1-minute load average at its start and end, GOMAXPROCS, --jobs) in its manifest and\n" +
			"its runs.parquet row. The estimate assumes a CPU-bound run, one of J at once, at load L\n" +
			"on N cores gets min(1, N/(J·c), (N/max(L, 1))^0.668) of its quiet speed, where c = 1.33\n" +
			"is the cores a run keeps busy alone (the exponent fitted on runs timed on a shared\n" +
			"two-core machine, where N/L over-corrected twofold): a run recorded at load 8 on 2 cores\n" +
			"took 2.5 times its quiet time, and today's estimate is that quiet time over today's share\n" +
			"(the load when the sweep starts plus 1.33 per --jobs, on GOMAXPROCS cores; a machine without\n" +
			"/proc/loadavg, or a cluster's nodes, count as quiet). Runs recorded before loads\n" +
			"were are taken at their seconds as they are.\n\n" +
			"   $ repro run table1 --dry-run\n" +
			"   $ repro run table1 --scale smoke --jobs 2\n" +
			"   $ repro run table1 --seeds 5 --set delta=1e-6 --only method=dpsgd,epsilon=8\n\n" +
			"With --executor slurm the pending runs are submitted as one sbatch --array (split at\n" +
			"the cluster's MaxArraySize), after one job that pretrains the bases they need; each\n" +
			"task executes one run into the results folder, which must be on a filesystem every\n" +
			"compute node shares. repro run prints the job ids and returns; with --wait it\n" +
			"follows the jobs, cancels them on Ctrl-C, and writes the tables and plots as a\n" +
			"local run does. Running it again submits only the runs missing or failed;\n" +
			"repro status EXP shows the runs and jobs, repro cancel EXP cancels the jobs.\n\n" +
			"   $ repro run table1 --executor slurm --partition cpu --time 1:00:00 --wait",
		Flags:           runFlags,
		SkipFlagParsing: true, // see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			o, err := runFlagOptions(a)
			if err != nil {
				return err
			}
			return runExperiments(c.Context, c.App.Writer, c.App.ErrWriter, o)
		}),
	}
}

// runFlagOptions checks the arguments of repro run and returns its options.
func runFlagOptions(a *cmdArgs) (runOptions, error) {
	o := runOptions{
		experiments: a.Args(),
		scale:       a.String("scale"),
		jobs:        a.Int("jobs"),
		seeds:       a.String("seeds"),
		set:         a.StringSlice("set"),
		only:        a.StringSlice("only"),
		dryRun:      a.Bool("dry-run"),
		fresh:       a.Bool("fresh"),
		failFast:    a.Bool("fail-fast"),
		results:     a.String("results"),
		executor:    a.String("executor"),
		device:      a.String("device"),
		slurm: slurmOptions{
			wait:        a.Bool("wait"),
			partition:   a.String("partition"),
			time:        a.String("time"),
			mem:         a.String("mem"),
			cpusPerTask: a.Int("cpus-per-task"),
			arrayLimit:  a.Int("array-limit"),
			sbatchArgs:  a.StringSlice("sbatch-arg"),
			retries:     a.Int("retries"),
		},
	}
	if o.executor != "slurm" {
		for _, name := range a.Given() {
			if slices.Contains(slurmFlags, name) {
				return o, fmt.Errorf("run: --%s applies only to --executor slurm", name)
			}
		}
	}
	switch {
	case len(o.experiments) == 0:
		return o, errors.New("run: want at least one experiment (repro list shows them)")
	case o.jobs < 0:
		return o, errors.New("run: --jobs must be ≥ 0")
	case device.Check(o.device) != nil:
		return o, fmt.Errorf("run: --device %s: %w", o.device, device.Check(o.device))
	case o.device != device.CPU && o.executor == "slurm":
		// A task's process would train on the CPU: the flag does not
		// reach the jobs yet.
		return o, fmt.Errorf("run: --device %s applies only to --executor local", o.device)
	case o.executor == "slurm":
		return o, o.slurm.check(a)
	case o.executor != "local":
		return o, fmt.Errorf("run: unknown executor %q (local or slurm)", o.executor)
	}
	return o, nil
}

// seedsOverride turns --seeds into a --set override of the seed axis.
func seedsOverride(s string) (string, error) {
	var seeds []string
	if !strings.Contains(s, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return "", fmt.Errorf("run: --seeds %q: want a count ≥ 1 or a comma-separated list", s)
		}
		// Checked before the list is built: a spec expands into at most
		// MaxRuns runs, and each seed is at least one run.
		if n > experiments.MaxRuns {
			return "", fmt.Errorf("run: --seeds %d: more than the %d runs a sweep may have", n, experiments.MaxRuns)
		}
		for i := 1; i <= n; i++ {
			seeds = append(seeds, strconv.Itoa(i))
		}
	} else {
		// A trailing comma makes a list of one seed (--seeds 13,); an
		// empty element elsewhere is a typo.
		fields := strings.Split(strings.TrimSuffix(strings.TrimSpace(s), ","), ",")
		for _, f := range fields {
			if f = strings.TrimSpace(f); f == "" {
				return "", fmt.Errorf("run: --seeds %q: an empty seed in the list", s)
			}
			if _, err := strconv.ParseUint(f, 10, 53); err != nil {
				return "", fmt.Errorf("run: --seeds %q: %q is not a seed", s, f)
			}
			seeds = append(seeds, f)
		}
	}
	return "sweep.seed=[" + strings.Join(seeds, ", ") + "]", nil
}

// specOverrides returns the spec options of --scale, --seeds and --set:
// the seed axis of --seeds, then "scale=SCALE", then set, so that --set
// wins over both. Errors in the first two name the flag as the user typed
// it (--scale bogus), not the override it becomes. Empty scale or seeds
// add nothing.
func specOverrides(scale, seeds string, set []string) (*experiments.Options, error) {
	o := &experiments.Options{}
	if seeds != "" {
		ov, err := seedsOverride(seeds)
		if err != nil {
			return nil, err
		}
		o.Overrides, o.Sources = append(o.Overrides, ov), append(o.Sources, "--seeds "+seeds)
	}
	if scale != "" {
		o.Overrides, o.Sources = append(o.Overrides, "scale="+scale), append(o.Sources, "--scale "+scale)
	}
	o.Overrides = append(o.Overrides, set...)
	return o, nil
}

// runInputs, if not nil, replaces the inputs function registered with the
// runners (runners.RegisterInputs), which may build the data and the
// pretrained base. Tests of the command set it; nothing else does.
var runInputs func(*experiments.Config) (experiments.Inputs, error)

// runExperiments loads every experiment first (so that a bad spec or a
// missing executor fails before any run starts), then sweeps them in turn.
func runExperiments(ctx context.Context, w, wErr io.Writer, o runOptions) error {
	specOpts, err := specOverrides(o.scale, o.seeds, o.set)
	if err != nil {
		return err
	}
	ropts := &runners.Options{Root: o.results, Jobs: o.jobs, Device: o.device, Only: o.only, Fresh: o.fresh, FailFast: o.failFast, Progress: wErr, Inputs: runInputs}
	var specs []*experiments.Spec
	var plans [][]*runners.Run
	for _, name := range o.experiments {
		s, err := experiments.Load(name, specOpts)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(specs, func(p *experiments.Spec) bool { return p.Name == s.Name }) {
			return fmt.Errorf("run: experiment %s given twice", s.Name)
		}
		warnCollapses(wErr, s)
		plan, err := runners.Plan(s, ropts)
		if err != nil {
			return err
		}
		sel, err := runners.Select(plan, o.only)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		specs, plans = append(specs, s), append(plans, sel)
	}
	if o.dryRun {
		for i, s := range specs {
			printPlan(w, o.results, s, plans[i])
		}
		return nil
	}
	for _, p := range plans {
		if err := runners.CheckExecutors(runners.Pending(p, ropts), ropts); err != nil {
			return err
		}
	}
	if o.device != "" {
		// Opened before the first run: no driver or no GPU fails here.
		if err := device.Use(o.device); err != nil {
			return fmt.Errorf("run: --device %s: %w", o.device, err)
		}
		if o.device != device.CPU {
			fmt.Fprintf(wErr, "device %s\n", device.Describe())
		}
	}
	if o.executor == "slurm" && !o.slurm.wait {
		return submitExperiments(ctx, w, wErr, o, specs, plans)
	}
	var errs []error
	for i, s := range specs {
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("run: interrupted before %s", s.Name))
			continue
		}
		sopts := *ropts
		if o.executor == "slurm" {
			b, err := slurmBackend(o, s, o.experiments[i], plans[i], wErr)
			if err != nil {
				return errors.Join(append(errs, err)...)
			}
			sopts.Backend = b
		}
		_, err := runners.Sweep(ctx, s, &sopts)
		if err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() == nil {
			errs = append(errs, writeOutputs(w, wErr, o.results, s, len(o.only) > 0))
			writeReport(w, wErr, o.results, s)
		}
	}
	return errors.Join(errs...)
}

// printPlan prints the runs of s, one a line, with their state on disk
// (runners.State: to run, ok, failed, running, interrupted, damaged), or
// "copy from EXP" for a run another experiment under root has finished.
// Damaged runs are named again after the table, with the reason.
func printPlan(w io.Writer, root string, s *experiments.Spec, runs []*runners.Run) {
	states := make([]string, len(runs))
	finished := 0
	var damaged []string
	for i, r := range runs {
		st, err := runners.State(r.Dir)
		switch st {
		case string(results.OK):
			finished++
		case runners.StateDamaged:
			damaged = append(damaged, fmt.Sprintf("%s: %v", r.ID, err))
		}
		if st != string(results.OK) {
			others, _ := filepath.Glob(filepath.Join(root, "*", "runs", r.ID))
			for _, d := range others {
				if d != r.Dir && results.Finished(d) {
					st = "copy from " + filepath.Base(filepath.Dir(filepath.Dir(d)))
					break
				}
			}
		}
		states[i] = st
	}
	fmt.Fprintf(w, "%s: %d runs, %d finished, %d to run (scale %s)\n", s.Name, len(runs), finished, len(runs)-finished, s.Scale)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATE\tMETHOD\tTASK\tε\tSEED\tPARAMS")
	for i, r := range runs {
		var params []string
		for _, k := range slices.Sorted(maps.Keys(r.Config.Params)) {
			v := r.Config.Params[k]
			if f, ok := v.(float64); ok {
				v = experiments.FormatFloat(f)
			}
			params = append(params, fmt.Sprintf("%s=%v", k, v))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, states[i], r.Config.Method, r.Config.Task, r.Config.Epsilon, r.Config.Seed, strings.Join(params, " "))
	}
	tw.Flush()
	for _, d := range damaged {
		fmt.Fprintf(w, "damaged, will run again: %s\n", d)
	}
}
