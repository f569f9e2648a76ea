// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

// A loop is the training-loop skeleton that every method that trains
// shares, first-order and zeroth-order alike. Each step
//
//  1. samples a batch by Poisson sampling at rate q (the sampling the
//     accountant assumes);
//  2. asks the method for the batch's update direction (update): gradients
//     privatised by a Privatizer, or the plain mean gradient;
//  3. asks the method's mask hook, if any, which elements to update: a
//     post-processing of the noisy update (Dual-Priv's top-K% blocks,
//     SPARTA's rows), whose masked optimizer moments stay untouched or are
//     reset (optim.Mask.Reset);
//  4. steps the optimizer with the schedule's learning rate;
//  5. records the step's metrics and its time and memory.
type loop struct {
	name string
	job  *Job
	n    int // training examples

	steps int
	q     float64

	layout  *nn.Layout
	params  []optim.Param
	opt     optim.Optimizer
	sched   optim.Schedule
	sampler *Poisson

	// update writes the step's update direction for the batch (indices
	// into the training set, increasing) to g, which has layout.Size
	// elements, and returns what it saw.
	update func(step int, batch []int, g []float32) (stepInfo, error)
	// mask, when not nil, returns the optimizer mask of the step given its
	// update; nil updates every element.
	mask func(step int, g []float32) *optim.Mask
	// visual, when not nil, returns the visual-token transform of an
	// example (its index in the training set) at a step, for the
	// gradient-based updates (Dual-Priv's Mechanism 1).
	visual func(step, example int) nn.VisualTransform
	// buffers is the number of buffers of layout.Size float32 a step holds
	// (update directions, perturbed copies) and cache, when not nil, the
	// cache of visual tokens the steps fill: with the model and the
	// optimizer state, the memory the meter records (stepBytes).
	buffers int
	cache   *nn.VisualCache
	model   nn.Module
}

// stepInfo is what a step's update saw. Everything in it is computed from
// private data without noise: diagnostics outside the guarantee.
type stepInfo struct {
	loss   float64 // mean loss over the batch (when the batch is not empty)
	report *Report // the Privatizer's report; nil for a non-private step
	stats  nn.Stats
}

// newLoRALoop sets up LoRA training of m for job: LoRA initialised from
// the job's seed (and the token embedding when train_embeddings is set),
// the optimizer over its tensors, the schedule and the Poisson sampler
// over n examples. The caller sets update (and mask). Methods that do not
// declare train_embeddings (embeddingsParam) never train the embedding.
func newLoRALoop(name string, job *Job, m *nn.TinyMLLM, n int) (*loop, error) {
	h := job.Hyper
	steps, q := h.steps(n)
	layout, err := m.SetPEFT(h.peft(privacy.StreamID(StreamLoRA) ^ job.Seed))
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	if _, ok := h.values["train_embeddings"]; ok && h.Bool("train_embeddings") {
		m.Tok.Trainable = true
		layout = nn.NewLayout(m.Params())
	}
	params := optimParams(layout)
	opt, err := optim.New(h.Optimizer, params, &optim.Settings{WeightDecay: h.WeightDecay})
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	return &loop{
		name: name, job: job, n: n, steps: steps, q: q,
		layout: layout, params: params, opt: opt, sched: h.schedule(steps),
		sampler: NewPoisson(n, q, job.Seed),
		model:   m,
	}, nil
}

// optimParams returns the trainable tensors of l as the optimizer sees
// them, sharing their Data and Grad.
func optimParams(l *nn.Layout) []optim.Param {
	ps := make([]optim.Param, len(l.Params))
	for i, p := range l.Params {
		if p.Grad == nil {
			p.Grad = make([]float32, len(p.Data))
		}
		ps[i] = optim.Param{Name: p.Name, Data: p.Data, Grad: p.Grad}
	}
	return ps
}

// expectedBatch returns q·N, the normaliser of every update.
func (l *loop) expectedBatch() float64 { return l.q * float64(l.n) }

// diagnosticsCaveat labels the per-step metrics in the privacy record.
const diagnosticsCaveat = "non-private diagnostics outside the guarantee: the per-step metrics batch_size, loss and clipped_fraction are computed from private data without noise (diagnostics=off drops them)"

// run runs the loop and returns its result, with acc's privacy record.
func (l *loop) run(ctx context.Context, acc accounting) (*Result, error) {
	h := l.job.Hyper
	res := &Result{Privacy: acc.Record, EpsilonRDP: acc.EpsilonRDP, EpsilonPLD: acc.EpsilonPLD, Steps: l.steps, Warnings: slices.Clone(acc.Warnings)}
	res.Privacy.Caveats = append(slices.Clone(res.Privacy.Caveats), h.Caveats...)
	if h.Diagnostics {
		res.Privacy.Caveats = append(res.Privacy.Caveats, diagnosticsCaveat)
	}
	var meter nn.Meter
	g := make([]float32, l.layout.Size)
	var idx []int
	for step := range l.steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("methods: %s: stopped at step %d of %d: %w", l.name, step, l.steps, err)
		}
		start := time.Now()
		idx = l.sampler.Next(idx[:0])
		info, err := l.update(step, idx, g)
		if err != nil {
			return nil, fmt.Errorf("methods: %s: step %d: %w", l.name, step, err)
		}
		var m *optim.Mask
		if l.mask != nil {
			m = l.mask(step, g)
		}
		l.layout.SetGrad(g)
		l.opt.Step(l.params, l.sched.LR(step), m)
		meter.Add(time.Since(start), info.stats, nn.ModelBytes(l.model)+l.opt.Bytes()+l.stepBytes())
		if h.Diagnostics {
			res.Metrics = append(res.Metrics, Metric{step, "batch_size", float64(len(idx))})
			if len(idx) > 0 {
				res.Metrics = append(res.Metrics, Metric{step, "loss", info.loss})
				if info.report != nil {
					res.Metrics = append(res.Metrics, Metric{step, "clipped_fraction", info.report.ClippedFraction()})
				}
			}
		}
		if l.job.Progress != nil {
			l.job.Progress(step+1, l.steps)
		}
	}
	res.StepTime, res.PeakBytes = meter.PerStep(), meter.PeakBytes
	return res, nil
}

// stepBytes returns the memory a step holds besides the model and the
// optimizer state: its buffers and the visual-token cache as it stands.
func (l *loop) stepBytes() int64 {
	return int64(4*l.buffers*l.layout.Size) + l.cache.Bytes()
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
