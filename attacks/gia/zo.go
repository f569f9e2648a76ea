// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"

	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// ZOMatch is the matching objective of a zeroth-order release (DPZO,
// methods.ZORelease). The method releases, for a batch of B sequences at
// the weights θ, one scalar s along a direction z that is public (drawn
// from public randomness; the update is s·z/(2φ), so seeing the update is
// seeing s and z). The attacker's candidate for images x = (x_1, …, x_B)
// is the release without noise, computed as the method computes it:
//
//	c(x) = (1/B) Σ_i κ(L_i(x_i; θ+φz) − L_i(x_i; θ−φz)),
//
// κ the method's clip of one example's contribution
// (methods.ZORelease.Contribution: the loss difference, or the
// derivative estimate difference/(2φ), clipped to [−C, C]); the matching
// loss is the squared difference from the release in those units,
//
//	D(x) = (c(x) − u)²/C²,  u = Unscale(s),
//
// scaled by the clip so that one example's largest contribution is 1.
// Its gradient in x_i is 2(c − u)/(B·C²)·κ′·(∇_x L_i(θ+φz) − ∇_x
// L_i(θ−φz)), κ′ = 1 (1/(2φ) with Derivative) inside the clip and 0
// outside it (a clipped candidate gets no gradient: the release does not
// depend on it there). It is exact: the release is itself a finite
// difference in θ, which the candidate takes at the same two points, so
// each evaluation is two first-order passes per image and no
// Hessian-vector product.
//
// One scalar is one equation in the B·C·H·W pixels: every image whose
// difference matches is a solution, and the attack can only land on one
// near its start. Objective perturbs the parameters of Layout in place and
// restores their exact values before it returns.
type ZOMatch struct {
	// Layout is the layout of the trainable tensors (z's coordinates).
	Layout *nn.Layout
	// Grads evaluate the losses of the batch's sequences, one per image.
	Grads []GradFunc
	// Release is the mechanism; Z the direction and S the released scalar.
	Release *methods.ZORelease
	Z       []float32
	S       float64

	theta, pert []float32
	gp, gm      []float32
}

// NewZOMatch returns the objective of the release s along z of the
// mechanism r for a batch whose sequences' losses fs evaluate, over layout
// l, or an error if z does not fit l or the mechanism has no clip.
func NewZOMatch(l *nn.Layout, fs []GradFunc, r *methods.ZORelease, z []float32, s float64) (*ZOMatch, error) {
	switch {
	case len(z) != l.Size:
		return nil, fmt.Errorf("gia: direction of %d values, layout %d", len(z), l.Size)
	case !(r.Clip > 0) || !(r.Phi > 0):
		return nil, fmt.Errorf("gia: zeroth-order release with clip %v and φ %v", r.Clip, r.Phi)
	case len(fs) == 0:
		return nil, fmt.Errorf("gia: zeroth-order release of an empty batch")
	}
	return &ZOMatch{Layout: l, Grads: fs, Release: r, Z: z, S: s}, nil
}

// Objective returns D(x) for the concatenated images x (B equal parts) and
// writes ∇_x D to grad (len(x), overwritten).
func (zm *ZOMatch) Objective(x, grad []float32) (float64, error) {
	b := len(zm.Grads)
	if len(x)%b != 0 || len(grad) != len(x) {
		return 0, fmt.Errorf("gia: batch input of %d values for %d images", len(x), b)
	}
	dim := len(x) / b
	if zm.gp == nil {
		zm.gp, zm.gm = make([]float32, len(x)), make([]float32, len(x))
	}
	plus, minus := make([]float64, b), make([]float64, b)
	zm.theta = zm.Layout.Values()
	// θ ± φz as the method forms it (float32, methods' zo.step).
	zm.pert = grow32(zm.pert, len(zm.theta))
	var err error
	for k, out := range [][]float64{plus, minus} {
		f := float32(zm.Release.Phi)
		g := zm.gp
		if k == 1 {
			f, g = -f, zm.gm
		}
		for j, t := range zm.theta {
			zm.pert[j] = t + float32(f*zm.Z[j])
		}
		zm.Layout.SetValues(zm.pert)
		for i, fi := range zm.Grads {
			if out[i], err = fi(x[i*dim:(i+1)*dim], nil, g[i*dim:(i+1)*dim]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	zm.Layout.SetValues(zm.theta)
	if err != nil {
		return 0, err
	}
	r := zm.Release
	c := 0.0
	slope := make([]float64, b)
	for i := range b {
		v := r.Contribution(plus[i], minus[i])
		c += v
		if math.Abs(v) < r.Clip {
			slope[i] = 1
			if r.Derivative {
				slope[i] = 1 / (2 * r.Phi)
			}
		}
	}
	c /= float64(b)
	d := c - r.Unscale(zm.S)
	cc := r.Clip * r.Clip
	for i := range b {
		f := 2 * d / (float64(b) * cc) * slope[i]
		for j := i * dim; j < (i+1)*dim; j++ {
			grad[j] = float32(f * (float64(zm.gp[j]) - float64(zm.gm[j])))
		}
	}
	return d * d / cc, nil
}

func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// AttackMLLMZO attacks the zeroth-order release (s, z) of mechanism r for
// a batch of B sequences of TinyMLLM m over layout l (DPZO's LoRA
// tensors): the threat model of AttackMLLMLoRA (weights, mechanism,
// tokens and loss masks, the visual-token transform vt; z is public), the
// objective ZOMatch, minimised over the prior's coordinates
// (InvertPriorBatch) or, without a prior and for B = 1, over the pixels
// (Invert). The reconstructions are scored after Hungarian matching. The
// model's parameters are perturbed and restored during the attack, so m
// must not be used concurrently.
func AttackMLLMZO(m *nn.TinyMLLM, l *nn.Layout, r *methods.ZORelease, z []float32, s float64, batch Batch, prior *EmbeddingPrior, vt nn.VisualTransform, opt *InvertOptions) (*Outcome, error) {
	return attackMLLM(m, l, batch, prior, vt, opt, "zeroth-order", func(fs []GradFunc) (Objective, error) {
		zm, err := NewZOMatch(l, fs, r, z, s)
		if err != nil {
			return nil, err
		}
		return zm.Objective, nil
	})
}

// releaseZO returns what the zeroth-order release r gives for the batch bt
// of m over l: the method's own step (methods.ZORelease.Step) at the
// current weights on the batch's sequences, direction and noise from the
// streams of seed.
func releaseZO(m *nn.TinyMLLM, l *nn.Layout, bt Batch, r *methods.ZORelease, seed uint64) (float64, []float32, error) {
	seqs := make([]nn.Sequence, len(bt.Images))
	for i := range seqs {
		seqs[i] = nn.Sequence{Tokens: bt.Tokens[i], Images: bt.Images[i : i+1], Loss: bt.Loss[i]}
	}
	return r.Step(m, l, seqs, seed)
}
