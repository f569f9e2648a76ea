// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// compareRows returns runs of two methods × three seeds with acc and
// mia_auc; shift[method] is added to that method's acc.
func compareRows(t *testing.T, shift map[string][]float64, drop string) *Runs {
	t.Helper()
	acc := map[string][]float64{"dpsgd": {25.1, 27.3, 23.8}, "dpzo": {13.5, 13.4, 13.6}}
	var rows []Row
	for _, m := range []string{"dpsgd", "dpzo"} {
		if m == drop {
			continue
		}
		for i, a := range acc[m] {
			if s, ok := shift[m]; ok {
				a += s[i]
			}
			rows = append(rows, Row{"method": m, "task": "fashion-vqa", "scale": "smoke", "epsilon_target": 1.0, "delta": 1e-5,
				"seed": i + 1, "status": "ok", "acc": a, "mia_auc": 0.5 + 0.01*float64(i), "seconds": 10.0 + float64(i), "run_id": m + string(rune('a'+i))})
		}
	}
	r, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// unfinishedRows returns the runs of compareRows with dpzo's replaced by
// runs of the given statuses (seeds 1, 2, …) without results.
func unfinishedRows(t *testing.T, statuses ...string) *Runs {
	t.Helper()
	var rows []Row
	base := compareRows(t, nil, "dpzo")
	for i := range base.Len() {
		row := Row{}
		for _, name := range base.Columns() {
			c, _ := base.Column(name)
			if c.Kind == Float {
				row[name] = c.Floats[i]
			} else {
				row[name] = c.Strings[i]
			}
		}
		rows = append(rows, row)
	}
	for i, st := range statuses {
		rows = append(rows, Row{"method": "dpzo", "task": "fashion-vqa", "scale": "smoke", "epsilon_target": 1.0, "delta": 1e-5,
			"seed": i + 1, "status": st, "seconds": 1.0, "run_id": "dpzo" + st + string(rune('a'+i))})
	}
	r, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompare(t *testing.T) {
	t.Parallel()
	th := map[string]Threshold{"acc": {Better: "max", Threshold: 5}, "mia_auc": {Better: "min", Threshold: 0.05}}
	old := compareRows(t, nil, "")
	for _, tc := range []struct {
		desc    string
		new     *Runs
		verdict map[string]string // metric/method → verdict
		regress int
	}{
		{"identical", compareRows(t, nil, ""), map[string]string{"acc/dpsgd": Identical, "acc/dpzo": Identical, "mia_auc/dpsgd": Identical}, 0},
		// A planted regression: dpsgd's acc 8 points worse on every seed.
		{"regression", compareRows(t, map[string][]float64{"dpsgd": {-8.1, -7.9, -8.0}}, ""), map[string]string{"acc/dpsgd": Regression, "acc/dpzo": Identical}, 1},
		// A constant shift of exactly the threshold (zero variance of
		// the differences, an effect that may round to just under 5):
		// a regression, not merely worse.
		{"threshold", compareRows(t, map[string][]float64{"dpsgd": {-5, -5, -5}}, ""), map[string]string{"acc/dpsgd": Regression}, 1},
		// Worse but within the threshold.
		{"worse", compareRows(t, map[string][]float64{"dpsgd": {-2.1, -1.9, -2.0}}, ""), map[string]string{"acc/dpsgd": Worse}, 0},
		{"better", compareRows(t, map[string][]float64{"dpsgd": {8.1, 7.9, 8.0}}, ""), map[string]string{"acc/dpsgd": Better}, 0},
		// Noise: changes that are not significant.
		{"noise", compareRows(t, map[string][]float64{"dpsgd": {-6, 5, 0.5}}, ""), map[string]string{"acc/dpsgd": NoChange}, 0},
		// A configuration not started yet: MISSING for each metric, no
		// regression, the comparison partial.
		{"missing", compareRows(t, nil, "dpzo"), map[string]string{"acc/dpzo": Missing, "mia_auc/dpzo": Missing, "acc/dpsgd": Identical}, 0},
		// Still running in another process: RUNNING, no regression.
		{"running", unfinishedRows(t, "running", "running", "interrupted"), map[string]string{"acc/dpzo": Running, "mia_auc/dpzo": Running, "acc/dpsgd": Identical}, 0},
		// Only interrupted runs: not started again yet, MISSING.
		{"interrupted", unfinishedRows(t, "interrupted"), map[string]string{"acc/dpzo": Missing}, 0},
		// Runs that failed: FAILED, a regression for each metric with a threshold.
		{"failed", unfinishedRows(t, "failed", "failed", "failed"), map[string]string{"acc/dpzo": Failed, "mia_auc/dpzo": Failed, "acc/dpsgd": Identical}, 2},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			c, err := Compare(old, tc.new, &CompareOptions{Thresholds: th, Resamples: 1000})
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string]string)
			for _, ch := range c.Changes {
				got[ch.Metric+"/"+strings.Fields(ch.Key)[0]] = ch.Verdict
				if ch.Metric == "seconds" || ch.Metric == "seed" {
					t.Errorf("compared bookkeeping column %s", ch.Metric)
				}
			}
			for k, want := range tc.verdict {
				if got[k] != want {
					t.Errorf("%s: verdict %q, want %q (all: %v)", k, got[k], want, got)
				}
			}
			if n := len(c.Regressions()); n != tc.regress {
				t.Errorf("%d regressions, want %d", n, tc.regress)
			}
			partial := tc.desc == "missing" || tc.desc == "running" || tc.desc == "interrupted"
			if got := len(c.Partial()) > 0; got != partial {
				t.Errorf("partial %v, want %v", got, partial)
			}
			if got := c.PartialSummary(); (got != "") != partial {
				t.Errorf("PartialSummary() = %q, want one only when partial", got)
			}
		})
	}
}

// TestCompareStatistics checks the paired test of a change against scipy.
func TestCompareStatistics(t *testing.T) {
	t.Parallel()
	// dpsgd's acc goes from [25.1, 27.3, 23.8] to [17.4, 18.8, 15.9] on
	// seeds 1–3; scipy 1.10.1: ttest_rel([17.4, 18.8, 15.9], [25.1, 27.3,
	// 23.8]).pvalue = 0.0008941008338702461.
	old := compareRows(t, nil, "")
	new := compareRows(t, map[string][]float64{"dpsgd": {17.4 - 25.1, 18.8 - 27.3, 15.9 - 23.8}}, "")
	c, err := Compare(old, new, &CompareOptions{Metrics: []string{"acc"}})
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Changes[0]
	if ch.Test.Kind != "paired" || !scalar.EqualWithinAbs(ch.P, 0.0008941008338702461, 1e-9) {
		t.Errorf("got %s p = %v, want paired p = 0.0008941008338702461", ch.Test.Kind, ch.P)
	}
	if ch.Verdict != Changed {
		t.Errorf("verdict without a threshold %q, want %q", ch.Verdict, Changed)
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"acc\n", "dpsgd fashion-vqa smoke ε=1 δ=1e-05", "25.40 ± 1.77 n=3", "0 regressions"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	if _, err := Compare(old, new, &CompareOptions{Metrics: []string{"img"}}); err == nil {
		t.Error("Compare with a metric neither table has: no error")
	}
}

// TestCompareProvenance checks that Compare refuses tables of different
// scales or experiments, naming both sides, unless Mixed asks for them.
func TestCompareProvenance(t *testing.T) {
	t.Parallel()
	with := func(scale, exp string) *Runs {
		r, err := NewRuns([]Row{
			{"method": "dpsgd", "experiment": exp, "scale": scale, "seed": 1, "status": "ok", "acc": 25.0, "run_id": "a"},
			{"method": "dpsgd", "experiment": exp, "scale": scale, "seed": 2, "status": "ok", "acc": 26.0, "run_id": "b"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		old, new *Runs
		want     string
	}{
		{with("small", "table1"), with("smoke", "table1"), "scale small, the new one of scale smoke"},
		{with("small", "table1"), with("small", "fig3"), "experiment table1, the new one of experiment fig3"},
	} {
		if _, err := Compare(tc.old, tc.new, &CompareOptions{Resamples: 100}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one saying %q", err, tc.want)
		}
		if _, err := Compare(tc.old, tc.new, &CompareOptions{Resamples: 100, Mixed: true}); err != nil {
			t.Errorf("mixed: %v", err)
		}
	}
	if _, err := Compare(with("small", "table1"), with("small", "table1"), &CompareOptions{Resamples: 100}); err != nil {
		t.Errorf("same provenance: %v", err)
	}
}
