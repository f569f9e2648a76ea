// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// Conv2d applies a 2-D convolution to x of shape [C, H, W] (channel-major)
// with weight w of shape [F, C, k, k] and bias b of shape [F] (b may be nil),
// stride s and zero padding pad. The result has shape [F, H', W'] with
// H' = (H + 2·pad − k)/s + 1. It is computed as an im2col product, so every
// output filter is one row of w.
func (t *Tape) Conv2d(x, w, b *Node, stride, pad int) *Node {
	if len(x.Value.Shape) != 3 || len(w.Value.Shape) != 4 {
		panic(errShape)
	}
	C, H, W := x.Value.Shape[0], x.Value.Shape[1], x.Value.Shape[2]
	F, k := w.Value.Shape[0], w.Value.Shape[2]
	if w.Value.Shape[1] != C || w.Value.Shape[3] != k || stride <= 0 {
		panic(errShape)
	}
	Ho, Wo := (H+2*pad-k)/stride+1, (W+2*pad-k)/stride+1
	P, K := Ho*Wo, C*k*k
	// cols[(c,ki,kj), (oi,oj)]: the patch matrix, K×P.
	cols := t.floats(K * P)
	t.bytes += int64(4 * len(cols))
	xd := x.Value.Data
	for c := 0; c < C; c++ {
		for ki := 0; ki < k; ki++ {
			for kj := 0; kj < k; kj++ {
				row := cols[((c*k+ki)*k+kj)*P:]
				for oi := 0; oi < Ho; oi++ {
					ii := oi*stride - pad + ki
					for oj := 0; oj < Wo; oj++ {
						jj := oj*stride - pad + kj
						if ii >= 0 && ii < H && jj >= 0 && jj < W {
							row[oi*Wo+oj] = xd[(c*H+ii)*W+jj]
						}
					}
				}
			}
		}
	}
	y := t.node([]int{F, Ho, Wo}, x, w, b)
	if b != nil {
		for f := 0; f < F; f++ {
			r := y.Value.Data[f*P : (f+1)*P]
			for j := range r {
				r[j] = b.Value.Data[f]
			}
		}
	}
	beta := float32(0)
	if b != nil {
		beta = 1
	}
	kernels.Gemm(false, false, F, P, K, 1, w.Value.Data, K, cols, P, beta, y.Value.Data, P)
	t.record(y, func(g []float32) {
		switch {
		case w.rows != nil:
			// The gathered filters only: their rows of g, [R, P], times
			// the patches.
			R := len(w.rows)
			gs := t.floatsOver(R * P)
			for k, f := range w.rows {
				copy(gs[k*P:(k+1)*P], g[f*P:(f+1)*P])
			}
			kernels.Gemm(false, true, R, K, P, 1, gs, P, cols, P, 1, w.Grad, K)
		case w.needs:
			kernels.Gemm(false, true, F, K, P, 1, g, P, cols, P, 1, t.g(w), K)
		}
		if b != nil && b.needs {
			gb := t.g(b)
			for f := 0; f < F; f++ {
				var s float64
				for _, v := range g[f*P : (f+1)*P] {
					s += float64(v)
				}
				gb[f] += float32(s)
			}
		}
		if x.needs {
			dcols := t.floats(K * P)
			kernels.Gemm(true, false, K, P, F, 1, w.Value.Data, K, g, P, 0, dcols, P)
			gx := t.g(x)
			for c := 0; c < C; c++ {
				for ki := 0; ki < k; ki++ {
					for kj := 0; kj < k; kj++ {
						row := dcols[((c*k+ki)*k+kj)*P:]
						for oi := 0; oi < Ho; oi++ {
							ii := oi*stride - pad + ki
							for oj := 0; oj < Wo; oj++ {
								jj := oj*stride - pad + kj
								if ii >= 0 && ii < H && jj >= 0 && jj < W {
									gx[(c*H+ii)*W+jj] += row[oi*Wo+oj]
								}
							}
						}
					}
				}
			}
		}
	})
	return y
}

// MaxPool applies k×k max pooling with stride k to x of shape [C, H, W]; rows
// and columns that do not fill a window are dropped. Ties go to the first
// maximum in row-major order.
func (t *Tape) MaxPool(x *Node, k int) *Node {
	C, H, W := x.Value.Shape[0], x.Value.Shape[1], x.Value.Shape[2]
	Ho, Wo := H/k, W/k
	y := t.node([]int{C, Ho, Wo}, x)
	arg := make([]int, C*Ho*Wo)
	for c := 0; c < C; c++ {
		for oi := 0; oi < Ho; oi++ {
			for oj := 0; oj < Wo; oj++ {
				best, bi := float32(math.Inf(-1)), -1
				for a := 0; a < k; a++ {
					for b := 0; b < k; b++ {
						i := (c*H+oi*k+a)*W + oj*k + b
						if bi < 0 || x.Value.Data[i] > best {
							best, bi = x.Value.Data[i], i
						}
					}
				}
				o := (c*Ho+oi)*Wo + oj
				y.Value.Data[o], arg[o] = best, bi
			}
		}
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for o, i := range arg {
			gx[i] += g[o]
		}
	})
	return y
}

// AvgPool averages x of shape [C, H, W] over space, giving shape [1, C].
func (t *Tape) AvgPool(x *Node) *Node {
	C := x.Value.Shape[0]
	hw := len(x.Value.Data) / C
	r := t.Reshape(x, C, hw)
	// Mean over columns = mean of rows of the transpose; do it directly.
	y := t.node([]int{1, C}, r)
	for c := 0; c < C; c++ {
		var s float64
		for _, v := range r.Value.Data[c*hw : (c+1)*hw] {
			s += float64(v)
		}
		y.Value.Data[c] = float32(s / float64(hw))
	}
	t.record(y, func(g []float32) {
		gr := t.g(r)
		for c := 0; c < C; c++ {
			v := g[c] / float32(hw)
			for j := c * hw; j < (c+1)*hw; j++ {
				gr[j] += v
			}
		}
	})
	return y
}

// Patchify cuts an image x of shape [C, H, W] into non-overlapping p×p
// patches, giving shape [(H/p)·(W/p), C·p·p]; patch rows are in row-major
// patch order and each patch is flattened channel-major (c, i, j), the order
// of a Conv2d weight [D, C, p, p]. It panics if p does not divide H and W.
func (t *Tape) Patchify(x *Node, p int) *Node {
	C, H, W := x.Value.Shape[0], x.Value.Shape[1], x.Value.Shape[2]
	if H%p != 0 || W%p != 0 {
		panic(errShape)
	}
	nh, nw := H/p, W/p
	K := C * p * p
	y := t.node([]int{nh * nw, K}, x)
	idx := make([]int, nh*nw*K)
	for a := 0; a < nh; a++ {
		for b := 0; b < nw; b++ {
			for c := 0; c < C; c++ {
				for i := 0; i < p; i++ {
					for j := 0; j < p; j++ {
						o := (a*nw+b)*K + (c*p+i)*p + j
						idx[o] = (c*H+a*p+i)*W + b*p + j
					}
				}
			}
		}
	}
	for o, i := range idx {
		y.Value.Data[o] = x.Value.Data[i]
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for o, i := range idx {
			gx[i] += g[o]
		}
	})
	return y
}

// GroupNorm normalises x of shape [C, H, W] in groups of C/groups
// consecutive channels, each group to zero mean and unit variance over its
// channels and positions (statistics in float64, eps added to the
// variance), then scales and shifts channel c by g[c] and b[c] (b may be
// nil): the group normalisation of Y. Wu and K. He, "Group Normalization",
// ECCV 2018, which DP training uses in place of batch normalisation since
// it keeps each example's computation its own. It panics if groups does not
// divide C or g or b is not of length C.
func (t *Tape) GroupNorm(x, g, b *Node, groups int, eps float64) *Node {
	if len(x.Value.Shape) != 3 || groups <= 0 {
		panic(errShape)
	}
	C := x.Value.Shape[0]
	if C%groups != 0 || len(g.Value.Data) != C || b != nil && len(b.Value.Data) != C {
		panic(errShape)
	}
	hw := len(x.Value.Data) / C
	n := C / groups * hw // values in a group
	y := t.node(x.Value.Shape, x, g, b)
	xhat := t.floatsOver(len(x.Value.Data))
	rstd := make([]float64, groups)
	t.bytes += int64(4*len(xhat) + 8*groups)
	for k := range groups {
		xr := x.Value.Data[k*n : (k+1)*n]
		var m float64
		for _, v := range xr {
			m += float64(v)
		}
		m /= float64(n)
		var s float64
		for _, v := range xr {
			d := float64(v) - m
			s += float64(d * d)
		}
		r := 1 / math.Sqrt(s/float64(n)+eps)
		rstd[k] = r
		for j, v := range xr {
			xhat[k*n+j] = float32((float64(v) - m) * r)
		}
	}
	for c := range C {
		gc := g.Value.Data[c]
		var bc float32
		if b != nil {
			bc = b.Value.Data[c]
		}
		hr, yr := xhat[c*hw:(c+1)*hw], y.Value.Data[c*hw:(c+1)*hw]
		for j, h := range hr {
			yr[j] = float32(h*gc) + bc
		}
	}
	t.record(y, func(gy []float32) {
		for c := range C {
			gr, hr := gy[c*hw:(c+1)*hw], xhat[c*hw:(c+1)*hw]
			if g.needs {
				var s float64
				for j, v := range gr {
					s += float64(float64(v) * float64(hr[j]))
				}
				t.g(g)[c] += float32(s)
			}
			if b != nil && b.needs {
				var s float64
				for _, v := range gr {
					s += float64(v)
				}
				t.g(b)[c] += float32(s)
			}
		}
		if !x.needs {
			return
		}
		gx := t.g(x)
		per := C / groups
		for k := range groups {
			// d = gy·g over the group; gx = rstd·(d − mean(d) − x̂·mean(d·x̂)).
			var s1, s2 float64
			for c := k * per; c < (k+1)*per; c++ {
				gc := float64(g.Value.Data[c])
				for j := c * hw; j < (c+1)*hw; j++ {
					d := float64(float64(gy[j]) * gc)
					s1 += d
					s2 += float64(d * float64(xhat[j]))
				}
			}
			s1 /= float64(n)
			s2 /= float64(n)
			for c := k * per; c < (k+1)*per; c++ {
				gc := float64(g.Value.Data[c])
				for j := c * hw; j < (c+1)*hw; j++ {
					d := float64(float64(gy[j]) * gc)
					gx[j] += float32(rstd[k] * (d - s1 - float64(float64(xhat[j])*s2)))
				}
			}
		}
	})
	return y
}
