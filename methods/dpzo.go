// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

func init() { Register(DPZO{}) }

// DPZO is differentially private zeroth-order fine-tuning (Tang et al. 2024)
// as Algorithm 3 of the Dual-Priv paper states it, on the LoRA parameters.
// Each step:
//
//  1. samples a batch by Poisson sampling at rate q = B/N;
//  2. draws one direction z ~ N(0, I_d) over the LoRA parameters, shared by
//     the batch (public randomness, from the stream StreamDirection);
//  3. computes each example's loss difference l_i = L(θ+φz) − L(θ−φz) and
//     clips it to [−C_ZO, C_ZO] (C_ZO is Hyper.Clip);
//  4. privatises the sum: s = (Σ l̂_i + N(0, σ²C_ZO²)) / B, with B the
//     expected batch size;
//  5. steps along z: the gradient estimate s·z/(2φ) goes to the optimizer
//     (plain SGD by default, as in Algorithm 3: θ ← θ − η·s·z/(2φ)).
//
// Only the scalar s touches private data, so each step is the
// Poisson-subsampled Gaussian mechanism with sensitivity C_ZO on the sum, and
// σ is calibrated exactly as DPSGD's, by the same accountant.
//
// References:
//   - X. Tang, A. Panda, M. Nasr, S. Mahloujifar, P. Mittal, Private
//     fine-tuning of large language models with zeroth-order optimization,
//     2024, arXiv:2401.04343.
//   - Dual-Priv Pruning, Appendix L, Algorithm 3
//     (shared/papers/000-dual-priv-pruning.md §1.5).
type DPZO struct{}

// Name implements Method.
func (DPZO) Name() string { return "dpzo" }

// zo holds the state of DPZO's zeroth-order estimate.
type zo struct {
	phi, clip, sigma float64
	b                float64 // expected batch size, the normaliser
	dir, noise       *privacy.Noise
	z, pert          []float32
	lp, lm           []float64
}

func newZO(d int, phi, clip, sigma, b float64, seed uint64) *zo {
	return &zo{
		phi: phi, clip: clip, sigma: sigma, b: b,
		dir:   privacy.NewNoise(seed, StreamDirection),
		noise: privacy.NewNoise(seed, StreamNoise),
		z:     make([]float32, d),
		pert:  make([]float32, d),
	}
}

// step draws a fresh direction into o.z and returns the privatised scalar
// s of a batch of nb examples whose losses at parameter values v the
// function losses writes to out (len nb), and the mean of the two losses.
// The gradient estimate is s·z/(2φ). theta is not modified.
func (o *zo) step(theta []float32, nb int, losses func(v []float32, out []float64) error) (s, loss float64, err error) {
	clear(o.z)
	o.dir.AddGaussian32(o.z, 1)
	if nb == 0 {
		// An empty batch still releases noise (the mechanism's output on an
		// empty sample).
		if o.sigma > 0 {
			s = o.sigma * o.clip * o.noise.Normal()
		}
		return s / o.b, 0, nil
	}
	o.lp, o.lm = grow(o.lp, nb), grow(o.lm, nb)
	for sign, out := range [][]float64{o.lp, o.lm} {
		f := float32(o.phi)
		if sign == 1 {
			f = -f
		}
		for j, t := range theta {
			o.pert[j] = t + f*o.z[j]
		}
		if err := losses(o.pert, out); err != nil {
			return 0, 0, err
		}
	}
	for i := range nb {
		d := o.lp[i] - o.lm[i]
		s += max(-o.clip, min(d, o.clip))
		loss += (o.lp[i] + o.lm[i]) / 2
	}
	if o.sigma > 0 {
		s += o.sigma * o.clip * o.noise.Normal()
	}
	return s / o.b, loss / float64(nb), nil
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// FineTune implements Method.
func (DPZO) FineTune(ctx context.Context, job *Job) (*Result, error) {
	const name = "dpzo"
	if err := job.check(name); err != nil {
		return nil, err
	}
	h := job.Hyper
	n := len(job.Train)
	steps, q := h.steps(n)
	acc, err := sampledGaussianAccounting(name, h, job.Epsilon, job.Delta, q, steps)
	if err != nil {
		return nil, err
	}
	m := job.Model
	t, err := newLoRATraining(name, job, steps, q)
	if err != nil {
		return nil, err
	}
	layout, params, opt, sched, sampler := t.layout, t.params, t.opt, t.sched, t.sampler
	est := newZO(layout.Size, h.Phi, h.Clip, acc.Sigma, q*float64(n), job.Seed)
	res := &Result{Privacy: acc.Record, EpsilonRDP: acc.EpsilonRDP, EpsilonPLD: acc.EpsilonPLD, Steps: steps, Warnings: acc.Warnings}
	var meter nn.Meter
	g := make([]float32, layout.Size)
	var idx []int
	batch := make([]nn.Sequence, 0, 2*h.BatchSize)
	losses := func(v []float32, out []float64) error {
		layout.SetValues(v)
		return Losses(m, batch, job.Workers, out)
	}
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
		theta := layout.Values()
		s, loss, err := est.step(theta, len(batch), losses)
		layout.SetValues(theta)
		if err != nil {
			return nil, fmt.Errorf("methods: %s: step %d: %w", name, step, err)
		}
		c := s / (2 * h.Phi)
		for j, zj := range est.z {
			g[j] = float32(c * float64(zj))
		}
		layout.SetGrad(g)
		opt.Step(params, sched.LR(step), nil)
		meter.Add(time.Since(start), nn.Stats{Examples: 2 * len(batch)}, nn.ModelBytes(m)+opt.Bytes()+int64(4*(3*len(g))))
		res.Metrics = append(res.Metrics, Metric{step, "batch_size", float64(len(batch))})
		if len(batch) > 0 {
			res.Metrics = append(res.Metrics, Metric{step, "loss", loss})
		}
		if job.Progress != nil {
			job.Progress(step+1, steps)
		}
	}
	res.StepTime, res.PeakBytes = meter.PerStep(), meter.PeakBytes
	return res, nil
}

// Losses writes the loss of every sequence of batch under m (the mean
// next-token cross-entropy over the tokens its Loss marks, as
// nn.TinyMLLM.Loss) to out, which must have len(batch) elements, computing
// them on up to workers goroutines (0 means GOMAXPROCS). Each loss is
// computed on its own, so the results do not depend on workers. It returns
// the error of the lowest-indexed sequence that fails.
func Losses(m *nn.TinyMLLM, batch []nn.Sequence, workers int, out []float64) error {
	if len(out) != len(batch) {
		panic("methods: Losses: len(out) != len(batch)")
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(batch))
	errs := make([]error, len(batch))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(batch); i += workers {
				ls, _, err := m.TokenLosses(&batch[i], nil, nil)
				if err != nil {
					errs[i] = err
					continue
				}
				sum := 0.0
				for _, l := range ls {
					sum += l
				}
				if len(ls) > 0 {
					out[i] = sum / float64(len(ls))
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
