// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

// baseline is the checked-in smoke baseline of table1 (make baselines).
var baseline = filepath.Join("..", "..", "results", "baselines", "table1-smoke.parquet")

// plant writes a copy of the baseline to a temporary folder, with acc of
// the runs of method at ε = eps on task shifted by delta, and returns the
// folder (a RESULTS-DIR).
func plant(t *testing.T, method, task string, eps, delta float64) string {
	t.Helper()
	n := 0
	dir := plantRows(t, func(r *results.Run) {
		if r.Method == method && r.Task == task && r.EpsilonTarget == eps {
			r.Results["acc"] += delta
			n++
		}
	})
	if delta != 0 && n == 0 {
		t.Fatalf("no run of %s on %s at ε=%v in the baseline", method, task, eps)
	}
	return dir
}

// plantRows writes a copy of the baseline, each run changed by f, to a
// temporary folder and returns the folder.
func plantRows(t *testing.T, f func(r *results.Run)) string {
	t.Helper()
	rows, err := results.ReadRuns(baseline)
	if err != nil {
		t.Fatalf("reading the baseline: %v", err)
	}
	for i := range rows {
		f(&rows[i])
	}
	dir := t.TempDir()
	if err := results.WriteRuns(filepath.Join(dir, results.RunsFile), rows); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCompareBaseline(t *testing.T) {
	// The baseline's mean, read rather than pinned, so that make baselines
	// does not break the test.
	m := baselineMean(t, "dpsgd", "fashion-vqa", 3, "acc")
	for _, tc := range []struct {
		desc    string
		delta   float64
		wantErr string // "" for none
		want    []string
	}{
		// An untouched copy compares as identical.
		{"untouched", 0, "", []string{"identical", "0 regressions"}},
		// dpsgd on fashion-vqa at ε=3 8 points worse on every seed: beyond
		// table1's threshold of 5 points.
		{"planted regression", -8, "compare: 1 regression", []string{"REGRESSION", "regression: acc dpsgd fashion-vqa smoke ε=3 δ=1e-05: " + fmt.Sprintf("%.2f → %.2f", m, m-8)}},
		// 2 points worse: significant (the same shift on every seed) but
		// within the threshold.
		{"within threshold", -2, "", []string{"worse", "0 regressions"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			dir := plant(t, "dpsgd", "fashion-vqa", 3, tc.delta)
			out, _, err := run(t, "compare", baseline, dir)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("repro compare: got error %v, want %q\n%s", err, tc.wantErr, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.delta == 0 && strings.Contains(out, "~") {
				t.Errorf("identical inputs with a ~ verdict:\n%s", out)
			}
		})
	}
}

func TestCompareArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", baseline}, "compare: want two arguments"},
		{[]string{"compare", baseline, baseline, "--alpha", "2"}, "--alpha must be in (0, 1)"},
		{[]string{"compare", baseline, filepath.Join(t.TempDir(), "none.parquet")}, "compare: "},
		{[]string{"compare", baseline, baseline, "--metric", "nope"}, `metric "nope" is not a numeric column`},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repro %s: got %v, want an error with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	out, _, err := run(t, "compare", baseline, baseline, "--json", "--metric", "acc")
	if err != nil || !strings.Contains(out, `"verdict": "identical"`) || !strings.Contains(out, `"regressions": 0`) {
		t.Errorf("repro compare --json: error %v, output:\n%s", err, out)
	}
}

// baselineMean returns the mean of metric over the baseline's runs of
// method at ε = eps on task.
func baselineMean(t *testing.T, method, task string, eps float64, metric string) float64 {
	t.Helper()
	rows, err := results.ReadRuns(baseline)
	if err != nil {
		t.Fatalf("reading the baseline: %v", err)
	}
	var sum float64
	n := 0
	for _, r := range rows {
		if r.Method == method && r.Task == task && r.EpsilonTarget == eps {
			sum += r.Results[metric]
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no run of %s on %s at ε=%v in the baseline", method, task, eps)
	}
	return sum / float64(n)
}

// TestCompareMismatch checks that repro compare refuses the small table1
// against a smoke one, and table1 against another experiment, with an
// error naming both sides, and compares them with --mixed.
func TestCompareMismatch(t *testing.T) {
	small := filepath.Join("..", "..", "results", "baselines", "table1-small.parquet")
	other := plantRows(t, func(r *results.Run) { r.Experiment = "fig1" })
	for _, tc := range []struct{ old, new, want string }{
		{small, baseline, "holds runs of scale small, the new one of scale smoke"},
		{baseline, other, "holds runs of experiment table1, the new one of experiment fig1"},
	} {
		out, _, err := run(t, "compare", tc.old, tc.new)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repro compare %s %s: got %v, want an error with %q\n%s", tc.old, tc.new, err, tc.want, out)
		}
		if _, _, err := run(t, "compare", tc.old, tc.new, "--mixed"); err != nil && !strings.Contains(err.Error(), "regression") {
			t.Errorf("repro compare --mixed: %v", err)
		}
	}
}
