// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"slices"

	"github.com/repro-dp/repro/nn"
)

// A GradFunc evaluates a model's training loss on one example whose image
// is x, at the current values of the model's parameters, and writes the
// gradient with respect to the parameters of the layout it was built for
// to gtheta and the gradient with respect to x to gx. Either may be nil
// (not wanted); a non-nil one is overwritten. A GradFunc must read the
// parameters from their Data at each call (GradientMatch perturbs them).
type GradFunc func(x, gtheta, gx []float32) (float64, error)

// DefaultHVPStep is GradientMatch's default relative step η; see
// GradientMatch.Step.
const DefaultHVPStep = 1e-3

// GradientMatch is the gradient-matching objective of Inverting Gradients
// (Geiping et al. 2020, Eq. 4) for any model whose loss and gradients a
// GradFunc gives: the distance D(g(x), g*) between the candidate's
// parameter gradient g(x) = ∇_θ L(x; θ) and the released update g*, over
// the released blocks (those of g* that are not all zero: a pruned or
// frozen tensor carries nothing to match). D is the cosine distance
// 1 − cos, or with L2 DLG's ‖g − g*‖²/‖g*‖² (Zhu et al. 2019, Eq. 2,
// taken relative as in ConvMatch).
//
// Its gradient with respect to x is a second-order derivative:
//
//	∇_x D = J_g(x)ᵀ v,  v = ∂D/∂g at g(x),
//
// and by the symmetry of mixed partial derivatives
//
//	J_g(x)ᵀ v = ∇_x ⟨v, ∇_θ L(x; θ)⟩ = d/dh ∇_x L(x; θ + h·v) at h = 0,
//
// the directional derivative of the input gradient along v in parameter
// space (Pearlmutter, "Fast Exact Multiplication by the Hessian", Neural
// Computation 6(1), 1994, reads a Hessian-vector product this way).
// GradientMatch takes it by a central difference of two first-order input
// gradients, at θ + h·v and θ − h·v: three first-order passes of nn's tape
// per evaluation (one for g(x), two for the product). The error is
// O(h²) from the third derivative plus the float32 rounding of the two
// input gradients divided by 2h; see Step.
//
// Why a finite difference and not double backward: nn's tape is
// first-order, and making it differentiate its own backward pass would
// mean a second-order rule for every operation TinyMLLM runs (attention,
// softmax, LayerNorm, GELU, LoRA's Weighted sum, Patchify, embeddings),
// each to be checked; the analytic first layer that ConvMatch uses is not
// available either, since the released LoRA tensors sit behind the frozen
// vision encoder, projector and attention. The finite difference reuses
// the engine's checked first-order gradients and needs no new rule, at the
// price of two extra passes and a truncation error that the tests bound
// (TestGradientMatchConvMatch, TestGradientMatchFD).
//
// Objective perturbs the parameters of Layout in place and restores their
// exact values (a saved copy) before it returns, so the model must not be
// used by anything else during a call.
type GradientMatch struct {
	// Layout is the layout of the released update (the trainable tensors).
	Layout *nn.Layout
	// Grad evaluates the loss of one example with candidate image x.
	Grad GradFunc
	// Want is the released update g* over Layout.
	Want []float32
	// L2 selects DLG's ℓ₂ distance instead of the cosine distance.
	L2 bool
	// PerBlock takes the distance tensor by tensor and averages it over
	// the released tensors (each tensor weighs the same, whatever its
	// norm), instead of over their concatenation (each weighs by its
	// share of the norm). A tensor with a small gradient that depends
	// strongly on the input (TinyMLLM's query and key LoRA factors on
	// the prompt) counts in full. A released tensor whose norm is below
	// 10⁻⁶ of the largest one's is left out of the average: its update is
	// rounding noise (an attention key's bias, on which the loss does not
	// depend: softmax is invariant to a shift), whose direction no
	// candidate can match and whose cosine's gradient, scaled by the
	// inverse of that norm, would swamp the others.
	PerBlock bool
	// Step is the relative step η of the central difference: the
	// parameters move by ±h·v with h = η·‖θ‖/‖v‖ (‖θ‖ over Layout's
	// tensors, 1 if they are all zero), so every tensor moves by about a
	// fraction η of the model's own scale whatever the scale of v. The
	// engine computes in float32 (unit roundoff u ≈ 6·10⁻⁸): the
	// difference of two input gradients carries a rounding error of
	// about u·‖∇_x L‖/h, which a step far below u^{1/3} ≈ 4·10⁻³ blows
	// up, and the truncation error grows as η²; 0 means DefaultHVPStep
	// (10⁻³), right for smooth models such as TinyMLLM (GELU, softmax,
	// LayerNorm; TestGradientMatchFD). A piecewise-linear model (ReLU, max
	// pooling) needs a step that crosses no activation switch: 10⁻⁵ on
	// the fusion classifier's encoder (TestGradientMatchConvMatch).
	Step float64
	// Clip, when it has clip norms, is the release's per-example clip rule
	// (methods.Release.Rule), applied to the candidate gradient of a
	// batch of one before the distance: D(clip(g(x)), g*), with the clip's
	// Jacobian in the gradient (a group above its norm n > C_g is scaled
	// by C_g/n, Jacobian (C_g/n)(I − uuᵀ), u = g_g/n; below it, the
	// identity). It matters where the groups are clipped separately
	// (Rap-FT's weak and strong partitions: each group's clip changes the
	// groups' relative scale, which the cosine distance sees); one group
	// scales the whole gradient, which the cosine distance (whole or per
	// block) does not see, so it is applied there only with L2. The
	// candidate of a batch (SumGrad) is the sum of unclipped gradients:
	// per-example clipping is not modelled for B > 1.
	Clip nn.ClipRule

	mask  []bool // the released blocks
	tiny  []bool // PerBlock: the released blocks left out (tinyBlocks), on first use
	theta [][]float32
	gt    []float32
	gp    []float32
	gm    []float32
}

// NewGradientMatch returns the objective for the update want over layout l
// of the model whose loss f evaluates, or an error if want does not fit l
// or releases nothing.
func NewGradientMatch(l *nn.Layout, f GradFunc, want []float32) (*GradientMatch, error) {
	if len(want) != l.Size {
		return nil, fmt.Errorf("gia: update of %d values, layout %d", len(want), l.Size)
	}
	gm := &GradientMatch{Layout: l, Grad: f, Want: want, mask: make([]bool, len(l.Params))}
	any := false
	for i := range l.Params {
		gm.mask[i] = norm(l.Block(want, i)) > 0
		any = any || gm.mask[i]
	}
	if !any {
		return nil, fmt.Errorf("gia: the update releases no non-zero tensor")
	}
	gm.gt = make([]float32, l.Size)
	return gm, nil
}

// Objective returns D(g(x), g*) and writes ∇_x D (the central-difference
// Hessian-vector product) to grad (len(x), overwritten). It returns the
// GradFunc's first error.
func (gm *GradientMatch) Objective(x, grad []float32) (float64, error) {
	if _, err := gm.Grad(x, gm.gt, nil); err != nil {
		return 0, err
	}
	dv := make([]float32, gm.Layout.Size)
	dist := gm.clippedDistance(gm.gt, dv)
	if err := gm.hvp(x, dv, grad); err != nil {
		return 0, err
	}
	return dist, nil
}

// Distance returns D(g(x), g*) alone: one first-order pass, no gradient
// in x.
func (gm *GradientMatch) Distance(x []float32) (float64, error) {
	if _, err := gm.Grad(x, gm.gt, nil); err != nil {
		return 0, err
	}
	return gm.clippedDistance(gm.gt, nil), nil
}

// clips says whether the candidate is clipped (Clip's doc comment).
func (gm *GradientMatch) clips() bool {
	return len(gm.Clip.C) > 1 || len(gm.Clip.C) == 1 && gm.L2
}

// clippedDistance returns D(clip(g), g*) under Clip (D(g, g*) when clips
// is false) and, when dv is not nil, writes its gradient in g to dv: the
// clip's Jacobian (symmetric) applied to ∂D/∂h at h = clip(g). A dropped
// coordinate (negative part) is zero in the candidate and in dv.
func (gm *GradientMatch) clippedDistance(g, dv []float32) float64 {
	if !gm.clips() {
		return gm.distance(g, dv)
	}
	r := gm.Clip
	part := func(j int) int {
		if r.Part == nil {
			return 0
		}
		return int(r.Part[j])
	}
	norms := nn.Norms(g, r)
	f := make([]float64, len(r.C))
	for k, n := range norms {
		f[k] = 1
		if n > r.C[k] {
			f[k] = r.C[k] / n
		}
	}
	h := make([]float32, len(g))
	for j, v := range g {
		if k := part(j); k >= 0 {
			h[j] = float32(float64(v) * f[k])
		}
	}
	d := gm.distance(h, dv)
	if dv == nil {
		return d
	}
	dots := make([]float64, len(r.C))
	for j, v := range g {
		if k := part(j); k >= 0 {
			dots[k] += float64(float64(v) * float64(dv[j]))
		}
	}
	for j := range dv {
		k := part(j)
		switch {
		case k < 0:
			dv[j] = 0
		case f[k] < 1:
			dv[j] = float32(f[k] * (float64(dv[j]) - float64(g[j])*dots[k]/(norms[k]*norms[k])))
		}
	}
	return d
}

// distance returns D(g, g*) and, when dv is not nil, writes ∂D/∂g to it
// (over the layout, zero on the blocks that are not released).
func (gm *GradientMatch) distance(g, dv []float32) float64 {
	d := func(got, want, dg []float32) float64 {
		if dg == nil {
			dg = make([]float32, len(got))
		}
		if gm.L2 {
			return l2Grad(got, want, dg)
		}
		c := cosineGrad(got, want, dg)
		for i := range dg {
			dg[i] = -dg[i]
		}
		return 1 - c
	}
	if !gm.PerBlock {
		var dr []float32
		if dv != nil {
			dr = make([]float32, len(gm.released(g)))
		}
		v := d(gm.released(g), gm.released(gm.Want), dr)
		if dv != nil {
			copy(dv, gm.scatter(dr))
		}
		return v
	}
	var sum float64
	n := 0
	if gm.tiny == nil {
		gm.tiny = tinyBlocks(gm.Layout, gm.Want, gm.mask)
	}
	clear(dv)
	for i, ok := range gm.mask {
		if !ok || gm.tiny[i] {
			continue
		}
		var db []float32
		if dv != nil {
			db = gm.Layout.Block(dv, i)
		}
		sum += d(gm.Layout.Block(g, i), gm.Layout.Block(gm.Want, i), db)
		n++
	}
	for i := range dv {
		dv[i] /= float32(n)
	}
	return sum / float64(n)
}

// tinyBlocks marks the released blocks of want whose norm is below 10⁻⁶
// of the largest released block's (PerBlock's doc comment).
func tinyBlocks(l *nn.Layout, want []float32, mask []bool) []bool {
	norms := make([]float64, len(mask))
	var top float64
	for i, ok := range mask {
		if ok {
			norms[i] = norm(l.Block(want, i))
			top = max(top, norms[i])
		}
	}
	tiny := make([]bool, len(mask))
	for i, ok := range mask {
		tiny[i] = ok && norms[i] < 1e-6*top
	}
	return tiny
}

// released returns the released blocks of g, concatenated.
func (gm *GradientMatch) released(g []float32) []float32 {
	var out []float32
	for i, ok := range gm.mask {
		if ok {
			out = append(out, gm.Layout.Block(g, i)...)
		}
	}
	return out
}

// scatter is the inverse of released: a vector over the layout, zero on
// the blocks that are not released.
func (gm *GradientMatch) scatter(r []float32) []float32 {
	v := make([]float32, gm.Layout.Size)
	o := 0
	for i, ok := range gm.mask {
		if ok {
			b := gm.Layout.Block(v, i)
			o += copy(b, r[o:o+len(b)])
		}
	}
	return v
}

// HVP writes J_g(x)ᵀ v = ∇_x ⟨v, ∇_θ L(x; θ)⟩ to out (len(x)), for v over
// the layout, by the central difference of GradientMatch's doc comment.
// A zero v gives zero.
func (gm *GradientMatch) HVP(x, v, out []float32) error {
	if len(v) != gm.Layout.Size {
		panic("gia: direction does not fit the layout")
	}
	return gm.hvp(x, v, out)
}

func (gm *GradientMatch) hvp(x, v, out []float32) error {
	nv := norm(v)
	if nv == 0 {
		clear(out)
		return nil
	}
	gm.save()
	nt := 0.0
	for _, d := range gm.theta {
		nt += sumSq(d)
	}
	nt = math.Sqrt(nt)
	if nt == 0 {
		nt = 1
	}
	eta := gm.Step
	if eta == 0 {
		eta = DefaultHVPStep
	}
	h := eta * nt / nv
	if gm.gp == nil {
		gm.gp, gm.gm = make([]float32, len(x)), make([]float32, len(x))
	}
	gm.shift(v, h)
	_, errP := gm.Grad(x, nil, gm.gp)
	gm.shift(v, -h)
	_, errM := gm.Grad(x, nil, gm.gm)
	gm.restore()
	if err := cmpErr(errP, errM); err != nil {
		return err
	}
	for i := range out {
		out[i] = float32((float64(gm.gp[i]) - float64(gm.gm[i])) / (2 * h))
	}
	return nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// save copies the layout's parameters (once per call of hvp).
func (gm *GradientMatch) save() {
	if gm.theta == nil {
		gm.theta = make([][]float32, len(gm.Layout.Params))
	}
	for i, p := range gm.Layout.Params {
		gm.theta[i] = append(gm.theta[i][:0], p.Data...)
	}
}

// shift sets the layout's parameters to θ + h·v, from the saved θ.
func (gm *GradientMatch) shift(v []float32, h float64) {
	for i, p := range gm.Layout.Params {
		vb := gm.Layout.Block(v, i)
		for j, t := range gm.theta[i] {
			p.Data[j] = float32(float64(t) + float64(h*float64(vb[j])))
		}
	}
}

// restore puts back the saved parameters, bit for bit.
func (gm *GradientMatch) restore() {
	for i, p := range gm.Layout.Params {
		copy(p.Data, gm.theta[i])
	}
}

func sumSq(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(float64(v) * float64(v))
	}
	return s
}

// MLLMGrad returns the GradFunc of TinyMLLM m on the sequence s with its
// one image replaced by the candidate x: s's tokens (prompt and answer,
// one image placeholder) and loss mask are the attacker's knowledge (the
// threat model of AttackMLLMLoRA). gtheta is over layout l. vt, when not
// nil, is the visual-token transform between the vision encoder and the
// projector (Dual-Priv's token pruning and fusion): the gradient with
// respect to x flows through the tokens it keeps and fuses.
func MLLMGrad(m *nn.TinyMLLM, l *nn.Layout, s nn.Sequence, vt nn.VisualTransform) GradFunc {
	var rows, targets []int
	return func(x, gtheta, gx []float32) (float64, error) {
		t := gradTape(l, gtheta)
		vis, in := m.EncodeImage(t, x, 0, gx != nil, nil, vt)
		seq := s
		seq.Images = [][]float32{x}
		hid, pos, err := m.Forward(t, &seq, []*nn.Node{vis.Tokens}, nil, nil)
		if err != nil {
			return 0, err
		}
		loss, err := answerLoss(t, m, hid, pos, &s, &rows, &targets)
		if err != nil {
			return 0, err
		}
		t.Backward(loss)
		if gx != nil {
			clear(gx)
			if in.Grad != nil {
				copy(gx, in.Grad)
			}
		}
		return float64(loss.Value.Data[0]), nil
	}
}

// gradTape returns a tape that adds the parameter gradient over l into
// gtheta, cleared first, or, when gtheta is nil, one that forms none (a
// GradFunc asked for the input gradient or the loss alone).
// answerLoss is the mean cross-entropy of s's loss tokens, each predicted
// from the hidden state before it (hid at the positions pos that Forward
// returns). rows and targets keep the logit rows and tokens between calls
// of one gradient function: they depend on s alone.
func answerLoss(t *nn.Tape, m *nn.TinyMLLM, hid *nn.Node, pos []int, s *nn.Sequence, rows, targets *[]int) (*nn.Node, error) {
	if *rows == nil {
		for i, on := range s.Loss {
			if on {
				*rows = append(*rows, pos[i]-1)
				*targets = append(*targets, s.Tokens[i])
			}
		}
		if len(*rows) == 0 {
			return nil, fmt.Errorf("gia: the sequence has no loss positions")
		}
	}
	return t.CrossEntropy(m.Logits(t, hid, slices.Clone(*rows)), *targets, nil), nil
}

func gradTape(l *nn.Layout, gtheta []float32) *nn.Tape {
	if gtheta == nil {
		return nn.NewTape(nil, nil)
	}
	clear(gtheta)
	return nn.NewTape(l, gtheta)
}

// SumGrad returns the GradFunc of a batch: x is the concatenation of the
// batch's images, each of dim values, the loss is the sum Σᵢ Lᵢ(xᵢ; θ) of
// the examples' losses fs[i], its parameter gradient Σᵢ ∇_θ Lᵢ(xᵢ; θ) (the
// batch's update up to the factor 1/B, which the cosine distance ignores)
// and its input gradient the concatenation of the ∇_{xᵢ} Lᵢ(xᵢ; θ).
// GradientMatch over it matches a batch's update jointly in every image:
// ∇_θ of the sum is the candidate update, so its mixed derivative is the
// Hessian-vector product of every image at once.
func SumGrad(fs []GradFunc, dim int) GradFunc {
	var gi []float32
	return func(x, gtheta, gx []float32) (float64, error) {
		if len(x) != len(fs)*dim {
			return 0, fmt.Errorf("gia: batch input of %d values, want %d×%d", len(x), len(fs), dim)
		}
		if gtheta != nil {
			clear(gtheta)
			if gi == nil {
				gi = make([]float32, len(gtheta))
			}
		}
		var loss float64
		for i, f := range fs {
			var gt, gxi []float32
			if gtheta != nil {
				gt = gi
			}
			if gx != nil {
				gxi = gx[i*dim : (i+1)*dim]
			}
			v, err := f(x[i*dim:(i+1)*dim], gt, gxi)
			if err != nil {
				return 0, err
			}
			loss += v
			for j, g := range gt {
				gtheta[j] += g
			}
		}
		return loss, nil
	}
}
