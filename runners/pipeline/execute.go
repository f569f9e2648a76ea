// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
	"github.com/repro-dp/repro/runners"
)

// clone returns an independent copy of the base model m.
func clone(m *nn.TinyMLLM) (*nn.TinyMLLM, error) {
	c, err := nn.NewTinyMLLM(m.Config)
	if err != nil {
		return nil, err
	}
	src := m.Params()
	for i, p := range c.Params() {
		copy(p.Data, src[i].Data)
	}
	return c, nil
}

// sequence returns ex as a model input: prompt and answer, the loss on the
// answer tokens.
func sequence(ex *datasets.Example) nn.Sequence {
	s, mask := ex.Sequence()
	return nn.Sequence{Tokens: s, Images: ex.Images, Loss: mask}
}

// Execute is the runners.Executor of every method in the methods registry:
//
//  1. base: the scale's pretrained base (Base), copied;
//  2. data: the task's dataset at the run's scale and seed (Data);
//  3. fine-tune: the method on the private split (canary copies included),
//     with the hyperparameters of methods.Defaults overridden by the run's
//     params, seeded by the run's seed; per-step metrics and the privacy
//     record are recorded;
//  4. eval: Acc and IMG on the test split (Evaluate);
//  5. attacks: each of the run's attacks on the trained model, members the
//     private examples that are not canary copies, non-members as many
//     holdout examples; results, scores and warnings are recorded.
func Execute(ctx context.Context, run *runners.Run, rec *runners.Recorder) error {
	cfg := &run.Config
	method, ok := methods.Lookup(cfg.Method)
	if !ok {
		return fmt.Errorf("pipeline: unknown method %q", cfg.Method)
	}
	rec.Stage("base")
	dir := BaseDir
	if dir == "" {
		// run.Dir is <root>/<experiment>/runs/<id>.
		dir = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(run.Dir))), "pretrain")
	}
	base, err := Base(ctx, dir, cfg.Scale)
	if err != nil {
		return err
	}
	model, err := clone(base.TinyMLLM())
	if err != nil {
		return err
	}
	bj, err := json.MarshalIndent(struct {
		ID         string `json:"id"`
		Hash       string `json:"hash"`
		Checkpoint string `json:"checkpoint"`
	}{run.Inputs.Base, base.Hash, base.Checkpoint}, "", "  ")
	if err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(run.Dir, "base.json"), append(bj, '\n')); err != nil {
		return err
	}

	rec.Stage("data")
	d, err := Data(cfg.Task, cfg.Scale, cfg.Seed)
	if err != nil {
		return err
	}
	if !d.Generative {
		return fmt.Errorf("pipeline: task %s is not generative; %s fine-tunes TinyMLLM on VQA tasks", cfg.Task, cfg.Method)
	}
	train := make([]nn.Sequence, len(d.Private))
	for i := range d.Private {
		train[i] = sequence(&d.Private[i])
	}

	rec.Stage("fine-tune")
	h, err := methods.Defaults(cfg.Method, cfg.Scale)
	if err != nil {
		return err
	}
	h, ignored, err := h.Parse(cfg.Params)
	if err != nil {
		return err
	}
	for _, k := range ignored {
		rec.Warn("param %s is not a hyperparameter of %s; ignored", k, cfg.Method)
	}
	res, err := method.FineTune(ctx, &methods.Job{
		Model:   model,
		Train:   train,
		Hyper:   h,
		Epsilon: float64(cfg.Epsilon),
		Delta:   cfg.Delta,
		Seed:    uint64(cfg.Seed),
	})
	if err != nil {
		return err
	}
	rec.Steps(int64(res.Steps))
	rec.Privacy(res.Privacy)
	for _, m := range res.Metrics {
		rec.Metric(int64(m.Step), "train", m.Name, m.Value)
	}
	for _, w := range res.Warnings {
		rec.Warn("%s", w)
	}
	rec.Result("epsilon_rdp", res.EpsilonRDP)
	rec.Result("epsilon_pld", res.EpsilonPLD)
	rec.Result("step_seconds", res.StepTime.Seconds())
	rec.Result("train_peak_bytes", float64(res.PeakBytes))

	rec.Stage("eval")
	ev, err := Evaluate(ctx, model, d.Test, d.Private, 0)
	if err != nil {
		return err
	}
	final := int64(res.Steps)
	evr := ev.results()
	for _, name := range slices.Sorted(maps.Keys(evr)) {
		rec.Result(name, evr[name])
		rec.Metric(final, "test", name, evr[name])
	}

	rec.Stage("attacks")
	var bound func(float64) (float64, error)
	if res.Privacy.Sigma > 0 {
		if bound, err = tprBound(res.Privacy); err != nil {
			return err
		}
	}
	var members, non []attacks.Example
	for i := range d.Private {
		if d.Private[i].Canary < 0 {
			members = append(members, attacks.Example{ID: int64(i), Seq: train[i]})
		}
	}
	for i := range d.Holdout {
		non = append(non, attacks.Example{ID: int64(i), Seq: sequence(&d.Holdout[i])})
	}
	n := min(len(members), len(non))
	target := &attacks.Target{Model: model, Members: members[:n], NonMembers: non[:n], TPRBound: bound}
	for _, name := range cfg.Attacks {
		a, ok := attacks.Lookup(name)
		if !ok {
			return fmt.Errorf("pipeline: unknown attack %q", name)
		}
		rep, err := a.Run(ctx, target)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(rep.Results)) {
			rec.Result(k, rep.Results[k])
		}
		rec.Scores(name, rep.Scores)
		for _, w := range rep.Warnings {
			rec.Warn("%s", w)
		}
	}
	return nil
}

// tprBound returns the PLD accountant's TPR bound for the mechanism of p,
// composed once per process for each distinct mechanism.
func tprBound(p results.Privacy) (func(float64) (float64, error), error) {
	pld, err := memo(&cache.plds, string(p.Events), func() (*privacy.PLD, error) {
		ev, err := privacy.UnmarshalEvent(p.Events)
		if err != nil {
			return nil, fmt.Errorf("pipeline: privacy events: %w", err)
		}
		pld, err := privacy.NewPLD(nil)
		if err != nil {
			return nil, err
		}
		if err := pld.Compose(ev, 1); err != nil {
			return nil, fmt.Errorf("pipeline: TPR bound: %w", err)
		}
		return pld, nil
	})
	if err != nil {
		return nil, err
	}
	// Accountants are not safe for concurrent use; runs share this one.
	return func(fpr float64) (float64, error) {
		cache.Lock()
		defer cache.Unlock()
		return pld.TPR(fpr)
	}, nil
}
