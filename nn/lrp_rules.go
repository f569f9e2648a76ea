// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// The propagation rules of layer-wise relevance propagation (LRP) on dense
// float64 row-major matrices, the building blocks of TinyMLLM.Relevance.
//
// References:
//   - S. Bach et al., On pixel-wise explanations for non-linear classifier
//     decisions by layer-wise relevance propagation, PLoS ONE 2015 (the
//     α-β rule, conservation).
//   - H. Chefer, S. Gur, L. Wolf, Transformer interpretability beyond
//     attention visualization, CVPR 2021 (relevance through transformers:
//     pass-through for activations, normalisation and softmax; the
//     normalised split of pairwise operations).
//   - N. Wang et al., Balancing differential privacy and utility: a
//     relevance-based adaptive private fine-tuning framework for language
//     models, IEEE TIFS 2024 (Rap-FT): Eqs. 4, 6, 8, 11, 12, 13, 16.

// lrpEps is the stabiliser of every division: a denominator within lrpEps
// of zero gives a zero share (Chefer et al.'s safe_divide).
const lrpEps = 1e-9

// safeDiv returns a/b, or 0 when |b| < lrpEps.
func safeDiv(a, b float64) float64 {
	if math.Abs(b) < lrpEps {
		return 0
	}
	return a / b
}

// lrpAlphaBeta propagates the relevance r ([rows, out]) of a linear map
// z = x·Wᵀ + b (x [rows, in], w [out, in], b [out] or nil) to its input by
// the α-β rule with α + β = 1 (Rap-FT Eq. 4):
//
//	R_j = Σ_i R_i (α z⁺_ji / Z⁺_i + (1−α) z⁻_ji / Z⁻_i),  z_ji = x_j w_ij,
//
// where Z^± = Σ_j z^±_ji + b^±_i. When all of an output's contributions
// have one sign (Z⁺ or Z⁻ is zero), that side takes all of R_i (see
// alphaFor), so with zero biases Σ_j R_j = Σ_i R_i (Eq. 5's
// conservation, which the paper states for α + β = 1).
func lrpAlphaBeta(x []float64, rows, in int, w []float64, out int, b, r []float64, alpha float64) []float64 {
	rx := make([]float64, rows*in)
	for t := range rows {
		xt := x[t*in : (t+1)*in]
		rt := rx[t*in : (t+1)*in]
		for i := range out {
			ri := r[t*out+i]
			if ri == 0 {
				continue
			}
			zp, zn := 0.0, 0.0
			if b != nil {
				zp, zn = max(b[i], 0), min(b[i], 0)
			}
			alphaBetaOutput(xt, w[i*in:(i+1)*in], zp, zn, ri, alpha, rt)
		}
	}
	return rx
}

// alphaBetaOutput adds to rt (len(xt)) the α-β shares of the relevance ri
// of one output z = Σ_j x_j w_j + b, whose bias gives the totals their
// starting values zp = b⁺ and zn = b⁻ (lrpAlphaBeta's rule for one output
// i).
func alphaBetaOutput(xt, wi []float64, zp, zn, ri, alpha float64, rt []float64) {
	// Branch-free: the signs of x·w are random, so branches on them
	// mispredict; adding the zero of the other side leaves both sums,
	// and every share, exactly as with branches.
	wi = wi[:len(xt)]
	for j, xj := range xt {
		z := xj * wi[j]
		zp += max(z, 0)
		zn += min(z, 0)
	}
	a := alphaFor(alpha, zp, zn)
	cp, cn := safeDiv(a*ri, zp), safeDiv((1-a)*ri, zn)
	for j, xj := range xt {
		z := xj * wi[j]
		rt[j] += float64(max(z, 0)*cp) + float64(min(z, 0)*cn)
	}
}

// alphaFor returns the weight of the positive side of the α-β rule for an
// output with positive and negative totals zp and zn: α, or 1 (0) when
// there is no negative (positive) side, so the relevance is not lost.
func alphaFor(alpha, zp, zn float64) float64 {
	switch {
	case math.Abs(zn) < lrpEps && math.Abs(zp) >= lrpEps:
		return 1
	case math.Abs(zp) < lrpEps && math.Abs(zn) >= lrpEps:
		return 0
	}
	return alpha
}

// lrpParamRelevance returns the relevance of the weights and the bias of a
// linear map z = x·Wᵀ + b by the z-rule with the roles of input and weight
// swapped (Rap-FT Eqs. 13 and 16), summed over the rows (token
// positions), which share the weights:
//
//	R[W_ij] = Σ_t W_ij x_tj R_ti / z_ti,  R[b_i] = Σ_t b_i R_ti / z_ti.
//
// z is the map's output ([rows, out]); b may be nil (rb is then nil).
func lrpParamRelevance(x []float64, rows, in int, w []float64, out int, b, z, r []float64) (rw, rb []float64) {
	rw = make([]float64, out*in)
	if b != nil {
		rb = make([]float64, out)
	}
	for t := range rows {
		xt := x[t*in : (t+1)*in]
		for i := range out {
			c := safeDiv(r[t*out+i], z[t*out+i])
			if c == 0 {
				continue
			}
			wi, ri := w[i*in:(i+1)*in], rw[i*in:(i+1)*in]
			for j, xj := range xt {
				ri[j] += float64(wi[j] * xj * c)
			}
			if b != nil {
				rb[i] += float64(b[i] * c)
			}
		}
	}
	return rw, rb
}

// lrpNormalise rescales the relevances rx and ry of the two operands of a
// pairwise operation so that they share the relevance total of its output
// in proportion to their absolute sums (Rap-FT Eq. 11):
//
//	R̄_X = R_X · |ΣR_X| / (|ΣR_X| + |ΣR_Y|) · total / ΣR_X,
//
// and the same for Y, so that ΣR̄_X + ΣR̄_Y = total. An operand whose sum
// is zero keeps nothing.
func lrpNormalise(rx, ry []float64, total float64) {
	sx, sy := sum64(rx), sum64(ry)
	den := math.Abs(sx) + math.Abs(sy)
	scale := func(r []float64, s float64) {
		f := safeDiv(math.Abs(s), den) * safeDiv(total, s)
		for i := range r {
			r[i] *= f
		}
	}
	scale(rx, sx)
	scale(ry, sy)
}

// lrpSplitAdd splits the relevance r of z = x + y (element-wise) between x
// and y by gradient × input (Rap-FT Eq. 8: R_X = x·R/z) and normalises the
// shares (Eq. 11).
func lrpSplitAdd(x, y, r []float64) (rx, ry []float64) {
	rx, ry = make([]float64, len(r)), make([]float64, len(r))
	for i, ri := range r {
		c := safeDiv(ri, x[i]+y[i])
		rx[i], ry[i] = x[i]*c, y[i]*c
	}
	lrpNormalise(rx, ry, sum64(r))
	return rx, ry
}

// lrpMatMul splits the relevance r ([n, m]) of the product c = a·b (a [n, k],
// b [k, m], with an optional scale s: c = s·a·b) between a and b by
// gradient × input (Rap-FT Eq. 8):
//
//	R_a[i,l] = Σ_j s a_il b_lj R_ij / c_ij,  R_b[l,j] = Σ_i s a_il b_lj R_ij / c_ij,
//
// then normalises the shares (Eq. 11). A causal attention's masked
// probabilities are zero, so they take no relevance.
func lrpMatMul(a []float64, n, k int, b []float64, m int, s float64, r []float64) (ra, rb []float64) {
	ra, rb = make([]float64, n*k), make([]float64, k*m)
	for i := range n {
		for j := range m {
			ri := r[i*m+j]
			if ri == 0 {
				continue
			}
			c := 0.0
			for l := range k {
				c += float64(s * a[i*k+l] * b[l*m+j])
			}
			f := safeDiv(ri, c)
			if f == 0 {
				continue
			}
			for l := range k {
				v := float64(s * a[i*k+l] * b[l*m+j] * f)
				ra[i*k+l] += v
				rb[l*m+j] += v
			}
		}
	}
	lrpNormalise(ra, rb, sum64(r))
	return ra, rb
}

func sum64(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// add64 adds y to x element-wise (the merge of Rap-FT Eq. 12: the relevance
// of a tensor that fans out is the sum of its branches' relevances).
func add64(x, y []float64) {
	for i := range x {
		x[i] += y[i]
	}
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
