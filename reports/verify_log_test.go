// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// TestVerifyLogScale checks a claim on the log scale against values worked
// by hand: b = 1, 2, 4 and a = b·e^d with d = −0.3, −0.2, −0.4 on seeds
// 1–3, so the per-seed log ratios are d: mean −0.3, sd 0.1, SE 0.1/√3,
// t = −3√3 on 2 degrees of freedom, two-sided p = 2·F₂(−3√3) = 1 − 3√3/√29
// (F₂ the closed-form t CDF, tCDF2). The paper's ratio 0.85 gives the
// effect log 0.85 against which CONTRADICTED would be judged; the
// note states both ratios. On the linear scale the same runs give another
// effect, mean(a − b).
func TestVerifyLogScale(t *testing.T) {
	t.Parallel()
	b := []float64{1, 2, 4}
	d := []float64{-0.3, -0.2, -0.4}
	a := make([]float64, 3)
	for i := range a {
		a[i] = b[i] * math.Exp(d[i])
	}
	runs := cellRuns(t, "step_seconds",
		cell{"x", "t", []int{1, 2, 3}, a}, cell{"y", "t", []int{1, 2, 3}, b})
	c := Claim{Name: "faster", Metric: "step_seconds", A: sideX, B: sideY, Expect: "less", Scale: "log",
		Paper: []PaperValue{{A: 0.85, B: 1, A2: math.NaN(), B2: math.NaN()}}}
	v, err := Verify(runs, []Claim{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := v.Checks[0]
	tStat := -3 * math.Sqrt(3)
	if ch.Test.Kind != "paired" || !scalar.EqualWithinAbs(ch.Test.Effect, -0.3, 1e-12) || !scalar.EqualWithinAbs(ch.Test.SE, 0.1/math.Sqrt(3), 1e-12) {
		t.Errorf("test %s, effect %v, SE %v; want paired, −0.3, %v", ch.Test.Kind, ch.Test.Effect, ch.Test.SE, 0.1/math.Sqrt(3))
	}
	if want := 2 * tCDF2(tStat); !scalar.EqualWithinAbs(ch.P, want, 1e-9) {
		t.Errorf("p = %v, want %v", ch.P, want)
	}
	if ch.Verdict != Pass {
		t.Errorf("verdict %s, want PASS (one-sided p %v)", ch.Verdict, tCDF2(tStat))
	}
	if !scalar.EqualWithinAbs(ch.PaperA, math.Log(0.85), 1e-15) || ch.PaperB != 0 || ch.Expect != "log a < log b" {
		t.Errorf("paper %v / %v, expect %q; want log 0.85 / 0, \"log a < log b\"", ch.PaperA, ch.PaperB, ch.Expect)
	}
	if !strings.Contains(ch.Note, "ratio a/b 0.74,") || !strings.Contains(ch.Note, "the paper's 0.85") {
		t.Errorf("note %q, want the ratios e^−0.3 ≈ 0.74 and 0.85", ch.Note)
	}
	c.Scale = ""
	lin, err := Verify(runs, []Claim{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for i := range a {
		want += (a[i] - b[i]) / 3
	}
	if got := lin.Checks[0].Test.Effect; !scalar.EqualWithinAbs(got, want, 1e-12) {
		t.Errorf("linear effect %v, want %v", got, want)
	}
	c.Scale = "sqrt"
	if _, err := Verify(runs, []Claim{c}, nil); err == nil {
		t.Error("unknown scale accepted")
	}
}

// TestRunsWithLog checks that withLog leaves the table alone and makes a
// non-positive value missing.
func TestRunsWithLog(t *testing.T) {
	t.Parallel()
	runs := cellRuns(t, "m", cell{"x", "t", []int{1, 2, 3}, []float64{math.E, 0, -1}})
	l := runs.withLog("m")
	got, _ := l.Column("m")
	orig, _ := runs.Column("m")
	if got.Floats[0] != 1 || !math.IsNaN(got.Floats[1]) || !math.IsNaN(got.Floats[2]) {
		t.Errorf("log column %v, want [1 NaN NaN]", got.Floats)
	}
	if orig.Floats[0] != math.E || orig.Floats[1] != 0 || orig.Floats[2] != -1 {
		t.Errorf("original changed: %v", orig.Floats)
	}
}

// TestVerifyLogNonPositive checks that a log-scale claim says what its
// values ≤ 0 cost. b's value 0 on seed 3 becomes missing, so a and b no
// longer share their seeds and test auto gives Welch's test on a's three
// values against b's two in place of the paired test on three seeds: the
// note counts the value, the side and the lost pair and names the
// switch. With seeds 1 and 2 alone b keeps one seed, fewer than MinSeeds,
// and the NOT RUN reason says the log scale left the other out. With
// every value positive the note says nothing of it.
func TestVerifyLogNonPositive(t *testing.T) {
	t.Parallel()
	c := Claim{Name: "faster", Metric: "step_seconds", A: sideX, B: sideY, Expect: "less", Scale: "log"}
	check := func(a, b []float64, seeds []int) Check {
		t.Helper()
		runs := cellRuns(t, "step_seconds", cell{"x", "t", seeds, a}, cell{"y", "t", seeds, b})
		v, err := Verify(runs, []Claim{c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.Checks[0]
	}

	ch := check([]float64{1, 2, 4}, []float64{2, 3, 0}, []int{1, 2, 3})
	if ch.Test.Kind != "welch" || ch.NA != 3 || ch.NB != 2 {
		t.Errorf("test %s on %d and %d runs, want welch on 3 and 2", ch.Test.Kind, ch.NA, ch.NB)
	}
	want := "log scale: 1 value ≤ 0 on b left out as missing, which removes 1 of 3 shared seeds: Welch's test in place of the paired test"
	if !strings.Contains(ch.Note, want) {
		t.Errorf("note %q, want it to contain %q", ch.Note, want)
	}

	ch = check([]float64{-1, 2}, []float64{2, 0}, []int{1, 2})
	if ch.Verdict != NotRun {
		t.Fatalf("verdict %s, want NOT RUN", ch.Verdict)
	}
	want = "a has 1 distinct seeds with step_seconds, want ≥ 2; log scale: 1 value ≤ 0 on a, 1 value ≤ 0 on b left out as missing, which removes 2 of 2 shared seeds"
	if ch.Reason != want {
		t.Errorf("reason %q, want %q", ch.Reason, want)
	}

	ch = check([]float64{1, 2, 4}, []float64{2, 3, 5}, []int{1, 2, 3})
	if ch.Test.Kind != "paired" || strings.Contains(ch.Note, "≤ 0") {
		t.Errorf("all positive: test %s, note %q; want paired and no word of values ≤ 0", ch.Test.Kind, ch.Note)
	}
}

// TestVerifyLogNonPositiveInteraction checks the same for an interaction
// claim: b's value 0 at x2 on seed 3 leaves the four cells two shared
// seeds of three, so test auto compares the four cells' means (the
// contrast) in place of the per-seed paired test, and the note says so.
func TestVerifyLogNonPositiveInteraction(t *testing.T) {
	t.Parallel()
	seeds := []int{1, 2, 3}
	runs := cellRuns(t, "step_seconds",
		cell{"x", "t1", seeds, []float64{1, 2, 3}}, cell{"y", "t1", seeds, []float64{2, 3, 4}},
		cell{"x", "t2", seeds, []float64{1, 2, 3}}, cell{"y", "t2", seeds, []float64{1, 2, 0}})
	c := interactionClaim()
	c.Metric, c.Scale = "step_seconds", "log"
	v, err := Verify(runs, []Claim{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := v.Checks[0]
	if ch.Test.Kind != "contrast" || ch.NB2 != 2 {
		t.Errorf("test %s, %d runs of b at x2; want contrast, 2", ch.Test.Kind, ch.NB2)
	}
	want := "log scale: 1 value ≤ 0 on b at x2 left out as missing, which removes 1 of 3 shared seeds: the contrast of the cells' means in place of the paired test"
	if !strings.Contains(ch.Note, want) {
		t.Errorf("note %q, want it to contain %q", ch.Note, want)
	}
}
