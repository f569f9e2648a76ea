// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/repro-dp/repro/internal/results"
)

// midPRef is a slow reference of the McNemar mid-p in exact rational
// arithmetic: 2·Σ_{i<k} C(n,i)/2ⁿ + C(n,k)/2ⁿ with k = min(b, c), capped
// at 1 (Fagerland, Lydersen and Laake 2013, eq. 3).
func midPRef(b, c int) float64 {
	n, k := int64(b+c), int64(min(b, c))
	if n == 0 {
		return 1
	}
	sum := new(big.Int)
	for i := int64(0); i < k; i++ {
		sum.Add(sum, new(big.Int).Binomial(n, i))
	}
	sum.Mul(sum, big.NewInt(2))
	sum.Add(sum, new(big.Int).Binomial(n, k))
	p := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := p.Float64()
	return min(f, 1)
}

func TestMcNemarMidP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b, c int
		want float64 // closed form where noted, else midPRef
		tol  float64
	}{
		{0, 0, 1, 0},                // no discordant pair
		{0, 5, 1.0 / 32, 1e-15},     // 2·0 + C(5,0)/2⁵
		{5, 0, 1.0 / 32, 1e-15},     // symmetric
		{3, 7, 232.0 / 1024, 1e-15}, // 2·(1+10+45)/2¹⁰ + 120/2¹⁰
		{6, 6, 1, 1e-12},            // b = c: 2P(X<k) + P(X=k) = 1 by symmetry
		{20, 7, midPRef(20, 7), 1e-12},
		{13, 0, midPRef(13, 0), 1e-12},
		{400, 460, midPRef(400, 460), 1e-9},
	} {
		if got := mcnemarMidP(tc.b, tc.c); !scalar.EqualWithinAbsOrRel(got, tc.want, tc.tol, tc.tol) {
			t.Errorf("mcnemarMidP(%d, %d) = %v, want %v", tc.b, tc.c, got, tc.want)
		}
	}
}

// writePredictions writes the predictions of a run whose examples are
// correct where hit is 1, under dir/id, and returns its accuracy (%).
func writePredictions(t *testing.T, dir, id string, hit []int) float64 {
	t.Helper()
	rows := make([]results.Prediction, len(hit))
	n := 0
	for i, h := range hit {
		rows[i] = results.Prediction{Split: "test", ExampleID: fmt.Sprintf("ex/%d", i), Prediction: "x", Correct: h == 1, Loss: 1}
		n += h
	}
	if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WritePredictions(filepath.Join(dir, id, results.PredictionsFile), rows); err != nil {
		t.Fatal(err)
	}
	return 100 * float64(n) / float64(len(hit))
}

// TestCompareExamples plants a drop of flips in one seed's examples (a
// side of one run each, which the aggregate tests cannot judge) and checks
// that the example-level comparison finds it, adjusts it and reports its
// pairs, and that an unchanged copy is identical.
func TestCompareExamples(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 200
	base := make([]int, n)
	for i := range base {
		if rng.Float64() < 0.6 {
			base[i] = 1
		}
	}
	// 16 right → wrong, 4 wrong → right: a drop of 6 points.
	drop := append([]int(nil), base...)
	var flipped, back int
	for i := range drop {
		switch {
		case drop[i] == 1 && flipped < 16:
			drop[i], flipped = 0, flipped+1
		case drop[i] == 0 && back < 4:
			drop[i], back = 1, back+1
		}
	}
	dir := t.TempDir()
	table := func(side string, hit []int) *Runs {
		acc := writePredictions(t, filepath.Join(dir, side), "r1", hit)
		r, err := NewRuns([]Row{{"method": "dpsgd", "task": "t", "seed": 1, "status": "ok", "acc": acc, "run_id": "r1"}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	old, same, worse := table("old", base), table("same", base), table("new", drop)
	opts := func(newSide string) *CompareOptions {
		return &CompareOptions{Metrics: []string{"acc"}, Thresholds: map[string]Threshold{"acc": {Better: "max", Threshold: 5}},
			OldRunDirs: filepath.Join(dir, "old"), NewRunDirs: filepath.Join(dir, newSide)}
	}
	c, err := Compare(old, worse, opts("new"))
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Changes[0]
	wantP := midPRef(16, 4)
	if ch.Test.Kind != "mcnemar" || ch.WorsePairs != 16 || ch.BetterPairs != 4 || ch.Examples != n ||
		!scalar.EqualWithinAbsOrRel(ch.P, wantP, 1e-12, 1e-12) || ch.Verdict != Regression ||
		!scalar.EqualWithinAbsOrRel(ch.Test.Effect, -6, 1e-12, 1e-12) || !(ch.Lo < -6 && -6 < ch.Hi && ch.Hi < 0) {
		t.Errorf("planted drop: got %+v, want a mcnemar REGRESSION with 16/4 discordant pairs of %d, p %v, effect −6 inside a negative interval", ch, n, wantP)
	}
	if c, err = Compare(old, same, opts("same")); err != nil {
		t.Fatal(err)
	}
	if ch := c.Changes[0]; ch.Verdict != Identical || ch.Regressed {
		t.Errorf("identical copy: got %+v, want identical", ch)
	}
	// Without predictions, one run a side is untested, and a regression
	// only because the change is worse than the threshold.
	if c, err = Compare(old, worse, &CompareOptions{Metrics: []string{"acc"}, Thresholds: map[string]Threshold{"acc": {Better: "max", Threshold: 5}}}); err != nil {
		t.Fatal(err)
	}
	if ch := c.Changes[0]; ch.Verdict != Untested || !ch.Regressed {
		t.Errorf("aggregate, one run a side: got %+v, want untested and regressed", ch)
	}
}
