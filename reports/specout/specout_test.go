// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package specout

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/cmpimg"
	"gonum.org/v1/plot/vg"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
)

// loadKinds parses testdata/kinds.yaml.
func loadKinds(t *testing.T) *experiments.Spec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "kinds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiments.Parse("kinds.yaml", data, nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// writeKinds writes the runs of the kinds spec under root: runs.parquet,
// and in each run's folder scores.parquet and two images. The values are
// made up: accuracy rises with ε, update ratio and retention; the attack
// separates members better at larger ε.
func writeKinds(t *testing.T, root string, s *experiments.Spec) {
	t.Helper()
	configs := s.Expand()
	var rows []results.Run
	for k, c := range configs {
		id := fmt.Sprintf("run%02d", k)
		rng := rand.New(rand.NewPCG(uint64(k), 7))
		eps := float64(c.Epsilon)
		strength := 1.0
		if !math.IsInf(eps, 1) {
			strength = eps / (eps + 4)
		}
		u, _ := c.Params["update_ratio"].(float64)
		r, _ := c.Params["retention"].(float64)
		acc := 40 + 40*strength + 10*u + 5*r + 2*float64(c.Seed)
		row := results.Run{
			RunID: id, Experiment: s.Name, Status: results.OK, Method: c.Method, Task: c.Task, Scale: c.Scale,
			Seed: c.Seed, EpsilonTarget: eps, Epsilon: math.NaN(), Delta: c.Delta, Sigma: math.NaN(), SampleRate: math.NaN(),
			Params: c.Params,
			Results: map[string]float64{
				"acc": acc, "img": acc - 10 - 5*r, "acc_text": 30 + 10*strength + float64(c.Seed),
				"mia_auc": 0.5 + 0.2*strength,
			},
		}
		rows = append(rows, row)
		dir := results.RunDir(root, s.Name, id)
		if err := os.MkdirAll(filepath.Join(dir, reports.ImagesDir), 0o755); err != nil {
			t.Fatal(err)
		}
		var scores []results.Score
		for i := range 200 {
			member := i%2 == 0
			x := rng.NormFloat64()
			if member {
				x += 2 * strength
			}
			scores = append(scores, results.Score{Attack: "loss-mia", ExampleID: int64(i), Member: member, Score: x})
		}
		if err := results.WriteScores(filepath.Join(dir, results.ScoresFile), scores); err != nil {
			t.Fatal(err)
		}
		writePNG(t, filepath.Join(dir, reports.ImagesDir, "original-0.png"), 0, rng)
		writePNG(t, filepath.Join(dir, reports.ImagesDir, "reconstruction-0.png"), 1-strength, rng)
	}
	if err := results.WriteRuns(filepath.Join(root, s.Name, results.RunsFile), rows); err != nil {
		t.Fatal(err)
	}
}

// writePNG writes an 8×8 diagonal gradient with noise of the given
// amplitude (0 to 1).
func writePNG(t *testing.T, path string, noise float64, rng *rand.Rand) {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for y := range 8 {
		for x := range 8 {
			v := float64(x+y)/14*(1-noise) + noise*rng.Float64()
			img.SetGray(x, y, color.Gray{Y: uint8(255 * v)})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteEveryKind writes every output of the kinds spec and checks the
// files and the warnings.
func TestWriteEveryKind(t *testing.T) {
	s := loadKinds(t)
	root := t.TempDir()
	writeKinds(t, root, s)
	paths, warnings, err := Write(root, s)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	want := []string{"tab.txt", "tab.md", "tab.tex"}
	for _, p := range []string{"line", "scatter", "bar", "radar", "radar-x", "roc", "heatmap-∞", "heatmap-1", "heatmap-8", "grid"} {
		for _, ext := range reports.PlotFormats {
			want = append(want, p+"."+ext)
		}
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, want a non-empty file", p, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("wrote %v, want %v", got, want)
	}
	// Few seeds per point, and plots whose keys leave a swept column
	// out (the line plot averages over update ratio and retention): the
	// figures say so, and warn of nothing else.
	for _, w := range warnings {
		if !strings.Contains(w, " seeds < 10") && !strings.Contains(w, "has several runs of") {
			t.Errorf("unexpected warning %q", w)
		}
	}
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, "plot heatmap-8: n=2 seeds < 10") }) {
		t.Errorf("warnings %q lack the heatmap's n=2 seeds", warnings)
	}
}

// TestGoldenKinds draws each plot of the kinds spec as Write does and
// compares it with testdata/<name>_golden.png; go test -regen rewrites the
// goldens. Figures are drawn at a small size to keep the goldens small.
func TestGoldenKinds(t *testing.T) {
	s := loadKinds(t)
	root := t.TempDir()
	writeKinds(t, root, s)
	runs, err := reports.ReadRuns(filepath.Join(root, s.Name, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Plots {
		t.Run(p.Name, func(t *testing.T) {
			rp, err := PlotOf(p, results.RunDir(root, s.Name, ""))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case p.Facet != "":
				rp.Where = map[string]string{p.Facet: "8"}
			case rp.Kind == reports.ImageGrid:
				// Six of the sixteen runs keep the golden small.
				rp.Where = map[string]string{"update_ratio": "0.2", "retention": "1"}
			}
			rp.MinSeeds = -1
			if rp.Kind != reports.ImageGrid {
				rp.Width, rp.Height = 4.5*vg.Inch, 3*vg.Inch
			}
			fig, err := rp.Build(runs)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			cmpimg.CheckPlotApprox(func() {
				var buf bytes.Buffer
				if err := fig.WriteTo(&buf, "png"); err != nil {
					t.Fatalf("WriteTo: %v", err)
				}
				if err := os.WriteFile(filepath.Join("testdata", p.Name+".png"), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}, t, 0.05, p.Name+".png")
			if rp.Kind == reports.ImageGrid {
				// A title wider than the cells widens the figure.
				rp.Title = strings.Repeat("a title wider than two cells ", 4)
				wide, err := rp.Build(runs)
				if err != nil {
					t.Fatal(err)
				}
				if w := wide.Panels[0].Plot.Title.TextStyle.Rectangle(rp.Title).Size().X; wide.Width < w || wide.Width <= fig.Width {
					t.Errorf("grid of width %v (%v untitled) for a title of width %v", wide.Width, fig.Width, w)
				}
			}
		})
	}
}

// TestKindsAgree checks that a spec accepts exactly the plot kinds that
// package reports draws.
func TestKindsAgree(t *testing.T) {
	if got, want := experiments.PlotKinds, reports.PlotKinds(); !slices.Equal(got, want) {
		t.Errorf("experiments.PlotKinds = %v, reports.PlotKinds() = %v", got, want)
	}
	for _, k := range experiments.PlotKinds {
		p, err := PlotOf(experiments.Plot{Name: "p", Kind: k, Band: "std"}, "runs")
		if err != nil || p.Kind.String() != k {
			t.Errorf("PlotOf kind %s: got %v, %v", k, p, err)
		}
	}
}

// TestWriteGoesOnPastAFailure checks that a table that cannot be built (its
// metric is missing from the runs, as after a --only selection) is an error
// that names it, while every other table and plot is still written.
func TestWriteGoesOnPastAFailure(t *testing.T) {
	s := loadKinds(t)
	root := t.TempDir()
	writeKinds(t, root, s)
	bad := s.Tables[0]
	bad.Name, bad.Metrics = "missing", []string{"ppl"}
	s.Tables = append([]experiments.Table{bad}, s.Tables...)
	paths, _, err := Write(root, s)
	if err == nil || !strings.Contains(err.Error(), "table missing") {
		t.Fatalf("Write: error %v, want one naming table missing", err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
	}
	for _, want := range []string{"tab.md", "line.png", "grid.png"} {
		if !slices.Contains(got, want) {
			t.Errorf("wrote %v, lacks %s", got, want)
		}
	}
}

// TestSelectionTablePool builds tune-dualpriv's selection table, which
// pools the two -tune tasks of each seed, from its checked-in run table:
// each cell is the mean over seeds of the seed's two-task mean, worked
// here from the runs themselves, and no cell warns of several runs of a
// seed (the unpooled table mixed both tasks' runs of one seed in a cell).
func TestSelectionTablePool(t *testing.T) {
	// The names the spec uses; package specout runs without the
	// registries.
	names := &experiments.Names{Methods: []string{"dpsgd", "dualpriv"}, Tasks: []string{"fashion-vqa-tune", "shapes-vqa-tune"},
		Scales: []string{"smoke", "small"}, Metric: func(name string) bool { return name == "acc" }}
	s, err := experiments.Load("tune-dualpriv", &experiments.Options{Names: names})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(s.Tables, func(t experiments.Table) bool { return t.Name == "tune" })
	if i < 0 || !slices.Equal(s.Tables[i].Pool, []string{"task"}) {
		t.Fatalf("tune-dualpriv has no table tune pooling task")
	}
	rt, err := TableOf(s.Tables[i])
	if err != nil {
		t.Fatal(err)
	}
	runs, err := reports.ReadRuns("../../results/baselines/tune-dualpriv-smoke.parquet")
	if err != nil {
		t.Fatal(err)
	}
	g, err := rt.Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range g.Warnings {
		if strings.Contains(w.Error(), "several runs of") || strings.Contains(w.Error(), "pools") {
			t.Errorf("warning %q", w)
		}
	}
	// The reference: acc (in percent in the runs) by row key and seed,
	// summed over tasks.
	col := func(name string) *reports.Column {
		c, ok := runs.Column(name)
		if !ok {
			t.Fatalf("no column %s", name)
		}
		return c
	}
	acc, seed, status := col("acc"), col("seed"), col("status")
	keys := make([]*reports.Column, len(rt.Rows))
	for j, name := range rt.Rows {
		keys[j] = col(name)
	}
	type cellSeed struct {
		row  string
		seed float64
	}
	sum, tasks := map[cellSeed]float64{}, map[cellSeed]int{}
	for r := range runs.Len() {
		if status.Strings[r] != "ok" {
			continue
		}
		var k []string
		for _, c := range keys {
			k = append(k, c.Format(r))
		}
		cs := cellSeed{strings.Join(k, " "), seed.Floats[r]}
		sum[cs] += acc.Floats[r]
		tasks[cs]++
	}
	for r, key := range g.Rows {
		var means []float64
		for cs, v := range sum {
			if cs.row == key.String() {
				if tasks[cs] != 2 {
					t.Fatalf("row %s seed %g: %d tasks, want 2", key, cs.seed, tasks[cs])
				}
				means = append(means, v/2)
			}
		}
		m, v := 0.0, 0.0
		for _, x := range means {
			m += x / float64(len(means))
		}
		for _, x := range means {
			v += (x - m) * (x - m) / float64(len(means)-1)
		}
		c := g.Cells[r][0]
		if c.N != len(means) || c.N < 2 || math.Abs(c.Mean-m) > 1e-9 || math.Abs(c.Std-math.Sqrt(v)) > 1e-9 {
			t.Errorf("row %s: got n=%d %g ± %g, want n=%d (≥ 2) %g ± %g", key, c.N, c.Mean, c.Std, len(means), m, math.Sqrt(v))
		}
	}
}
