// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"errors"

	"github.com/repro-dp/repro/internal/results"
)

func init() { Register(LossMIA{}) }

// LossMIA is the loss-threshold membership inference attack (Yeom et al.
// 2018): the score of an example is minus its loss under the trained model
// (the mean next-token cross-entropy over its answer tokens), so examples
// the model fits better look more like members. It reports, with prefix
// mia_, the metrics of Membership over Members and NonMembers.
//
// References:
//   - S. Yeom, I. Giacomelli, M. Fredrikson, S. Jha, Privacy risk in machine
//     learning: analyzing the connection to overfitting, CSF 2018.
type LossMIA struct{}

// Name implements Attack.
func (LossMIA) Name() string { return "loss-mia" }

// Run implements Attack.
func (LossMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	if t.Model == nil {
		return nil, errors.New("attacks: loss-mia: no model")
	}
	if len(t.Members) == 0 || len(t.NonMembers) == 0 {
		return nil, errors.New("attacks: loss-mia: no members or no non-members")
	}
	lm, err := losses(ctx, t.Model, t.Visual, t.Members, t.Workers)
	if err != nil {
		return nil, err
	}
	ln, err := losses(ctx, t.Model, t.Visual, t.NonMembers, t.Workers)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	sm, sn := make([]float64, len(lm)), make([]float64, len(ln))
	for i, l := range lm {
		sm[i] = -l
		rep.Scores = append(rep.Scores, results.Score{ExampleID: t.Members[i].ID, Member: true, Score: -l})
	}
	for i, l := range ln {
		sn[i] = -l
		rep.Scores = append(rep.Scores, results.Score{ExampleID: t.NonMembers[i].ID, Member: false, Score: -l})
	}
	if err := Membership(rep, "mia_", sm, sn, t.TPRBound); err != nil {
		return nil, err
	}
	return rep, nil
}
