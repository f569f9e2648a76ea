// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// p2 is the two-sided p-value of a one-sample t-test with 2 degrees of
// freedom at statistic t, from the closed form of Student's t CDF with
// ν = 2, F(t) = ½ + t / (2√(2 + t²)) (Abramowitz & Stegun 26.7.3):
// p = 1 − |t|/√(2 + t²).
func p2(t float64) float64 { return 1 - math.Abs(t)/math.Sqrt(2+t*t) }

// TestVerifyGate checks the serial gatekeeping order against hand-worked
// examples. Method x has the values 23, 24, 25 (mean 24, SE 1/√3), so a
// claim "mean(x) > V" has t = (24 − V)√3 with 2 degrees of freedom and
// the p-value p2(t): against 20.8 p = 0.0310, 20 p = 0.0202, 21.2
// p = 0.0400, 21.7 p = 0.0576.
//
// Gate passes: the gate (V = 20.8) alone at α = 0.05, p 0.0310: PASS;
// behind it, V = 20 and V = 21.2 Holm over two: 2 × 0.0202 = 0.0404, and
// max(0.0404, 0.0400) = 0.0404: both PASS. The same three claims in one
// Holm family: 3 × 0.0202 = 0.0606 > 0.05, then max(0.0606, 2 × 0.0310)
// = 0.0621 twice, so none passes: the gate gives the power that the
// family of three takes away.
//
// Gate fails: V = 21.7, p 0.0576 > 0.05: INCONCLUSIVE, and the claims
// behind it NOT RUN, not tested (also one whose premise is the gate).
func TestVerifyGate(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t": {23, 24, 25}},
		"z": {"t": {30, 31}},
	}, nil)
	sqrt3 := math.Sqrt(3)
	pG, p1, p2v, pFail := p2(3.2*sqrt3), p2(4*sqrt3), p2(2.8*sqrt3), p2(2.3*sqrt3)
	for _, c := range []struct {
		name string
		got  float64
		lo   float64
		hi   float64
	}{{"gate", pG, 0.030, 0.032}, {"r1", p1, 0.020, 0.021}, {"r2", p2v, 0.0395, 0.0405}, {"fail", pFail, 0.057, 0.058}} {
		if !(c.got > c.lo && c.got < c.hi) {
			t.Fatalf("hand-worked p %s = %v, want in (%v, %v)", c.name, c.got, c.lo, c.hi)
		}
	}
	x := map[string]string{"method": "x"}
	claim := func(name string, v float64, gate bool, premise ...string) Claim {
		return Claim{Name: name, Metric: "acc", A: x, Expect: "greater", Value: v, Gate: gate, Premise: premise}
	}
	type want struct {
		verdict string
		pHolm   float64 // NaN: none
	}
	nan := math.NaN()
	for _, tc := range []struct {
		desc    string
		claims  []Claim
		want    []want
		tests   int
		gate    int
		failed  bool
		family  string
		reasons string // a substring of every not-tested reason
	}{
		{
			desc:   "gate passes",
			claims: []Claim{claim("g", 20.8, true), claim("r1", 20, false, "g"), claim("r2", 21.2, false)},
			want:   []want{{Pass, pG}, {Pass, 2 * p1}, {Pass, 2 * p1}},
			tests:  3, gate: 1,
			family: "the 1 gate test, then (the gate passed) the 2 tests behind it, a family of their own",
		},
		{
			desc:   "one family without a gate",
			claims: []Claim{claim("g", 20.8, false), claim("r1", 20, false), claim("r2", 21.2, false)},
			want:   []want{{Inconclusive, 2 * pG}, {Inconclusive, 3 * p1}, {Inconclusive, 2 * pG}},
			tests:  3,
			family: "the 3 tests run",
		},
		{
			desc:   "gate fails",
			claims: []Claim{claim("g", 21.7, true), claim("r1", 20, false, "g"), claim("r2", 21.2, false)},
			want:   []want{{Inconclusive, pFail}, {NotRun, nan}, {NotRun, nan}},
			tests:  3, gate: 1, failed: true,
			family:  "the 1 gate test; the gate failed, so the 2 tests behind it were not tested",
			reasons: "not tested: gate failed (g INCONCLUSIVE)",
		},
		{
			desc:   "gate fails the other way",
			claims: []Claim{{Name: "g", Metric: "acc", A: x, Expect: "less", Value: 20, Gate: true}, claim("r2", 21.2, false)},
			want:   []want{{Fail, p1}, {NotRun, nan}},
			tests:  2, gate: 1, failed: true,
			family:  "the 1 gate test; the gate failed, so the 1 test behind it was not tested",
			reasons: "not tested: gate failed (g FAIL)",
		},
		{
			desc: "gate not run",
			claims: []Claim{{Name: "g", Metric: "acc", A: map[string]string{"method": "z"}, Expect: "greater", Value: 20, MinSeeds: 3, Gate: true},
				claim("r1", 20, false)},
			want:  []want{{NotRun, nan}, {NotRun, nan}},
			tests: 1, failed: true,
			family:  "no gate test (the gate was NOT RUN), so the 1 test behind it was not tested",
			reasons: "not tested: gate failed (g NOT RUN)",
		},
		{
			// Two gates, Holm between them: 2 × 0.0202 = 0.0404 and
			// max(0.0404, 0.0310); behind them 0.0400 alone.
			desc:   "two gates",
			claims: []Claim{claim("g1", 20, true), claim("g2", 20.8, true, "g1"), claim("r2", 21.2, false, "g2")},
			want:   []want{{Pass, 2 * p1}, {Pass, 2 * p1}, {Pass, p2v}},
			tests:  3, gate: 2,
			family: "the 2 gate tests, then (the gate passed) the 1 test behind it, a family of their own",
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			v, err := Verify(runs, tc.claims, &VerifyOptions{Resamples: 200})
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				c := v.Checks[i]
				if c.Verdict != w.verdict {
					t.Errorf("%s: verdict %s (%s), want %s", c.Claim, c.Verdict, c.Reason, w.verdict)
				}
				if math.IsNaN(w.pHolm) != math.IsNaN(c.PHolm) || !math.IsNaN(w.pHolm) && !scalar.EqualWithinRel(c.PHolm, w.pHolm, 1e-9) {
					t.Errorf("%s: p Holm %v, want %v", c.Claim, c.PHolm, w.pHolm)
				}
				if c.Gate != tc.claims[i].Gate {
					t.Errorf("%s: Gate %v, want %v", c.Claim, c.Gate, tc.claims[i].Gate)
				}
				if tc.reasons != "" && !c.Gate && c.Reason != tc.reasons {
					t.Errorf("%s: reason %q, want %q", c.Claim, c.Reason, tc.reasons)
				}
			}
			if v.Tests != tc.tests || v.GateTests != tc.gate || v.GateFailed != tc.failed || v.Unmet != 0 {
				t.Errorf("tests %d, gate tests %d, failed %v, unmet %d; want %d, %d, %v, 0", v.Tests, v.GateTests, v.GateFailed, v.Unmet, tc.tests, tc.gate, tc.failed)
			}
			if got := v.FamilyText(); got != tc.family {
				t.Errorf("family %q, want %q", got, tc.family)
			}
			var b strings.Builder
			if err := v.WriteText(&b); err != nil || !strings.Contains(b.String(), tc.family) {
				t.Errorf("WriteText: %v, or the family %q missing:\n%s", err, tc.family, b.String())
			}
		})
	}
}

// TestVerifyGateErrors checks that a gate claim whose premise is behind
// the gate is an error.
func TestVerifyGateErrors(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{"x": {"t": {23, 24, 25}}}, nil)
	x := map[string]string{"method": "x"}
	claims := []Claim{
		{Name: "r", Metric: "acc", A: x, Expect: "greater", Value: 20},
		{Name: "g", Metric: "acc", A: x, Expect: "greater", Value: 20, Gate: true, Premise: []string{"r"}},
	}
	if _, err := Verify(runs, claims, nil); err == nil || !strings.Contains(err.Error(), `gate claim g: premise "r" is behind the gate`) {
		t.Errorf("Verify: %v, want the error of a gate's premise behind it", err)
	}
}

// TestVerifyGateFWER checks by simulation that the gatekeeping order
// controls the family-wise error rate at α: 20 000 draws, each one gate
// test and four tests behind it, one-sample t-tests of 5 normal values
// against 0, judged as Verify judges them (two-sided p; a PASS or a FAIL
// is a rejection). Under the global null (every mean 0) the rate of any
// rejection must be at most α + 0.005 (the simulation's standard error at
// α is 0.0015); with the gate's mean at 2 (its null false, a rejection of
// it no error) and the four behind it null, the rate of a rejection among
// those four must be at most α + 0.005 too. The same draws show that the
// simulation would catch a procedure without the order: testing the four
// behind the gate (Holm among themselves) whatever the gate gives, the
// error rate under the global null is about 1 − 0.95² ≈ 0.0975.
//
// References:
//   - A. Dmitrienko, A. C. Tamhane, B. L. Wiens, "General multistage
//     gatekeeping procedures", Biometrical Journal 50(5), 2008 (the serial
//     gatekeeper's strong control of the family-wise error rate).
func TestVerifyGateFWER(t *testing.T) {
	t.Parallel()
	const (
		draws = 20000
		alpha = 0.05
		n     = 5
		tol   = 0.005
	)
	rng := rand.New(rand.NewPCG(35, 2009))
	greater := Claim{Expect: "greater"}
	check := func(mean float64, gate bool) Check {
		x := make([]float64, n)
		for i := range x {
			x[i] = mean + rng.NormFloat64()
		}
		ch := newCheck(greater, "")
		ch.Gate = gate
		ch.Test = oneSample(x, "one-sample")
		ch.setP(greater)
		return ch
	}
	rate := func(gateMean float64) (gated, ungated float64) {
		var errs, naive int
		for range draws {
			v := &Verification{Alpha: alpha}
			v.Checks = append(v.Checks, check(gateMean, true))
			for range 4 {
				v.Checks = append(v.Checks, check(0, false))
			}
			// Without the order: the gate at α, the four by Holm at α,
			// each family on its own (the same p-values).
			ps := []float64{v.Checks[1].P, v.Checks[2].P, v.Checks[3].P, v.Checks[4].P}
			wrong := gateMean == 0 && v.Checks[0].P <= alpha
			for _, p := range holm(ps) {
				wrong = wrong || p <= alpha
			}
			if wrong {
				naive++
			}
			v.judge()
			for i, c := range v.Checks {
				if (i > 0 || gateMean == 0) && (c.Verdict == Pass || c.Verdict == Fail) {
					errs++
					break
				}
			}
		}
		return float64(errs) / draws, float64(naive) / draws
	}
	fwer, naive := rate(0)
	if fwer > alpha+tol {
		t.Errorf("global null: family-wise error %.4f, want ≤ %v + %v", fwer, alpha, tol)
	}
	if naive < 0.085 {
		t.Errorf("global null without the order: error %.4f, want about 0.0975 (the simulation must see the difference)", naive)
	}
	fwer2, _ := rate(2)
	if fwer2 > alpha+tol {
		t.Errorf("gate false, the rest null: family-wise error %.4f, want ≤ %v + %v", fwer2, alpha, tol)
	}
	t.Logf("family-wise error: global null %.4f (without the order %.4f); gate false, the rest null %.4f", fwer, naive, fwer2)
}
