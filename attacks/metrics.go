// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// FPRs are the false-positive rates at which membership attacks report the
// TPR, with the suffix of their result names. Membership checks the TPR
// against the accountant's bound at each of them.
var FPRs = []struct {
	FPR    float64
	Suffix string
}{{1e-1, "0_1"}, {1e-2, "0_01"}, {1e-3, "0_001"}}

// BoundAlpha is the false-alarm rate of Membership's check of the measured
// TPRs against the accountant's bound: the probability, over the draw of
// members and non-members, that a report flags a violation although the
// accountant is right. It is shared among the len(FPRs) checks and their
// two confidence limits (Bonferroni), so each limit has level
// BoundAlpha/(2·len(FPRs)): 1.67e-4 with the three FPRs. An attack that
// reports several score sets shares it among them (MembershipAlpha).
const BoundAlpha = 1e-3

// CILevel is the coverage of the confidence intervals Membership reports
// beside each metric (two-sided).
const CILevel = 0.95

// BootstrapResamples is the number of stratified bootstrap resamples of
// the intervals of AUC, balanced accuracy and advantage.
const BootstrapResamples = 200

// Membership computes the metrics of membership scores (higher: member) and
// adds them to rep.Results with the given prefix, checking them against
// bound with false-alarm rate BoundAlpha; see MembershipAlpha.
func Membership(rep *Report, prefix string, members, nonMembers []float64, bound func(float64) (float64, error)) error {
	return MembershipAlpha(rep, prefix, members, nonMembers, bound, BoundAlpha)
}

// MembershipAlpha computes the metrics of membership scores (higher:
// member) and adds them to rep.Results with the given prefix:
//
//   - auc, balanced_accuracy, advantage (ROC), each with a CILevel
//     stratified percentile bootstrap interval _lo, _hi
//     (BootstrapResamples resamples of members and of non-members, seeded
//     by the prefix so reports reproduce);
//   - members and nonmembers, the counts n and m;
//   - for each of FPRs, tpr_at_fpr_S and fpr_achieved_S (ROC.TPRAt), the
//     Clopper–Pearson CILevel interval tpr_lo_S, tpr_hi_S of the TPR, and
//     fp_S, the number of non-members the achieved FPR rests on (those
//     scoring at or above the threshold). When m·FPR < 1 the split has
//     too few non-members to read the TPR at that FPR: tpr_at_fpr_S,
//     fpr_achieved_S and the interval are NaN (missing in runs.parquet)
//     and a warning says how many non-members it would need;
//   - for each of FPRs, tpr_rand_S, the TPR of the randomised threshold
//     at exactly that FPR (ROC.TPRRandomised), and tie_members_S,
//     tie_nonmembers_S, the members and non-members in the block of tied
//     scores it randomises over (the block after tpr_at_fpr_S's threshold,
//     which would take the FPR past the target; 0 and 0 when that
//     threshold reaches the FPR exactly). tpr_at_fpr_S reads 0 with an
//     achieved FPR of 0 when more than FPR·m non-members tie with members
//     at the top score; tpr_rand_S then still reads the attack at that
//     FPR. It equals tpr_at_fpr_S whenever no member ties with a
//     non-member there. NaN where tpr_at_fpr_S is.
//
// If bound is not nil (the accountant's largest TPR of any attack at an
// FPR, privacy.PLD.TPR), MembershipAlpha checks each TPR against it with
// confidence limits rather than point estimates. At the chosen threshold,
// k of the m non-members and t of the n members score above it; it records
//
//   - fpr_upper_S, the Clopper–Pearson upper limit of the FPR from k of m;
//   - tpr_lower_S, the Clopper–Pearson lower limit of the TPR from t of n;
//   - tpr_bound_S, the bound at fpr_upper_S;
//
// each limit of level 1 − alpha/(2·len(FPRs)), and adds a violation to
// rep.Violations when tpr_lower_S > tpr_bound_S: the privacy guarantee
// does not hold. The bound is non-decreasing in the FPR, so when both
// limits hold the true TPR is at most the bound at the true FPR, which is
// at most tpr_bound_S; a correct accountant therefore gets a violation
// with probability at most alpha (union bound over the 2·len(FPRs)
// limits). This holds although the threshold is chosen from the data: it
// is set by the non-members' scores alone (just above the (k+1)-th
// highest), so with continuous scores the true FPR there is the (k+1)-th
// smallest of m uniforms, Beta(k+1, m−k), whose upper quantile is exactly
// the Clopper–Pearson limit; the members are independent of it, so t is
// Binomial(n, TPR) given the threshold. (Comparing the TPR with the bound
// at the achieved FPR itself fails when k = 0: the bound at FPR 0 is about
// δ, and any member above every non-member looks like a breach.) The check
// is made even where the TPR is reported missing: the limits stay valid.
//
// MembershipAlpha panics as NewROC does, or if alpha is not in (0, 1).
func MembershipAlpha(rep *Report, prefix string, members, nonMembers []float64, bound func(float64) (float64, error), alpha float64) error {
	if !(alpha > 0 && alpha < 1) {
		panic("attacks: Membership: false-alarm rate not in (0, 1)")
	}
	roc := NewROC(members, nonMembers)
	if rep.Results == nil {
		rep.Results = map[string]float64{}
	}
	res := rep.Results
	n, m := len(members), len(nonMembers)
	res[prefix+"members"], res[prefix+"nonmembers"] = float64(n), float64(m)
	point := [3]float64{roc.AUC(), roc.BalancedAccuracy(), roc.Advantage()}
	ci := bootstrap(prefix, members, nonMembers)
	for i, name := range []string{"auc", "balanced_accuracy", "advantage"} {
		res[prefix+name] = point[i]
		res[prefix+name+"_lo"], res[prefix+name+"_hi"] = ci[i][0], ci[i][1]
	}
	ciAlpha := (1 - CILevel) / 2
	limit := alpha / float64(2*len(FPRs))
	for _, f := range FPRs {
		tpr, achieved := roc.TPRAt(f.FPR)
		// TPRAt's rates are counts over n and m; round back to them.
		t, k := int(math.Round(tpr*float64(n))), int(math.Round(achieved*float64(m)))
		res[prefix+"fp_"+f.Suffix] = float64(k)
		if float64(m)*f.FPR < 1 {
			nan := math.NaN()
			res[prefix+"tpr_at_fpr_"+f.Suffix], res[prefix+"fpr_achieved_"+f.Suffix] = nan, nan
			res[prefix+"tpr_lo_"+f.Suffix], res[prefix+"tpr_hi_"+f.Suffix] = nan, nan
			w := fmt.Sprintf("not enough non-members: the TPR at FPR %g needs at least %d non-members, the split has %d; it is reported as missing", f.FPR, int(math.Ceil(1/f.FPR)), m)
			if !slices.Contains(rep.Warnings, w) {
				rep.Warnings = append(rep.Warnings, w)
			}
			res[prefix+"tpr_rand_"+f.Suffix], res[prefix+"tie_members_"+f.Suffix], res[prefix+"tie_nonmembers_"+f.Suffix] = nan, nan, nan
		} else {
			res[prefix+"tpr_at_fpr_"+f.Suffix], res[prefix+"fpr_achieved_"+f.Suffix] = tpr, achieved
			lo, hi := ClopperPearson(t, n, ciAlpha)
			res[prefix+"tpr_lo_"+f.Suffix], res[prefix+"tpr_hi_"+f.Suffix] = lo, hi
			rand, _, j := roc.TPRRandomised(f.FPR)
			tieM, tieN := 0.0, 0.0
			if j > 0 {
				tieM = math.Round((roc.TPR[j] - roc.TPR[j-1]) * float64(n))
				tieN = math.Round((roc.FPR[j] - roc.FPR[j-1]) * float64(m))
			}
			res[prefix+"tpr_rand_"+f.Suffix], res[prefix+"tie_members_"+f.Suffix], res[prefix+"tie_nonmembers_"+f.Suffix] = rand, tieM, tieN
		}
		if bound == nil {
			continue
		}
		tprLo, _ := ClopperPearson(t, n, limit)
		_, fprHi := ClopperPearson(k, m, limit)
		b, err := bound(fprHi)
		if err != nil {
			return fmt.Errorf("attacks: TPR bound at FPR %v: %w", fprHi, err)
		}
		res[prefix+"fpr_upper_"+f.Suffix] = fprHi
		res[prefix+"tpr_lower_"+f.Suffix] = tprLo
		res[prefix+"tpr_bound_"+f.Suffix] = b
		if tprLo > b {
			rep.Violations = append(rep.Violations, fmt.Sprintf(
				"%s: at target FPR %g, TPR %.4g (%d of %d members) at FPR %.4g (%d of %d non-members) exceeds the accountant's bound: TPR ≥ %.4g and FPR ≤ %.4g at %.5g%% confidence each, bound %.4g at that FPR; the privacy guarantee does not hold (false-alarm rate ≤ %g)",
				strings.TrimSuffix(prefix, "_"), f.FPR, tpr, t, n, achieved, k, m, tprLo, fprHi, 100*(1-limit), b, alpha))
		}
	}
	return nil
}

// bootstrap returns the CILevel percentile intervals of AUC, balanced
// accuracy and advantage over BootstrapResamples stratified resamples
// (members and non-members each resampled with replacement), drawn from a
// stream seeded by prefix (Efron & Tibshirani 1993, §13.3).
//
// References:
//   - B. Efron, R. J. Tibshirani, An Introduction to the Bootstrap,
//     Chapman & Hall 1993.
func bootstrap(prefix string, members, nonMembers []float64) [3][2]float64 {
	h := fnv.New64a()
	h.Write([]byte(prefix))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x6d6961))
	var stats [3][]float64
	bm, bn := make([]float64, len(members)), make([]float64, len(nonMembers))
	for range BootstrapResamples {
		for i := range bm {
			bm[i] = members[rng.IntN(len(members))]
		}
		for i := range bn {
			bn[i] = nonMembers[rng.IntN(len(nonMembers))]
		}
		r := NewROC(bm, bn)
		stats[0] = append(stats[0], r.AUC())
		stats[1] = append(stats[1], r.BalancedAccuracy())
		stats[2] = append(stats[2], r.Advantage())
	}
	var out [3][2]float64
	a := (1 - CILevel) / 2
	for i := range stats {
		slices.Sort(stats[i])
		out[i] = [2]float64{quantile(stats[i], a), quantile(stats[i], 1-a)}
	}
	return out
}

// quantile returns the p-quantile of the sorted x by linear interpolation
// between order statistics (type 7 of Hyndman & Fan 1996, R's default).
func quantile(x []float64, p float64) float64 {
	h := float64(p * float64(len(x)-1))
	i := int(math.Floor(h))
	if i+1 >= len(x) {
		return x[len(x)-1]
	}
	return x[i] + float64((h-float64(i))*(x[i+1]-x[i]))
}
