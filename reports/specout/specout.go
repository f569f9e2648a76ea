// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package specout provides the outputs an experiment spec asks for: its
// tables and plots, drawn by package reports from the experiment's run
// table (and, for roc and grid plots, from the files of its runs).
//
// The steps of [Write] are:
//
//  1. read root/<experiment>/runs.parquet;
//  2. build each table of the spec ([TableOf]) and write it as
//     <table>.txt, .md and .tex;
//  3. build each plot ([PlotOf]) and write it as <plot>.png, .svg and
//     .pdf, or, when the plot has a facet column, one such triple
//     <plot>-<value> per distinct value of the column.
//
// Every file is written atomically. Warnings are returned as text, each
// prefixed with the output it belongs to.
package specout

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
)

// Write writes the tables and plots that spec s asks for from the
// experiment's run table root/<name>/runs.parquet into root/<name>/, and
// returns the paths written and the warnings, which the files do not
// carry (a paper table holds no "n=3 seeds < 10"). It stops at the first output that cannot be
// built or written; the paths written until then are returned with the
// error.
func Write(root string, s *experiments.Spec) (paths, warnings []string, err error) {
	return write(root, s, false)
}

// WritePartial is [Write] for a run table read while some of the
// experiment's runs are not finished (running in another process, or not
// started), when the caller has said how many: the tables do not warn of
// paper values whose cells have no finished run, nor of runs still
// running (see reports.Table.Partial).
func WritePartial(root string, s *experiments.Spec) (paths, warnings []string, err error) {
	return write(root, s, true)
}

func write(root string, s *experiments.Spec, partial bool) (paths, warnings []string, err error) {
	if len(s.Tables) == 0 && len(s.Plots) == 0 {
		return nil, nil, nil
	}
	dir := filepath.Join(root, s.Name)
	runDirs := results.RunDir(root, s.Name, "")
	runs, err := reports.ReadRuns(filepath.Join(dir, results.RunsFile))
	if err != nil {
		return nil, nil, err
	}
	// One table or plot that cannot be built does not keep the others
	// from being written.
	var errs []error
	for _, t := range s.Tables {
		ps, ws, err := writeTable(dir, runs, t, partial)
		paths = append(paths, ps...)
		warnings = append(warnings, ws...)
		errs = append(errs, err)
	}
	for _, p := range s.Plots {
		ps, ws, err := writePlot(dir, runDirs, runs, p)
		paths = append(paths, ps...)
		warnings = append(warnings, ws...)
		errs = append(errs, err)
	}
	return paths, warnings, errors.Join(errs...)
}

// TableOf returns the reports table that spec table t describes.
func TableOf(t experiments.Table) (*reports.Table, error) {
	best, err := reports.ParseBest(t.Best)
	if err != nil {
		return nil, err
	}
	rt := &reports.Table{Title: t.Title, Rows: t.Rows, Cols: t.Columns, Metrics: t.Metrics, Pool: t.Pool, Best: best}
	for _, r := range t.Reference {
		rt.References = append(rt.References, reports.Reference{At: r.At, Metric: r.Metric, Value: r.Value, Source: r.Source})
	}
	return rt, nil
}

// writeTable builds table t from runs and writes it under dir; the
// table's warnings are returned, not written into its files.
func writeTable(dir string, runs *reports.Runs, t experiments.Table, partial bool) (paths, warnings []string, err error) {
	rt, err := TableOf(t)
	if err != nil {
		return nil, nil, err
	}
	rt.Partial = partial
	g, err := rt.Build(runs)
	if err != nil {
		return nil, nil, fmt.Errorf("specout: table %s: %w", t.Name, err)
	}
	for _, w := range g.Warnings {
		warnings = append(warnings, fmt.Sprintf("table %s: %v", t.Name, w))
	}
	paths, err = g.Save(filepath.Join(dir, t.Name))
	return paths, warnings, err
}

// PlotOf returns the reports plot that spec plot p describes, without its
// facet: the caller draws one plot per facet value (see [Write]). runDirs
// is the folder of the experiment's run folders, which roc and grid plots
// read.
func PlotOf(p experiments.Plot, runDirs string) (*reports.Plot, error) {
	kind, err := reports.ParsePlotKind(p.Kind)
	if err != nil {
		return nil, err
	}
	band, err := reports.ParseBand(p.Band)
	if err != nil {
		return nil, err
	}
	rp := &reports.Plot{
		Kind: kind, Band: band, X: p.X, Y: p.Y, Title: p.Title, LogX: p.LogX,
		Metrics: p.Metrics, Rows: p.Rows, Attack: p.Attack, Images: p.Images,
	}
	if kind == reports.ROC || kind == reports.ImageGrid {
		rp.RunDirs = runDirs
	}
	if p.Series != "" {
		rp.Series = []string{p.Series}
	}
	return rp, nil
}

// A Figure is one figure of a spec plot: the whole plot, or, when the plot
// has a facet column, its panel set for one value of the column.
type Figure struct {
	// Name is the plot's name, with "-<value>" for a facet value: the
	// prefix of the figure's files.
	Name string
	*reports.Figure
}

// FiguresOf builds plot p from runs, one figure per facet value (one in
// all without a facet); runDirs holds the run folders. It stops at the
// first figure that cannot be built and returns the figures built until
// then with the error.
func FiguresOf(runDirs string, runs *reports.Runs, p experiments.Plot) ([]Figure, error) {
	facets := []string{""}
	if p.Facet != "" {
		col, ok := runs.Column(p.Facet)
		if !ok {
			return nil, fmt.Errorf("specout: plot %s: no column %q to facet on", p.Name, p.Facet)
		}
		facets = facets[:0]
		for i := range runs.Len() {
			if v := col.Format(i); !slices.Contains(facets, v) {
				facets = append(facets, v)
			}
		}
	}
	var out []Figure
	for _, fv := range facets {
		rp, err := PlotOf(p, runDirs)
		if err != nil {
			return out, err
		}
		name := p.Name
		if p.Facet != "" {
			rp.Where = map[string]string{p.Facet: fv}
			rp.Title = strings.TrimSpace(p.Title + " (" + fv + ")")
			name += "-" + fv
		}
		fig, err := rp.Build(runs)
		if err != nil {
			return out, fmt.Errorf("specout: plot %s: %w", name, err)
		}
		out = append(out, Figure{Name: name, Figure: fig})
	}
	return out, nil
}

// writePlot builds plot p from runs, one file set per facet value, and
// writes it under dir; runDirs holds the run folders.
func writePlot(dir, runDirs string, runs *reports.Runs, p experiments.Plot) (paths, warnings []string, err error) {
	figs, err := FiguresOf(runDirs, runs, p)
	for _, fig := range figs {
		for _, w := range fig.Warnings {
			warnings = append(warnings, fmt.Sprintf("plot %s: %v", fig.Name, w))
		}
		ps, err := fig.Save(filepath.Join(dir, fig.Name))
		paths = append(paths, ps...)
		if err != nil {
			return paths, warnings, err
		}
	}
	return paths, warnings, err
}
