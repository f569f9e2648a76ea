// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name.golden. With -update it rewrites the
// golden file instead. On a mismatch it writes testdata/name.got and reports
// the diff.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gotPath := filepath.Join("testdata", name+".got")
	if err := os.WriteFile(gotPath, got, 0o644); err != nil {
		t.Fatal(err)
	}
	diff, _ := exec.Command("diff", "-u", path, gotPath).CombinedOutput()
	t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", gotPath, path, diff)
}

func mustRuns(t *testing.T, rows []Row) *Runs {
	t.Helper()
	runs, err := NewRuns(rows)
	if err != nil {
		t.Fatalf("NewRuns: %v", err)
	}
	return runs
}

// table1 is the table of the table1 experiment over table1Rows.
func table1() *Table {
	return &Table{
		Rows:   []string{"method"},
		Cols:   []string{"task", "epsilon_target"},
		Metric: "acc",
		Best:   Max,
		Scale:  100,
		// Precision 1 as in Dual-Priv's Table 1.
		Precision: 1,
		References: []Reference{
			// Made-up paper values: the golden files check how they are shown.
			{At: map[string]string{"method": "dpsgd", "task": "fashion-vqa", "epsilon_target": "8"}, Value: 72.5, Source: "Paper A, Table 1"},
			{At: map[string]string{"method": "nonprivate", "task": "shapes-vqa", "epsilon_target": "inf", "scale": "small"}, Metric: "acc", Value: 93, Source: "Paper B"},
			{At: map[string]string{"method": "dpmtv", "task": "shapes-vqa", "epsilon_target": "inf"}, Value: 50, Source: "Paper C"},
		},
	}
}

func TestTableGolden(t *testing.T) {
	runs := mustRuns(t, table1Rows())
	g, err := table1().Build(runs)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for _, f := range []Format{Text, Markdown, LaTeX} {
		var buf bytes.Buffer
		if err := g.Write(&buf, f); err != nil {
			t.Fatalf("Write(%v): %v", f, err)
		}
		golden(t, "table1"+f.Ext(), buf.Bytes())
	}
}

// TestTableGoldenDualPriv checks the shape of Dual-Priv's Table 1, as the
// table1 experiment asks for it: one row per ε, columns method × task with
// Acc and IMG under each.
func TestTableGoldenDualPriv(t *testing.T) {
	tab := &Table{
		Title:     "Accuracy (%) and IMG accuracy (%) by ε",
		Rows:      []string{"epsilon_target"},
		Cols:      []string{"method", "task"},
		Metrics:   []string{"acc", "img"},
		Labels:    map[string]string{"acc": "Acc", "img": "IMG"},
		Best:      Max,
		Scale:     100,
		Precision: 1,
		MinSeeds:  3,
		References: []Reference{
			{At: map[string]string{"method": "dpsgd", "task": "fashion-vqa", "epsilon_target": "1"}, Metric: "acc", Value: 81.54, Source: "Dual-Priv Table 1, ScienceQA"},
			{At: map[string]string{"method": "dpsgd", "task": "fashion-vqa", "epsilon_target": "1"}, Metric: "img", Value: 72.51, Source: "Dual-Priv Table 1, ScienceQA"},
			// Ambiguous: names no task.
			{At: map[string]string{"method": "dpzo", "epsilon_target": "1"}, Metric: "acc", Value: 23.30},
			// Names no metric, and the table has two.
			{At: map[string]string{"method": "dpzo", "task": "fashion-vqa", "epsilon_target": "1"}, Value: 23.30},
		},
	}
	g, err := tab.Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	// (ε=1; dpsgd fashion-vqa IMG): 39, 42, 45 → 42.0 ± 3.0.
	if c := g.Cells[0][5]; g.Cols[5].String() != "dpsgd fashion-vqa IMG" || c.N != 3 || !near(c.Mean, 42, 1e-9) || !near(c.Std, 3, 1e-9) || c.Ref != 72.51 {
		t.Errorf("cell (ε=1; %s): got %+v, want N=3 Mean=42 Std=3 Ref=72.51", g.Cols[5], c)
	}
	for _, f := range []Format{Text, Markdown, LaTeX} {
		var buf bytes.Buffer
		if err := g.Write(&buf, f); err != nil {
			t.Fatalf("Write(%v): %v", f, err)
		}
		golden(t, "dualpriv"+f.Ext(), buf.Bytes())
	}
}

// TestTableGoldenSimple checks a table with one column key, Min as the rule,
// no paper values and no failed runs, in all formats.
func TestTableGoldenSimple(t *testing.T) {
	var rows []Row
	for _, r := range table1Rows() {
		if r["task"] == "fashion-vqa" && r["method"] != "nonprivate" && r["status"] == "ok" {
			// Made-up AUCs: dpsgd leaks more than dpzo, more with larger ε.
			auc := 0.5 + r["epsilon_target"].(float64)/100 + float64(r["seed"].(int64))*0.005
			if r["method"] == "dpsgd" {
				auc += 0.02
			}
			r["mia_auc"] = auc
			rows = append(rows, r)
		}
	}
	tab := &Table{
		Title:    "MIA AUC on fashion-vqa",
		Rows:     []string{"method"},
		Cols:     []string{"epsilon_target"},
		Metric:   "mia_auc",
		Best:     Min,
		MinSeeds: 3,
	}
	g, err := tab.Build(mustRuns(t, rows))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for _, f := range []Format{Text, Markdown, LaTeX} {
		var buf bytes.Buffer
		if err := g.Write(&buf, f); err != nil {
			t.Fatalf("Write(%v): %v", f, err)
		}
		golden(t, "mia"+f.Ext(), buf.Bytes())
	}
}

// TestTableCells checks the aggregated cells against values computed by hand
// from the construction of table1Rows.
func TestTableCells(t *testing.T) {
	g, err := table1().Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	wantRows := []string{"nonprivate", "dpsgd", "dpzo"}
	if len(g.Rows) != len(wantRows) {
		t.Fatalf("got rows %v, want %v", g.Rows, wantRows)
	}
	for i, want := range wantRows {
		if got := g.Rows[i].String(); got != want {
			t.Errorf("row %d: got %q, want %q", i, got, want)
		}
	}
	wantCols := []string{
		"fashion-vqa ε=1", "fashion-vqa ε=3", "fashion-vqa ε=8", "fashion-vqa ε=∞",
		"shapes-vqa ε=1", "shapes-vqa ε=3", "shapes-vqa ε=8", "shapes-vqa ε=∞",
	}
	if len(g.Cols) != len(wantCols) {
		t.Fatalf("got columns %v, want %v", g.Cols, wantCols)
	}
	for j, want := range wantCols {
		if got := g.Cols[j].String(); got != want {
			t.Errorf("column %d: got %q, want %q", j, got, want)
		}
	}

	const tol = 1e-9
	nan := math.NaN()
	for _, tc := range []struct {
		desc      string
		row, col  int
		n         int
		mean, std float64
		best      bool
		ref       float64
	}{
		// Three seeds 83, 84, 85 (×100 scale): mean 84, std √((1+0+1)/2) = 1.
		{desc: "nonprivate fashion ∞", row: 0, col: 3, n: 3, mean: 84, std: 1, ref: nan},
		// 89, 91, 93: mean 91, std 2; paper value 93.
		{desc: "nonprivate shapes ∞", row: 0, col: 7, n: 3, mean: 91, std: 2, ref: 93},
		// 49, 52, 55: mean 52, std 3; best of its column (dpzo has 45).
		{desc: "dpsgd fashion ε=1", row: 1, col: 0, n: 3, mean: 52, std: 3, best: true, ref: nan},
		// Seed 1 has no acc: 69 and 71 remain, mean 70, std √((1+1)/1) = √2.
		{desc: "dpsgd fashion ε=8", row: 1, col: 2, n: 2, mean: 70, std: math.Sqrt2, best: true, ref: 72.5},
		// Only nonprivate has ε=∞ runs: a missing cell.
		{desc: "dpsgd fashion ∞", row: 1, col: 3, n: 0, mean: nan, std: nan, ref: nan},
		// Seed 2 failed: 31 and 33 remain, mean 32, std √2.
		{desc: "dpzo shapes ε=1", row: 2, col: 4, n: 2, mean: 32, std: math.Sqrt2, ref: nan},
		// No runs at all.
		{desc: "dpzo shapes ε=3", row: 2, col: 5, n: 0, mean: nan, std: nan, ref: nan},
		// 35, 36, 37: mean 36, std 1.
		{desc: "dpzo shapes ε=8", row: 2, col: 6, n: 3, mean: 36, std: 1, ref: nan},
	} {
		c := g.Cells[tc.row][tc.col]
		if c.N != tc.n || !near(c.Mean, tc.mean, tol) || !near(c.Std, tc.std, tol) || c.Best != tc.best || !near(c.Ref, tc.ref, 0) {
			t.Errorf("%s: got %+v, want N=%d Mean=%v Std=%v Best=%v Ref=%v", tc.desc, c, tc.n, tc.mean, tc.std, tc.best, tc.ref)
		}
	}

	wantWarnings := []string{
		"1 run failed",
		"1 run has no acc",
		"n=2–3 seeds < 10",
		"paper value {epsilon_target=inf, method=dpmtv, task=shapes-vqa}: matches no cell among the rows",
	}
	if got := errorStrings(g.Warnings); !equalStrings(got, wantWarnings) {
		t.Errorf("got warnings %q, want %q", got, wantWarnings)
	}
}

func near(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol
}

func errorStrings(errs []error) []string {
	s := make([]string, len(errs))
	for i, err := range errs {
		s[i] = err.Error()
	}
	return s
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n") && len(a) == len(b)
}

// TestMeanStd checks meanStd against values computed by hand.
func TestMeanStd(t *testing.T) {
	for _, tc := range []struct {
		x         []float64
		mean, std float64
	}{
		{x: nil, mean: math.NaN(), std: math.NaN()},
		// A single value has no spread: printed without ±.
		{x: []float64{0.7}, mean: 0.7, std: 0},
		// (1+2+3+4)/4 = 2.5; Σ(x−2.5)² = 2.25+0.25+0.25+2.25 = 5; 5/3 → √(5/3).
		{x: []float64{1, 2, 3, 4}, mean: 2.5, std: math.Sqrt(5.0 / 3)},
		// Two values a, b: std = |a−b|/√2.
		{x: []float64{0.8, 0.9}, mean: 0.85, std: 0.1 / math.Sqrt2},
		// The classic example: mean 5, Σ(x−5)² = 32 over n−1 = 7 → √(32/7).
		{x: []float64{2, 4, 4, 4, 5, 5, 7, 9}, mean: 5, std: math.Sqrt(32.0 / 7)},
		// Far from zero: the two-pass algorithm keeps the spread exact,
		// where Σx² − n·mean² would lose it (1e9² needs 60 bits).
		{x: []float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, mean: 1e9 + 2, std: 1},
	} {
		mean, std := meanStd(tc.x)
		if !near(mean, tc.mean, 1e-12) || !near(std, tc.std, 1e-12) {
			t.Errorf("meanStd(%v): got %v ± %v, want %v ± %v", tc.x, mean, std, tc.mean, tc.std)
		}
	}
}

// TestMeanStdGonum checks meanStd against gonum's stat.MeanStdDev, an
// independent implementation of the same unbiased estimator, on random
// samples.
func TestMeanStdGonum(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for n := 2; n <= 50; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = 100 + 10*rnd.NormFloat64()
		}
		mean, std := meanStd(x)
		wantMean, wantStd := stat.MeanStdDev(x, nil)
		if !scalar.EqualWithinAbsOrRel(mean, wantMean, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(std, wantStd, 1e-12, 1e-12) {
			t.Errorf("n=%d: got %v ± %v, want %v ± %v (gonum stat.MeanStdDev)", n, mean, std, wantMean, wantStd)
		}
	}
}

func TestGridSave(t *testing.T) {
	g, err := table1().Build(mustRuns(t, table1Rows()))
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "table1")
	paths, err := g.Save(prefix)
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	if len(paths) != 3 {
		t.Fatalf("got paths %q, want .txt, .md and .tex", paths)
	}
	for i, f := range Formats {
		got, err := os.ReadFile(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := g.Write(&want, f); err != nil {
			t.Fatal(err)
		}
		if paths[i] != prefix+f.Ext() || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: contents differ from Write(%v)", paths[i], f)
		}
	}
}

func TestTableErrors(t *testing.T) {
	runs := mustRuns(t, table1Rows())
	for _, tc := range []struct {
		desc  string
		table Table
		want  string
	}{
		{"no rows", Table{Metric: "acc"}, "no row key columns"},
		{"missing metric", Table{Rows: []string{"method"}, Metric: "nope"}, `metric column "nope"`},
		{"string metric", Table{Rows: []string{"method"}, Metric: "task"}, "holds strings"},
		{"missing row", Table{Rows: []string{"nope"}, Metric: "acc"}, `row column "nope"`},
		{"missing column", Table{Rows: []string{"method"}, Cols: []string{"nope"}, Metric: "acc"}, `column column "nope"`},
		{"missing where", Table{Rows: []string{"method"}, Metric: "acc", Where: map[string]string{"nope": "x"}}, `where column "nope"`},
		{"empty where", Table{Rows: []string{"method"}, Metric: "acc", Where: map[string]string{"method": "nope"}}, "no runs left"},
		{"bad best", Table{Rows: []string{"method"}, Metric: "acc", Best: 7}, "unknown best rule"},
		{"bad best among", Table{Rows: []string{"method"}, Metric: "acc", Best: Max, BestAmong: []string{"task"}}, `best-among column "task" is not a row or column key`},
		{"no metric", Table{Rows: []string{"method"}}, "no metric"},
		{"metric and metrics", Table{Rows: []string{"method"}, Metric: "acc", Metrics: []string{"img"}}, "both Metric and Metrics"},
		{"string metrics", Table{Rows: []string{"method"}, Metrics: []string{"acc", "task"}}, `metric column "task" holds strings`},
	} {
		_, err := tc.table.Build(runs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.desc, err, tc.want)
		}
	}
}

// TestTableEdges checks ties, the where filter on ∞, duplicate seeds and
// statuses other than failed.
func TestTableEdges(t *testing.T) {
	rows := []Row{
		{"status": "ok", "method": "a", "eps": math.Inf(1), "seed": 0, "acc": 0.5},
		{"status": "ok", "method": "b", "eps": math.Inf(1), "seed": 0, "acc": 0.504}, // ties with a at 2 digits
		{"status": "ok", "method": "b", "eps": math.Inf(1), "seed": 0, "acc": 0.506}, // a second run of seed 0
		{"status": "running", "method": "a", "eps": math.Inf(1), "seed": 1},
		{"status": "ok", "method": "c", "eps": 1.0, "seed": 0, "acc": 0.9},
	}
	g, err := (&Table{Rows: []string{"method"}, Metric: "acc", Best: Max, MinSeeds: -1,
		Where: map[string]string{"eps": "+Inf"}}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Rows) != 2 {
		t.Fatalf("got rows %v, want a and b (c is filtered out)", g.Rows)
	}
	// a: 0.50; b: (0.504+0.506)/2 is 0.50500000000000000444 in float64
	// (Python: '%.20f' % ((0.504+0.506)/2)), printed as 0.51, so b alone is
	// best.
	if a, b := g.Cells[0][0], g.Cells[1][0]; a.Best || !b.Best {
		t.Errorf("got best a=%v b=%v, want only b", a.Best, b.Best)
	}
	want := []string{
		`1 run has status "running", excluded`,
		"cell (b; acc) has several runs of seed 0: a swept column is neither a row nor a column key",
	}
	if got := errorStrings(g.Warnings); !equalStrings(got, want) {
		t.Errorf("got warnings %q, want %q", got, want)
	}

	// Equal printed means are all marked.
	rows[2]["acc"] = 0.502
	g, err = (&Table{Rows: []string{"method"}, Metric: "acc", Best: Min, Where: map[string]string{"eps": "inf"}}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := g.Cells[0][0], g.Cells[1][0]; !a.Best || !b.Best {
		t.Errorf("tie 0.50 vs 0.503: got best a=%v b=%v, want both", a.Best, b.Best)
	}
}

// TestTableInfiniteMetric checks that a cell whose mean is infinite (a
// diverged loss, say) prints as ∞ without a ±.
func TestTableInfiniteMetric(t *testing.T) {
	runs := mustRuns(t, []Row{
		{"method": "a", "loss": math.Inf(1)},
		{"method": "a", "loss": 1.0},
		{"method": "b", "loss": 2.0},
		{"method": "b", "loss": 4.0},
	})
	g, err := (&Table{Rows: []string{"method"}, Metric: "loss", Best: Min, MinSeeds: -1}).Build(runs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.Write(&buf, Markdown); err != nil {
		t.Fatal(err)
	}
	// b: mean 3, std |2−4|/√2 = 1.414…
	for _, want := range []string{"| a      |               ∞ |", "| b      | **3.00 ± 1.41** |"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestEscape(t *testing.T) {
	// The LaTeX was checked by compiling it with pdflatex (TeX Live 2022,
	// booktabs) in a table whose keys held all these characters.
	for _, tc := range []struct {
		in, tex, md string
	}{
		{"dp_sgd", `dp\_sgd`, `dp\_sgd`},
		{`a&b%c$d#e{f}g~h^i\j`, `a\&b\%c\$d\#e\{f\}g\textasciitilde{}h\textasciicircum{}i\textbackslash{}j`, `a&b%c$d\#e{f}g~h^i\\j`},
		{"x<y>z|w*v`u[t]", `x\textless{}y\textgreater{}z\textbar{}w*v` + "`" + `u[t]`, "x\\<y\\>z\\|w\\*v\\`u\\[t\\]"},
		{"ε=∞ ± δ σ — –", `$\varepsilon$=$\infty$ $\pm$ $\delta$ $\sigma$ --- --`, "ε=∞ ± δ σ — –"},
	} {
		if got := texEscape(tc.in); got != tc.tex {
			t.Errorf("texEscape(%q): got %q, want %q", tc.in, got, tc.tex)
		}
		if got := mdEscape(tc.in); got != tc.md {
			t.Errorf("mdEscape(%q): got %q, want %q", tc.in, got, tc.md)
		}
	}
	for in, want := range map[string]string{
		"ε=1":         `$\varepsilon=1$`,
		"ε=∞":         `$\varepsilon=\infty$`,
		"δ=1e-05":     `$\delta=1e-05$`,
		"ε=x":         `$\varepsilon$=x`,
		"lr=0.1":      `lr=0.1`,
		"fashion-vqa": `fashion-vqa`,
	} {
		if got := texKey(in); got != want {
			t.Errorf("texKey(%q): got %q, want %q", in, got, want)
		}
	}
}

// TestWriteTextWidth checks that a terminal table wider than TextWidth is
// split into blocks that fit, each with the row keys, and that no column is
// lost or repeated.
func TestWriteTextWidth(t *testing.T) {
	var rows []Row
	for c := range 30 {
		for r := range 3 {
			rows = append(rows, Row{"row": fmt.Sprint("r", r), "col": fmt.Sprintf("column-%02d", c), "acc": float64(c) + 0.25*float64(r), "img": 1.5})
		}
	}
	g, err := (&Table{Rows: []string{"row"}, Cols: []string{"col"}, Metrics: []string{"acc", "img"}, MinSeeds: -1}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > TextWidth {
			t.Errorf("line of %d columns, more than %d: %q", n, TextWidth, line)
		}
	}
	for c := range 30 {
		if n := strings.Count(out, fmt.Sprintf("column-%02d", c)); n != 2 {
			t.Errorf("column-%02d appears %d times, want twice (acc and img)", c, n)
		}
	}
	if blocks := strings.Count(out, "┌"); blocks < 2 || strings.Count(out, "│ r2 ") != blocks {
		t.Errorf("%d blocks, with %d rows r2; want several, each with the row keys", blocks, strings.Count(out, "│ r2 "))
	}
}

// repeatRows returns runs of two methods on two tasks, 3 seeds, with acc
// and img; on "shapes" every question shows an image, so img = acc there.
func repeatRows() []Row {
	var rows []Row
	for _, method := range []string{"dpsgd", "dualpriv"} {
		for _, task := range []string{"shapes", "fashion"} {
			for seed := range 3 {
				acc := 0.5 + float64(seed)/100
				img := acc
				if task == "fashion" {
					img = acc - 0.1
				}
				rows = append(rows, Row{"run_id": fmt.Sprint(method, task, seed), "status": "ok", "method": method, "task": task,
					"epsilon_target": 1.0, "seed": float64(seed), "acc": acc, "img": img})
			}
		}
	}
	return rows
}

// TestTableOmitsRepeats checks that a metric column repeating another
// under the same key, cell for cell, is left out and named in the notes,
// and that the other columns stay.
func TestTableOmitsRepeats(t *testing.T) {
	tb := &Table{Rows: []string{"epsilon_target"}, Cols: []string{"method", "task"}, Metrics: []string{"acc", "img"}, MinSeeds: -1}
	g, err := tb.Build(mustRuns(t, repeatRows()))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range g.Cols {
		cols = append(cols, c.String())
	}
	want := []string{"dpsgd shapes acc", "dpsgd fashion acc", "dpsgd fashion img", "dualpriv shapes acc", "dualpriv fashion acc", "dualpriv fashion img"}
	if diff := cmp.Diff(want, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(g.Cells[0]) != len(want) {
		t.Errorf("got %d cells in a row, want %d", len(g.Cells[0]), len(want))
	}
	wantOmitted := []string{"dpsgd shapes img: equals dpsgd shapes acc in every row", "dualpriv shapes img: equals dualpriv shapes acc in every row"}
	if diff := cmp.Diff(wantOmitted, g.Omitted); diff != "" {
		t.Errorf("omitted (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := g.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "- left out: dpsgd shapes img: equals dpsgd shapes acc in every row") {
		t.Errorf("markdown lacks the note on the column left out:\n%s", buf.String())
	}
}

// TestLaTeXPaperReady checks what a .tex table says and leaves out: the
// packages it needs first, no warnings, "mean ± std" once in its caption,
// and, wider than a page, tabulars that each fit TeXTextWidth.
func TestLaTeXPaperReady(t *testing.T) {
	tb := &Table{Title: "Accuracy, mean ± std over seeds", Rows: []string{"epsilon_target"}, Cols: []string{"method", "task"},
		Metrics: []string{"acc", "img"}, Scale: 100}
	g, err := tb.Build(mustRuns(t, repeatRows()))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Warnings) == 0 {
		t.Fatal("want the n=3 seeds < 10 warning in Grid.Warnings")
	}
	var buf bytes.Buffer
	if err := g.WriteLaTeX(&buf); err != nil {
		t.Fatal(err)
	}
	tex := buf.String()
	if first, _, _ := strings.Cut(tex, "\n"); first != `% needs \usepackage{booktabs} (\toprule, \midrule, \cmidrule, \bottomrule)` {
		t.Errorf("first line %q, want the packages the table needs", first)
	}
	if strings.Contains(tex, "warning") || strings.Contains(tex, "seeds < 10") {
		t.Errorf("the .tex table carries a warning:\n%s", tex)
	}
	if n := strings.Count(tex, "mean ± std"); n != 1 {
		t.Errorf("\"mean ± std\" %d times, want once:\n%s", n, tex)
	}
	// Six columns of "51.00 $\pm$ 1.00" (12 characters as printed: 5·12 +
	// 12 = 72 pt each) and the ε key (5 + 12 = 17 pt) are 449 pt, over
	// 397 pt; one method's three columns are 233 pt: two tabulars, one per
	// method.
	if n := strings.Count(tex, `\begin{tabular}`); n != 2 {
		t.Errorf("%d tabulars, want 2 (one per method):\n%s", n, tex)
	}
	blocks, total := g.texBlocks(g.body(style{pm: ` $\pm$ `, missing: "---", esc: texEscape, bold: identity}))
	if total <= TeXTextWidth {
		t.Errorf("estimated width %d pt, want over %d", total, TeXTextWidth)
	}
	if len(blocks) != 2 {
		t.Errorf("got %d blocks, want 2", len(blocks))
	}
}

// TestTablePool checks a table that averages the tasks of each seed
// before the seeds (a selection table's rule: the mean over seeds and
// tasks): each cell holds one value per seed, the mean of its tasks'
// runs, and says nothing of several runs of a seed. The reference is
// the means worked by hand in the comments.
func TestTablePool(t *testing.T) {
	rows := []Row{
		{"status": "ok", "method": "a", "task": "x", "seed": 1, "acc": 0.2},
		{"status": "ok", "method": "a", "task": "y", "seed": 1, "acc": 0.4},
		{"status": "ok", "method": "a", "task": "x", "seed": 2, "acc": 0.6},
		{"status": "ok", "method": "a", "task": "y", "seed": 2, "acc": 0.6},
		{"status": "ok", "method": "b", "task": "x", "seed": 1, "acc": 0.5},
		{"status": "ok", "method": "b", "task": "y", "seed": 1, "acc": 0.7},
	}
	g, err := (&Table{Rows: []string{"method"}, Metric: "acc", Scale: 100, MinSeeds: -1, Pool: []string{"task"}}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	// a: seed 1 (20 + 40)/2 = 30, seed 2 (60 + 60)/2 = 60; mean 45, std
	// √((15² + 15²)/1) = 21.2132…; b: seed 1 (50 + 70)/2 = 60, one seed.
	want := []Cell{{N: 2, Mean: 45, Std: 15 * math.Sqrt2}, {N: 1, Mean: 60, Std: 0}}
	for r, w := range want {
		c := g.Cells[r][0]
		if c.N != w.N || math.Abs(c.Mean-w.Mean) > 1e-12 || math.Abs(c.Std-w.Std) > 1e-12 {
			t.Errorf("row %s: got n=%d %g ± %g, want n=%d %g ± %g", g.Rows[r], c.N, c.Mean, c.Std, w.N, w.Mean, w.Std)
		}
	}
	if len(g.Warnings) != 0 {
		t.Errorf("got warnings %q, want none", errorStrings(g.Warnings))
	}

	// Without Pool the same cells mix the tasks' runs and say so.
	g, err = (&Table{Rows: []string{"method"}, Metric: "acc", MinSeeds: -1}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Warnings) == 0 || !strings.Contains(g.Warnings[0].Error(), "several runs of seed 1") {
		t.Errorf("unpooled: got warnings %q, want several runs of seed 1", errorStrings(g.Warnings))
	}

	// A seed with one task of two, and two runs of one seed and task.
	uneven := append(slices.Clone(rows), Row{"status": "ok", "method": "b", "task": "x", "seed": 2, "acc": 0.1},
		Row{"status": "ok", "method": "a", "task": "x", "seed": 1, "acc": 0.3})
	g, err = (&Table{Rows: []string{"method"}, Metric: "acc", MinSeeds: -1, Pool: []string{"task"}}).Build(mustRuns(t, uneven))
	if err != nil {
		t.Fatal(err)
	}
	wantW := []string{
		"cell (a; acc) has several runs of seed 1: a swept column is neither a row, a column nor a pooled key",
		"cell (a; acc) pools 2–3 runs a seed: a seed lacks a run of a pooled value, and its mean averages fewer",
		"cell (b; acc) pools 1–2 runs a seed: a seed lacks a run of a pooled value, and its mean averages fewer",
	}
	if got := errorStrings(g.Warnings); !equalStrings(got, wantW) {
		t.Errorf("uneven: got warnings %q, want %q", got, wantW)
	}

	for _, pool := range [][]string{{"method"}, {"seed"}, {"missing"}} {
		if _, err := (&Table{Rows: []string{"method"}, Metric: "acc", Pool: pool}).Build(mustRuns(t, rows)); err == nil {
			t.Errorf("Pool %q: got no error", pool)
		}
	}
}

// TestTablePoolSubtitle checks what a pooled table says its cells hold:
// one value per seed, each the mean of the seed's runs over the pooled
// columns, so it counts seeds, not runs ("over 2 runs" would read as two
// runs where each cell averages four, and "one run per cell" as one run
// where it averages two).
func TestTablePoolSubtitle(t *testing.T) {
	var rows []Row
	for _, seed := range []int{1, 2} {
		for _, task := range []string{"x", "y"} {
			rows = append(rows, Row{"status": "ok", "method": "a", "task": task, "seed": seed, "acc": 0.5})
		}
	}
	for _, tc := range []struct {
		rows []Row
		want string
	}{
		{rows, "mean ± std over 2 seeds, each the mean of its runs over task"},
		{rows[:2], "one seed per cell, the mean of its runs over task"},
	} {
		g, err := (&Table{Title: "t", Rows: []string{"method"}, Metric: "acc", MinSeeds: -1, Pool: []string{"task"}}).Build(mustRuns(t, tc.rows))
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Subtitle(); got != tc.want {
			t.Errorf("%d runs: subtitle %q, want %q", len(tc.rows), got, tc.want)
		}
	}
	// Unpooled, the count is of runs, as before.
	g, err := (&Table{Title: "t", Rows: []string{"method", "task"}, Metric: "acc", MinSeeds: -1}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Subtitle(), "mean ± std over 2 runs"; got != want {
		t.Errorf("unpooled: subtitle %q, want %q", got, want)
	}
}
