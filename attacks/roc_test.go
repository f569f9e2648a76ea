// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// slowAUC is the Mann–Whitney statistic by pairwise comparison, ties ½.
func slowAUC(m, n []float64) float64 {
	s := 0.0
	for _, a := range m {
		for _, b := range n {
			switch {
			case a > b:
				s++
			case a == b:
				s += 0.5
			}
		}
	}
	return s / float64(len(m)*len(n))
}

// slowRates returns TPR and FPR of the rule score ≥ τ for every distinct
// score and +Inf.
func slowRates(m, n []float64) (tpr, fpr []float64) {
	ts := append(append([]float64{math.Inf(1)}, m...), n...)
	for _, t := range ts {
		a, b := 0, 0
		for _, v := range m {
			if v >= t {
				a++
			}
		}
		for _, v := range n {
			if v >= t {
				b++
			}
		}
		tpr = append(tpr, float64(a)/float64(len(m)))
		fpr = append(fpr, float64(b)/float64(len(n)))
	}
	return tpr, fpr
}

func TestROCAgainstSlowReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := range 50 {
		nm, nn := 1+rng.IntN(40), 1+rng.IntN(40)
		m, n := make([]float64, nm), make([]float64, nn)
		// Few distinct values, so there are many ties.
		for i := range m {
			m[i] = float64(rng.IntN(8)) + 0.5
		}
		for i := range n {
			n[i] = float64(rng.IntN(8))
		}
		r := NewROC(m, n)
		if got, want := r.AUC(), slowAUC(m, n); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: AUC %v, pairwise %v", trial, got, want)
		}
		tpr, fpr := slowRates(m, n)
		bal, adv := 0.0, 0.0
		for i := range tpr {
			bal = max(bal, 1-(fpr[i]+(1-tpr[i]))/2)
			adv = max(adv, math.Abs(tpr[i]-fpr[i]))
		}
		if got := r.BalancedAccuracy(); math.Abs(got-bal) > 1e-12 {
			t.Errorf("trial %d: balanced accuracy %v, brute force %v", trial, got, bal)
		}
		if got := r.Advantage(); math.Abs(got-adv) > 1e-12 {
			t.Errorf("trial %d: advantage %v, brute force %v", trial, got, adv)
		}
		for _, target := range []float64{0, 1e-2, 0.1, 0.5} {
			wantT, wantF := 0.0, 0.0
			for i := range tpr {
				if fpr[i] <= target && (tpr[i] > wantT || (tpr[i] == wantT && fpr[i] > wantF)) {
					wantT, wantF = tpr[i], fpr[i]
				}
			}
			gotT, gotF := r.TPRAt(target)
			if gotT != wantT || gotF != wantF {
				t.Errorf("trial %d: TPRAt(%v) = %v, %v; brute force %v, %v", trial, target, gotT, gotF, wantT, wantF)
			}
		}
		if !slices.IsSorted(r.FPR) || !slices.IsSorted(r.TPR) || r.FPR[len(r.FPR)-1] != 1 || r.TPR[len(r.TPR)-1] != 1 {
			t.Errorf("trial %d: ROC not monotone from (0,0) to (1,1): %v %v", trial, r.FPR, r.TPR)
		}
	}
}

func TestROCClosedCases(t *testing.T) {
	for _, tc := range []struct {
		desc          string
		m, n          []float64
		auc, bal, adv float64
		tpr1, fpr1    float64 // at FPR 1e-2
	}{
		{"perfect separation", []float64{5, 6, 7}, []float64{1, 2, 3, 4}, 1, 1, 1, 1, 0},
		{"reversed", []float64{1, 2}, []float64{5, 6}, 0, 0.5, 1, 0, 0},
		{"identical scores", []float64{3, 3, 3}, []float64{3, 3}, 0.5, 0.5, 0, 0, 0},
		// One member above every non-member, one tied with the top one:
		// pairs (4>1, 4>2, 2>1, 2=2) give (1+1+1+0.5)/4.
		{"one tie", []float64{4, 2}, []float64{1, 2}, 3.5 / 4, 0.75, 0.5, 0.5, 0},
	} {
		r := NewROC(tc.m, tc.n)
		if got := r.AUC(); got != tc.auc {
			t.Errorf("%s: AUC %v, want %v", tc.desc, got, tc.auc)
		}
		if got := r.BalancedAccuracy(); got != tc.bal {
			t.Errorf("%s: balanced accuracy %v, want %v", tc.desc, got, tc.bal)
		}
		if got := r.Advantage(); got != tc.adv {
			t.Errorf("%s: advantage %v, want %v", tc.desc, got, tc.adv)
		}
		if tpr, fpr := r.TPRAt(1e-2); tpr != tc.tpr1 || fpr != tc.fpr1 {
			t.Errorf("%s: TPR at FPR 1e-2 = %v (achieved %v), want %v (%v)", tc.desc, tpr, fpr, tc.tpr1, tc.fpr1)
		}
	}
}

// TestAUCNull checks that the AUC of members and non-members drawn from the
// same continuous distribution is ½ within 5 standard deviations of the
// null distribution of the Mann–Whitney statistic, √((n+m+1)/(12nm)): a
// false reject has probability about 6e-7.
func TestAUCNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const nm, nn = 2000, 1500
	m, n := make([]float64, nm), make([]float64, nn)
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	for i := range n {
		n[i] = rng.NormFloat64()
	}
	sd := math.Sqrt(float64(nm+nn+1) / (12 * float64(nm) * float64(nn)))
	if got := NewROC(m, n).AUC(); math.Abs(got-0.5) > 5*sd {
		t.Errorf("AUC of identical distributions %v, want 0.5 ± 5·%v", got, sd)
	}
	// A shift by one standard deviation: AUC = Φ(1/√2) ≈ 0.76025 (closed
	// form for two normals with unit variance, Φ(Δ/√2)).
	for i := range m {
		m[i]++
	}
	want := 0.5 * math.Erfc(-1/math.Sqrt2/math.Sqrt2)
	if got := NewROC(m, n).AUC(); math.Abs(got-want) > 5*0.01 {
		t.Errorf("AUC with unit shift %v, want %v", got, want)
	}
}

func TestMembershipBoundWarning(t *testing.T) {
	m := []float64{5, 6, 7, 8}
	n := []float64{1, 2, 3, 4}
	var rep Report
	// A bound that says no attack can beat chance: perfect separation
	// must be flagged.
	if err := Membership(&rep, "mia_", m, n, func(f float64) (float64, error) { return f, nil }); err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != len(FPRs) {
		t.Errorf("warnings %q, want one per FPR", rep.Warnings)
	}
	if rep.Results["mia_tpr_bound_0_01"] != 0 || rep.Results["mia_auc"] != 1 {
		t.Errorf("results %v", rep.Results)
	}
	// A non-private bound (TPR 1) never warns.
	rep = Report{}
	if err := Membership(&rep, "mia_", m, n, func(float64) (float64, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q with a trivial bound", rep.Warnings)
	}
}
