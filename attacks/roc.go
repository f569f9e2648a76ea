// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"slices"
)

// ROC is the receiver operating characteristic of a membership score
// (higher means "member"): one point per distinct threshold τ, predicting
// "member" when score ≥ τ, from τ = +∞ (the point (0, 0)) down to the
// smallest score (the point (1, 1)). Ties between a member and a non-member
// fall on the same threshold, so they add a diagonal segment, as in
// scikit-learn's roc_curve with drop_intermediate=False.
type ROC struct {
	// FPR and TPR are non-decreasing; Thresholds[i] is the τ of point i
	// (+Inf for the first).
	FPR, TPR, Thresholds []float64
}

// NewROC returns the ROC of the scores of members and non-members. It
// panics if either is empty or a score is NaN.
func NewROC(members, nonMembers []float64) ROC {
	if len(members) == 0 || len(nonMembers) == 0 {
		panic("attacks: ROC of an empty class")
	}
	type s struct {
		v      float64
		member bool
	}
	all := make([]s, 0, len(members)+len(nonMembers))
	for _, v := range members {
		all = append(all, s{v, true})
	}
	for _, v := range nonMembers {
		all = append(all, s{v, false})
	}
	for _, x := range all {
		if math.IsNaN(x.v) {
			panic("attacks: NaN score")
		}
	}
	slices.SortFunc(all, func(a, b s) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return 0
	})
	r := ROC{FPR: []float64{0}, TPR: []float64{0}, Thresholds: []float64{math.Inf(1)}}
	np, nn := float64(len(members)), float64(len(nonMembers))
	tp, fp := 0, 0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			if all[j].member {
				tp++
			} else {
				fp++
			}
			j++
		}
		r.FPR = append(r.FPR, float64(fp)/nn)
		r.TPR = append(r.TPR, float64(tp)/np)
		r.Thresholds = append(r.Thresholds, all[i].v)
		i = j
	}
	return r
}

// AUC returns the area under the ROC by the trapezoid rule: the probability
// that a random member scores above a random non-member, ties counted ½
// (the Mann–Whitney statistic over n·m).
func (r ROC) AUC() float64 {
	a := 0.0
	for i := 1; i < len(r.FPR); i++ {
		a += float64((r.FPR[i] - r.FPR[i-1]) * (r.TPR[i] + r.TPR[i-1]) / 2)
	}
	return a
}

// BalancedAccuracy returns the best balanced accuracy over thresholds,
// max over τ of 1 − (FPR + FNR)/2 = (1 + TPR − FPR)/2 (LiRA's sweep); it is
// at least ½ (τ = +∞).
func (r ROC) BalancedAccuracy() float64 {
	b := 0.5
	for i := range r.FPR {
		b = max(b, (1+r.TPR[i]-r.FPR[i])/2)
	}
	return b
}

// Advantage returns the membership advantage max over τ of |TPR − FPR|
// (Yeom et al. 2018; TF Privacy): an attack that predicts the opposite of
// its score gets the same advantage.
func (r ROC) Advantage() float64 {
	a := 0.0
	for i := range r.FPR {
		a = max(a, math.Abs(r.TPR[i]-r.FPR[i]))
	}
	return a
}

// TPRAt returns the largest TPR among the points whose FPR is at most fpr,
// and the FPR that point achieves: the TPR at a low FPR that Carlini et al.
// (2022) advocate, read as tpr[last index with FPR ≤ fpr] of the curve,
// with the achieved FPR reported beside it. With m non-members the
// achieved FPR is a multiple of 1/m, so a target below 1/m achieves 0.
//
// References:
//   - N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr,
//     Membership inference attacks from first principles, IEEE S&P 2022,
//     arXiv:2112.03570.
func (r ROC) TPRAt(fpr float64) (tpr, achieved float64) {
	for i := range r.FPR {
		if r.FPR[i] <= fpr {
			tpr, achieved = r.TPR[i], r.FPR[i]
		}
	}
	return tpr, achieved
}

// TPRRandomised returns the TPR at exactly the FPR fpr of the randomised
// threshold test: predict "member" for every score above the block of tied
// scores that straddles fpr (the block after TPRAt's point, whose
// non-members would take the FPR past fpr) and, within that block, with
// the probability gamma that brings the expected FPR to fpr. It is the ROC
// linearly interpolated at fpr (the Neyman–Pearson test randomised at its
// boundary), so every FPR is reached, however many scores tie. block is
// the index of the straddling point in r (its block holds the members and
// non-members between points block−1 and block), or −1 when TPRAt's point
// has FPR exactly fpr or is the last one; then tpr is TPRAt's and gamma 0.
// Without ties between a member and a non-member the straddling block
// holds non-members only, and tpr equals TPRAt's.
func (r ROC) TPRRandomised(fpr float64) (tpr, gamma float64, block int) {
	i := 0
	for j := range r.FPR {
		if r.FPR[j] <= fpr {
			i = j
		}
	}
	if r.FPR[i] == fpr || i == len(r.FPR)-1 {
		return r.TPR[i], 0, -1
	}
	j := i + 1
	gamma = (fpr - r.FPR[i]) / (r.FPR[j] - r.FPR[i])
	return r.TPR[i] + float64(gamma*(r.TPR[j]-r.TPR[i])), gamma, j
}
