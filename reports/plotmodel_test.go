// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// figureText is what a reader of fig reads: its title, each panel's title
// and axis labels, the legend's title and entries, the colour bar's label
// and the note, one per line.
func figureText(fig *Figure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "title: %s\n", fig.Title)
	for _, p := range fig.Panels {
		fmt.Fprintf(&b, "panel %q: x %q, y %q\n", p.Plot.Title.Text, p.Plot.X.Label.Text, p.Plot.Y.Label.Text)
	}
	fmt.Fprintf(&b, "legend: %s\n", fig.LegendTitle)
	for _, e := range fig.Entries {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	if fig.ColorBar != nil {
		fmt.Fprintf(&b, "colour bar: %s\n", fig.ColorBar.Y.Label.Text)
	}
	fmt.Fprintf(&b, "note: %s\n", fig.Note)
	return b.String()
}

// gridRuns returns a run table shaped like the fig3 experiment: update
// ratio × retention × 3 seeds, acc = 0.5 + ratio/10 + (seed−2)/100, so
// every point has n = 3.
func gridRuns(t *testing.T) *Runs {
	t.Helper()
	var rows []Row
	for _, ratio := range []float64{0.1, 0.5, 1} {
		for _, ret := range []float64{0.1, 0.4} {
			for seed := range 3 {
				rows = append(rows, Row{
					"run_id": fmt.Sprintf("r%v-%v-%d", ratio, ret, seed), "status": "ok", "method": "dualpriv",
					"update_ratio": ratio, "retention": ret, "seed": float64(seed + 1),
					"acc": 0.5 + ratio/10 + float64(seed-1)/100,
				})
			}
		}
	}
	return mustRuns(t, rows)
}

// fig2Runs returns a run table shaped like the fig2 experiment: Dual-Priv
// at retention 0.1, 0.4 and 1 and DP-SGD, which has no retention, 3 seeds
// each, step_seconds = retention (Dual-Priv) or 2 (DP-SGD) + (seed−2)/10,
// train_peak_bytes = 20 + 10·retention MiB (Dual-Priv) or 40 + seed − 2
// MiB (DP-SGD).
func fig2Runs(t *testing.T) *Runs {
	t.Helper()
	var rows []Row
	for seed := range 3 {
		for _, ret := range []float64{0.1, 0.4, 1} {
			rows = append(rows, Row{"run_id": fmt.Sprintf("d%v-%d", ret, seed), "status": "ok", "method": "dualpriv",
				"retention": ret, "seed": float64(seed + 1), "step_seconds": ret + float64(seed-1)/10, "train_peak_bytes": (20 + 10*ret) * mib})
		}
		rows = append(rows, Row{"run_id": fmt.Sprintf("s%d", seed), "status": "ok", "method": "dpsgd",
			"seed": float64(seed + 1), "step_seconds": 2 + float64(seed-1)/10, "train_peak_bytes": (40 + float64(seed-1)) * mib})
	}
	return mustRuns(t, rows)
}

// TestFigureText is the golden check of what figures say: titles, axis
// labels with units (never a raw column name such as update_ratio), legend
// titles (fig3's legends were bare numbers), what the bands mean, the
// lines at ε = ∞ with their values, a heatmap's colour bar.
func TestFigureText(t *testing.T) {
	for _, tc := range []struct {
		desc string
		plot *Plot
		runs func(*testing.T) *Runs
		want string
	}{{
		desc: "fig3a: a swept ratio against accuracy, one line per retention",
		plot: &Plot{X: "update_ratio", Y: "acc", Series: []string{"retention"}, Scale: 100, MinSeeds: -1},
		runs: gridRuns,
		want: `title: Accuracy against update ratio P_K
panel "": x "update ratio P_K (fraction of blocks)", y "accuracy (%)"
legend: token retention
  0.1
  0.4
note: shaded bands: ±1 std over n = 3 runs (seeds) per point
`,
	}, {
		desc: "fig3 heatmap",
		plot: &Plot{Kind: Heatmap, X: "retention", Rows: "update_ratio", Y: "acc", Scale: 100, MinSeeds: -1},
		runs: gridRuns,
		want: `title: Accuracy by token retention and update ratio P_K
panel "": x "token retention (fraction of visual tokens)", y "update ratio P_K (fraction of blocks)"
legend: 
colour bar: accuracy (%)
note: each cell: the mean of accuracy over n = 3 runs (seeds)
`,
	}, {
		// The values at ε = ∞ come from table1Rows: nonprivate has centre
		// 0.84 (fashion-vqa) and 0.91 (shapes-vqa) with spreads 0.01 and
		// 0.02, its sample std by construction; dpzo at shapes-vqa, ε = 1
		// lost a seed, hence n = 2–3.
		desc: "fig1: accuracy against ε per method, one panel per task",
		plot: &Plot{X: "epsilon_target", Y: "acc", Series: []string{"method"}, Facets: []string{"task"}, Scale: 100, LogX: true, MinSeeds: -1},
		runs: func(t *testing.T) *Runs { return mustRuns(t, table1Rows()) },
		want: `title: Accuracy against ε
panel "fashion-vqa": x "ε", y "accuracy (%)"
panel "shapes-vqa": x "ε", y "accuracy (%)"
legend: method
  dpsgd
  dpzo
  nonprivate (ε = ∞, fashion-vqa): 84.0 ± 1.0
  nonprivate (ε = ∞, shapes-vqa): 91.0 ± 2.0
note: shaded bands: ±1 std over n = 2–3 runs (seeds) per point; dotted: runs at ε = ∞, mean (± the band's width) in the legend
`,
	}, {
		// fig2: DP-SGD has no token retention (it keeps every token), so
		// it is drawn as a reference line, its mean 2.0 s over seeds
		// 1.9, 2.0, 2.1 (sample std 0.1).
		desc: "fig2: step time against retention, DP-SGD as a reference",
		plot: &Plot{X: "retention", Y: "step_seconds", Series: []string{"method"}, MinSeeds: -1},
		runs: fig2Runs,
		want: `title: Time per step against token retention
panel "": x "token retention (fraction of visual tokens)", y "time per step (s)"
legend: method
  dualpriv
  dpsgd (no token retention): 2.00 ± 0.10
note: shaded bands: ±1 std over n = 3 runs (seeds) per point; dotted: runs without a token retention, mean (± the band) in the legend
`,
	}, {
		// DP-SGD's reference in MiB, the axis's unit: 40 ± 1 MiB.
		desc: "fig2: memory against retention, DP-SGD's reference in MiB",
		plot: &Plot{X: "retention", Y: "train_peak_bytes", Series: []string{"method"}, MinSeeds: -1},
		runs: fig2Runs,
		want: `title: Peak training memory against token retention
panel "": x "token retention (fraction of visual tokens)", y "peak training memory (MiB)"
legend: method
  dualpriv
  dpsgd (no token retention): 40.0 ± 1.0 MiB
note: shaded bands: ±1 std over n = 3 runs (seeds) per point; dotted: runs without a token retention, mean (± the band) in the legend
`,
	}, {
		desc: "a spec's title and band none: no band note",
		plot: &Plot{X: "update_ratio", Y: "acc", Series: []string{"retention"}, Band: BandNone, Title: "Figure 3a", MinSeeds: -1},
		runs: gridRuns,
		want: `title: Figure 3a
panel "": x "update ratio P_K (fraction of blocks)", y "accuracy (%)"
legend: token retention
  0.1
  0.4
note: 
`,
	}} {
		t.Run(tc.desc, func(t *testing.T) {
			fig, err := tc.plot.Build(tc.runs(t))
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tc.want, figureText(fig)); diff != "" {
				t.Errorf("figure text (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSeriesDashes checks that the first series' lines are told apart by
// their dash patterns as well as their colours, and that none is the
// dotted pattern of the lines at ε = ∞.
func TestSeriesDashes(t *testing.T) {
	const n = 6
	seen := map[string]bool{fmt.Sprint(infDashes): true}
	for k := range n {
		d := fmt.Sprint(seriesDashes(k))
		if seen[d] {
			t.Errorf("series %d: dash pattern %s is used already", k, d)
		}
		seen[d] = true
	}
}

func TestAxisLabel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		want      string
	}{
		{"acc", nil, "accuracy (%)"},
		{"update_ratio", nil, "update ratio P_K (fraction of blocks)"},
		{"update_ratio", map[string]string{"update_ratio": "P_K"}, "P_K"},
		{"exposure_rep16", nil, "exposure of the 16× canaries (bits)"},
		{"exposure_rep", nil, "exposure rep"},
		{"gia_b8_psnr_mean", nil, "reconstruction PSNR, batch of 8 (dB)"},
		{"some_new_metric", nil, "some new metric"},
		{"renyi_img_a0_5_k10_auc", nil, "α = 0.5, K = 10% (MaxRényi-K% img AUC)"},
		{"renyi_inst_desp_ainf_k0_auc", nil, "α = ∞, K = 0% (MaxRényi-K% inst_desp AUC)"},
		{"mink20_auc", nil, "K = 20% (Min-K% AUC)"},
	} {
		if got := AxisLabel(tc.overrides, tc.name); got != tc.want {
			t.Errorf("AxisLabel(%v, %q) = %q, want %q", tc.overrides, tc.name, got, tc.want)
		}
	}
}

// TestNoXReferenceOneRunPerSeed checks that a series without an x is drawn
// as a reference only when it holds one run per seed: DP-SGD at two
// learning rates (a swept column the plot does not show) is left out and
// counted, not averaged into one line.
func TestNoXReferenceOneRunPerSeed(t *testing.T) {
	rows := []Row{}
	for seed := range 3 {
		rows = append(rows, Row{"run_id": fmt.Sprintf("d%d", seed), "status": "ok", "method": "dualpriv",
			"retention": 0.4, "seed": float64(seed + 1), "step_seconds": 0.4})
		for _, lr := range []float64{0.01, 0.02} {
			rows = append(rows, Row{"run_id": fmt.Sprintf("s%v-%d", lr, seed), "status": "ok", "method": "dpsgd",
				"lr": lr, "seed": float64(seed + 1), "step_seconds": 2})
		}
	}
	fig, err := (&Plot{X: "retention", Y: "step_seconds", Series: []string{"method"}, MinSeeds: -1}).Build(mustRuns(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(fig.Entries, "; "), "dualpriv"; got != want {
		t.Errorf("legend %q, want %q (no reference from runs that differ in lr)", got, want)
	}
	var warned bool
	for _, w := range fig.Warnings {
		warned = warned || w.Error() == "6 runs have no retention"
	}
	if !warned {
		t.Errorf("warnings %v, want \"6 runs have no retention\"", fig.Warnings)
	}
}
