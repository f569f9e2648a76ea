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
	"strings"

	"github.com/repro-dp/repro/reports"
	"github.com/urfave/cli/v2"
)

func init() { register(tableCommand) }

// tableOptions holds the parsed flags of repro table.
type tableOptions struct {
	path   string
	table  reports.Table
	format reports.Format
	out    string // if set, write out.txt, out.md and out.tex instead
}

func tableCommand() *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "print an experiment's tables, or a table of metrics, mean ± std over seeds, from a runs.parquet file",
		ArgsUsage: "EXP|FILE.parquet|RESULTS-DIR",
		Description: "Given an experiment (an embedded spec such as table1, or a .yaml file), runs its\n" +
			"runs that are not finished (as repro run does, with --scale, --results, --jobs and\n" +
			"--set), unless --no-run, then writes the tables its spec asks for under\n" +
			"RESULTS/EXP (.txt, .md and .tex) and prints them in --format. With --no-run it\n" +
			"shows the runs finished so far and warns how many are missing.\n\n" +
			"   $ repro table table1 --scale smoke\n" +
			"   $ repro table table1 --scale smoke --no-run --format md\n" +
			"   $ repro table my-spec.yaml --jobs 2 --set sweep.seed=[1,2,3] --format tex\n" +
			"   $ repro table table1 --from results/baselines/table1-small.parquet --format tex\n" +
			"   $ repro table sparta-table2 --from results/baselines/sparta-table2-small.parquet --all-runs\n\n" +
			fromDeclaredHelp +
			tableInfoHelp +
			"Given an existing file or directory, reads a run table (one row per run, such as\n" +
			"results/EXP/runs.parquet, or the runs.parquet of a results directory) and prints\n" +
			"one row per distinct --rows value and one column per distinct --cols value (and per metric), each cell the mean ±\n" +
			"sample std of --metric over the runs that share them, paper-style: text, Markdown or\n" +
			"LaTeX (booktabs). --best marks the best method of each column, or the best cell of\n" +
			"each column when method is not a key. Runs whose status is not ok are left out and\n" +
			"counted; warnings (too few seeds, failed runs) go to standard error, not into the\n" +
			"table. A .tex table names the packages it needs in its first line and, wider than\n" +
			"a page, is split into several tabulars; a metric column that repeats another cell\n" +
			"for cell (img on a task whose questions all show an image) is left out, with a note.\n\n" +
			"   $ repro table results/table1/runs.parquet --metric acc --best max\n" +
			"   $ repro table runs.parquet --rows method --cols task,epsilon_target --metric acc --format tex --factor 100 --precision 1\n" +
			"   $ repro table runs.parquet --cols epsilon_target --metric mia_auc --best min --where task=fashion-vqa\n" +
			"   $ repro table runs.parquet --rows epsilon_target --cols method,task --metric acc,img --best max",
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "rows", Value: cli.NewStringSlice("method"), Usage: "row key `columns`, comma-separated"},
			&cli.StringSliceFlag{Name: "cols", Value: cli.NewStringSlice("task", "epsilon_target"), Usage: "column key `columns`, comma-separated; --cols '' for a single column"},
			&cli.StringSliceFlag{Name: "metric", Usage: "the numeric `columns` in the cells, e.g. acc, comma-separated; several become sub-columns (required with a FILE)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `format`: text, md or tex"},
			&cli.StringFlag{Name: "best", Value: "none", Usage: "mark the best cells by `rule`: max, min or none"},
			&cli.StringSliceFlag{Name: "best-among", Usage: "key `columns` whose values compete for best (default: method if it is a key, else the rows)"},
			&cli.IntFlag{Name: "precision", Value: 2, Usage: "`digits` after the decimal point"},
			&cli.Float64Flag{Name: "factor", Value: 1, Usage: "multiply the metric by `factor` (100 for percent)"},
			&cli.IntFlag{Name: "min-seeds", Value: 10, Usage: "warn when a cell has fewer than `n` runs; 0 never warns"},
			&cli.StringSliceFlag{Name: "where", Usage: "keep only runs with `column=value`; repeatable"},
			&cli.StringFlag{Name: "title", Usage: "table `title`; default the metric"},
			&cli.StringFlag{Name: "out", Usage: "write `PREFIX`.txt, PREFIX.md and PREFIX.tex and print their paths, instead of printing the table in --format"},
			allRunsFlag(),
			&cli.BoolFlag{Name: "info", Usage: "print what each run table argument holds (runs, seeds, columns, recorded load) instead of a table"},
		}, expFlags()...),
		SkipFlagParsing: true, // flags may follow the argument; see withArgs
		Action:          withArgs(tableAction),
	}
}

// tableAction parses the arguments of repro table and writes the tables.
func tableAction(c *cli.Context, f *cmdArgs) error {
	if f.Bool("info") {
		if len(f.Args()) == 0 {
			return errors.New("table: --info wants one or more FILE.parquet or RESULTS-DIR arguments")
		}
		for _, name := range f.Given() {
			if name != "info" {
				return fmt.Errorf("table: --info takes no other flag (got --%s)", name)
			}
		}
		for _, a := range f.Args() {
			if !isPath(a) {
				return fmt.Errorf("table: --info: %q is no run table (FILE.parquet or RESULTS-DIR)", a)
			}
		}
		return tableInfo(c.App.Writer, f.Args())
	}
	if len(f.Args()) != 1 {
		return errors.New("table: want exactly one FILE.parquet, RESULTS-DIR or EXP argument")
	}
	experiment := !isPath(f.Args()[0])
	if err := checkArgFlags("table", f, experiment, "format", "all-runs"); err != nil {
		return err
	}
	if err := checkAllRuns("table", f, experiment); err != nil {
		return err
	}
	if experiment {
		format, err := reports.ParseFormat(f.String("format"))
		if err != nil {
			return err
		}
		o := expOptions{name: f.Args()[0], scale: f.String("scale"), results: f.String("results"), jobs: f.Int("jobs"), set: f.StringSlice("set"), noRun: f.Bool("no-run"), from: f.String("from"),
			declared: true, allRuns: f.Bool("all-runs")}
		return writeExperimentTables(c.Context, c.App.Writer, c.App.ErrWriter, o, format)
	}
	metrics := splitList(f.StringSlice("metric"))
	if len(metrics) == 0 {
		return errors.New("table: --metric is required")
	}
	format, err := reports.ParseFormat(f.String("format"))
	if err != nil {
		return err
	}
	best, err := reports.ParseBest(f.String("best"))
	if err != nil {
		return err
	}
	where, err := parseWhere(f.StringSlice("where"))
	if err != nil {
		return err
	}
	prec := f.Int("precision")
	if prec < 0 {
		return errors.New("table: --precision must be ≥ 0")
	}
	if prec == 0 {
		prec = -1 // reports.Table reads 0 as the default
	}
	if x := f.Float64("factor"); x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("table: --factor must be finite and non-zero, got %v", x)
	}
	minSeeds := f.Int("min-seeds")
	if minSeeds == 0 {
		minSeeds = -1
	}
	o := tableOptions{
		path: f.Args()[0],
		table: reports.Table{
			Title:     f.String("title"),
			Rows:      splitList(f.StringSlice("rows")),
			Cols:      splitList(f.StringSlice("cols")),
			Metrics:   metrics,
			BestAmong: splitList(f.StringSlice("best-among")),
			Where:     where,
			Best:      best,
			Scale:     f.Float64("factor"),
			Precision: prec,
			MinSeeds:  minSeeds,
		},
		format: format,
		out:    f.String("out"),
	}
	return writeTable(c.App.Writer, c.App.ErrWriter, o)
}

// writeTable reads the run table at o.path and writes o.table to w; the
// table's warnings go to wErr.
func writeTable(w, wErr io.Writer, o tableOptions) error {
	runs, err := readRuns(o.path)
	if err != nil {
		return err
	}
	g, err := o.table.Build(runs)
	if err != nil {
		return err
	}
	defer func() {
		for _, warn := range g.Warnings {
			fmt.Fprintf(wErr, "warning: %v\n", warn)
		}
	}()
	if o.out == "" {
		return g.Write(w, o.format)
	}
	paths, err := g.Save(o.out)
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	return err
}

// writeExperimentTables runs what is missing of experiment o.name (unless
// o.noRun), writes the tables of its spec and prints them to w in format;
// the paths written and the warnings go to wErr.
func writeExperimentTables(ctx context.Context, w, wErr io.Writer, o expOptions, format reports.Format) error {
	s, root, partial, sweepErr, err := prepareExperiment(ctx, wErr, "table", o)
	if err != nil {
		return err
	}
	paths, err := writeSpecOutputs(wErr, "table", root, s, true, partial)
	n := 0
	for _, p := range paths {
		fmt.Fprintf(wErr, "wrote %s\n", p)
		if !strings.HasSuffix(p, format.Ext()) {
			continue
		}
		b, rerr := os.ReadFile(p)
		if rerr != nil {
			err = errors.Join(err, rerr)
			continue
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
		w.Write(b)
		n++
	}
	return errors.Join(sweepErr, err)
}

// readRuns reads the run table at path, or at path/runs.parquet when path
// is a directory (an experiment's results directory).
func readRuns(path string) (*reports.Runs, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "runs.parquet")
	}
	return reports.ReadRuns(path)
}

// splitList returns the non-empty, trimmed items of list, each of which may
// itself be comma-separated.
func splitList(list []string) []string {
	var out []string
	for _, item := range list {
		for _, s := range strings.Split(item, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// parseWhere parses column=value filters.
func parseWhere(list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	where := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--where %q: want column=value", kv)
		}
		where[strings.TrimSpace(k)] = v
	}
	return where, nil
}
