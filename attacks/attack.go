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
// TPR, with the suffix of their result names.
var FPRs = []struct {
	FPR    float64
	Suffix string
}{{1e-2, "0_01"}, {1e-3, "0_001"}}

// Membership computes the metrics of membership scores (higher: member) and
// adds them to rep.Results with the given prefix: auc, balanced_accuracy,
// advantage and, for each of FPRs, tpr_at_fpr_S and fpr_achieved_S. If bound
// is not nil it also records tpr_bound_S, the accountant's bound at the
// achieved FPR, and warns when the measured TPR exceeds it by more than
// sampling error: 3 binomial standard deviations of a TPR over the members
// plus 1/n (a one-sided false alarm rate of about 0.1% per FPR for a correct
// accountant, before the choice of threshold, which this ignores).
func Membership(rep *Report, prefix string, members, nonMembers []float64, bound func(float64) (float64, error)) error {
	roc := NewROC(members, nonMembers)
	if rep.Results == nil {
		rep.Results = map[string]float64{}
	}
	rep.Results[prefix+"auc"] = roc.AUC()
	rep.Results[prefix+"balanced_accuracy"] = roc.BalancedAccuracy()
	rep.Results[prefix+"advantage"] = roc.Advantage()
	n := float64(len(members))
	for _, f := range FPRs {
		tpr, achieved := roc.TPRAt(f.FPR)
		rep.Results[prefix+"tpr_at_fpr_"+f.Suffix] = tpr
		rep.Results[prefix+"fpr_achieved_"+f.Suffix] = achieved
		if bound == nil {
			continue
		}
		b, err := bound(achieved)
		if err != nil {
			return fmt.Errorf("attacks: TPR bound at FPR %v: %w", achieved, err)
		}
		rep.Results[prefix+"tpr_bound_"+f.Suffix] = b
		if slack := 3*math.Sqrt(b*(1-b)/n) + 1/n; tpr > b+slack {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"%s: TPR %.4g at FPR %.4g (target %g) exceeds the accountant's bound %.4g by more than sampling error (%.3g): the privacy guarantee may not hold",
				strings.TrimSuffix(prefix, "_"), tpr, achieved, f.FPR, b, slack))
		}
	}
	return nil
}

// losses returns the loss of every example's sequence (the mean next-token
// cross-entropy over its answer tokens, nn.MeanLosses), computed on up to
// workers goroutines, each example on its own so the result does not
// depend on workers.
func losses(ctx context.Context, m *nn.TinyMLLM, exs []Example, workers int) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seqs := make([]nn.Sequence, len(exs))
	for i := range exs {
		seqs[i] = exs[i].Seq
	}
	out := make([]float64, len(exs))
	if err := nn.MeanLosses(m, seqs, workers, out); err != nil {
		return nil, fmt.Errorf("attacks: %w", err)
	}
	return out, nil
}
