// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

func init() {
	Register(NonPrivate{})
	Register(DPSGD{})
}

// NonPrivate is the non-private baseline (ε = ∞): LoRA fine-tuning with the
// optimizer of Hyper on Poisson-sampled batches (the same sampler and
// normaliser as DPSGD), without clipping or noise.
type NonPrivate struct{}

// Name implements Method.
func (NonPrivate) Name() string { return "nonprivate" }

// FineTune implements Method. The job's ε must be +Inf: the run has no
// guarantee.
func (NonPrivate) FineTune(ctx context.Context, job *Job) (*Result, error) {
	if !math.IsInf(job.Epsilon, 1) {
		return nil, fmt.Errorf("methods: nonprivate: target ε = %v: the non-private baseline runs at ε = inf only", job.Epsilon)
	}
	return firstOrder(ctx, job, "nonprivate", false)
}

// DPSGD is DP-SGD (Abadi et al. 2016; Dual-Priv Algorithm 2) on LoRA
// parameters. Each step:
//
//  1. samples a batch by Poisson sampling at rate q = B/N (Poisson);
//  2. computes every example's exact gradient g_i (nn.PerSample);
//  3. clips it to ℓ₂ norm C: ĝ_i = g_i / max(1, ‖g_i‖/C);
//  4. adds Gaussian noise N(0, σ²C² I) to the sum Σĝ_i and divides by the
//     expected batch size q·N = B (not the realised one);
//  5. hands the result to the optimizer (Adam by default).
//
// σ is calibrated by the accountant of Hyper to the target (ε, δ) over the
// run's q and ⌈Epochs·N/B⌉ steps, so that the achieved ε never exceeds the
// target; ε = +Inf gives σ = 0 (clipping still applies, so DP-SGD at ε = ∞
// differs from NonPrivate by the clipping alone).
//
// References:
//   - M. Abadi et al., Deep learning with differential privacy, CCS 2016,
//     Algorithm 1.
type DPSGD struct{}

// Name implements Method.
func (DPSGD) Name() string { return "dpsgd" }

// FineTune implements Method.
func (DPSGD) FineTune(ctx context.Context, job *Job) (*Result, error) {
	return firstOrder(ctx, job, "dpsgd", true)
}

// optimParams returns the trainable tensors of l as the optimizer sees
// them, sharing their Data and Grad.
// loraTraining is what the gradient-based and zeroth-order methods set up
// before their first step: LoRA on the job's model, the optimizer over its
// tensors, the learning-rate schedule and the Poisson sampler.
type loraTraining struct {
	layout  *nn.Layout
	params  []optim.Param
	opt     optim.Optimizer
	sched   optim.Schedule
	sampler *Poisson
}

// newLoRATraining sets up training of job's model for steps steps at
// sampling rate q, with the LoRA initialisation and sampler seeded from
// job.Seed.
func newLoRATraining(name string, job *Job, steps int, q float64) (*loraTraining, error) {
	h := job.Hyper
	layout, err := job.Model.SetPEFT(h.peft(privacy.StreamID(StreamLoRA) ^ job.Seed))
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	params := optimParams(layout)
	opt, err := optim.New(h.Optimizer, params, &optim.Settings{WeightDecay: h.WeightDecay})
	if err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	return &loraTraining{
		layout:  layout,
		params:  params,
		opt:     opt,
		sched:   h.schedule(steps),
		sampler: NewPoisson(len(job.Train), q, job.Seed),
	}, nil
}

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

// firstOrder runs the shared loop of NonPrivate (private false) and DPSGD.
func firstOrder(ctx context.Context, job *Job, name string, private bool) (*Result, error) {
	if err := job.check(name); err != nil {
		return nil, err
	}
	h := job.Hyper
	n := len(job.Train)
	steps, q := h.steps(n)
	var acc accounting
	var err error
	if private {
		acc, err = sampledGaussianAccounting(name, h, job.Epsilon, job.Delta, q, steps)
	} else {
		acc, err = nonPrivateAccounting(job.Epsilon, job.Delta, q, steps)
	}
	if err != nil {
		return nil, err
	}
	m := job.Model
	t, err := newLoRATraining(name, job, steps, q)
	if err != nil {
		return nil, err
	}
	layout, params, opt, sched, sampler := t.layout, t.params, t.opt, t.sched, t.sampler
	noise := privacy.NewNoise(job.Seed, StreamNoise)
	opts := &nn.Options{Workers: job.Workers}
	res := &Result{Privacy: acc.Record, EpsilonRDP: acc.EpsilonRDP, EpsilonPLD: acc.EpsilonPLD, Steps: steps, Warnings: acc.Warnings}
	var meter nn.Meter
	g := make([]float32, layout.Size)
	var idx []int
	batch := make([]nn.Sequence, 0, 2*h.BatchSize)
	for step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("methods: %s: stopped at step %d of %d: %w", name, step, steps, err)
		}
		start := time.Now()
		idx = sampler.Next(idx[:0])
		batch = batch[:0]
		for _, i := range idx {
			batch = append(batch, job.Train[i])
		}
		clear(g)
		var stats nn.Stats
		loss, clipped := 0.0, 0
		if len(batch) > 0 {
			var losses []float64
			if private {
				r, err := m.PerSample(layout, batch, nil, nil, opts)
				if err != nil {
					return nil, fmt.Errorf("methods: %s: step %d: %w", name, step, err)
				}
				for _, ns := range nn.ClipAll(r.Grads, nn.Flat(h.Clip)) {
					if ns[0] > h.Clip {
						clipped++
					}
				}
				nn.Sum(g, r.Grads)
				losses, stats = r.Losses, r.Stats
			} else {
				var grad []float32
				grad, losses, stats, err = m.Gradient(layout, batch, nil, nil, opts)
				if err != nil {
					return nil, fmt.Errorf("methods: %s: step %d: %w", name, step, err)
				}
				copy(g, grad)
			}
			for _, l := range losses {
				loss += l
			}
			loss /= float64(len(losses))
		}
		if acc.Sigma > 0 {
			noise.AddGaussian32(g, acc.Sigma*h.Clip)
		}
		inv := 1 / (q * float64(n)) // the expected batch size
		for j, v := range g {
			g[j] = float32(float64(v) * inv)
		}
		layout.SetGrad(g)
		opt.Step(params, sched.LR(step), nil)
		meter.Add(time.Since(start), stats, nn.ModelBytes(m)+opt.Bytes()+int64(4*len(g)))
		res.Metrics = append(res.Metrics, Metric{step, "batch_size", float64(len(batch))})
		if len(batch) > 0 {
			res.Metrics = append(res.Metrics, Metric{step, "loss", loss})
			if private {
				res.Metrics = append(res.Metrics, Metric{step, "clipped_fraction", float64(clipped) / float64(len(batch))})
			}
		}
		if job.Progress != nil {
			job.Progress(step+1, steps)
		}
	}
	res.StepTime, res.PeakBytes = meter.PerStep(), meter.PeakBytes
	return res, nil
}
