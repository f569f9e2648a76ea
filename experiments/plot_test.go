// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plotSpec is base with its plots replaced by plot, one YAML line on line
// 19 of the file.
func plotSpec(plot string) string {
	i := strings.Index(base, "plots:\n")
	return base[:i] + "plots:\n  - " + plot + "\n"
}

func TestParsePlotKinds(t *testing.T) {
	for _, tc := range []struct {
		plot string
		want Plot
	}{
		{"{name: f, kind: scatter, x: epsilon_target, y: acc, band: sem}",
			Plot{Name: "f", Kind: "scatter", X: "epsilon_target", Y: "acc", Band: "sem"}},
		{"{name: f, kind: bar, x: epsilon_target, y: acc, band: none}",
			Plot{Name: "f", Kind: "bar", X: "epsilon_target", Y: "acc", Band: "none"}},
		{"{name: f, kind: radar, metrics: [acc, img, mia_auc], series: method}",
			Plot{Name: "f", Kind: "radar", Metrics: []string{"acc", "img", "mia_auc"}, Series: "method", Band: "std"}},
		{"{name: f, kind: radar, x: epsilon_target, y: acc}",
			Plot{Name: "f", Kind: "radar", X: "epsilon_target", Y: "acc", Band: "std"}},
		{"{name: f, kind: roc, attack: loss-mia, series: method, facet: epsilon_target}",
			Plot{Name: "f", Kind: "roc", Attack: "loss-mia", Series: "method", Facet: "epsilon_target", Band: "std"}},
		{"{name: f, kind: heatmap, x: epsilon_target, rows: seed, y: acc}",
			Plot{Name: "f", Kind: "heatmap", X: "epsilon_target", Rows: "seed", Y: "acc", Band: "std"}},
		{"{name: f, kind: grid, images: [original-0, reconstruction-0], series: method}",
			Plot{Name: "f", Kind: "grid", Images: []string{"original-0", "reconstruction-0"}, Series: "method", Band: "std"}},
		{"{name: f, kind: grid}", Plot{Name: "f", Kind: "grid", Band: "std"}},
	} {
		s, err := Parse("t.yaml", []byte(plotSpec(tc.plot)), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.plot, err)
			continue
		}
		if diff := cmp.Diff([]Plot{tc.want}, s.Plots); diff != "" {
			t.Errorf("%s: plots (-want +got):\n%s", tc.plot, diff)
		}
	}
}

func TestParsePlotErrors(t *testing.T) {
	for _, tc := range []struct {
		plot, want string
	}{
		{"{name: f, kind: pie, x: epsilon_target, y: acc}", `plot kind must be one of line, scatter, bar, radar, roc, heatmap, grid, not "pie"`},
		{"{name: f, kind: line, y: acc}", "a line plot needs x"},
		{"{name: f, kind: line, x: epsilon_target, y: acc, rows: seed}", "a line plot has no rows"},
		{"{name: f, kind: bar, x: epsilon_target, y: acc, logx: true}", "a bar plot has no logx"},
		{"{name: f, kind: radar, metrics: [acc, img]}", "needs three or more metrics, not 2"},
		{"{name: f, kind: radar, metrics: [acc, img, loss], y: acc}", "takes metrics, or x and y, not both"},
		{"{name: f, kind: radar, series: method}", "needs metrics (three or more), or x and y"},
		{"{name: f, kind: roc, x: epsilon_target}", "a roc plot has no x"},
		{"{name: f, kind: roc, attack: lira}", `attack "lira" is not one of the spec's attacks`},
		{"{name: f, kind: heatmap, x: epsilon_target, y: acc}", "a heatmap plot needs rows"},
		{"{name: f, kind: heatmap, x: seed, rows: seed, y: acc}", "heatmap rows and x are both seed"},
		{"{name: f, kind: heatmap, x: epsilon_target, rows: lr_typo, y: acc}", `"lr_typo" is not a run column`},
		{"{name: f, kind: heatmap, x: epsilon_target, rows: seed, y: acc, band: sem}", "a heatmap plot has no band"},
		{"{name: f, kind: grid, images: [Bad/Name]}", "must match [a-z0-9][a-z0-9_.-]*"},
		{"{name: f, kind: grid, images: [a, a]}", `"a" listed twice`},
		{"{name: f, kind: grid, x: method}", "a grid plot has no x"},
		{"{name: f, kind: line, x: epsilon_target, y: acc, metrics: [acc]}", "a line plot has no metrics"},
	} {
		_, err := Parse("t.yaml", []byte(plotSpec(tc.plot)), nil)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a *SyntaxError", tc.plot, err)
			continue
		}
		if se.Line != 19 || se.FileName != "t.yaml" || !strings.Contains(se.Msg, tc.want) {
			t.Errorf("%s: got %v, want t.yaml:19: …%s…", tc.plot, err, tc.want)
		}
	}
	// A roc plot needs attacks to draw.
	spec := strings.Replace(plotSpec("{name: f, kind: roc}"), "attacks: [loss-mia]\n", "", 1)
	if _, err := Parse("t.yaml", []byte(spec), nil); err == nil || !strings.Contains(err.Error(), "the spec has no attacks") {
		t.Errorf("roc without attacks: got %v, want an error", err)
	}
}

// TestParseMisspeltMetric checks that a misspelt metric in a table, a plot
// or a claim is an error at its line before anything runs, naming the
// metric meant, and that an unknown name far from every known one (a
// metric a new method records) passes.
func TestParseMisspeltMetric(t *testing.T) {
	for _, tc := range []struct {
		desc, spec string
		line       int
		want       string
	}{
		{"table", strings.Replace(base, "metrics: [acc]", "metrics: [acc, imgg]", 1), 17,
			`table tab: no run records a metric "imgg"; did you mean "img"?`},
		{"plot y", strings.Replace(base, "y: acc, series", "y: acc_txet, series", 1), 19,
			`plot fig: no run records a metric "acc_txet"; did you mean "acc_text"?`},
		{"plot y, one edit", plotSpec("{name: f, x: epsilon_target, y: mia_acu}"), 19,
			`plot f: no run records a metric "mia_acu"; did you mean "mia_auc"?`},
		{"claim", base + "claims:\n  - {name: c, metric: acx, a: {method: dpsgd}, b: {method: nonprivate}, expect: greater, source: made up}\n", 21,
			`claim c: no run records a metric "acx"; did you mean "acc"?`},
	} {
		_, err := Parse("t.yaml", []byte(tc.spec), nil)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a *SyntaxError", tc.desc, err)
			continue
		}
		if se.Line != tc.line || se.FileName != "t.yaml" || se.Msg != tc.want {
			t.Errorf("%s: got %v, want t.yaml:%d: %s", tc.desc, err, tc.line, tc.want)
		}
	}
	for _, m := range []string{"acc", "seed", "lr", "exposure_max", "recon_top1"} {
		spec := strings.Replace(base, "metrics: [acc]", "metrics: ["+m+"]", 1)
		if _, err := Parse("t.yaml", []byte(spec), nil); err != nil {
			t.Errorf("metric %s: %v, want no error", m, err)
		}
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{
		// By hand: one substitution, one swap, one insertion, kitten →
		// sitting is the textbook 3.
		{"acc", "acx", 1}, {"acc_text", "acc_txet", 1}, {"img", "imgg", 1}, {"kitten", "sitting", 3}, {"", "abc", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
