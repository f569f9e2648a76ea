// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/privacy"
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
	sep := func(n int) (m, nm []float64) {
		for i := range n {
			m, nm = append(m, float64(n+i)), append(nm, float64(i))
		}
		return m, nm
	}
	chance := func(f float64) (float64, error) { return f, nil } // ε = 0
	for _, tc := range []struct {
		desc     string
		n        int // members and non-members, perfectly separated
		bound    func(float64) (float64, error)
		k        []int // non-members above the threshold at each of FPRs
		warnings int
	}{
		// At FPR 1e-3, with k = 0 of 100 non-members above the threshold,
		// the FPR is at most 1 − (1.67e-4)^(1/100) = 0.0838 and with 100 of
		// 100 members the TPR at least (1.67e-4)^(1/100) = 0.917, far above
		// the bound; at FPR 1e-2 one non-member may pass (k = 1), at 1e-1
		// ten.
		{"separation against a chance bound", 100, chance, []int{10, 1, 0}, len(FPRs)},
		// With 4 of each the limits are 0.874 and 0.126: four examples
		// cannot refute even ε = 0 at this confidence.
		{"too few examples to refute", 4, chance, []int{0, 0, 0}, 0},
		{"non-private bound", 100, func(float64) (float64, error) { return 1, nil }, []int{10, 1, 0}, 0},
	} {
		m, nm := sep(tc.n)
		var rep Report
		if err := Membership(&rep, "mia_", m, nm, tc.bound); err != nil {
			t.Fatal(err)
		}
		if len(rep.Violations) != tc.warnings {
			t.Errorf("%s: violations %q, want %d", tc.desc, rep.Violations, tc.warnings)
		}
		lo, _ := ClopperPearson(tc.n, tc.n, BoundAlpha/6)
		for i, f := range FPRs {
			_, hi := ClopperPearson(tc.k[i], tc.n, BoundAlpha/6)
			b, _ := tc.bound(hi)
			got := [3]float64{rep.Results["mia_tpr_lower_"+f.Suffix], rep.Results["mia_fpr_upper_"+f.Suffix], rep.Results["mia_tpr_bound_"+f.Suffix]}
			if want := [3]float64{lo, hi, b}; got != want {
				t.Errorf("%s: FPR %g: TPR lower limit, FPR upper limit, bound %v, want %v", tc.desc, f.FPR, got, want)
			}
		}
	}
}

// gaussianTPR is the trade-off function G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) of μ-GDP
// (Dong, Roth & Su, Gaussian differential privacy, JRSS B 2022,
// arXiv:1905.02383) as a TPR:
// TPR(FPR) = 1 − G_μ(FPR) = Φ(Φ⁻¹(FPR) + μ), the largest TPR of
// any test between N(0, 1) and N(μ, 1), that is of one Gaussian release
// with noise multiplier σ = 1/μ.
func gaussianTPR(mu float64) func(float64) (float64, error) {
	return func(f float64) (float64, error) {
		q := -math.Sqrt2 * math.Erfcinv(2*f) // Φ⁻¹(f)
		return 0.5 * math.Erfc(-(q+mu)/math.Sqrt2), nil
	}
}

// pldTPR is privacy.PLD.TPR for one Gaussian release with noise multiplier
// sigma: the bound the pipeline gives Membership, which dominates the exact
// trade-off gaussianTPR(1/sigma).
func pldTPR(t *testing.T, sigma float64) func(float64) (float64, error) {
	t.Helper()
	a, err := privacy.NewPLD(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(privacy.Gaussian{Sigma: sigma}, 1); err != nil {
		t.Fatal(err)
	}
	return a.TPR
}

// TestMembershipBoundGaussian draws scores from the Gaussian trade-off
// itself: members N(μ', 1) and non-members N(0, 1) are exactly μ'-GDP, so
// the score threshold is the most powerful attack there is and reaches the
// bound of μ = μ'. An honest run (μ' = μ) warns with probability at most
// BoundAlpha = 1e-3 a report, so over the 500 honest reports the number of
// warnings is at most Binomial(500, 1e-3), and more than 6 has probability
// below 1e-6 (the binomial tail, summed exactly): the test falsely fails
// that rarely. The
// check it replaces, TPR against the bound at the achieved FPR plus 3
// standard deviations, warned in most honest reports (at FPR 0 the bound
// is 0 and any two members above every non-member set it off). A planted
// under-noised run draws with μ' ≫ μ and must warn in every report: with
// μ' = 4, μ = 1 and 256 of each, missing the 1e-2 check needs the third
// highest of 256 N(0, 1) above 4.3, probability below 1e-9.
func TestMembershipBoundGaussian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	draw := func(n int, mu float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() + mu
		}
		return x
	}
	honest, honestReports := 0, 0
	for _, tc := range []struct {
		desc   string
		n      int     // members and non-members
		drawMu float64 // μ' of the scores
		bound  func(float64) (float64, error)
		trials int
		honest bool // else planted: every report must warn
	}{
		{"honest μ = 0.5, closed form", 256, 0.5, gaussianTPR(0.5), 100, true},
		{"honest μ = 1, closed form", 256, 1, gaussianTPR(1), 100, true},
		{"honest μ = 2, closed form", 256, 2, gaussianTPR(2), 100, true},
		{"honest μ = 1, closed form, 1000 each", 1000, 1, gaussianTPR(1), 100, true},
		// PLD.TPR costs about 2 ms a call: fewer trials.
		{"honest σ = 1, PLD", 256, 1, pldTPR(t, 1), 50, true},
		{"honest σ = 0.5, PLD", 256, 2, pldTPR(t, 0.5), 50, true},
		{"planted μ' = 4 against μ = 1", 256, 4, gaussianTPR(1), 50, false},
		{"planted μ' = 4 against σ = 1, PLD", 256, 4, pldTPR(t, 1), 20, false},
		{"planted μ' = 3 against σ = 2, PLD", 256, 3, pldTPR(t, 2), 20, false},
	} {
		warned := 0
		for range tc.trials {
			var rep Report
			if err := Membership(&rep, "mia_", draw(tc.n, tc.drawMu), draw(tc.n, 0), tc.bound); err != nil {
				t.Fatalf("%s: %v", tc.desc, err)
			}
			if len(rep.Violations) > 0 {
				warned++
			}
		}
		t.Logf("%s: %d of %d reports warn", tc.desc, warned, tc.trials)
		if tc.honest {
			honest += warned
			honestReports += tc.trials
		} else if warned != tc.trials {
			t.Errorf("%s: %d of %d reports warn, want all", tc.desc, warned, tc.trials)
		}
	}
	if honest > 6 {
		t.Errorf("honest runs: %d of %d reports warn, want at most 6 (false-alarm rate ≤ %g a report)", honest, honestReports, float64(BoundAlpha))
	}
}

// TestTPRRandomised checks the randomised threshold against hand-worked
// cases. Members {5, 3, 3, 3, 1} and non-members {3, 3, 2, 1, 0 ×6} (n = 5,
// m = 10): above 5 nothing, at 5 one member (FPR 0, TPR 0.2), at 3 three
// members and two non-members tie (FPR 0.2, TPR 0.8). At FPR 0.1 no
// deterministic threshold does better than TPR 0.2 at FPR 0 (TPRAt); the
// test that takes the tied block with probability γ = (0.1 − 0)/(0.2 − 0)
// = ½ has expected FPR 2·½/10 = 0.1 and TPR 0.2 + ½·3/5 = 0.5. At FPR 0.2
// the block is taken whole (0.8, no randomisation); at 0.25 the next
// block (score 2: one non-member, no member) is taken with probability ½
// and adds nothing (0.8). Every score tied ({3, 3, 3} against {3, 3}): the
// chance line, TPR = FPR. Continuous scores without ties: TPRAt's TPR.
func TestTPRRandomised(t *testing.T) {
	members := []float64{5, 3, 3, 3, 1}
	nonMembers := []float64{3, 3, 2, 1, 0, 0, 0, 0, 0, 0}
	r := NewROC(members, nonMembers)
	for _, tc := range []struct {
		fpr, tpr, gamma float64
		block           int // index of the straddling point, −1 for none
		tieM, tieN      int // the block's members and non-members
	}{
		{0.1, 0.5, 0.5, 2, 3, 2},
		{0.2, 0.8, 0, -1, 0, 0},
		{0.25, 0.8, 0.5, 3, 0, 1},
		{0.05, 0.35, 0.25, 2, 3, 2},
		{1, 1, 0, -1, 0, 0},
	} {
		tpr, gamma, j := r.TPRRandomised(tc.fpr)
		if math.Abs(tpr-tc.tpr) > 1e-12 || math.Abs(gamma-tc.gamma) > 1e-12 || j != tc.block {
			t.Errorf("FPR %v: TPR %v, γ %v, block %d; want %v, %v, %d", tc.fpr, tpr, gamma, j, tc.tpr, tc.gamma, tc.block)
			continue
		}
		if j > 0 {
			tieM := int(math.Round((r.TPR[j] - r.TPR[j-1]) * 5))
			tieN := int(math.Round((r.FPR[j] - r.FPR[j-1]) * 10))
			if tieM != tc.tieM || tieN != tc.tieN {
				t.Errorf("FPR %v: block of %d members and %d non-members, want %d and %d", tc.fpr, tieM, tieN, tc.tieM, tc.tieN)
			}
			// The randomised test's expected FPR is the target.
			if got := r.FPR[j-1] + gamma*(r.FPR[j]-r.FPR[j-1]); math.Abs(got-tc.fpr) > 1e-12 {
				t.Errorf("FPR %v: expected FPR of the randomised test %v", tc.fpr, got)
			}
		}
	}
	if tpr, _ := r.TPRAt(0.1); tpr != 0.2 {
		t.Errorf("TPRAt(0.1) = %v, want 0.2 (the deterministic threshold above the tie)", tpr)
	}
	tied := NewROC([]float64{3, 3, 3}, []float64{3, 3})
	for _, f := range []float64{0.01, 0.1, 0.5} {
		if tpr, _, _ := tied.TPRRandomised(f); math.Abs(tpr-f) > 1e-12 {
			t.Errorf("all tied: TPR at FPR %v = %v, want %v", f, tpr, f)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	m, n := make([]float64, 300), make([]float64, 256)
	for i := range m {
		m[i] = rng.NormFloat64() + 0.5
	}
	for i := range n {
		n[i] = rng.NormFloat64()
	}
	c := NewROC(m, n)
	for _, f := range FPRs {
		want, _ := c.TPRAt(f.FPR)
		if got, _, _ := c.TPRRandomised(f.FPR); got != want {
			t.Errorf("continuous scores: FPR %v: randomised TPR %v, TPRAt %v", f.FPR, got, want)
		}
	}
}

// TestTPRRandomisedBruteForce holds TPRRandomised to the Neyman–Pearson
// randomised threshold test found by enumeration, with no ROC: for every
// threshold τ among the scores (and +∞), the test that predicts "member"
// above τ and, at τ, with probability γ ∈ [0, 1] has expected FPR
// (#non-members > τ + γ·#non-members = τ)/m and TPR likewise; γ is the
// largest that keeps the FPR at most the target, and the answer is the
// best TPR over τ. Scores are small integers, so most are tied between
// members and non-members. The tie counts are those of the block at the
// τ the best test randomises over.
func TestTPRRandomisedBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 3))
	for trial := range 500 {
		n, m := 1+rng.IntN(12), 1+rng.IntN(15)
		members, nonMembers := make([]float64, n), make([]float64, m)
		for i := range members {
			members[i] = float64(rng.IntN(5) + rng.IntN(2))
		}
		for i := range nonMembers {
			nonMembers[i] = float64(rng.IntN(5))
		}
		r := NewROC(members, nonMembers)
		count := func(x []float64, f func(float64) bool) int {
			c := 0
			for _, v := range x {
				if f(v) {
					c++
				}
			}
			return c
		}
		taus := append([]float64{math.Inf(1)}, members...)
		taus = append(taus, nonMembers...)
		for _, fpr := range []float64{0, 0.001, 0.01, 0.05, 0.1, 0.13, 0.2, 0.25, 1.0 / 3, 0.5, 0.77, 1} {
			best, bestTieM, bestTieN := -1.0, 0, 0
			for _, tau := range taus {
				aboveN := count(nonMembers, func(v float64) bool { return v > tau })
				atN := count(nonMembers, func(v float64) bool { return v == tau })
				aboveM := count(members, func(v float64) bool { return v > tau })
				atM := count(members, func(v float64) bool { return v == tau })
				if float64(aboveN) > fpr*float64(m)+1e-9 {
					continue
				}
				g := 1.0
				if atN > 0 {
					g = min(1, (fpr*float64(m)-float64(aboveN))/float64(atN))
				}
				if tpr := (float64(aboveM) + g*float64(atM)) / float64(n); tpr > best+1e-12 {
					best, bestTieM, bestTieN = tpr, atM, atN
					if g == 1 || g == 0 {
						bestTieM, bestTieN = 0, 0 // no randomisation
					}
				}
			}
			got, gamma, j := r.TPRRandomised(fpr)
			if math.Abs(got-best) > 1e-12 {
				t.Errorf("trial %d, FPR %v: TPRRandomised %v, brute force %v (members %v, non-members %v)", trial, fpr, got, best, members, nonMembers)
				continue
			}
			tieM, tieN := 0, 0
			if j > 0 && gamma > 0 {
				tieM = int(math.Round((r.TPR[j] - r.TPR[j-1]) * float64(n)))
				tieN = int(math.Round((r.FPR[j] - r.FPR[j-1]) * float64(m)))
			}
			// Only a block that holds members changes the TPR; where it
			// holds none, the brute force need not pick it.
			if bestTieM > 0 && (tieM != bestTieM || tieN != bestTieN) {
				t.Errorf("trial %d, FPR %v: block of %d members and %d non-members, brute force %d and %d", trial, fpr, tieM, tieN, bestTieM, bestTieN)
			}
		}
	}
}
