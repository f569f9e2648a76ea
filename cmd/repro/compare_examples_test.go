// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

// predictionsFixture is a copy of table1's results at smoke with each
// run's predictions.parquet: runs.parquet and runs/ID/predictions.parquet
// of the non-private, DP-SGD and Dual-Priv runs (DPZO's zeroth-order runs,
// which take most of the sweep's time, are left out). It was made by
//
//	repro run table1 --scale smoke --jobs 2 --only method=nonprivate --only method=dpsgd --only method=dualpriv
//
// then copying results/table1/runs.parquet (those methods' rows) and each
// of their runs' predictions.parquet.
var predictionsFixture = filepath.Join("testdata", "table1-smoke-predictions")

// copyResults copies the fixture to a temporary RESULTS-DIR, keeping the
// runs whose seed is in seeds (every run when seeds is nil).
func copyResults(t *testing.T, seeds []int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "table1")
	err := filepath.WalkDir(predictionsFixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(predictionsFixture, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if seeds != nil {
		rows, err := results.ReadRuns(filepath.Join(dir, results.RunsFile))
		if err != nil {
			t.Fatal(err)
		}
		rows = slices.DeleteFunc(rows, func(r results.Run) bool { return !slices.Contains(seeds, r.Seed) })
		if err := results.WriteRuns(filepath.Join(dir, results.RunsFile), rows); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// plantDrop flips examples of the runs of method on task at ε = eps in
// the RESULTS-DIR dir: per seed s, net[s]+noise[s] right answers become
// wrong and noise[s] wrong ones right (chosen at random), and the run
// table's acc follows. It returns the mean drop of acc in points.
func plantDrop(t *testing.T, dir, method, task string, eps float64, net, noise map[int64]int) float64 {
	t.Helper()
	rows, err := results.ReadRuns(filepath.Join(dir, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	var drop float64
	n := 0
	for i := range rows {
		r := &rows[i]
		if r.Method != method || r.Task != task || r.EpsilonTarget != eps {
			continue
		}
		name := filepath.Join(dir, "runs", r.RunID, results.PredictionsFile)
		preds, err := results.ReadPredictions(name)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(r.Seed), 5))
		var right, wrong []int
		for j, p := range preds {
			if p.Correct {
				right = append(right, j)
			} else {
				wrong = append(wrong, j)
			}
		}
		rng.Shuffle(len(right), func(a, b int) { right[a], right[b] = right[b], right[a] })
		rng.Shuffle(len(wrong), func(a, b int) { wrong[a], wrong[b] = wrong[b], wrong[a] })
		down, up := net[r.Seed]+noise[r.Seed], noise[r.Seed]
		if down > len(right) || up > len(wrong) {
			t.Fatalf("run %s: %d right and %d wrong answers, want to flip %d and %d", r.RunID, len(right), len(wrong), down, up)
		}
		for _, j := range right[:down] {
			preds[j].Correct, preds[j].Prediction = false, "planted"
		}
		for _, j := range wrong[:up] {
			preds[j].Correct = true
		}
		hit := len(right) - down + up
		acc := 100 * float64(hit) / float64(len(preds))
		drop += r.Results["acc"] - acc
		r.Results["acc"] = acc
		n++
		if err := results.WritePredictions(name, preds); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatalf("no run of %s on %s at ε = %v", method, task, eps)
	}
	if err := results.WriteRuns(filepath.Join(dir, results.RunsFile), rows); err != nil {
		t.Fatal(err)
	}
	return drop / float64(n)
}

// TestCompareExampleLevel plants a noisy drop of a little over 5 points
// (table1's threshold for acc) in DP-SGD's accuracy on fashion-vqa at
// ε = 8, as per-example flips, in a copy of table1's smoke results:
// repro compare finds the regression example by example with three seeds
// and with one, and an identical copy compares clean.
func TestCompareExampleLevel(t *testing.T) {
	if _, err := os.Stat(filepath.Join(predictionsFixture, results.RunsFile)); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	// Net flips per seed 14, 4, 23 of 256 test examples (5.47, 1.56 and
	// 8.98 points: 5.34 on average, noisy across seeds, so that the paired
	// t-test over three seeds alone does not find it), each with some
	// flips both ways.
	net := map[int64]int{1: 14, 2: 4, 3: 23}
	noise := map[int64]int{1: 4, 2: 6, 3: 3}
	for _, tc := range []struct {
		desc  string
		seeds []int64
		want  float64 // the planted drop, points
	}{
		{"3 seeds", nil, 100 * float64(14+4+23) / 3 / 256},
		{"1 seed", []int64{1}, 100 * 14.0 / 256},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			old := copyResults(t, tc.seeds)
			same := copyResults(t, tc.seeds)
			out, _, err := run(t, "compare", old, same)
			if err != nil || !strings.Contains(out, "0 regressions") {
				t.Errorf("identical copy: got error %v, output:\n%s", err, out)
			}
			worse := copyResults(t, tc.seeds)
			if got := plantDrop(t, worse, "dpsgd", "fashion-vqa", 8, net, noise); !(got > 5-1e-9 && got < tc.want+1e-9 && got > tc.want-1e-9) {
				t.Fatalf("planted a drop of %v points, want %v", got, tc.want)
			}
			out, _, err = run(t, "compare", old, worse)
			if err == nil || !strings.Contains(err.Error(), "compare: 1 regression") {
				t.Errorf("planted drop: got error %v, want 1 regression; output:\n%s", err, out)
			}
			var line string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "dpsgd fashion-vqa smoke ε=8 ") && strings.Contains(l, "Holm") {
					line = l
				}
			}
			if !strings.Contains(line, "REGRESSION") {
				t.Errorf("no example-level REGRESSION line for dpsgd fashion-vqa ε=8:\n%s", out)
			}
			// Without the run folders (the run tables alone) the drop is
			// compared over seeds only; log what that test makes of it.
			agg, _, aggErr := run(t, "compare", filepath.Join(old, results.RunsFile), filepath.Join(worse, results.RunsFile), "--metric", "acc")
			for _, l := range strings.Split(agg, "\n") {
				if strings.HasPrefix(l, "dpsgd fashion-vqa smoke ε=8 ") {
					t.Logf("over seeds only: %s (%v)", strings.Join(strings.Fields(l), " "), aggErr)
				}
			}
			t.Logf("example level: %s", strings.Join(strings.Fields(line), " "))
		})
	}
}
