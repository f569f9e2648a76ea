// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/repro-dp/repro/nn"
)

// LinearInput returns the input x of a fully connected layer y = Wx + b
// from the released gradients gw (W's, [out, in] row-major) and gb (b's,
// [out]) of a batch of one. Back-propagation gives gw = δxᵀ and gb = δ for
// the layer's output gradient δ, so every row i with δᵢ ≠ 0 gives
// x = gwᵢ/gbᵢ (Phong et al. 2017, §3; Geiping et al. 2020, Prop. 4.1);
// LinearInput combines the rows by least squares, x = Σᵢ gbᵢ·gwᵢ / Σᵢ gbᵢ²,
// which is exact for a batch of one, unchanged by clipping (a common
// factor of gw and gb) and, for a batch of B, a δ-weighted mixture of the
// B inputs. It returns an error if the shapes do not fit or gb is zero.
func LinearInput(gw, gb []float32) ([]float32, error) {
	out := len(gb)
	if out == 0 || len(gw)%out != 0 {
		return nil, fmt.Errorf("gia: linear layer gradients of %d and %d values do not fit", len(gw), len(gb))
	}
	in := len(gw) / out
	x := make([]float64, in)
	var d float64
	for i, bi := range gb {
		b := float64(bi)
		d += float64(b * b)
		row := gw[i*in : (i+1)*in]
		for j, w := range row {
			x[j] += float64(b * float64(w))
		}
	}
	if d == 0 {
		return nil, fmt.Errorf("gia: zero bias gradient: the layer's input cannot be recovered")
	}
	res := make([]float32, in)
	for j := range x {
		res[j] = float32(x[j] / d)
	}
	return res, nil
}

// PatchRecovery returns the image of a batch of one from the released
// gradients of a ViT encoder's patch embedding (weight and bias) and its
// learned position embedding, in closed form (Lu et al. 2022, APRIL,
// §3.2). The encoder's input is [CLS; W·x_p + b] + Pos, so the gradient of
// Pos's row p+1 is δ_p, the gradient of patch p's embedding, and the
// patch embedding's weight gradient is G = Σ_p δ_p x_pᵀ = Δᵀ X with Δ the
// n×width matrix of the δ_p and X the n×(C·P·P) patches. When Δ has rank
// n (n ≤ width) X = (ΔΔᵀ)⁻¹ΔG exactly; clipping scales Δ and G alike and
// changes nothing. PatchRecovery returns an error if a tensor it needs is
// not in the release (a frozen encoder, or a pruned block) or ΔΔᵀ is
// singular.
func PatchRecovery(v *nn.VisionEncoder, l *nn.Layout, g []float32) ([]float32, error) {
	gw, gpos := block(l, g, v.PatchEmbed.W), block(l, g, v.Pos)
	if gw == nil || gpos == nil {
		return nil, fmt.Errorf("gia: patch recovery needs the released gradients of %s and %s", v.PatchEmbed.W.Name, v.Pos.Name)
	}
	width, k := v.PatchEmbed.W.Shape[0], v.PatchEmbed.W.Shape[1]
	n := v.Pos.Shape[0] - 1
	delta := mat.NewDense(n, width, nil)
	for p := range n {
		for j := range width {
			delta.Set(p, j, float64(gpos[(p+1)*width+j]))
		}
	}
	G := mat.NewDense(width, k, nil)
	for i := range width {
		for j := range k {
			G.Set(i, j, float64(gw[i*k+j]))
		}
	}
	var gram, rhs, x mat.Dense
	gram.Mul(delta, delta.T())
	rhs.Mul(delta, G)
	var chol mat.Cholesky
	if !chol.Factorize(mat.NewSymDense(n, gram.RawMatrix().Data)) {
		return nil, fmt.Errorf("gia: patch recovery: the position-embedding gradients of the %d patches are linearly dependent", n)
	}
	if err := chol.SolveTo(&x, &rhs); err != nil {
		return nil, fmt.Errorf("gia: patch recovery: %w", err)
	}
	return unpatchify(&x, v.Channels, v.ImageSize, v.Patch), nil
}

// unpatchify inverts nn.Tape.Patchify: row a·nw+b of x holds patch (a, b)
// in channel, row, column order.
func unpatchify(x *mat.Dense, c, side, p int) []float32 {
	nw := side / p
	img := make([]float32, c*side*side)
	for a := range nw {
		for b := range nw {
			for ch := range c {
				for i := range p {
					for j := range p {
						img[(ch*side+a*p+i)*side+b*p+j] = float32(x.At(a*nw+b, (ch*p+i)*p+j))
					}
				}
			}
		}
	}
	return img
}
