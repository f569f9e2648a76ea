// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"math"
	"slices"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// A Privatizer is the Gaussian mechanism of one private step, the part of a
// DP method that touches private data (the engine half of Opacus's
// optimizer/engine split). Given the per-example contributions of a
// Poisson-sampled batch it
//
//  1. clips each contribution: jointly to ℓ₂ norm C, or per group g of
//     Rule to its own norm C_g (Rap-FT's two partitions, Sec-MMFL's
//     modalities); a group with a non-finite norm counts as zero, so no
//     input can exceed the sensitivity;
//  2. sums the clipped contributions in a fixed order;
//  3. adds Gaussian noise of standard deviation σ_g·C_g to every
//     coordinate of group g;
//  4. divides by the expected batch size q·N (not the realised one), as the
//     accountant's Poisson-subsampled Gaussian event assumes.
//
// Every method that trains privately calls a Privatizer; none clips or adds
// noise itself. Methods add masks and schedules around it (post-processing,
// which costs no privacy).
//
// A Privatizer is not safe for concurrent use: it owns its noise stream.
type Privatizer struct {
	// Rule is the clipping rule: nn.Flat(C) for joint clipping, or one
	// part per group (nn.ClipRule).
	Rule nn.ClipRule
	// Sigma holds the noise multiplier of each group of Rule (one value
	// per Rule.C); the noise on group g has standard deviation
	// Sigma[g]·Rule.C[g]. A zero σ adds no noise (DP-SGD at ε = ∞ still
	// clips).
	Sigma []float64
	// Batch is the expected batch size q·N, the normaliser.
	Batch float64

	noise *privacy.Noise
}

// NewPrivatizer returns a Privatizer with one σ for every group of rule,
// normalising by the expected batch size batch, whose noise is drawn from
// the stream StreamNoise of seed. It returns an error for a rule without
// groups, a non-positive or non-finite clip norm, a negative or non-finite
// σ, or a non-positive batch.
func NewPrivatizer(rule nn.ClipRule, sigma []float64, batch float64, seed uint64) (*Privatizer, error) {
	if len(rule.C) == 0 || len(sigma) != len(rule.C) {
		return nil, fmt.Errorf("methods: privatizer: %d clip norms and %d noise multipliers, want as many (≥ 1)", len(rule.C), len(sigma))
	}
	if len(rule.C) > 1 && rule.Part == nil {
		return nil, fmt.Errorf("methods: privatizer: %d groups but no partition", len(rule.C))
	}
	for _, g := range rule.Part {
		if int(g) >= len(rule.C) {
			return nil, fmt.Errorf("methods: privatizer: partition names group %d of %d", g, len(rule.C))
		}
	}
	for g, c := range rule.C {
		if !(c > 0) || math.IsInf(c, 1) {
			return nil, fmt.Errorf("methods: privatizer: clip norm %v of group %d: want a finite value > 0", c, g)
		}
		if !(sigma[g] >= 0) || math.IsInf(sigma[g], 1) {
			return nil, fmt.Errorf("methods: privatizer: noise multiplier %v of group %d: want a finite value ≥ 0", sigma[g], g)
		}
	}
	if !(batch > 0) || math.IsInf(batch, 1) {
		return nil, fmt.Errorf("methods: privatizer: expected batch size %v: want a finite value > 0", batch)
	}
	return &Privatizer{Rule: rule, Sigma: slices.Clone(sigma), Batch: batch, noise: privacy.NewNoise(seed, StreamNoise)}, nil
}

// A Report says what a Privatizer did to one batch. It is computed from
// private data without noise: a diagnostic outside the guarantee.
type Report struct {
	// Examples is the realised batch size; Clipped counts the examples
	// with at least one group above its clip norm, and NonFinite those
	// with a non-finite norm in some group (counted as zero).
	Examples, Clipped, NonFinite int
	// MeanNorm is the mean pre-clipping norm of group 0 over the examples
	// with a finite norm (NaN if none).
	MeanNorm float64
	// GroupMeanNorm holds every group's mean pre-clipping norm over the
	// examples with a finite norm in that group (NaN if none), and
	// GroupClipped the number of examples above each group's clip norm
	// (Rap-FT's per-partition norms against their clips).
	GroupMeanNorm []float64
	GroupClipped  []int
}

// ClippedFraction returns Clipped/Examples, or NaN for an empty batch.
func (r Report) ClippedFraction() float64 {
	if r.Examples == 0 {
		return math.NaN()
	}
	return float64(r.Clipped) / float64(r.Examples)
}

// Privatize clips every per-example gradient of grads in place, writes the
// privatised mean Σ clip(g_i)/B + noise/B to dst (len of each gradient) and
// reports what it did. grads may be empty (an empty Poisson batch still
// releases noise). It panics if a gradient's length differs from dst's or
// does not fit Rule.
func (p *Privatizer) Privatize(dst []float32, grads [][]float32) Report {
	r := Report{Examples: len(grads)}
	norms := nn.ClipAll(grads, p.Rule)
	sum, finite := 0.0, 0
	gsum, gfinite := make([]float64, len(p.Rule.C)), make([]int, len(p.Rule.C))
	r.GroupClipped = make([]int, len(p.Rule.C))
	for _, ns := range norms {
		clipped, bad := false, false
		for g, n := range ns {
			switch {
			case math.IsNaN(n) || math.IsInf(n, 0):
				bad = true
				continue
			case n > p.Rule.C[g]:
				clipped = true
				r.GroupClipped[g]++
			}
			gsum[g] += n
			gfinite[g]++
		}
		if clipped {
			r.Clipped++
		}
		if bad {
			r.NonFinite++
		} else {
			sum += ns[0]
			finite++
		}
	}
	r.MeanNorm = math.NaN()
	if finite > 0 {
		r.MeanNorm = sum / float64(finite)
	}
	r.GroupMeanNorm = make([]float64, len(p.Rule.C))
	for g := range gsum {
		r.GroupMeanNorm[g] = math.NaN()
		if gfinite[g] > 0 {
			r.GroupMeanNorm[g] = gsum[g] / float64(gfinite[g])
		}
	}
	clear(dst)
	nn.Sum(dst, grads)
	p.addNoise(dst)
	inv := 1 / p.Batch
	for j, v := range dst {
		dst[j] = float32(float64(v) * inv)
	}
	return r
}

// addNoise adds the groups' Gaussian noise to g: one draw per coordinate,
// in coordinate order.
func (p *Privatizer) addNoise(g []float32) {
	if p.Rule.Part == nil {
		if p.Sigma[0] > 0 {
			p.noise.AddGaussian32(g, p.Sigma[0]*p.Rule.C[0])
		}
		return
	}
	if len(p.Rule.Part) != len(g) {
		panic("methods: privatizer: clip rule does not fit the gradient")
	}
	for j, part := range p.Rule.Part {
		if part < 0 {
			continue // a dropped coordinate carries no data
		}
		if s := p.Sigma[part] * p.Rule.C[part]; s > 0 {
			g[j] = float32(float64(g[j]) + float64(s*p.noise.Normal()))
		}
	}
}

// PrivatizeScalars is Privatize for one-dimensional contributions (DPZO's
// per-example loss differences): it clips each value to [−C, C] with C =
// Rule.C[0] (a non-finite value counts as zero), sums them in order, adds
// N(0, (σC)²) and divides by the expected batch size. vals is not modified.
func (p *Privatizer) PrivatizeScalars(vals []float64) (float64, Report) {
	if len(p.Rule.C) != 1 {
		panic("methods: privatizer: scalar contributions take one group")
	}
	c := p.Rule.C[0]
	r := Report{Examples: len(vals), MeanNorm: math.NaN()}
	s, norms, finite := 0.0, 0.0, 0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			r.NonFinite++
			continue
		}
		if math.Abs(v) > c {
			r.Clipped++
		}
		s += max(-c, min(v, c))
		norms += math.Abs(v)
		finite++
	}
	if finite > 0 {
		r.MeanNorm = norms / float64(finite)
	}
	if p.Sigma[0] > 0 {
		s += float64(p.Sigma[0] * c * p.noise.Normal())
	}
	return s / p.Batch, r
}
