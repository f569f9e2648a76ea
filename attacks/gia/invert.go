// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/repro-dp/repro/nn"
)

// InvertOptions configures Invert. A nil *InvertOptions means the
// defaults, those of Sec-MMFL's attack (Adam, learning rate 0.1, total
// variation weight 0.2) with fewer iterations, which suffice at these
// image sizes.
type InvertOptions struct {
	// Iterations per restart; default 500.
	Iterations int
	// Restarts is the number of random initialisations; the one with the
	// lowest final objective is kept (Geiping et al. 2020, §5). Default 2.
	Restarts int
	// LR is Adam's step size; default 0.1.
	LR float64
	// TV is the weight of the total-variation prior; default 0.2 (Sec-MMFL
	// and breaching's invertinggradients.yaml).
	TV float64
	// Seed seeds the initialisations.
	Seed uint64
	// L2 makes the attacks that build their objective from these options
	// (AttackFusion) match with DLG's ℓ₂ distance instead of Inverting
	// Gradients' cosine distance.
	L2 bool
	// Gray ties the channels of the image to one value per pixel (the
	// attacker's prior for grayscale data such as Fashion-MNIST, whose
	// images are stored with three equal channels).
	Gray bool
	// Init, when not nil, is the start of the first restart (C×H×W, for
	// example the public mean image, the attacker's data-independent
	// guess; with Gray its first channel); the other restarts start from
	// uniform noise. nil: every restart starts from noise.
	Init []float32
	// Decay divides Adam's step size by 10 after 3/8, 5/8 and 7/8 of the
	// iterations, the step schedule of Geiping et al. (2020, §5 and their
	// inversefed code): a constant step leaves Adam circling the minimum
	// at a distance set by the step.
	Decay bool
	// Gauss, for a search over an EmbeddingPrior's coordinates w (r per
	// image), adds Gauss·‖w‖²/(2r) per image: the Gaussian model's
	// negative log-density scaled by 1/r, so the minimum is a MAP estimate
	// that pulls what the update does not determine towards the public
	// mean. Ignored by the pixel search (Invert); 0: none.
	Gauss float64
	// Scout, for a search over an EmbeddingPrior's coordinates of one
	// image, is the number of public images whose conditional means are
	// tried as starts (InvertPriorBatch); 0: none.
	Scout int
	// Clip, for AttackMLLMLoRA on a batch of one, is the release's
	// per-example clip rule, applied to the candidate gradient
	// (GradientMatch.Clip); ignored elsewhere.
	Clip nn.ClipRule
}

// lr returns the step size of iteration it (1-based) of n.
func (o *InvertOptions) lr(it, n int) float64 {
	if !o.Decay {
		return o.LR
	}
	f := o.LR
	for _, q := range [...]int{3, 5, 7} {
		if 8*(it-1) >= q*n {
			f /= 10
		}
	}
	return f
}

func (o *InvertOptions) withDefaults() InvertOptions {
	var r InvertOptions
	if o != nil {
		r = *o
	}
	if r.Iterations == 0 {
		r.Iterations = 500
	}
	if r.Restarts == 0 {
		r.Restarts = 2
	}
	if r.LR == 0 {
		r.LR = 0.1
	}
	if r.TV == 0 {
		r.TV = 0.2
	}
	return r
}

// A FeatureMap is a differentiable map from an image node [C, H, W] to a
// feature node on the same tape (an encoder's first layers).
type FeatureMap func(t *nn.Tape, img *nn.Node) *nn.Node

// An Objective returns an attack objective at the image x and writes its
// gradient with respect to x to grad (len(x), overwritten).
type Objective func(x, grad []float32) (float64, error)

// Invert returns the image x ∈ [0, 1]^{C×H×W} that minimises
//
//	obj(x) + TV·TV(x)
//
// by Adam from uniform random starts (the first from InvertOptions.Init
// when set), projecting onto the box after each
// step (breaching's "boxed" Inverting Gradients), and keeps the restart
// with the lowest objective, as Geiping et al. (2020, §5) do. It returns
// the image and its objective, or obj's first error.
func Invert(obj Objective, c, h, w int, opt *InvertOptions) ([]float32, float64, error) {
	o := opt.withDefaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x6961))
	nu := c * h * w
	if o.Gray {
		nu = h * w
	}
	x, gx := make([]float32, c*h*w), make([]float32, c*h*w)
	full := func(u, gu []float32) (float64, error) {
		expand(x, u)
		v, err := obj(x, gx)
		if err != nil {
			return 0, err
		}
		v += float64(o.TV * totalVariation(x, c, h, w, o.TV, gx))
		reduce(gu, gx)
		return v, nil
	}
	var best []float32
	bestObj := math.Inf(1)
	for r := range o.Restarts {
		u := make([]float32, nu)
		for i := range u {
			u[i] = rng.Float32()
		}
		if r == 0 && o.Init != nil {
			if len(o.Init) != c*h*w {
				return nil, 0, fmt.Errorf("gia: initial image of %d values, want %d", len(o.Init), c*h*w)
			}
			copy(u, o.Init)
		}
		v, err := adamBox(u, o, full)
		if err != nil {
			return nil, 0, err
		}
		if v < bestObj || best == nil {
			best, bestObj = u, v
		}
	}
	out := make([]float32, c*h*w)
	expand(out, best)
	return out, bestObj, nil
}

// FeatureObjective returns the objective of matching f(x) to target, a
// recovered layer input (LinearInput): 1 − cos(f(x), target), or with l2
// the relative squared distance ‖f(x) − target‖²/‖target‖² (DLG's ℓ₂
// matching, Zhu et al. 2019). The gradient is f's vector-Jacobian product,
// one backward pass of nn's tape, seeded with the closed-form gradient of
// the distance.
func FeatureObjective(f FeatureMap, target []float32, c, h, w int, l2 bool) Objective {
	return func(x, grad []float32) (float64, error) {
		t := nn.NewTape(nil, nil)
		in := t.Input(nn.Tensor{Shape: []int{c, h, w}, Data: x}, true)
		out := f(t, in)
		z := out.Value.Data
		if len(z) != len(target) {
			return 0, fmt.Errorf("gia: features of %d values, target %d", len(z), len(target))
		}
		seed := make([]float32, len(z))
		var match float64
		if l2 {
			match = l2Grad(z, target, seed)
		} else {
			match = 1 - cosineGrad(z, target, seed) // seed = ∂cos/∂z
			for i := range seed {
				seed[i] = -seed[i]
			}
		}
		t.BackwardFrom(out, seed)
		clear(grad)
		if in.Grad != nil {
			copy(grad, in.Grad)
		}
		return match, nil
	}
}

// expand writes u to x, repeating it over x's channels when u is one
// channel.
func expand(x, u []float32) {
	for o := 0; o < len(x); o += len(u) {
		copy(x[o:], u)
	}
}

// reduce writes to gu the gradient with respect to u of a function of
// expand(x, u) whose gradient with respect to x is gx.
func reduce(gu, gx []float32) {
	copy(gu, gx)
	for o := len(gu); o < len(gx); o += len(gu) {
		for i := range gu {
			gu[i] += gx[o+i]
		}
	}
}

// adamBox minimises obj over the box [0, 1]ⁿ from x in place with Adam
// (Kingma & Ba 2015, Algorithm 1, β₁ = 0.9, β₂ = 0.999, ε = 1e-8) and
// projection, and returns the objective at the final x.
func adamBox(x []float32, o InvertOptions, obj func(x, grad []float32) (float64, error)) (float64, error) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	m, v := make([]float64, len(x)), make([]float64, len(x))
	g := make([]float32, len(x))
	for it := 1; it <= o.Iterations; it++ {
		if _, err := obj(x, g); err != nil {
			return 0, err
		}
		c1, c2 := 1-math.Pow(b1, float64(it)), 1-math.Pow(b2, float64(it))
		lr := o.lr(it, o.Iterations)
		for i, gi := range g {
			d := float64(gi)
			m[i] = float64(b1*m[i]) + float64((1-b1)*d)
			v[i] = float64(b2*v[i]) + float64((1-b2)*d*d)
			step := lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
			x[i] = float32(min(1, max(0, float64(x[i])-step)))
		}
	}
	return obj(x, g)
}

// cosineGrad returns cos(z, y) and writes ∂cos/∂z to dz:
// (y/(‖z‖‖y‖) − cos·z/‖z‖²). A zero vector has cosine 0 and gradient y/‖y‖
// scaled by 1/‖z‖ taken as 1.
func cosineGrad(z, y, dz []float32) float64 {
	var zz, yy, zy float64
	for i := range z {
		a, b := float64(z[i]), float64(y[i])
		zz += float64(a * a)
		yy += float64(b * b)
		zy += float64(a * b)
	}
	if zz == 0 || yy == 0 {
		clear(dz)
		return 0
	}
	nz, ny := math.Sqrt(zz), math.Sqrt(yy)
	cs := zy / (nz * ny)
	for i := range z {
		dz[i] = float32(float64(y[i])/(nz*ny) - cs*float64(z[i])/zz)
	}
	return cs
}

// l2Grad returns ‖z − y‖²/‖y‖² and writes its gradient with respect to z
// to dz (zero for a zero y).
func l2Grad(z, y, dz []float32) float64 {
	var yy, s float64
	for i := range y {
		yy += float64(float64(y[i]) * float64(y[i]))
	}
	if yy == 0 {
		clear(dz)
		return 0
	}
	for i := range z {
		d := float64(z[i]) - float64(y[i])
		s += float64(d * d)
		dz[i] = float32(2 * d / yy)
	}
	return s / yy
}

// totalVariation returns the anisotropic total variation of x, the mean
// absolute difference of vertical neighbours plus that of horizontal
// neighbours (breaching's total_variation), and adds weight times its
// subgradient (sign of each difference, 0 at 0) to grad.
func totalVariation(x []float32, c, h, w int, weight float64, grad []float32) float64 {
	nv, nh := float64(c*(h-1)*w), float64(c*h*(w-1))
	var sv, sh float64
	for ch := range c {
		for i := range h {
			for j := range w {
				p := (ch*h+i)*w + j
				if i+1 < h {
					d := float64(x[p+w] - x[p])
					sv += math.Abs(d)
					s := float32(weight * sign(d) / nv)
					grad[p+w] += s
					grad[p] -= s
				}
				if j+1 < w {
					d := float64(x[p+1] - x[p])
					sh += math.Abs(d)
					s := float32(weight * sign(d) / nh)
					grad[p+1] += s
					grad[p] -= s
				}
			}
		}
	}
	return sv/nv + sh/nh
}

func sign(d float64) float64 {
	switch {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}

// FusionFeatures returns the FeatureMap of m's convolutional image
// encoder: each Conv2d, ReLU and 2×2 max pooling, the input of the
// image.proj layer (flattened in the same order as nn.Fusion.LogitsFrom).
func FusionFeatures(m *nn.Fusion) FeatureMap {
	return func(t *nn.Tape, x *nn.Node) *nn.Node {
		for _, cv := range m.Convs {
			x = t.MaxPool(t.ReLU(cv.Forward(t, x)), 2)
		}
		return x
	}
}
