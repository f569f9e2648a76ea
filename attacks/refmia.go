// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/repro-dp/repro/internal/results"
)

func init() { Register(RefMIA{}) }

// RefMIA is the loss attack calibrated by a reference model: the score of
// an example is its loss under the reference minus its loss under the
// target (mean next-token cross-entropy over the answer tokens), so an
// example that fine-tuning fitted better than the reference fits it looks
// like a member, whatever its difficulty. The reference is the pretrained
// base the target was fine-tuned from (Target.Base), which never saw the
// private data and which an attacker of a public base has; so the score is
// post-processing of the released model, and its TPRs are held against
// the mechanism's bound as any other. Results have prefix ref_; the base
// runs without the method's visual transform.
//
// References:
//   - L. Watson, C. Guo, G. Cormode, A. Sablayrolles, On the importance of
//     difficulty calibration in membership inference attacks, ICLR 2022.
//   - F. Mireshghallah, K. Goyal, A. Uniyal, T. Berg-Kirkpatrick,
//     R. Shokri, Quantifying privacy risks of masked language models
//     using membership inference attacks, EMNLP 2022.
type RefMIA struct{}

// Name implements Attack.
func (RefMIA) Name() string { return "ref-mia" }

// RefLabel labels ref-mia's rows of scores.parquet.
const RefLabel = "ref"

// Run implements Attack.
func (a RefMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	if t.Base == nil {
		return nil, errors.New("attacks: ref-mia needs the base model the target was fine-tuned from (Target.Base) as its reference")
	}
	if t.Model == nil {
		return nil, errors.New("attacks: ref-mia: no model")
	}
	if len(t.Members) == 0 || len(t.NonMembers) == 0 {
		return nil, errors.New("attacks: ref-mia: no members or no non-members")
	}
	pm, pn, err := t.forwardAll(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("attacks: ref-mia: %w", err)
	}
	rep := &Report{Results: map[string]float64{}}
	var scores [2][]float64
	for side, s := range []struct {
		target []*pass
		exs    []Example
		member bool
	}{{pm, t.Members, true}, {pn, t.NonMembers, false}} {
		base, err := passes(ctx, t.Base, nil, s.exs, nil, t.Workers)
		if err != nil {
			return nil, fmt.Errorf("attacks: ref-mia: the reference: %w", err)
		}
		for i, p := range s.target {
			v := meanLoss(base[i]) - meanLoss(p)
			if math.IsNaN(v) {
				return nil, fmt.Errorf("attacks: ref-mia: example %d has no answer tokens to score", s.exs[i].ID)
			}
			scores[side] = append(scores[side], v)
			rep.Scores = append(rep.Scores, results.Score{Attack: RefLabel, ExampleID: s.exs[i].ID, Member: s.member, Score: v})
		}
	}
	if err := MembershipAlpha(rep, "ref_", scores[0], scores[1], t.TPRBound, BoundAlpha); err != nil {
		return nil, err
	}
	return rep, nil
}
