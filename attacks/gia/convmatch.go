// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"

	"github.com/repro-dp/repro/nn"
)

// ConvMatch is the gradient-matching objective of Inverting Gradients
// (Geiping et al. 2020, Eq. 4: cosine distance between the released and
// the candidate's gradient, plus total variation) on the released
// gradients of the fusion classifier's image encoder, for a batch of one:
// the weights and biases of every convolution and the weight of image.proj.
//
// The candidate's gradients need the gradient of image.proj's output, δ,
// which depends on the whole model; ConvMatch takes δ from the release
// (image.proj's bias gradient is δ itself, exact for a batch of one, see
// LinearInput) and holds it fixed. Every encoder gradient is then a
// function of the image x alone:
//
//	∂L/∂Wᵢ = Σ_pos δᵢ(pos) ⊗ patch_{hᵢ₋₁}(pos),  ∂L/∂W_proj = δ·h_kᵀ,
//
// where hᵢ₋₁ is the input of convolution i (h₋₁ = x) and δᵢ the gradient
// of its pre-activation, obtained from δ by one backward pass through the
// max poolings, ReLUs and convolutions. δᵢ depends on x only through the
// ReLU and max-pooling patterns, which are piecewise constant, so almost
// everywhere the gradient of the objective with respect to x is exact with
// δᵢ held fixed: for the term of convolution i it is the input gradient of
// the convolution of hᵢ₋₁ with the filter G = ∂D/∂Wᵢ seeded with δᵢ (a
// convolution's weight gradient is bilinear in its input and its output
// gradient), back-propagated from hᵢ₋₁ to x. This is the double backward
// of conv, ReLU and max pooling, computed with nn's first-order tape; the
// text encoder and the head are not differentiated twice (their released
// gradients are not matched).
//
// With L2 set the distance is DLG's (Zhu et al. 2019, Eq. 2), the squared
// ℓ₂ distance, taken relative to the released gradients' squared norm so
// its scale does not depend on the clip norm.
type ConvMatch struct {
	// L2 selects DLG's ℓ₂ distance instead of the cosine distance.
	L2 bool

	m     *nn.Fusion
	delta []float32   // δ, image.proj's output gradient
	want  [][]float32 // released blocks: conv W, conv B for each conv, then proj W
}

// NewConvMatch returns the objective for the released update g over
// layout l of m, or an error if the update lacks one of the blocks it
// matches (a frozen or pruned tensor) or δ is zero.
func NewConvMatch(m *nn.Fusion, l *nn.Layout, g []float32) (*ConvMatch, error) {
	if m.ImgFC != nil {
		return nil, fmt.Errorf("gia: gradient matching on the convolutions: the model's image encoder is an mlp")
	}
	cm := &ConvMatch{m: m, delta: block(l, g, m.ImgProj.B)}
	ps := append(convParams(m), m.ImgProj.W)
	for _, p := range ps {
		b := block(l, g, p)
		if b == nil {
			return nil, fmt.Errorf("gia: gradient matching needs the released gradient of %s", p.Name)
		}
		cm.want = append(cm.want, b)
	}
	if cm.delta == nil || norm(cm.delta) == 0 {
		return nil, fmt.Errorf("gia: gradient matching needs a non-zero released gradient of %s", m.ImgProj.B.Name)
	}
	return cm, nil
}

func convParams(m *nn.Fusion) []*nn.Param {
	var ps []*nn.Param
	for _, c := range m.Convs {
		ps = append(ps, c.W, c.B)
	}
	return ps
}

// encode runs the convolutional encoder on x on tape t and returns the
// pre-activations aᵢ, the inputs hᵢ₋₁ of each convolution and the output.
func (cm *ConvMatch) encode(t *nn.Tape, x *nn.Node) (pre, in []*nn.Node, out *nn.Node) {
	h := x
	for _, cv := range cm.m.Convs {
		in = append(in, h)
		a := cv.Forward(t, h)
		pre = append(pre, a)
		h = t.MaxPool(t.ReLU(a), 2)
	}
	return pre, in, h
}

// Gradients returns the candidate's encoder gradients for image x (the
// blocks in the order of the release: conv W, conv B, ..., proj W) and
// the gradients δᵢ of the convolutions' pre-activations.
func (cm *ConvMatch) Gradients(x []float32) (blocks, deltas [][]float32) {
	deltas = cm.deltas(x)
	return cm.gradientsWith(x, deltas), deltas
}

// image wraps x as a tape input.
func (cm *ConvMatch) image(t *nn.Tape, x []float32, needGrad bool) *nn.Node {
	c := cm.m.Config
	return t.Input(nn.Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: x}, needGrad)
}

// deltas returns the gradients δᵢ of the convolutions' pre-activations
// for image x, back-propagated from image.proj's output gradient δ.
func (cm *ConvMatch) deltas(x []float32) [][]float32 {
	t := nn.NewTape(nil, nil)
	pre, _, out := cm.encode(t, cm.image(t, x, true))
	t.BackwardFrom(out, cm.projSeed(cm.delta, len(out.Value.Data)))
	ds := make([][]float32, len(pre))
	for i, a := range pre {
		ds[i] = a.Grad
		if ds[i] == nil {
			ds[i] = make([]float32, len(a.Value.Data))
		}
	}
	return ds
}

// projSeed returns Mᵀv for image.proj's weight M and a vector v of its
// output size (the weight [out, in] row-major).
func (cm *ConvMatch) projSeed(v []float32, in int) []float32 {
	w := cm.m.ImgProj.W
	if w.Shape[1] != in {
		panic("gia: image.proj does not fit the encoder")
	}
	seed := make([]float32, in)
	for i, d := range v {
		row := w.Data[i*in : (i+1)*in]
		for j, wij := range row {
			seed[j] += float32(wij * d)
		}
	}
	return seed
}

// gradientsWith returns the encoder's gradients for image x with the
// pre-activation gradients δᵢ given: each convolution's from its own
// backward pass seeded at its pre-activation, and image.proj's weight
// gradient δ·h_kᵀ.
func (cm *ConvMatch) gradientsWith(x []float32, deltas [][]float32) [][]float32 {
	var blocks [][]float32
	var hk []float32
	for i, cv := range cm.m.Convs {
		l := nn.NewLayout([]*nn.Param{cv.W, cv.B})
		g := make([]float32, l.Size)
		t := nn.NewTape(l, g)
		pre, _, out := cm.encode(t, cm.image(t, x, false))
		hk = out.Value.Data
		t.BackwardFrom(pre[i], deltas[i])
		blocks = append(blocks, l.Block(g, 0), l.Block(g, 1))
	}
	proj := make([]float32, len(cm.delta)*len(hk))
	for i, d := range cm.delta {
		for j, h := range hk {
			proj[i*len(hk)+j] = d * h
		}
	}
	return append(blocks, proj)
}

// Objective returns the distance, 1 − cos or with L2 ‖g − g*‖²/‖g*‖², of
// the candidate gradients g for image x from the released gradients g*,
// and writes its gradient with respect to x to grad (len(x)).
func (cm *ConvMatch) Objective(x, grad []float32) float64 {
	return cm.objectiveWith(x, cm.deltas(x), grad)
}

// objectiveWith is Objective with the pre-activation gradients δᵢ given,
// a smooth function of x whose gradient Objective's equals almost
// everywhere.
func (cm *ConvMatch) objectiveWith(x []float32, deltas [][]float32, grad []float32) float64 {
	got := cm.gradientsWith(x, deltas)
	flat, want := concat(got), concat(cm.want)
	dflat := make([]float32, len(flat))
	var dist float64
	if cm.L2 {
		dist = l2Grad(flat, want, dflat)
	} else {
		dist = 1 - cosineGrad(flat, want, dflat)
		for j := range dflat {
			dflat[j] = -dflat[j]
		}
	}
	// G, the gradient of the distance with respect to each candidate block.
	gs := make([][]float32, len(got))
	o := 0
	for i, b := range got {
		gs[i] = dflat[o : o+len(b)]
		o += len(b)
	}
	clear(grad)
	for i := range cm.m.Convs {
		cm.convTerm(x, i, gs[2*i], deltas[i], grad)
	}
	cm.projTerm(x, gs[len(gs)-1], grad)
	return dist
}

// convTerm adds to grad the gradient with respect to x of ⟨G, ∂L/∂Wᵢ⟩ with
// δᵢ fixed: the input gradient of Conv2d(hᵢ₋₁, G) seeded with δᵢ,
// back-propagated to x.
func (cm *ConvMatch) convTerm(x []float32, i int, gw, delta, grad []float32) {
	t := nn.NewTape(nil, nil)
	xn := cm.image(t, x, true)
	_, in, _ := cm.encode(t, xn)
	cv := cm.m.Convs[i]
	gn := t.Input(nn.Tensor{Shape: cv.W.Shape, Data: gw}, false)
	out := t.Conv2d(in[i], gn, nil, cv.Stride, cv.Pad)
	t.BackwardFrom(out, delta)
	if xn.Grad != nil {
		for j, v := range xn.Grad {
			grad[j] += v
		}
	}
}

// projTerm adds to grad the gradient with respect to x of ⟨G, δ·h_kᵀ⟩:
// the encoder's input gradient seeded with Gᵀδ.
func (cm *ConvMatch) projTerm(x, gp, grad []float32) {
	t := nn.NewTape(nil, nil)
	xn := cm.image(t, x, true)
	_, _, out := cm.encode(t, xn)
	in := len(out.Value.Data)
	seed := make([]float32, in) // Gᵀδ
	for i, d := range cm.delta {
		for j := range in {
			seed[j] += float32(gp[i*in+j] * d)
		}
	}
	t.BackwardFrom(out, seed)
	if xn.Grad != nil {
		for j, v := range xn.Grad {
			grad[j] += v
		}
	}
}

func concat(bs [][]float32) []float32 {
	var out []float32
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}
