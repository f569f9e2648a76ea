// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/attacks/gia"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/methods"
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

// fedAttackStage runs the attacks of a federated run (a fusion
// classifier): gradient inversion on a client's upload (gia-upload,
// gia.UploadAttack) or on its whole round (gia-round, gia.RoundAttack) on
// the run's private examples that are not canary copies, in order, with
// the task's public images as the baseline. Any other attack is an error:
// the rest need a TinyMLLM.
func fedAttackStage(ctx context.Context, cfg *experiments.Config, res *methods.Result, d *datasets.Dataset, dir string, rec *runners.Recorder) error {
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
	for _, name := range cfg.Attacks {
		a, err := attacks.Configure(name, cfg.AttackOptions[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("pipeline: %w", err))
			continue
		}
		ua, ok := a.(uploadAttacker)
		if !ok {
			errs = append(errs, fmt.Errorf("pipeline: attack %s needs a tinymllm; a federated run takes gia-upload and gia-round", name))
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
