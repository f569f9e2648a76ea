// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/repro-dp/repro/internal/registry"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
)

// An Attack attacks a trained model.
type Attack interface {
	// Name returns the attack's registry name (loss-mia, ...).
	Name() string
	// Run attacks t.Model and returns the attack's results. It returns an
	// error for an invalid target or a failing model.
	Run(ctx context.Context, t *Target) (*Report, error)
}

// A Target is what an attack sees: the trained model and the candidate
// examples.
type Target struct {
	Model *nn.TinyMLLM
	// Visual, when not nil, is the visual-token transform the model runs
	// with (the method's, e.g. Dual-Priv's token pruning).
	Visual nn.VisualTransform
	// Members are training examples (private train) and NonMembers
	// examples from the same distribution never trained on (holdout).
	// Membership inference wants them equally many; see Balance.
	Members, NonMembers []Example
	// TPRBound, when not nil, returns the largest true-positive rate any
	// membership attack can reach at a false-positive rate against the
	// mechanism that trained the model (privacy.PLD.TPR). Attacks compare
	// their TPR with it and warn when they exceed it beyond sampling error.
	TPRBound func(fpr float64) (float64, error)
	// Workers is the number of goroutines; 0 means GOMAXPROCS. Results do
	// not depend on it.
	Workers int
}

// An Example is a candidate example with an id that is stable within its
// split (the pipeline uses the example's index in its split).
type Example struct {
	ID  int64
	Seq nn.Sequence
}

// A Report holds an attack's results.
type Report struct {
	// Results are the attack's final numbers by name, prefixed by the
	// attack (mia_auc, ...): columns of runs.parquet.
	Results map[string]float64
	// Scores are the per-example scores (higher: more likely a member),
	// for scores.parquet.
	Scores []results.Score
	// Warnings are findings to show beside the results, such as a TPR
	// above the accountant's bound.
	Warnings []string
}

var known = registry.New[Attack]("attacks: attack")

// Register adds a to the registry under a.Name(). It is meant to be called
// from init functions; it panics if the name is taken.
func Register(a Attack) { known.Register(a.Name(), a) }

// Lookup returns the attack registered under name.
func Lookup(name string) (Attack, bool) { return known.Lookup(name) }

// Names returns the names of the registered attacks, sorted.
func Names() []string { return known.Names() }

// FPRs are the false-positive rates at which membership attacks report the
// TPR, with the suffix of their result names. Membership checks the TPR
// against the accountant's bound at each of them.
var FPRs = []struct {
	FPR    float64
	Suffix string
}{{1e-2, "0_01"}, {1e-3, "0_001"}}

// BoundAlpha is the false-alarm rate of Membership's check of the measured
// TPRs against the accountant's bound: the probability, over the draw of
// members and non-members, that a report warns although the accountant is
// right. It is shared among the len(FPRs) checks and their two confidence
// limits (Bonferroni), so each limit has level BoundAlpha/(2·len(FPRs)):
// 2.5e-4 with the two FPRs.
const BoundAlpha = 1e-3

// Membership computes the metrics of membership scores (higher: member) and
// adds them to rep.Results with the given prefix: auc, balanced_accuracy,
// advantage and, for each of FPRs, tpr_at_fpr_S and fpr_achieved_S (ROC.TPRAt).
//
// If bound is not nil (the accountant's largest TPR of any attack at an FPR,
// privacy.PLD.TPR), Membership checks each TPR against it with confidence
// limits rather than point estimates. At the chosen threshold, k of the m
// non-members and t of the n members score above it; it records
//
//   - fpr_upper_S, the Clopper–Pearson upper limit of the FPR from k of m;
//   - tpr_lower_S, the Clopper–Pearson lower limit of the TPR from t of n;
//   - tpr_bound_S, the bound at fpr_upper_S;
//
// each limit of level 1 − BoundAlpha/(2·len(FPRs)), and warns when
// tpr_lower_S > tpr_bound_S: the privacy guarantee may not hold. The bound
// is non-decreasing in the FPR, so when both limits hold the true TPR is at
// most the bound at the true FPR, which is at most tpr_bound_S, and no
// warning is raised; a correct accountant therefore gets a warning in a
// report with probability at most BoundAlpha (union bound over the
// 2·len(FPRs) limits). This holds although the threshold is chosen from the
// data: it is set by the non-members' scores alone (just above the
// (k+1)-th highest), so with continuous scores the true FPR there is the
// (k+1)-th smallest of m uniforms, Beta(k+1, m−k), whose upper quantile is
// exactly the Clopper–Pearson limit; the members are independent of it, so
// t is Binomial(n, TPR) given the threshold. (Comparing the TPR with the
// bound at the achieved FPR itself fails when k = 0: the bound at FPR 0 is
// about δ, and any member above every non-member looks like a breach.)
//
// Membership panics as NewROC does.
func Membership(rep *Report, prefix string, members, nonMembers []float64, bound func(float64) (float64, error)) error {
	roc := NewROC(members, nonMembers)
	if rep.Results == nil {
		rep.Results = map[string]float64{}
	}
	rep.Results[prefix+"auc"] = roc.AUC()
	rep.Results[prefix+"balanced_accuracy"] = roc.BalancedAccuracy()
	rep.Results[prefix+"advantage"] = roc.Advantage()
	n, m := len(members), len(nonMembers)
	alpha := BoundAlpha / float64(2*len(FPRs))
	for _, f := range FPRs {
		tpr, achieved := roc.TPRAt(f.FPR)
		rep.Results[prefix+"tpr_at_fpr_"+f.Suffix] = tpr
		rep.Results[prefix+"fpr_achieved_"+f.Suffix] = achieved
		if bound == nil {
			continue
		}
		// TPRAt's rates are counts over n and m; round back to them.
		t, k := int(math.Round(tpr*float64(n))), int(math.Round(achieved*float64(m)))
		tprLo, _ := ClopperPearson(t, n, alpha)
		_, fprHi := ClopperPearson(k, m, alpha)
		b, err := bound(fprHi)
		if err != nil {
			return fmt.Errorf("attacks: TPR bound at FPR %v: %w", fprHi, err)
		}
		rep.Results[prefix+"fpr_upper_"+f.Suffix] = fprHi
		rep.Results[prefix+"tpr_lower_"+f.Suffix] = tprLo
		rep.Results[prefix+"tpr_bound_"+f.Suffix] = b
		if tprLo > b {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"%s: at target FPR %g, TPR %.4g (%d of %d members) at FPR %.4g (%d of %d non-members) exceeds the accountant's bound: TPR ≥ %.4g and FPR ≤ %.4g at %.5g%% confidence each, bound %.4g at that FPR; the privacy guarantee may not hold (false-alarm rate ≤ %g a report)",
				strings.TrimSuffix(prefix, "_"), f.FPR, tpr, t, n, achieved, k, m, tprLo, fprHi, 100*(1-alpha), b, float64(BoundAlpha)))
		}
	}
	return nil
}

// losses returns the loss of every example's sequence (the mean next-token
// cross-entropy over its answer tokens, nn.MeanLosses, with the visual
// transform vt), computed on up to
// workers goroutines, each example on its own so the result does not
// depend on workers.
func losses(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, exs []Example, workers int) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seqs := make([]nn.Sequence, len(exs))
	for i := range exs {
		seqs[i] = exs[i].Seq
	}
	out := make([]float64, len(exs))
	if err := nn.MeanLosses(m, seqs, vt, workers, out); err != nil {
		return nil, fmt.Errorf("attacks: %w", err)
	}
	return out, nil
}
