// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMembershipCounts checks the TPR at each FPR, its Clopper–Pearson
// interval and the count of non-members it rests on against a brute-force
// count over thresholds, and that a target FPR below 1/m is reported
// missing with one warning.
func TestMembershipCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		desc    string
		n, m    int
		missing int // FPRs with m·FPR < 1
	}{
		{"50 non-members", 40, 50, 2},
		{"200 non-members", 40, 200, 1},
		{"1000 non-members", 100, 1000, 0},
	} {
		mem, non := make([]float64, tc.n), make([]float64, tc.m)
		for i := range mem {
			mem[i] = rng.NormFloat64() + 1
		}
		for i := range non {
			non[i] = rng.NormFloat64()
		}
		var rep Report
		if err := Membership(&rep, "x_", mem, non, nil); err != nil {
			t.Fatal(err)
		}
		if len(rep.Warnings) != tc.missing {
			t.Errorf("%s: warnings %q, want %d", tc.desc, rep.Warnings, tc.missing)
		}
		for _, f := range FPRs {
			// Brute force: the lowest threshold τ ∈ scores with
			// #{non ≥ τ} ≤ f·m (so set by the non-members alone), which has
			// the best TPR and the most non-members at or above it.
			bestT, bestK := 0, 0
			for _, tau := range append(append([]float64{}, mem...), non...) {
				k, tp := 0, 0
				for _, v := range non {
					if v >= tau {
						k++
					}
				}
				for _, v := range mem {
					if v >= tau {
						tp++
					}
				}
				if float64(k) <= f.FPR*float64(tc.m) && (tp > bestT || tp == bestT && k > bestK) {
					bestT, bestK = tp, k
				}
			}
			got := rep.Results["x_tpr_at_fpr_"+f.Suffix]
			if float64(tc.m)*f.FPR < 1 {
				if !math.IsNaN(got) || !math.IsNaN(rep.Results["x_tpr_lo_"+f.Suffix]) {
					t.Errorf("%s FPR %g: TPR %v, want missing", tc.desc, f.FPR, got)
				}
				if !strings.Contains(strings.Join(rep.Warnings, "\n"), "not enough non-members") {
					t.Errorf("%s: no warning about non-members", tc.desc)
				}
				continue
			}
			if want := float64(bestT) / float64(tc.n); got != want || rep.Results["x_fp_"+f.Suffix] != float64(bestK) {
				t.Errorf("%s FPR %g: TPR %v on %v non-members, want %v on %d", tc.desc, f.FPR, got, rep.Results["x_fp_"+f.Suffix], want, bestK)
			}
			lo, hi := ClopperPearson(bestT, tc.n, 0.025)
			if rep.Results["x_tpr_lo_"+f.Suffix] != lo || rep.Results["x_tpr_hi_"+f.Suffix] != hi {
				t.Errorf("%s FPR %g: interval [%v, %v], want [%v, %v]", tc.desc, f.FPR, rep.Results["x_tpr_lo_"+f.Suffix], rep.Results["x_tpr_hi_"+f.Suffix], lo, hi)
			}
		}
	}
}

// TestBootstrapAUC checks the bootstrap interval of the AUC against the
// standard error of Hanley & McNeil (1982, Radiology 143(1), Eq. 2):
// SE² = (A(1−A) + (n−1)(Q₁−A²) + (m−1)(Q₂−A²))/(n·m), Q₁ = A/(2−A),
// Q₂ = 2A²/(1+A). The 95% interval must contain the AUC and its width be
// within 30% of 2·1.96·SE (the bootstrap's own error with 200 resamples is
// about 10%).
func TestBootstrapAUC(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, mu := range []float64{0, 0.5, 1.5} {
		n, m := 300, 300
		mem, non := make([]float64, n), make([]float64, m)
		for i := range mem {
			mem[i] = rng.NormFloat64() + mu
		}
		for i := range non {
			non[i] = rng.NormFloat64()
		}
		var rep Report
		if err := Membership(&rep, "b_", mem, non, nil); err != nil {
			t.Fatal(err)
		}
		a, lo, hi := rep.Results["b_auc"], rep.Results["b_auc_lo"], rep.Results["b_auc_hi"]
		q1, q2 := a/(2-a), 2*a*a/(1+a)
		se := math.Sqrt((a*(1-a) + float64(n-1)*(q1-a*a) + float64(m-1)*(q2-a*a)) / float64(n*m))
		if !(lo <= a && a <= hi) || math.Abs((hi-lo)/(2*1.96*se)-1) > 0.3 {
			t.Errorf("μ = %v: AUC %v, interval [%v, %v], width %v, want about %v", mu, a, lo, hi, hi-lo, 2*1.96*se)
		}
		for _, k := range []string{"balanced_accuracy", "advantage"} {
			if v := rep.Results["b_"+k]; !(rep.Results["b_"+k+"_lo"] <= v+1e-12 && v <= rep.Results["b_"+k+"_hi"]+0.05) {
				t.Errorf("μ = %v: %s %v outside [%v, %v]", mu, k, v, rep.Results["b_"+k+"_lo"], rep.Results["b_"+k+"_hi"])
			}
		}
	}
}
