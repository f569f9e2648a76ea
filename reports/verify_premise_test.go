// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// TestVerifyOneSidedValue checks a greater or less claim without B (mean
// of A against a number) against the one-sample t-test computed by hand:
// a = [23, 24, 25] has mean 24 and SE 1/√3, so against 20 t = 4√3 with 2
// degrees of freedom, where Student's t CDF has the closed form
// F(t) = ½ + t / (2√(2 + t²)) (e.g. Abramowitz & Stegun 26.7.3 with ν = 2):
// the one-sided p is ½ − t/(2√(2+t²)) = ½ − 4√3/(2√50).
func TestVerifyOneSidedValue(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t": {23, 24, 25}},
		"z": {"t": {30, 31}},
	}, nil)
	tStat := 4 * math.Sqrt(3)
	p1 := 0.5 - tStat/(2*math.Sqrt(2+tStat*tStat))
	a := map[string]string{"method": "x"}
	for _, tc := range []struct {
		desc    string
		claim   Claim
		verdict string
		p       float64 // two-sided; NaN: not checked
		expect  string
	}{
		{"greater passes", Claim{Name: "c", Metric: "acc", A: a, Expect: "greater", Value: 20}, Pass, 2 * p1, "a > 20"},
		{"less fails", Claim{Name: "c", Metric: "acc", A: a, Expect: "less", Value: 20}, Fail, 2 * p1, "a < 20"},
		// Against 28 the effect is −4: t = −4√3, the same p the other way.
		{"greater fails", Claim{Name: "c", Metric: "acc", A: a, Expect: "greater", Value: 28}, Fail, 2 * p1, "a > 28"},
		{"less passes", Claim{Name: "c", Metric: "acc", A: a, Expect: "less", Value: 28}, Pass, 2 * p1, "a < 28"},
		// At the mean itself t = 0: p = 1.
		{"at the bound", Claim{Name: "c", Metric: "acc", A: a, Expect: "greater", Value: 24}, Inconclusive, 1, "a > 24"},
		{"min seeds", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "z"}, Expect: "greater", Value: 20, MinSeeds: 3}, NotRun, math.NaN(), "a > 20"},
		{"exact", Claim{Name: "c", Metric: "acc", A: a, Expect: "greater", Value: 22.5, Test: "exact"}, Pass, math.NaN(), "a > 22.5"},
		{"exact fails one", Claim{Name: "c", Metric: "acc", A: a, Expect: "greater", Value: 23, Test: "exact"}, Inconclusive, math.NaN(), "a > 23"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			v, err := Verify(runs, []Claim{tc.claim}, &VerifyOptions{Resamples: 500})
			if err != nil {
				t.Fatal(err)
			}
			c := v.Checks[0]
			if c.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%+v)", c.Verdict, tc.verdict, c)
			}
			if !math.IsNaN(tc.p) && !scalar.EqualWithinAbs(c.P, tc.p, 1e-12) {
				t.Errorf("p = %v, want %v (closed form, t with 2 df)", c.P, tc.p)
			}
			if c.Expect != tc.expect {
				t.Errorf("expect %q, want %q", c.Expect, tc.expect)
			}
		})
	}

	// Power at min_effect, and only at a paper value of the claimed side.
	claims := []Claim{
		{Name: "min-effect", Metric: "acc", A: a, Expect: "greater", Value: 20, MinEffect: 2},
		{Name: "paper-wrong-side", Metric: "acc", A: a, Expect: "greater", Value: 20, Paper: []PaperValue{{A: 18, B: math.NaN()}}},
		{Name: "paper-right-side", Metric: "acc", A: a, Expect: "greater", Value: 20, Paper: []PaperValue{{A: 23, B: math.NaN()}}},
	}
	v, err := Verify(runs, claims, &VerifyOptions{Resamples: 500})
	if err != nil {
		t.Fatal(err)
	}
	// All three have the same p; Holm's levels are α/3, α/2, α by rank,
	// ties in order.
	if want := v.Checks[0].Test.power(2, 0.05/3); v.Checks[0].Power != want || !(want > 0 && want < 1) {
		t.Errorf("power at min_effect = %v, want %v in (0, 1)", v.Checks[0].Power, want)
	}
	if !math.IsNaN(v.Checks[1].Power) || !math.IsNaN(v.Checks[1].PContra) {
		t.Errorf("paper value below the bound of a greater claim: power %v, p contradicted %v, want NaN and NaN", v.Checks[1].Power, v.Checks[1].PContra)
	}
	if want := v.Checks[2].Test.power(3, 0.05); v.Checks[2].Power != want {
		t.Errorf("power at the paper's 23 − 20 = %v, want %v", v.Checks[2].Power, want)
	}
	// Our mean 24 against the paper's 23: "at least the paper's" is not
	// ruled out, p = P(T ≤ (24 − 23)√3) with 2 df.
	tc := math.Sqrt(3)
	if want := 0.5 + tc/(2*math.Sqrt(2+tc*tc)); !scalar.EqualWithinAbs(v.Checks[2].PContra, want, 1e-12) {
		t.Errorf("p contradicted = %v, want %v (closed form)", v.Checks[2].PContra, want)
	}
}

// TestVerifyPremise checks that a claim whose premise did not PASS is NOT
// RUN with the premise's verdict in its reason, and judged as usual when
// it did.
func TestVerifyPremise(t *testing.T) {
	t.Parallel()
	up := []float64{50.1, 51.3, 49.8, 50.6, 50.9, 49.7, 50.2, 51.0}
	down := []float64{40.3, 41.1, 40.0, 39.2, 40.8, 40.4, 39.9, 40.6}
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t1": up, "t2": {30, 31, 29}},
		"y": {"t1": down, "t2": {29.5, 30.0, 30.5}},
	}, nil)
	sel := func(m, task string) map[string]string { return map[string]string{"method": m, "task": task} }
	pass := Claim{Name: "ctl", Metric: "acc", A: sel("x", "t1"), B: sel("y", "t1"), Expect: "greater"}
	fail := Claim{Name: "ctl", Metric: "acc", A: sel("x", "t1"), B: sel("y", "t1"), Expect: "less"}
	inconclusive := Claim{Name: "ctl", Metric: "acc", A: sel("x", "t2"), B: sel("y", "t2"), Expect: "greater"}
	notRun := Claim{Name: "ctl", Metric: "acc", A: sel("x", "t2"), B: sel("y", "t2"), Expect: "greater", MinSeeds: 5}
	dep := Claim{Name: "dep", Metric: "acc", A: sel("x", "t1"), Expect: "greater", Value: 45, Premise: []string{"ctl"}}
	dep2 := Claim{Name: "dep2", Metric: "acc", A: sel("x", "t1"), Expect: "greater", Value: 45, Premise: []string{"dep"}}
	for _, tc := range []struct {
		desc    string
		ctl     Claim
		verdict string
		reason  string
	}{
		{"premise passes", pass, Pass, ""},
		{"premise fails", fail, NotRun, "premise ctl not met (FAIL)"},
		{"premise inconclusive", inconclusive, NotRun, "premise ctl not met (INCONCLUSIVE)"},
		{"premise not run", notRun, NotRun, "premise ctl not met (NOT RUN)"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			// The dependent claim comes first: premises are resolved in
			// their own order, not the list's.
			v, err := Verify(runs, []Claim{dep2, dep, tc.ctl}, &VerifyOptions{Resamples: 500})
			if err != nil {
				t.Fatal(err)
			}
			d := v.Checks[1]
			if d.Verdict != tc.verdict || d.Reason != tc.reason {
				t.Errorf("dep: %s %q, want %s %q", d.Verdict, d.Reason, tc.verdict, tc.reason)
			}
			if tc.verdict == NotRun && !(math.IsNaN(d.P) && math.IsNaN(d.PHolm) && math.IsNaN(d.Power)) {
				t.Errorf("dep NOT RUN keeps p %v, p Holm %v, power %v", d.P, d.PHolm, d.Power)
			}
			// The family keeps the dependents' tests (the premise's own
			// too, unless it had too few seeds); they are the unmet ones
			// when the premise did not PASS.
			wantTests, wantUnmet := 3, 0
			if tc.ctl.MinSeeds == 5 {
				wantTests = 2
			}
			if tc.verdict == NotRun {
				wantUnmet = 2
			}
			if v.Tests != wantTests || v.Unmet != wantUnmet {
				t.Errorf("family: %d tests, %d unmet, want %d and %d", v.Tests, v.Unmet, wantTests, wantUnmet)
			}
			d2 := v.Checks[0]
			want2, reason2 := Pass, ""
			if tc.verdict != Pass {
				want2, reason2 = NotRun, "premise dep not met (NOT RUN)"
			}
			if d2.Verdict != want2 || d2.Reason != reason2 {
				t.Errorf("dep2: %s %q, want %s %q", d2.Verdict, d2.Reason, want2, reason2)
			}
		})
	}
	for _, tc := range []struct {
		desc   string
		claims []Claim
	}{
		{"unknown", []Claim{dep}},
		{"cycle", []Claim{{Name: "ctl", Metric: "acc", A: sel("x", "t1"), Expect: "greater", Value: 1, Premise: []string{"dep"}}, dep}},
		{"self", []Claim{{Name: "ctl", Metric: "acc", A: sel("x", "t1"), Expect: "greater", Value: 1, Premise: []string{"ctl"}}}},
	} {
		if _, err := Verify(runs, tc.claims, nil); err == nil {
			t.Errorf("%s premise: no error", tc.desc)
		}
	}
}

// TestVerifyEffectFromValue checks that every kind of claim shows its
// effect (and interval, and the paper's effect) measured from the value
// its test is tested against: mean(A) − V for a claim without B, a − b
// for a greater or less claim with B, a − b − V for a value claim with B,
// and the difference of gains less V for a value interaction. The means
// are by hand: a = [23, 24, 25] (mean 24), b = [30, 31] (mean 30.5); the
// interaction's gains are 3 at t1 and 1 at t2 on every seed.
func TestVerifyEffectFromValue(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t": {23, 24, 25}, "t1": {23, 24, 25}, "t2": {10, 11, 12}},
		"y": {"t1": {20, 21, 22}, "t2": {9, 10, 11}},
		"z": {"t": {30, 31}},
	}, nil)
	a := map[string]string{"method": "x", "task": "t"}
	b := map[string]string{"method": "z", "task": "t"}
	for _, tc := range []struct {
		desc   string
		claim  Claim
		ref    float64
		effect float64
		paper  float64 // the paper's effect; NaN: none given
	}{
		{"greater than a value", Claim{Expect: "greater", Value: 20, A: a, Paper: []PaperValue{{A: 23, B: math.NaN()}}}, 20, 4, 3},
		{"less than a value", Claim{Expect: "less", Value: 28, A: a}, 28, -4, math.NaN()},
		{"value without b", Claim{Expect: "value", Value: 24.5, Tolerance: 1, A: a}, 24.5, -0.5, math.NaN()},
		{"exact against a value", Claim{Expect: "greater", Value: 22.5, Test: "exact", A: a}, 22.5, 1.5, math.NaN()},
		{"greater with b", Claim{Expect: "greater", A: a, B: b, Paper: []PaperValue{{A: 25, B: 20}}}, 0, -6.5, 5},
		{"value with b", Claim{Expect: "value", Value: -6, Tolerance: 1, A: a, B: b, Paper: []PaperValue{{A: 24, B: 31}}}, -6, -0.5, -1},
		{"value interaction", Claim{Expect: "value", Value: 2.5, Tolerance: 1,
			A: map[string]string{"method": "x"}, B: map[string]string{"method": "y"},
			X1: map[string]string{"task": "t1"}, X2: map[string]string{"task": "t2"},
			Paper: []PaperValue{{A: 5, B: 2, A2: 4, B2: 3}}}, 2.5, -0.5, -0.5},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			c := tc.claim
			c.Name, c.Metric = "c", "acc"
			v, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 500})
			if err != nil {
				t.Fatal(err)
			}
			ch := v.Checks[0]
			if ch.Verdict == NotRun {
				t.Fatalf("not run: %s", ch.Reason)
			}
			e, lo, hi := ch.Effect()
			if ch.Ref != tc.ref || !scalar.EqualWithinAbs(e, tc.effect, 1e-12) {
				t.Errorf("Ref %v, effect %v, want %v and %v", ch.Ref, e, tc.ref, tc.effect)
			}
			// The interval moves with the effect: the raw one less Ref.
			if lo != ch.Lo-tc.ref || hi != ch.Hi-tc.ref || !(lo <= e && e <= hi) {
				t.Errorf("interval [%v, %v] around %v, want [%v, %v] containing it", lo, hi, e, ch.Lo-tc.ref, ch.Hi-tc.ref)
			}
			if got := ch.PaperEffect(); !(math.IsNaN(tc.paper) && math.IsNaN(got)) && !scalar.EqualWithinAbs(got, tc.paper, 1e-12) {
				t.Errorf("paper effect %v, want %v", got, tc.paper)
			}

			var text bytes.Buffer
			if err := v.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%+.2f [%.2f, %.2f]", tc.effect, lo, hi); !strings.Contains(text.String(), want) {
				t.Errorf("text has no %q:\n%s", want, text.String())
			}
			js, err := json.Marshal(ch)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Test struct{ Effect float64 }
				From float64 `json:"effect_from"`
				Lo   float64 `json:"ci_lo"`
			}
			if err := json.Unmarshal(js, &got); err != nil {
				t.Fatal(err)
			}
			if got.From != tc.ref || !scalar.EqualWithinAbs(got.Test.Effect, tc.effect, 1e-12) || got.Lo != lo {
				t.Errorf("JSON effect %v from %v, ci_lo %v; want %v from %v, %v", got.Test.Effect, got.From, got.Lo, tc.effect, tc.ref, lo)
			}
		})
	}
}

// TestVerifySeedRange checks that a claim's selector takes a closed range
// "lo..hi" of a numeric column, so that a claim can read one trial's seeds
// (secmmfl-tablec's fresh control, seed "9..32"): the claim on seeds 4..6
// of a = [10, 11, 12, 23, 24, 25] (seeds 1–6) is the one-sample test of
// [23, 24, 25] against 20, whose two-sided p has the closed form of
// TestVerifyOneSidedValue (t = 4√3, 2 degrees of freedom); seeds 1..3 fail
// it; a range that selects no seed, or a text that is no range, selects
// nothing.
func TestVerifySeedRange(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{"x": {"t": {10, 11, 12, 23, 24, 25}}}, nil)
	tStat := 4 * math.Sqrt(3)
	p2 := 2 * (0.5 - tStat/(2*math.Sqrt(2+tStat*tStat)))
	for _, tc := range []struct {
		seeds   string
		verdict string
		mean    float64 // NaN: none selected
		p       float64 // NaN: not checked
	}{
		{"4..6", Pass, 24, p2},
		{" 4 .. 6 ", Pass, 24, p2},
		{"4..9", Pass, 24, p2},
		{"1..3", Fail, 11, math.NaN()},
		{"1..6", Inconclusive, 17.5, math.NaN()},
		{"6..4", NotRun, math.NaN(), math.NaN()},
		{"7..9", NotRun, math.NaN(), math.NaN()},
		{"4..", NotRun, math.NaN(), math.NaN()},
		{"4-6", NotRun, math.NaN(), math.NaN()},
		{"-inf..6", NotRun, math.NaN(), math.NaN()},
	} {
		c := Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "seed": tc.seeds}, Expect: "greater", Value: 20, MinSeeds: 3}
		v, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 500})
		if err != nil {
			t.Fatal(err)
		}
		ch := v.Checks[0]
		if ch.Verdict != tc.verdict {
			t.Errorf("seed %q: verdict %s, want %s (%s)", tc.seeds, ch.Verdict, tc.verdict, ch.Reason)
		}
		if !(math.IsNaN(tc.mean) && math.IsNaN(ch.MeanA)) && !scalar.EqualWithinAbs(ch.MeanA, tc.mean, 1e-12) {
			t.Errorf("seed %q: mean %v, want %v", tc.seeds, ch.MeanA, tc.mean)
		}
		if !math.IsNaN(tc.p) && !scalar.EqualWithinAbs(ch.P, tc.p, 1e-12) {
			t.Errorf("seed %q: p = %v, want %v (closed form, t with 2 df)", tc.seeds, ch.P, tc.p)
		}
	}
	// A range on a string column matches nothing; a plain value still
	// matches as before.
	if sel, _ := selectRuns(runs, map[string]string{"method": "a..z"}); len(sel) != 0 {
		t.Errorf("a range on a string column selected %v, want none", sel)
	}
	if sel, _ := selectRuns(runs, map[string]string{"seed": "5"}); len(sel) != 1 {
		t.Errorf("seed 5 selected %v, want one run", sel)
	}
}
