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
