// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/reports"
)

func TestPlotCommand(t *testing.T) {
	path := writeReportsRuns(t)
	prefix := filepath.Join(t.TempDir(), "fig1")
	out, errOut, err := run(t, "plot", path, "--x", "epsilon_target", "--y", "acc", "--series", "method", "--out", prefix, "--log-x")
	if err != nil {
		t.Fatalf("repro plot: %v", err)
	}
	want := prefix + ".png\n" + prefix + ".svg\n" + prefix + ".pdf\n"
	if out != want {
		t.Errorf("repro plot printed %q, want %q", out, want)
	}
	for _, w := range []string{"warning: 1 run failed", "warning: n=2–3 seeds < 10"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("repro plot: standard error lacks %q:\n%s", w, errOut)
		}
	}
	for _, ext := range []string{".png", ".svg", ".pdf"} {
		if fi, err := os.Stat(prefix + ext); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (size %v)", prefix+ext, err, fi)
		}
	}

	// Facets, scatter, standard errors, flags after the file.
	prefix3 := filepath.Join(t.TempDir(), "facets")
	out, _, err = run(t, "plot", "--facet", "task", path, "--x", "epsilon_target", "--y", "acc", "--out", prefix3, "--kind", "scatter", "--band", "sem", "--formats", "png")
	if err != nil || out != prefix3+".png\n" {
		t.Errorf("repro plot --facet task --kind scatter: printed %q, error %v; want %q", out, err, prefix3+".png\n")
	}

	// One format only.
	prefix2 := filepath.Join(t.TempDir(), "only")
	out, _, err = run(t, "plot", path, "--x", "epsilon_target", "--y", "acc", "--out", prefix2, "--formats", "svg")
	if err != nil || out != prefix2+".svg\n" {
		t.Errorf("repro plot --formats svg: printed %q, error %v; want %q", out, err, prefix2+".svg\n")
	}
}

func TestPlotCommandErrors(t *testing.T) {
	path := writeReportsRuns(t)
	out := filepath.Join(t.TempDir(), "fig")
	for _, tc := range []struct {
		desc string
		args []string
		want string
	}{
		{"no y", []string{"plot", path, "--x", "epsilon_target", "--out", out}, "y"},
		{"string x", []string{"plot", path, "--x", "task", "--y", "acc", "--out", out}, `x column "task" holds strings`},
		{"bad format", []string{"plot", path, "--x", "epsilon_target", "--y", "acc", "--out", out, "--formats", "gif"}, "unknown format"},
		{"bad kind", []string{"plot", path, "--x", "epsilon_target", "--y", "acc", "--out", out, "--kind", "pie"}, "unknown plot kind"},
		{"bad band", []string{"plot", path, "--x", "epsilon_target", "--y", "acc", "--out", out, "--band", "iqr"}, "unknown band"},
		{"only infinity", []string{"plot", path, "--x", "epsilon_target", "--y", "acc", "--out", out, "--where", "method=nonprivate"}, "no runs with a finite"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: repro %v: got error %v, want one containing %q", tc.desc, tc.args, err, tc.want)
		}
	}
}

// TestPlotExperimentFileFlags checks that the flags that shape a plot drawn
// from a run table are a usage error with an experiment, whose spec sets
// its plots, and that the experiment flags are not.
func TestPlotExperimentFileFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		desc string
		args []string
		want string
	}{
		{"one flag", []string{"fig1", "--log-x"},
			`plot: flag --log-x applies only to a FILE.parquet or RESULTS-DIR argument; "fig1" is neither, so it names an experiment, whose spec sets its plots`},
		{"several flags", []string{"--x", "epsilon_target", "fig1", "--y", "acc", "--out", "f", "--formats", "png"},
			`plot: flags --x, --y, --out, --formats apply only to a FILE.parquet or RESULTS-DIR argument; "fig1" is neither`},
		{"experiment flags", []string{"fig1", "--scale", "smoke", "--jobs", "1", "--set", "delta=1e-6", "--no-run", "--results", dir},
			"plot: fig1: none of its"},
	} {
		_, _, err := run(t, append([]string{"plot"}, tc.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: repro plot %s: got error %v, want one starting %q", tc.desc, strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestSpecPlotLabels checks that every plot of every embedded spec labels
// its axes, legend and colour bar from the label table: no column it
// draws reaches the figure as a raw column name (update_ratio).
func TestSpecPlotLabels(t *testing.T) {
	infos, err := experiments.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		s, err := experiments.Load(info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Plots {
			for _, col := range append([]string{p.X, p.Y, p.Series, p.Rows, p.Facet}, p.Metrics...) {
				// A column without a label of its own is shown with spaces
				// for underscores: still its raw name.
				if l := reports.AxisLabel(nil, col); strings.Contains(col, "_") && l == strings.ReplaceAll(col, "_", " ") {
					t.Errorf("%s, plot %s: column %s has no label in the label table (shown as %q)", s.Name, p.Name, col, l)
				}
			}
		}
	}
}
