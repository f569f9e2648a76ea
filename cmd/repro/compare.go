// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/specout"
	"github.com/repro-dp/repro/runners"
)

func init() { register(compareCommand) }

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two run tables per metric and configuration over seeds, and fail on a regression",
		ArgsUsage: "OLD NEW",
		Description: "OLD and NEW are run tables: FILE.parquet (such as a baseline checked in under\n" +
			"results/baselines/) or RESULTS-DIR (an experiment's results folder, holding\n" +
			"runs.parquet and runs/ID/). For each metric and configuration (method, task, scale,\n" +
			"ε, δ and the spec's swept and fixed hyperparameters) it prints the mean ± std over\n" +
			"seeds of OLD and NEW, the change and its bootstrap interval, a p-value and a verdict\n" +
			"as benchstat does: identical, ~ (not significant), better, worse, REGRESSION\n" +
			"(significant, and worse by the spec's threshold for the metric or more), untested (a\n" +
			"side with one run and nothing to test it by; a regression when worse by the threshold\n" +
			"or more), FAILED (NEW's runs of a configuration of OLD failed or lack the metric; a\n" +
			"regression), RUNNING (they are still running, in another repro) or MISSING (NEW has\n" +
			"none yet). RUNNING and MISSING are not regressions, but they make the comparison\n" +
			"partial: it says nothing of those configurations, and says how many there are. When\n" +
			"NEW is a RESULTS-DIR, its runs that another repro is running count as RUNNING even\n" +
			"where its runs.parquet predates them.\n\n" +
			"How a change is tested:\n" +
			"  - acc, when both sides are RESULTS-DIRs whose runs have predictions.parquet and\n" +
			"    share a seed: example by example. McNemar's exact test (two-sided mid-p) on the\n" +
			"    (seed, example) pairs of the shared seeds counts the examples right in OLD and\n" +
			"    wrong in NEW against the other way round; the p-values of a metric's tested\n" +
			"    configurations are Holm-adjusted together; the interval resamples seeds, then\n" +
			"    examples. One seed is enough. The test treats examples as independent: it asks\n" +
			"    whether these models differ on these examples, so a change of code that only\n" +
			"    reshuffles seed noise can be significant; the threshold keeps such changes from\n" +
			"    being regressions.\n" +
			"  - every other metric, and tables without predictions: a paired t-test over the\n" +
			"    seeds both have (Welch's t-test when the seeds differ), at α each, with a\n" +
			"    percentile bootstrap interval over seeds; a side with fewer than two runs is\n" +
			"    untested.\n\n" +
			"The thresholds come from the regression key of the spec that the run tables'\n" +
			"experiment column names, or --spec.\n\n" +
			"Exit status: 0 when the comparison is complete and finds no regression; 1 when it\n" +
			"finds a regression (whether or not it is partial), or on an error; 2 when it finds\n" +
			"none but is partial (runs of NEW running or missing, as while a run is in progress).\n" +
			"With --partial a partial comparison without regressions exits 0.\n\n" +
			"   $ repro compare results/baselines/table1-smoke.parquet results/table1\n" +
			"   $ repro compare old/table1 new/table1 --metric acc,img --json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "take the thresholds and keys from experiment `EXP` (a name or a .yaml file)"},
			&cli.StringSliceFlag{Name: "metric", Usage: "compare only these `columns`, comma-separated (default: every numeric column both have)"},
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "significance level `α` of each comparison"},
			&cli.BoolFlag{Name: "json", Usage: "print the comparison as JSON"},
			&cli.BoolFlag{Name: "partial", Usage: "exit 0, not 2, when NEW lacks runs of OLD's configurations (running or missing) and nothing regressed"},
			&cli.BoolFlag{Name: "mixed", Usage: "compare tables of different experiments or scales (refused otherwise: their configurations cannot pair)"},
		},
		SkipFlagParsing: true,
		Action:          withArgs(compareAction),
	}
}

// compareAction parses the arguments of repro compare and compares.
func compareAction(c *cli.Context, f *cmdArgs) error {
	if len(f.Args()) != 2 {
		return errors.New("compare: want two arguments, OLD and NEW (FILE.parquet or RESULTS-DIR)")
	}
	alpha := f.Float64("alpha")
	if !(alpha > 0 && alpha < 1) {
		return fmt.Errorf("compare: --alpha must be in (0, 1), got %v", alpha)
	}
	var tables [2]*reports.Runs
	var runDirs [2]string
	for i, path := range f.Args() {
		r, err := readRunsLive(path)
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		tables[i] = r
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			runDirs[i] = runDirsOf(path)
		}
	}
	opts := &reports.CompareOptions{Alpha: alpha, Metrics: splitList(f.StringSlice("metric")), Mixed: f.Bool("mixed"),
		OldRunDirs: runDirs[0], NewRunDirs: runDirs[1]}
	if len(opts.Metrics) == 0 {
		opts.Metrics = nil
	}
	s, err := specOfRuns("compare", tables[1], f.String("spec"))
	if err != nil {
		if f.String("spec") != "" {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "compare: warning: no thresholds, nothing can regress: %v\n", err)
	} else {
		opts.Thresholds = specout.ThresholdsOf(s)
		opts.Keys = compareKeys(s)
		if opts.Metrics == nil {
			opts.Metrics = specMetrics(s, tables[0], tables[1])
		}
	}
	cmp, err := reports.Compare(tables[0], tables[1], opts)
	if err != nil {
		return err
	}
	if err := writeComparison(c.App.Writer, cmp, f.Bool("json")); err != nil {
		return err
	}
	if regs := cmp.Regressions(); len(regs) > 0 {
		return fmt.Errorf("compare: %d %s", len(regs), plural(len(regs), "regression", "regressions"))
	}
	if sum := cmp.PartialSummary(); sum != "" && !f.Bool("partial") {
		return cli.Exit(fmt.Sprintf("compare: partial, no regression among the rest: %s (exit status 2; --partial accepts it)", sum), 2)
	}
	return nil
}

// readRunsLive reads the run table at path, as readRuns does. When path is
// a results folder, the runs that another process is running (a manifest
// that says running, its lock held: runners.State) are added to it, or
// replace their rows, with status running: its runs.parquet is written at
// the end of a sweep, so during one it lacks them.
func readRunsLive(path string) (*reports.Runs, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return readRuns(path)
	}
	var live []results.Run
	dirs, _ := filepath.Glob(filepath.Join(path, "runs", "*"))
	for _, d := range dirs {
		if st, _ := runners.State(d); st != string(results.Running) {
			continue
		}
		m, err := results.ReadManifest(d)
		if err != nil {
			continue
		}
		live = append(live, results.RunOf(m))
	}
	file := filepath.Join(path, results.RunsFile)
	if len(live) == 0 {
		return readRuns(file)
	}
	rows, err := results.ReadRuns(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, r := range live {
		rows = slices.DeleteFunc(rows, func(x results.Run) bool { return x.RunID == r.RunID })
		rows = append(rows, r)
	}
	tmp, err := os.MkdirTemp("", "repro-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	merged := filepath.Join(tmp, results.RunsFile)
	if err := results.WriteRuns(merged, rows); err != nil {
		return nil, err
	}
	return reports.ReadRuns(merged)
}

// compareKeys returns the run columns that identify a configuration of s:
// the default keys, then its swept axes (but the seed) and its fixed
// hyperparameters, the spec's and each method's.
func compareKeys(s *experiments.Spec) []string {
	keys := slices.Clone(reports.DefaultCompareKeys)
	add := func(name string) {
		if name != "seed" && name != "epsilon" && !slices.Contains(keys, name) {
			keys = append(keys, name)
		}
	}
	sweeps := []experiments.Sweep{s.Sweep}
	params := []map[string]any{s.Params}
	for _, m := range s.Methods {
		sweeps = append(sweeps, m.Sweep)
		params = append(params, m.Params)
	}
	for _, sw := range sweeps {
		for _, a := range sw.Axes {
			add(a.Name)
		}
		for _, g := range sw.Zip {
			for _, a := range g {
				add(a.Name)
			}
		}
	}
	for _, p := range params {
		for _, name := range slices.Sorted(maps.Keys(p)) {
			add(name)
		}
	}
	return keys
}

// specMetrics returns the metrics spec s names (its regression
// thresholds, its tables' metrics and its plots' y and metrics) that both
// run tables have as numeric columns, or nil (every numeric column) if
// there are none.
func specMetrics(s *experiments.Spec, old, new *reports.Runs) []string {
	var names []string
	for _, r := range s.Regression {
		names = append(names, r.Metric)
	}
	for _, t := range s.Tables {
		names = append(names, t.Metrics...)
	}
	for _, p := range s.Plots {
		names = append(names, p.Y)
		names = append(names, p.Metrics...)
	}
	var out []string
	for _, n := range names {
		a, okA := old.Column(n)
		b, okB := new.Column(n)
		if n != "" && okA && okB && a.Kind == reports.Float && b.Kind == reports.Float && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// writeComparison writes c to w as text or JSON.
func writeComparison(w io.Writer, c *reports.Comparison, asJSON bool) error {
	if !asJSON {
		return c.WriteText(w)
	}
	warnings := make([]string, len(c.Warnings))
	for i, warn := range c.Warnings {
		warnings[i] = warn.Error()
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Alpha       float64          `json:"alpha"`
		Changes     []reports.Change `json:"changes"`
		Regressions int              `json:"regressions"`
		Partial     string           `json:"partial,omitempty"` // PartialSummary
		Warnings    []string         `json:"warnings"`
	}{c.Alpha, c.Changes, len(c.Regressions()), c.PartialSummary(), warnings})
}
