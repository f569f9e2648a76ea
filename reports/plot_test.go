// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/cmpimg"
)

// fig1 is the plot of the fig1 experiment on fashion-vqa: accuracy against ε
// per method.
func fig1() *Plot {
	return &Plot{
		X:      "epsilon_target",
		Y:      "acc",
		Series: []string{"method"},
		Where:  map[string]string{"task": "fashion-vqa"},
		Title:  "fashion-vqa",
		YLabel: "accuracy (%)",
		Scale:  100,
		LogX:   true,
	}
}

func TestPlotGolden(t *testing.T) {
	fig, err := fig1().Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	cmpimg.CheckPlot(func() {
		var buf bytes.Buffer
		if err := fig.WriteTo(&buf, "png"); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "fig1.png"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}, t, "fig1.png")
}

// TestPlotGoldenFacets draws the fig1 experiment as its spec asks: one
// panel per task, one line per method, ±std bands, log ε.
func TestPlotGoldenFacets(t *testing.T) {
	p := &Plot{
		X: "epsilon_target", Y: "acc", Series: []string{"method"}, Facets: []string{"task"},
		Title: "Accuracy against ε", YLabel: "accuracy (%)", Scale: 100, LogX: true,
	}
	fig, err := p.Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(fig.Panels) != 2 || fig.Panels[0].Name != "fashion-vqa" || fig.Panels[1].Name != "shapes-vqa" {
		t.Fatalf("got %d panels, want fashion-vqa and shapes-vqa", len(fig.Panels))
	}
	// Both panels share the y range.
	a, b := fig.Panels[0].Plot.Y, fig.Panels[1].Plot.Y
	if a.Min != b.Min || a.Max != b.Max {
		t.Errorf("y ranges differ: [%v, %v] and [%v, %v]", a.Min, a.Max, b.Min, b.Max)
	}
	cmpimg.CheckPlot(func() {
		var buf bytes.Buffer
		if err := fig.WriteTo(&buf, "png"); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "fig1_facets.png"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}, t, "fig1_facets.png")
}

// TestPlotSeries checks the aggregated points against values computed by
// hand from the construction of table1Rows.
func TestPlotSeries(t *testing.T) {
	fig, err := fig1().Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(fig.Panels) != 1 || len(fig.Panels[0].Series) != 3 {
		t.Fatalf("got %d panels, want 1 with 3 series", len(fig.Panels))
	}
	const tol = 1e-9
	check := func(desc string, got *Point, want Point) {
		t.Helper()
		if got == nil {
			t.Errorf("%s: got no point, want %+v", desc, want)
			return
		}
		if got.X != want.X || got.N != want.N || !near(got.Mean, want.Mean, tol) || !near(got.Std, want.Std, tol) {
			t.Errorf("%s: got %+v, want %+v", desc, *got, want)
		}
	}
	series := fig.Panels[0].Series
	np, dpsgd, dpzo := series[0], series[1], series[2]
	if np.Name != "nonprivate" || dpsgd.Name != "dpsgd" || dpzo.Name != "dpzo" {
		t.Errorf("got series %q, %q, %q, want nonprivate, dpsgd, dpzo", np.Name, dpsgd.Name, dpzo.Name)
	}
	if len(np.Points) != 0 {
		t.Errorf("nonprivate: got finite points %+v, want none", np.Points)
	}
	// 83, 84, 85: mean 84, std 1.
	check("nonprivate ∞", np.Inf, Point{X: math.Inf(1), N: 3, Mean: 84, Std: 1})
	if dpsgd.Inf != nil || len(dpsgd.Points) != 3 {
		t.Fatalf("dpsgd: got %+v, want 3 finite points", dpsgd)
	}
	// 49, 52, 55: mean 52, std 3.
	check("dpsgd ε=1", &dpsgd.Points[0], Point{X: 1, N: 3, Mean: 52, Std: 3})
	// Seed 1 has no acc: 69 and 71, mean 70, std √2.
	check("dpsgd ε=8", &dpsgd.Points[2], Point{X: 8, N: 2, Mean: 70, Std: math.Sqrt2})
	check("dpzo ε=3", &dpzo.Points[1], Point{X: 3, N: 3, Mean: 47, Std: 2})

	want := []string{"1 run has no acc", "n=2–3 seeds < 10"}
	if got := errorStrings(fig.Warnings); !equalStrings(got, want) {
		t.Errorf("got warnings %q, want %q", got, want)
	}
}

func TestPlotSave(t *testing.T) {
	fig, err := fig1().Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	prefix := filepath.Join(t.TempDir(), "fig1")
	paths, err := fig.Save(prefix)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	magic := map[string]string{".png": "\x89PNG", ".svg": "<?xml", ".pdf": "%PDF"}
	if len(paths) != 3 {
		t.Fatalf("got paths %q, want png, svg and pdf", paths)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := magic[filepath.Ext(path)]; !strings.HasPrefix(string(data), m) {
			t.Errorf("%s starts with %q, want %q", path, data[:min(len(data), 8)], m)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(prefix))
	if len(entries) != 3 {
		t.Errorf("got %d files in the output directory, want 3 (no temporary files left)", len(entries))
	}
}

func TestPlotErrors(t *testing.T) {
	runs := mustRuns(t, table1Rows())
	for _, tc := range []struct {
		desc string
		plot Plot
		want string
	}{
		{"missing x", Plot{X: "nope", Y: "acc"}, `x column "nope" not in the run table`},
		{"string y", Plot{X: "epsilon_target", Y: "task"}, `y column "task" holds strings`},
		{"missing series", Plot{X: "epsilon_target", Y: "acc", Series: []string{"nope"}}, `series column "nope"`},
		{"nothing finite", Plot{X: "epsilon_target", Y: "acc", Where: map[string]string{"method": "nonprivate"}}, "no runs with a finite epsilon_target"},
		{"empty where", Plot{X: "epsilon_target", Y: "acc", Where: map[string]string{"method": "nope"}}, "no runs left"},
	} {
		_, err := tc.plot.Build(runs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.desc, err, tc.want)
		}
	}
}

// TestPlotSingleX checks that a sweep with one finite x, with or without a
// point at ∞, and a single run per point still draws, in all formats (a
// single x without ∞ once made gonum widen the log axis to 0 and panic).
func TestPlotSingleX(t *testing.T) {
	for _, tc := range []struct {
		logX bool
		inf  bool
	}{{false, true}, {true, true}, {false, false}, {true, false}} {
		logX := tc.logX
		rows := []Row{
			{"method": "dpsgd", "epsilon_target": 8.0, "acc": 0.7},
			{"method": "nonprivate", "epsilon_target": math.Inf(1), "acc": 0.9},
			{"method": "nonprivate", "epsilon_target": math.Inf(1), "acc": 0.92},
		}
		want := []string{"n=1–2 seeds < 10"}
		if !tc.inf {
			// Three seeds: a band of zero width in x.
			rows = []Row{
				{"method": "dpsgd", "epsilon_target": 1.0, "acc": 0.3},
				{"method": "dpsgd", "epsilon_target": 1.0, "acc": 0.35},
				{"method": "dpsgd", "epsilon_target": 1.0, "acc": 0.28},
			}
			want = []string{"n=3 seeds < 10"}
		}
		runs := mustRuns(t, rows)
		fig, err := (&Plot{X: "epsilon_target", Y: "acc", Series: []string{"method"}, LogX: logX}).Build(runs)
		if err != nil {
			t.Fatalf("LogX=%v: Build: %v", logX, err)
		}
		for _, format := range PlotFormats {
			var buf bytes.Buffer
			if err := fig.WriteTo(&buf, format); err != nil || buf.Len() == 0 {
				t.Errorf("LogX=%v: WriteTo(%s): %d bytes, error %v", logX, format, buf.Len(), err)
			}
		}
		if !equalStrings(errorStrings(fig.Warnings), want) {
			t.Errorf("LogX=%v: got warnings %q, want %q", logX, errorStrings(fig.Warnings), want)
		}
	}
}

func TestBand(t *testing.T) {
	// Four runs with sample std 2: the standard error is 2/√4 = 1.
	pt := Point{X: 1, N: 4, Mean: 10, Std: 2}
	one := Point{X: 1, N: 1, Mean: 10}
	for _, tc := range []struct {
		band Band
		pt   Point
		want float64
	}{
		{BandStd, pt, 2},
		{BandSEM, pt, 1},
		{BandNone, pt, 0},
		{BandStd, one, 0},
		{BandSEM, one, 0},
	} {
		if got := tc.band.half(tc.pt); got != tc.want {
			t.Errorf("%v.half(%+v): got %v, want %v", tc.band, tc.pt, got, tc.want)
		}
	}
	for _, s := range []string{"std", "sem", "none"} {
		b, err := ParseBand(s)
		if err != nil || b.String() != s {
			t.Errorf("ParseBand(%q): got %v, %v", s, b, err)
		}
	}
	if _, err := ParseBand("iqr"); err == nil {
		t.Errorf("ParseBand(iqr): got nil error")
	}
	for _, s := range []string{"line", "scatter", "bar"} {
		k, err := ParsePlotKind(s)
		if err != nil || k.String() != s {
			t.Errorf("ParsePlotKind(%q): got %v, %v", s, k, err)
		}
	}
	if _, err := ParsePlotKind("pie"); err == nil {
		t.Errorf("ParsePlotKind(pie): got nil error")
	}
}

// TestPlotScatter checks that a scatter plot with standard-error bars and
// facets draws in every format.
func TestPlotScatter(t *testing.T) {
	p := &Plot{X: "epsilon_target", Y: "acc", Series: []string{"method"}, Facets: []string{"task"}, Kind: Scatter, Band: BandSEM}
	fig, err := p.Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for _, format := range PlotFormats {
		var buf bytes.Buffer
		if err := fig.WriteTo(&buf, format); err != nil || buf.Len() == 0 {
			t.Errorf("WriteTo(%s): %d bytes, error %v", format, buf.Len(), err)
		}
	}
}

// TestPlotGoldenBars draws MIA AUC per method and ε as grouped bars, ∞ as
// the last category.
func TestPlotGoldenBars(t *testing.T) {
	p := &Plot{X: "epsilon_target", Y: "acc", Series: []string{"method"}, Kind: Bar, Where: map[string]string{"task": "shapes-vqa"}, Scale: 100, YLabel: "accuracy (%)"}
	fig, err := p.Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	cmpimg.CheckPlot(func() {
		var buf bytes.Buffer
		if err := fig.WriteTo(&buf, "png"); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "bars.png"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}, t, "bars.png")
	if _, err := (&Plot{X: "epsilon_target", Y: "acc", Kind: Bar, LogX: true}).Build(mustRuns(t, table1Rows())); err == nil {
		t.Errorf("a bar plot with LogX: got nil error")
	}
}
