// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

// neymanPearsonTPR is a slow reference for EpsilonDeltaTPR: the most
// powerful test at level fpr between the worst pair of an (ε, δ)-DP
// mechanism (Kairouz, Oh and Viswanath, ICML 2015, the proof of Theorem
// 2.1: P = (δ, (1−δ)·e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0) against Q, the same
// masses in reverse order), built by the Neyman–Pearson lemma: reject on
// the outcomes of largest likelihood ratio P/Q first, randomising on the
// last one.
func neymanPearsonTPR(eps, delta, fpr float64) float64 {
	e := math.Exp(eps)
	p := []float64{delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0}
	q := []float64{0, p[2], p[1], delta} // already in falling order of P/Q
	tpr, used := 0.0, 0.0
	for i := range p {
		if used+q[i] <= fpr {
			used += q[i]
			tpr += p[i]
			continue
		}
		tpr += p[i] * (fpr - used) / q[i]
		break
	}
	return math.Min(tpr, 1)
}

// TestEpsilonDeltaTPR checks the closed form of the (ε, δ) trade-off
// region against the Neyman–Pearson test of the worst pair (a reference
// that never sees the formula), against the PLD accountant's TPR of one
// EpsilonDelta event (discretised, so it may only be larger, by at most
// its grid's rounding), and its edges.
func TestEpsilonDeltaTPR(t *testing.T) {
	for _, eps := range []float64{0, 0.1, 1, 2.5, 8} {
		for _, delta := range []float64{0, 1e-5, 0.01, 0.2} {
			a, err := NewPLD(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Compose(EpsilonDelta{Epsilon: eps, Delta: delta}, 1); err != nil {
				t.Fatal(err)
			}
			for _, fpr := range []float64{0, 1e-4, 0.001, 0.01, 0.1, 0.3, 0.5, 0.9, 1} {
				got, err := EpsilonDeltaTPR(eps, delta, fpr)
				if err != nil {
					t.Fatal(err)
				}
				want := neymanPearsonTPR(eps, delta, fpr)
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("EpsilonDeltaTPR(%v, %v, %v) = %.15g, the Neyman–Pearson test %.15g", eps, delta, fpr, got, want)
				}
				if got < fpr-1e-15 || got > 1 {
					t.Errorf("EpsilonDeltaTPR(%v, %v, %v) = %v, outside [fpr, 1]", eps, delta, fpr, got)
				}
				pld, err := a.TPR(fpr)
				if err != nil {
					t.Fatal(err)
				}
				// The PLD rounds losses up to its grid (1e-4 by default):
				// e^(ε+h) against e^ε moves the bound by at most
				// ~h·e^ε·fpr; 1e-3 relative covers every case here.
				if pld < got-1e-12 || pld > got*(1+1e-3)+1e-12 {
					t.Errorf("ε = %v, δ = %v, FPR %v: PLD TPR %.10g, closed form %.10g", eps, delta, fpr, pld, got)
				}
			}
		}
	}
	// Edges: ε = +Inf discloses everything; bad parameters are errors.
	if v, _ := EpsilonDeltaTPR(math.Inf(1), 1e-5, 0.01); v != 1 {
		t.Errorf("ε = +Inf, FPR 0.01: %v, want 1", v)
	}
	if v, _ := EpsilonDeltaTPR(math.Inf(1), 1e-5, 0); v != 1e-5 {
		t.Errorf("ε = +Inf, FPR 0: %v, want δ", v)
	}
	// A finite ε whose e^ε overflows float64 (ε > ln(MaxFloat64) ≈ 709.8)
	// is the same region: δ at FPR 0 (where e^ε·0 would be +Inf·0 = NaN),
	// 1 above it.
	for _, eps := range []float64{709, 710, 1000} {
		if v, err := EpsilonDeltaTPR(eps, 1e-5, 0); err != nil || v != 1e-5 {
			t.Errorf("ε = %v, FPR 0: %v (%v), want δ", eps, v, err)
		}
		if v, err := EpsilonDeltaTPR(eps, 1e-5, 1e-3); err != nil || v != 1 {
			t.Errorf("ε = %v, FPR 0.001: %v (%v), want 1", eps, v, err)
		}
	}
	for _, c := range [][3]float64{{-1, 0, 0.1}, {math.NaN(), 0, 0.1}, {1, 1, 0.1}, {1, -1e-9, 0.1}, {1, 0, 1.5}, {1, 0, math.NaN()}} {
		if _, err := EpsilonDeltaTPR(c[0], c[1], c[2]); err == nil {
			t.Errorf("EpsilonDeltaTPR(%v, %v, %v): no error", c[0], c[1], c[2])
		}
	}
}

// binomialRRTPR is an exact reference for the trade-off of n pure ε-DP
// randomised responses composed: the number K of released ones is
// Binomial(n, p) under P and Binomial(n, 1 − p) under Q, p = e^ε/(1+e^ε),
// and the privacy loss ε·(2K − n) rises with K, so the most powerful test
// at level fpr rejects Q for the largest K first, randomising at the last
// (the Neyman–Pearson lemma; Kairouz, Oh and Viswanath, ICML 2015,
// Theorem 3.3, compose the same pair). Masses come from log-binomial
// coefficients (math.Lgamma), over K within 40 standard deviations of
// n/2: the rest holds less than 1e-300 of either law at the ε here.
func binomialRRTPR(eps float64, n int, fpr float64) float64 {
	nf := float64(n)
	lp, lq := -math.Log1p(math.Exp(-eps)), -math.Log1p(math.Exp(eps)) // log p, log(1 − p)
	lgn, _ := math.Lgamma(nf + 1)
	logPMF := func(k int, a, b float64) float64 {
		kf := float64(k)
		l1, _ := math.Lgamma(kf + 1)
		l2, _ := math.Lgamma(nf - kf + 1)
		return lgn - l1 - l2 + kf*a + (nf-kf)*b
	}
	w := int(40*math.Sqrt(nf)/2) + 40
	lo, hi := max(0, n/2-w), min(n, n/2+w)
	tpr, used := 0.0, 0.0
	for k := hi; k >= lo; k-- {
		pk, qk := math.Exp(logPMF(k, lp, lq)), math.Exp(logPMF(k, lq, lp))
		if used+qk <= fpr {
			used += qk
			tpr += pk
			continue
		}
		return math.Min(1, tpr+pk*(fpr-used)/qk)
	}
	return math.Min(1, tpr)
}

// TestPureIntervalTPR checks the membership bound of composed pure ε-DP
// releases (LDP-FL's per-coordinate randomised responses) read from the
// PLD accountant on the grid PureInterval gives: one release against the
// closed form 1 − f(α) = min(1, e^ε·α, 1 − e^−ε·(1 − α)) (Dong, Roth and
// Su, "Gaussian differential privacy", JRSS B 2022, Proposition 2.5 at
// δ = 0), and n of them against the exact binomial test
// (binomialRRTPR), at LDP-FL's run in secmmfl-mia-leak among them: ε_w
// calibrated as LDP-FL does (the RDP accountant, d·L = 104 458 · 50
// releases at ε = 1 and 8, δ = 10⁻⁵). The bound must never be below the
// true curve (it is an upper bound), lie within 10⁻⁴ of it (the aligned
// grid loses nothing), never be above the bound at the default grid, nor
// above the (ε, δ) region at the RDP accountant's ε (the bound it
// replaces); at LDP-FL's ε_w the (ε, δ) region must be looser by more
// than 0.05 somewhere, or the PLD would not be worth its cost.
func TestPureIntervalTPR(t *testing.T) {
	const delta = 1e-5
	calibrated := func(eps float64, n int) float64 {
		c, err := Calibrate(func() (Accountant, error) { return NewRDP(&RDPOptions{Relation: ReplaceOne}) },
			func(s float64) Event { return SelfComposed{Event: EpsilonDelta{Epsilon: 1 / s}, Count: n} }, eps, delta, &CalibrateOptions{MaxSigma: 1e9})
		if err != nil {
			t.Fatal(err)
		}
		return 1 / c.Sigma
	}
	const ldpflReleases = 104458 * 50
	cases := []struct {
		name  string
		eps   float64
		n     int
		loose bool // the (ε, δ) region must be looser somewhere
	}{
		{"one release, ε = 1", 1, 1, false},
		{"one release, ε = 0.37", 0.37, 1, false},
		{"400 releases, ε = 0.05", 0.05, 400, false},
		{"LDP-FL at ε = 1", calibrated(1, ldpflReleases), ldpflReleases, true},
		{"LDP-FL at ε = 8", calibrated(8, ldpflReleases), ldpflReleases, true},
	}
	if testing.Short() {
		cases = cases[:3]
	}
	fprs := []float64{0, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 1}
	for _, tc := range cases {
		ev := SelfComposed{Event: EpsilonDelta{Epsilon: tc.eps}, Count: tc.n}
		h := PureInterval(ev)
		if !(h > 0 && h <= 1e-4) {
			t.Fatalf("%s: PureInterval %v, want in (0, 1e-4]", tc.name, h)
		}
		if k := tc.eps / h; math.Abs(k-math.Round(k)) > 1e-6 {
			t.Errorf("%s: ε/h = %v, want an integer", tc.name, k)
		}
		aligned, err := NewPLD(&PLDOptions{Interval: h})
		if err != nil {
			t.Fatal(err)
		}
		def, err := NewPLD(nil)
		if err != nil {
			t.Fatal(err)
		}
		rdp, err := NewRDP(&RDPOptions{Relation: ReplaceOne})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []Accountant{aligned, def, rdp} {
			if err := a.Compose(ev, 1); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		epsRDP, err := rdp.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		gap := 0.0
		for _, fpr := range fprs {
			got, err := aligned.TPR(fpr)
			if err != nil {
				t.Fatal(err)
			}
			want := binomialRRTPR(tc.eps, tc.n, fpr)
			if tc.n == 1 {
				closed := math.Min(1, math.Min(math.Exp(tc.eps)*fpr, 1-math.Exp(-tc.eps)*(1-fpr)))
				if math.Abs(closed-want) > 1e-12 {
					t.Errorf("%s: FPR %v: binomial test %.12g, closed form %.12g", tc.name, fpr, want, closed)
				}
			}
			if got < want-1e-9 || got > want+1e-4 {
				t.Errorf("%s: FPR %v: PLD bound %.8f, exact %.8f (want at most 1e-4 above)", tc.name, fpr, got, want)
			}
			coarse, err := def.TPR(fpr)
			if err != nil {
				t.Fatal(err)
			}
			if got > coarse+1e-9 || coarse < want-1e-9 {
				t.Errorf("%s: FPR %v: PLD bound %.8f on the aligned grid, %.8f on the default one, exact %.8f", tc.name, fpr, got, coarse, want)
			}
			ed, err := EpsilonDeltaTPR(epsRDP, delta, fpr)
			if err != nil {
				t.Fatal(err)
			}
			if got > ed+1e-12 {
				t.Errorf("%s: FPR %v: PLD bound %.8f above the (ε = %.4f, δ) region's %.8f", tc.name, fpr, got, epsRDP, ed)
			}
			gap = max(gap, ed-got)
			t.Logf("%s: FPR %v: exact %.6f, aligned %.6f, default grid %.6f, (ε = %.4f, δ) %.6f", tc.name, fpr, want, got, coarse, epsRDP, ed)
		}
		if tc.loose && gap < 0.05 {
			t.Errorf("%s: the (ε, δ) region is at most %.4f above the PLD bound; want it looser by 0.05 somewhere", tc.name, gap)
		}
	}
}

// TestPureInterval checks which events get an aligned grid: pure
// EpsilonDelta events of one ε, however composed; anything else the
// default (0).
func TestPureInterval(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want float64 // 0: the default; else ε/want must be an integer
	}{
		{EpsilonDelta{Epsilon: 1}, 1e-4},
		{EpsilonDelta{Epsilon: 3e-5}, 3e-5},
		{EpsilonDelta{Epsilon: 1.5e-4}, 7.5e-5},
		{SelfComposed{Event: EpsilonDelta{Epsilon: 1.5e-4}, Count: 9}, 7.5e-5},
		{Composed{EpsilonDelta{Epsilon: 0.2}, SelfComposed{Event: EpsilonDelta{Epsilon: 0.2}, Count: 3}}, 1e-4},
		{Composed{EpsilonDelta{Epsilon: 0.2}, EpsilonDelta{Epsilon: 0.3}}, 0},
		{EpsilonDelta{Epsilon: 1, Delta: 1e-6}, 0},
		{EpsilonDelta{Epsilon: math.Inf(1)}, 0},
		{EpsilonDelta{}, 0},
		{Composed{}, 0},
		{Gaussian{Sigma: 1}, 0},
		{Composed{Gaussian{Sigma: 1}, EpsilonDelta{Epsilon: 0.2}}, 0},
		{NonPrivate{}, 0},
	} {
		got := PureInterval(tc.e)
		if tc.want == 0 {
			if got != 0 {
				t.Errorf("PureInterval(%v) = %v, want 0", tc.e, got)
			}
			continue
		}
		if math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("PureInterval(%v) = %v, want %v", tc.e, got, tc.want)
		}
	}
}
