// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
)

// WriteOutputs writes the tables and plots that spec s asks for from the
// experiment's run table root/<name>/runs.parquet into root/<name>/:
//
//   - each table as <table>.txt, <table>.md and <table>.tex (package
//     reports; several metrics become sub-columns);
//   - each plot as <plot>.png, .svg and .pdf, or, when the plot has a
//     facet column, one such triple <plot>-<value> per distinct value.
//
// It returns the paths written. Every file is written atomically. Warnings
// of the tables and plots are written with them (under the tables; plots
// return theirs in warnings).
func WriteOutputs(root string, s *experiments.Spec) (paths, warnings []string, err error) {
	dir := filepath.Join(root, s.Name)
	if len(s.Tables) == 0 && len(s.Plots) == 0 {
		return nil, nil, nil
	}
	runs, err := reports.ReadRuns(filepath.Join(dir, results.RunsFile))
	if err != nil {
		return nil, nil, err
	}
	for _, t := range s.Tables {
		best, err := reports.ParseBest(t.Best)
		if err != nil {
			return paths, warnings, err
		}
		rt := reports.Table{Title: t.Title, Rows: t.Rows, Cols: t.Columns, Metrics: t.Metrics, Best: best}
		for _, r := range t.Reference {
			rt.References = append(rt.References, reports.Reference{At: r.At, Metric: r.Metric, Value: r.Value, Source: r.Source})
		}
		g, err := rt.Build(runs)
		if err != nil {
			return paths, warnings, fmt.Errorf("pipeline: table %s: %w", t.Name, err)
		}
		prefix := filepath.Join(dir, t.Name)
		ps, err := g.Save(prefix)
		paths = append(paths, ps...)
		if err != nil {
			return paths, warnings, err
		}
	}
	for _, p := range s.Plots {
		if p.Kind != "line" {
			warnings = append(warnings, fmt.Sprintf("plot %s: kind %q is not drawn yet (line only)", p.Name, p.Kind))
			continue
		}
		facets := []string{""}
		if p.Facet != "" {
			col, ok := runs.Column(p.Facet)
			if !ok {
				return paths, warnings, fmt.Errorf("pipeline: plot %s: no column %q to facet on", p.Name, p.Facet)
			}
			facets = facets[:0]
			for i := range runs.Len() {
				if v := col.Format(i); !slices.Contains(facets, v) {
					facets = append(facets, v)
				}
			}
		}
		for _, fv := range facets {
			rp := reports.Plot{X: p.X, Y: p.Y, Title: p.Title, LogX: p.LogX}
			if p.Series != "" {
				rp.Series = []string{p.Series}
			}
			prefix := filepath.Join(dir, p.Name)
			if p.Facet != "" {
				rp.Where = map[string]string{p.Facet: fv}
				rp.Title = strings.TrimSpace(p.Title + " (" + fv + ")")
				prefix += "-" + fv
			}
			fig, err := rp.Build(runs)
			if err != nil {
				return paths, warnings, fmt.Errorf("pipeline: plot %s: %w", p.Name, err)
			}
			for _, w := range fig.Warnings {
				warnings = append(warnings, fmt.Sprintf("plot %s: %v", filepath.Base(prefix), w))
			}
			ps, err := fig.Save(prefix)
			paths = append(paths, ps...)
			if err != nil {
				return paths, warnings, err
			}
		}
	}
	return paths, warnings, nil
}
