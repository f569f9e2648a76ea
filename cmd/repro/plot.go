// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/repro-dp/repro/reports"
	"github.com/urfave/cli/v2"
)

func init() { register(plotCommand) }

// plotOptions holds the parsed flags of repro plot.
type plotOptions struct {
	path    string
	plot    reports.Plot
	out     string
	formats []string
}

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw an experiment's plots, or a metric against a numeric column from a runs.parquet file",
		ArgsUsage: "EXP|FILE.parquet|RESULTS-DIR",
		Description: "Given an experiment (an embedded spec such as fig1, or a .yaml file), runs its\n" +
			"runs that are not finished (as repro run does, with --scale, --results, --jobs and\n" +
			"--set), unless --no-run, then writes the plots its spec asks for under RESULTS/EXP\n" +
			"(.png, .svg and .pdf) and prints their paths. With --no-run it draws the runs\n" +
			"finished so far and warns how many are missing.\n\n" +
			"   $ repro plot fig1 --scale smoke\n" +
			"   $ repro plot fig1 --scale smoke --no-run --results /tmp/results\n" +
			"   $ repro plot fig3 --from results/baselines/fig3-small.parquet\n" +
			"   $ repro plot fig1 --from results/fig1 --all-runs\n\n" +
			"--from draws the spec's plots from a run table file, such as a checked-in baseline,\n" +
			"into a temporary folder, running nothing (roc and grid plots need the runs' folders).\n" +
			fromDeclaredHelp +
			"Given an existing file or directory, reads a run table (one row per run, such as\n" +
			"results/EXP/runs.parquet, or the runs.parquet of a results directory) and draws\n" +
			"--y against --x with one line per distinct --series value: the mean over the runs\n" +
			"(seeds) at each x with a shaded ±1 std band, one panel per distinct --facet value. Runs at x = ∞ (ε = ∞) are drawn as a\n" +
			"dotted horizontal line per series, their mean ± std in the legend. Axes, legend and\n" +
			"colour bar are labelled from a table of column labels with units; a note under the\n" +
			"panels says what the bands mean. Writes PREFIX.png, PREFIX.svg and PREFIX.pdf and\n" +
			"prints their paths; warnings go to standard error. --kind radar draws one spoke per\n" +
			"--metrics column (or per --x value), roc the membership-inference ROC of each series\n" +
			"from the scores.parquet of the runs (log-log, with the diagonal), heatmap the mean\n" +
			"--y over --x and --rows, grid the images/NAME.png (--images) of each run.\n\n" +
			"   $ repro plot results/fig1/runs.parquet --x epsilon_target --y acc --series method --facet task --out fig1 --log-x\n" +
			"   $ repro plot runs.parquet --x epsilon_target --y acc --where task=shapes-vqa --ylabel 'accuracy (%)' --out shapes\n" +
			"   $ repro plot results/fig1 --kind roc --where epsilon_target=8 --facet task --out roc8\n" +
			"   $ repro plot results/fig1 --kind heatmap --x epsilon_target --rows seed --y acc --facet method --out heat",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "x", Usage: "the numeric `column` on the horizontal axis, e.g. epsilon_target (required with a FILE)"},
			&cli.StringFlag{Name: "y", Usage: "the numeric `column` on the vertical axis, e.g. acc (required with a FILE)"},
			&cli.StringSliceFlag{Name: "series", Value: cli.NewStringSlice("method"), Usage: "`columns` whose values make the lines, comma-separated; --series '' for one line"},
			&cli.StringSliceFlag{Name: "facet", Usage: "`columns` whose values make side-by-side panels, comma-separated"},
			&cli.StringFlag{Name: "kind", Value: "line", Usage: "plot `kind`: line (with shaded bands), scatter or bar (with error bars), radar, roc, heatmap or grid"},
			&cli.StringSliceFlag{Name: "metrics", Usage: "radar: the metric `columns` on its spokes (three or more), comma-separated"},
			&cli.StringFlag{Name: "rows", Usage: "heatmap: the `column` down the vertical axis (--x goes across, --y is the colour)"},
			&cli.StringFlag{Name: "attack", Usage: "roc: the `attack` whose per-example scores are drawn (default: every attack)"},
			&cli.StringSliceFlag{Name: "images", Usage: "grid: the image `names` (images/NAME.png in each run's folder), comma-separated"},
			&cli.StringFlag{Name: "band", Value: "std", Usage: "error `band`: std (±1 sample std), sem (±1 standard error) or none"},
			&cli.StringFlag{Name: "out", Usage: "output path `prefix`; the format's extension is added (required with a FILE)"},
			&cli.StringSliceFlag{Name: "formats", Value: cli.NewStringSlice(reports.PlotFormats...), Usage: "output `formats`: png, svg, pdf, comma-separated"},
			&cli.BoolFlag{Name: "log-x", Usage: "log scale on the horizontal axis"},
			&cli.Float64Flag{Name: "factor", Value: 1, Usage: "multiply y by `factor` (100 for percent)"},
			&cli.IntFlag{Name: "min-seeds", Value: 10, Usage: "warn when a point has fewer than `n` runs; 0 never warns"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep only runs with `column=value`; repeatable"},
			&cli.StringFlag{Name: "title", Usage: "plot `title`"},
			&cli.StringFlag{Name: "xlabel", Usage: "horizontal axis `label`; default the x column's label"},
			&cli.StringFlag{Name: "ylabel", Usage: "vertical axis `label`; default the y column's label"},
			allRunsFlag(),
		}, expFlags()...),
		SkipFlagParsing: true, // flags may follow the argument; see withArgs
		Action:          withArgs(plotAction),
	}
}

// plotAction parses the arguments of repro plot and draws the plots.
func plotAction(c *cli.Context, f *cmdArgs) error {
	if len(f.Args()) != 1 {
		return errors.New("plot: want exactly one FILE.parquet, RESULTS-DIR or EXP argument")
	}
	experiment := !isPath(f.Args()[0])
	if err := checkArgFlags("plot", f, experiment, "all-runs"); err != nil {
		return err
	}
	if err := checkAllRuns("plot", f, experiment); err != nil {
		return err
	}
	if experiment {
		o := expOptions{name: f.Args()[0], scale: f.String("scale"), results: f.String("results"), jobs: f.Int("jobs"), set: f.StringSlice("set"), noRun: f.Bool("no-run"), from: f.String("from"),
			declared: true, allRuns: f.Bool("all-runs")}
		return writeExperimentPlots(c.Context, c.App.Writer, c.App.ErrWriter, o)
	}
	kind, err := reports.ParsePlotKind(f.String("kind"))
	if err != nil {
		return err
	}
	required := []string{"out"}
	switch kind {
	case reports.Line, reports.Scatter, reports.Bar:
		required = append(required, "x", "y")
	case reports.Heatmap:
		required = append(required, "x", "y", "rows")
	}
	for _, name := range required {
		if f.String(name) == "" {
			return fmt.Errorf("plot: --%s is required with --kind %s", name, kind)
		}
	}
	where, err := parseWhere(f.StringSlice("where"))
	if err != nil {
		return err
	}
	formats := splitList(f.StringSlice("formats"))
	for _, format := range formats {
		if format != "png" && format != "svg" && format != "pdf" {
			return fmt.Errorf("plot: unknown format %q (want png, svg or pdf)", format)
		}
	}
	if len(formats) == 0 {
		return errors.New("plot: --formats is empty")
	}
	if x := f.Float64("factor"); x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("plot: --factor must be finite and non-zero, got %v", x)
	}
	band, err := reports.ParseBand(f.String("band"))
	if err != nil {
		return err
	}
	minSeeds := f.Int("min-seeds")
	if minSeeds == 0 {
		minSeeds = -1
	}
	o := plotOptions{
		path: f.Args()[0],
		plot: reports.Plot{
			X:        f.String("x"),
			Y:        f.String("y"),
			Series:   splitList(f.StringSlice("series")),
			Facets:   splitList(f.StringSlice("facet")),
			Kind:     kind,
			Band:     band,
			Where:    where,
			Title:    f.String("title"),
			XLabel:   f.String("xlabel"),
			YLabel:   f.String("ylabel"),
			LogX:     f.Bool("log-x"),
			Scale:    f.Float64("factor"),
			MinSeeds: minSeeds,
			Metrics:  splitList(f.StringSlice("metrics")),
			Rows:     f.String("rows"),
			Attack:   f.String("attack"),
			Images:   splitList(f.StringSlice("images")),
			RunDirs:  runDirsOf(f.Args()[0]),
		},
		out:     f.String("out"),
		formats: formats,
	}
	return writePlot(c.App.Writer, c.App.ErrWriter, o)
}

// writeExperimentPlots runs what is missing of experiment o.name (unless
// o.noRun), writes the plots of its spec and prints their paths to w; the
// warnings go to wErr.
func writeExperimentPlots(ctx context.Context, w, wErr io.Writer, o expOptions) error {
	s, root, partial, sweepErr, err := prepareExperiment(ctx, wErr, "plot", o)
	if err != nil {
		return err
	}
	paths, err := writeSpecOutputs(wErr, "plot", root, s, false, partial)
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	return errors.Join(sweepErr, err)
}

// writePlot reads the run table at o.path, saves o.plot under o.out, prints
// the paths written to w and the warnings to wErr.
func writePlot(w, wErr io.Writer, o plotOptions) error {
	runs, err := readRuns(o.path)
	if err != nil {
		return err
	}
	fig, err := o.plot.Build(runs)
	if err != nil {
		return err
	}
	paths, err := fig.Save(o.out, o.formats...)
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	if err != nil {
		return err
	}
	for _, warn := range fig.Warnings {
		fmt.Fprintf(wErr, "warning: %v\n", warn)
	}
	return nil
}

// runDirsOf returns the folder of the run folders next to the run table at
// path (a runs.parquet file or the experiment folder that holds it):
// EXP/runs, which roc and grid plots read.
func runDirsOf(path string) string {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, "runs")
	}
	return filepath.Join(filepath.Dir(path), "runs")
}
