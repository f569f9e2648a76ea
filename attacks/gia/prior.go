// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/nn"
)

// An EmbeddingPrior is a linear-Gaussian image prior fitted to public
// images, restricted to what a vision encoder's update can reveal.
//
// A ViT sees an image x only through its patch embeddings E(x) = A·x +
// bias (A: Patchify then the patch embedding's weight). Every image x′
// with A·x′ = A·x gives the same visual tokens, hence the same gradient
// of every tensor behind the patch embedding (the frozen encoder, the
// projector, the language model's LoRA factors): a gradient-matching
// attack can at best recover A·x. Given A·x, the estimate that minimises
// the expected squared error under a Gaussian model of the images with
// the public mean μ and covariance Σ is the conditional mean
//
//	x̂ = μ + ΣAᵀ(AΣAᵀ)⁻¹A(x − μ).
//
// The prior parameterises these estimates by whitened coordinates
// w ∈ ℝʳ (r = rows of A): x(w) = μ + B·w with B = ΣAᵀL⁻ᵀ, where LLᵀ =
// AΣAᵀ, so w ~ N(0, I) under the model and w* = L⁻¹A(x − μ) gives x̂.
// Searching over w instead of the pixels is a linear generative prior, in
// the spirit of the generative-model priors of Jeon et al. (NeurIPS 2021).
// Images are one channel repeated over the channels (grayscale data).
type EmbeddingPrior struct {
	mean []float32   // μ, C×H×W
	b    [][]float64 // B, one row of r values per pixel
	a    [][]float64 // Aᵀ, one row of r values per pixel
	l    [][]float64 // L, lower triangular
	c    int         // channels
	h, w int         // image height and width
	pub  [][]float32 // the public images it was fitted to (not copied)
}

// NewEmbeddingPrior returns the prior of encoder v fitted to the public
// images pub (C×H×W, channels equal), with a ridge of 10⁻⁶ on AΣAᵀ. It
// returns an error for fewer than two images or images of the wrong size.
func NewEmbeddingPrior(v *nn.VisionEncoder, pub [][]float32) (*EmbeddingPrior, error) {
	hw := v.ImageSize * v.ImageSize
	if len(pub) < 2 {
		return nil, fmt.Errorf("gia: a prior needs at least 2 public images, got %d", len(pub))
	}
	for _, x := range pub {
		if len(x) != v.Channels*hw {
			return nil, fmt.Errorf("gia: public image of %d values, want %d", len(x), v.Channels*hw)
		}
	}
	p := &EmbeddingPrior{mean: MeanImage(pub), a: embeddingMatrix(v), c: v.Channels, h: v.ImageSize, w: v.ImageSize, pub: pub}
	r, n := len(p.a[0]), len(pub)
	xa := make([][]float64, n) // Aᵀ(x_q − μ)
	for q, img := range pub {
		xa[q] = p.project(img)
	}
	cov := make([][]float64, r) // AΣAᵀ, the lower triangle summed image by image, then mirrored
	for i := range r {
		cov[i] = make([]float64, r)
	}
	for _, y := range xa {
		for i, yi := range y {
			row := cov[i][:i+1]
			for k, yk := range y[:i+1] {
				row[k] += float64(yi * yk)
			}
		}
	}
	for i := range r {
		for k := range i + 1 {
			cov[i][k] /= float64(n)
			cov[k][i] = cov[i][k]
		}
		cov[i][i] += 1e-6
	}
	p.l = cholesky(cov)
	sa := make([][]float64, hw) // ΣAᵀ, row j = Σ_q (x_q − μ)_j (A(x_q − μ))ᵀ / n
	for j := range hw {
		sa[j] = make([]float64, r)
		for q, img := range pub {
			d := (float64(img[j]) - float64(p.mean[j])) / float64(n)
			for i := range r {
				sa[j][i] += float64(d * xa[q][i])
			}
		}
	}
	p.b = make([][]float64, hw)
	for j := range hw {
		p.b[j] = forwardSolve(p.l, sa[j]) // B Lᵀ = ΣAᵀ: L b_jᵀ = (ΣAᵀ)_jᵀ
	}
	return p, nil
}

// Dim returns r, the number of coordinates w.
func (p *EmbeddingPrior) Dim() int { return len(p.l) }

// project returns A(x − μ) for an image x (its first channel).
func (p *EmbeddingPrior) project(x []float32) []float64 {
	out := make([]float64, len(p.a[0]))
	for j, row := range p.a {
		d := float64(x[j]) - float64(p.mean[j])
		for i, v := range row {
			out[i] += float64(d * v)
		}
	}
	return out
}

// Coords returns w* = L⁻¹A(x − μ), the coordinates of the conditional
// mean of x given its patch embeddings.
func (p *EmbeddingPrior) Coords(x []float32) []float64 {
	return forwardSolve(p.l, p.project(x))
}

// Image writes x(w) = μ + B·w, not clamped, to x (C×H×W) and returns it.
func (p *EmbeddingPrior) Image(x []float32, w []float64) []float32 {
	hw := len(p.b)
	for j, row := range p.b {
		var s float64
		for i, v := range row {
			s += float64(v * w[i])
		}
		for ch := range p.c {
			x[ch*hw+j] = float32(float64(p.mean[ch*hw+j]) + s)
		}
	}
	return x
}

// pullback writes to gw the gradient with respect to w of a function of
// x(w) whose gradient with respect to x is gx: Bᵀ summed over channels.
func (p *EmbeddingPrior) pullback(gw []float64, gx []float32) {
	hw := len(p.b)
	clear(gw)
	for j, row := range p.b {
		var g float64
		for ch := range p.c {
			g += float64(gx[ch*hw+j])
		}
		for i, v := range row {
			gw[i] += float64(v * g)
		}
	}
}

// InvertPrior is Invert over the prior's coordinates: it minimises
// obj(x(w)) + TV·TV(x(w)) (+ opt.Gauss·‖w‖²/(2r)) by Adam (opt.LR,
// opt.Iterations) from w = 0 (the mean image) for the first restart and from w ~ N(0, I) for the
// others, keeps the restart with the lowest objective, and returns its
// image clamped to [0, 1]. opt.Gray and opt.Init are ignored (the prior
// is one channel, its start the mean). With opt.Scout = k > 0 (one image
// only), obj is first evaluated at the conditional means of the prior's
// first k public images (the attacker's own data), and the restarts start
// from the best of them in order instead (then from draws when there are
// more restarts than images).
func InvertPrior(obj Objective, p *EmbeddingPrior, opt *InvertOptions) ([]float32, float64, error) {
	imgs, v, err := InvertPriorBatch(obj, p, 1, opt)
	if err != nil {
		return nil, 0, err
	}
	return imgs[0], v, nil
}

// InvertPriorBatch is InvertPrior for b images at once: obj takes their
// concatenation (b·C·H·W values, as SumGrad's objective does), each image
// has its own coordinates (b·r in all) and total variation, and the
// images are returned in obj's order.
func InvertPriorBatch(obj Objective, p *EmbeddingPrior, b int, opt *InvertOptions) ([][]float32, float64, error) {
	if b < 1 {
		return nil, 0, fmt.Errorf("gia: batch of %d images", b)
	}
	o := opt.withDefaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x7072))
	starts, err := p.scout(obj, b, o.Scout)
	if err != nil {
		return nil, 0, err
	}
	var best []float64
	bestObj := math.Inf(1)
	for r := range o.Restarts {
		w := make([]float64, b*p.Dim())
		switch {
		case r < len(starts):
			copy(w, starts[r])
		case r > 0:
			for i := range w {
				w[i] = rng.NormFloat64()
			}
		}
		v, err := adamPrior(w, p, b, obj, o)
		if err != nil {
			return nil, 0, err
		}
		if v < bestObj || best == nil {
			best, bestObj = w, v
		}
	}
	r := p.Dim()
	out := make([][]float32, b)
	for i := range out {
		out[i] = clamp01(p.Image(make([]float32, len(p.mean)), best[i*r:(i+1)*r]))
	}
	return out, bestObj, nil
}

// scout returns the coordinates of the first k public images (their
// conditional means, Coords), k at most the number of public images, in
// increasing order of obj (ties in the images' order), for b = 1; nil for
// k = 0 or b > 1 (the summed update of a batch does not rank single
// images).
func (p *EmbeddingPrior) scout(obj Objective, b, k int) ([][]float64, error) {
	if k <= 0 || b != 1 {
		return nil, nil
	}
	k = min(k, len(p.pub))
	type cand struct {
		w []float64
		v float64
	}
	cs := make([]cand, k)
	x, gx := make([]float32, len(p.mean)), make([]float32, len(p.mean))
	for q := range k {
		w := p.Coords(p.pub[q])
		v, err := obj(p.Image(x, w), gx)
		if err != nil {
			return nil, err
		}
		cs[q] = cand{w, v}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.v, b.v) })
	out := make([][]float64, k)
	for i, c := range cs {
		out[i] = c.w
	}
	return out, nil
}

// adamPrior minimises obj(x(w)) + TV (+ the Gaussian term, opt.Gauss)
// over the coordinates w of b images
// in place by Adam (Kingma & Ba 2015, Algorithm 1) and returns the
// objective at the final w.
func adamPrior(w []float64, p *EmbeddingPrior, b int, obj Objective, o InvertOptions) (float64, error) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	n, r := len(p.mean), p.Dim()
	x, gx := make([]float32, b*n), make([]float32, b*n)
	m, v, g := make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
	eval := func() (float64, error) {
		for i := range b {
			p.Image(x[i*n:(i+1)*n], w[i*r:(i+1)*r])
		}
		val, err := obj(x, gx)
		if err != nil {
			return 0, err
		}
		for i := range b {
			xi, gi := x[i*n:(i+1)*n], gx[i*n:(i+1)*n]
			val += float64(o.TV * totalVariation(xi, p.c, p.h, p.w, o.TV, gi))
			p.pullback(g[i*r:(i+1)*r], gi)
		}
		if o.Gauss > 0 {
			for i, wi := range w {
				val += o.Gauss * wi * wi / float64(2*r)
				g[i] += o.Gauss * wi / float64(r)
			}
		}
		return val, nil
	}
	for it := 1; it <= o.Iterations; it++ {
		if _, err := eval(); err != nil {
			return 0, err
		}
		c1, c2 := 1-math.Pow(b1, float64(it)), 1-math.Pow(b2, float64(it))
		lr := o.lr(it, o.Iterations)
		for i, d := range g {
			m[i] = float64(b1*m[i]) + float64((1-b1)*d)
			v[i] = float64(b2*v[i]) + float64((1-b2)*d*d)
			w[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
		}
	}
	return eval()
}

// embeddingMatrix returns Aᵀ for the linear map A from a one-channel image
// (repeated over v's channels) to v's patch embeddings without bias: row j
// holds the embedding values that pixel j's unit image produces.
func embeddingMatrix(v *nn.VisionEncoder) [][]float64 {
	hw := v.ImageSize * v.ImageSize
	img := make([]float32, v.Channels*hw)
	var rows [][]float64
	for j := range hw {
		for ch := range v.Channels {
			img[ch*hw+j] = 1
		}
		t := nn.NewTape(nil, nil)
		in := t.Input(nn.Tensor{Shape: []int{v.Channels, v.ImageSize, v.ImageSize}, Data: img}, false)
		y := t.Affine(t.Patchify(in, v.Patch), t.Param(v.PatchEmbed.W), nil).Value.Data
		row := make([]float64, len(y))
		for i, f := range y {
			row[i] = float64(f)
		}
		rows = append(rows, row)
		for ch := range v.Channels {
			img[ch*hw+j] = 0
		}
	}
	return rows
}

// cholesky returns the lower-triangular L with LLᵀ = a for a symmetric
// positive-definite a (not modified).
func cholesky(a [][]float64) [][]float64 {
	n := len(a)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, n)
	}
	for j := range n {
		s := a[j][j]
		for k := range j {
			s -= float64(l[j][k] * l[j][k])
		}
		l[j][j] = math.Sqrt(math.Max(s, 1e-300))
		for i := j + 1; i < n; i++ {
			s := a[i][j]
			for k := range j {
				s -= float64(l[i][k] * l[j][k])
			}
			l[i][j] = s / l[j][j]
		}
	}
	return l
}

// forwardSolve returns z with L·z = y for a lower-triangular L.
func forwardSolve(l [][]float64, y []float64) []float64 {
	z := make([]float64, len(y))
	for i := range y {
		s := y[i]
		for k := range i {
			s -= float64(l[i][k] * z[k])
		}
		z[i] = s / l[i][i]
	}
	return z
}
