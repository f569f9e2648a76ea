// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/attacks/gia"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/runners"
)

// An uploadAttacker attacks a federated run's client uploads
// (gia.UploadAttack, gia.RoundAttack).
type uploadAttacker interface {
	RunUploads(ctx context.Context, up *methods.FedUpload, private []datasets.Example, public [][]float32) (*attacks.Report, error)
}

var (
	_ uploadAttacker = gia.UploadAttack{}
	_ uploadAttacker = gia.RoundAttack{}
)

// fedAttackStage runs the attacks of a federated run (the fusion
// classifier m): gradient inversion on a client's upload (gia-upload,
// gia.UploadAttack) or on its whole round (gia-round, gia.RoundAttack) on
// the run's private examples that are not canary copies, in order, with
// the task's public images as the baseline; and the membership attacks
// that score a classifier's class distribution (loss-mia, maxrenyi-mia)
// on the trained global model, with every client's private examples that
// are not canary copies as members and the holdout as non-members
// (membership inference on client data). A DP run's membership attacks
// are checked against the PLD bound of its record, as attackStage does:
// under the record-level unit the bound of one example of the worst
// client, under the client unit that of a client's data, which covers one
// of its examples. An attack that needs a TinyMLLM (extraction, the
// audits, mink-mia and zlib-mia, which read answer tokens) or its own pool
// (lira-mia) is an error.
func fedAttackStage(ctx context.Context, cfg *experiments.Config, m *nn.Fusion, res *methods.Result, d *datasets.Dataset, dir string, rec *runners.Recorder) error {
	var private []datasets.Example
	for _, e := range d.Private {
		if e.Canary < 0 {
			private = append(private, e)
		}
	}
	var public [][]float32
	for _, e := range d.Public {
		if len(e.Images) > 0 {
			public = append(public, e.Images[0])
		}
	}
	var errs []error
	warned := map[string]bool{}
	var target *attacks.Target
	for _, name := range cfg.Attacks {
		a, err := attacks.Configure(name, cfg.AttackOptions[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("pipeline: %w", err))
			continue
		}
		ua, ok := a.(uploadAttacker)
		if !ok {
			if !fusionMembership[name] {
				errs = append(errs, fmt.Errorf("pipeline: attack %s needs a tinymllm; a federated run takes gia-upload, gia-round, %s", name, strings.Join(slices.Sorted(maps.Keys(fusionMembership)), ", ")))
				continue
			}
			if target == nil {
				if target, err = fusionTarget(m, d, res.Privacy); err != nil {
					return err
				}
			}
			rep, err := a.Run(ctx, target)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				errs = append(errs, err)
				continue
			}
			recordReport(rec, name, rep, warned)
			for _, v := range rep.Violations {
				errs = append(errs, fmt.Errorf("pipeline: %s", v))
			}
			continue
		}
		if res.Upload == nil {
			errs = append(errs, fmt.Errorf("pipeline: method %s declares no client upload for %s", cfg.Method, name))
			continue
		}
		rep, err := ua.RunUploads(ctx, res.Upload, private, public)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
			continue
		}
		recordReport(rec, name, rep, warned)
		if err := writeImages(dir, rep.Images); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// fusionMembership are the membership attacks a federated run takes: those
// that read a classifier's class distribution alone.
var fusionMembership = map[string]bool{"loss-mia": true, "maxrenyi-mia": true}

// fusionTarget returns the membership attacks' view of the trained fusion
// classifier m: members the private examples that are not canary copies,
// non-members the holdout, each an (image, caption) pair with its class
// and its index in its split as its id, and the TPR bound of the record p
// when it is a Gaussian mechanism's.
func fusionTarget(m *nn.Fusion, d *datasets.Dataset, p results.Privacy) (*attacks.Target, error) {
	if len(d.Holdout) == 0 {
		return nil, fmt.Errorf("pipeline: task %s has no holdout split: no non-members for the membership attacks", d.Task)
	}
	target, err := attackTarget(nil, nil, d, p)
	if err != nil {
		return nil, err
	}
	target.Model, target.Decode, target.Fusion = nil, nil, m
	target.Public, target.Canaries = nil, nil
	pair := func(i int, e *datasets.Example) attacks.Example {
		return attacks.Example{ID: int64(i), Seq: nn.Sequence{Tokens: e.Prompt, Images: e.Images}, Label: e.Label}
	}
	target.Members, target.NonMembers = nil, nil
	for i := range d.Private {
		if d.Private[i].Canary < 0 {
			target.Members = append(target.Members, pair(i, &d.Private[i]))
		}
	}
	for i := range d.Holdout {
		target.NonMembers = append(target.NonMembers, pair(i, &d.Holdout[i]))
	}
	return target, nil
}
