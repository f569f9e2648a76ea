// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
)

// Affine returns x·wᵀ + b for x of shape [n, in] (any shape whose last
// dimension is in), w of shape [out, in] and b of shape [out] (b may be nil).
// The result has x's shape with the last dimension replaced by out.
func (t *Tape) Affine(x, w, b *Node) *Node {
	out, in := w.Value.Shape[0], w.Value.Cols()
	xs := x.Value.Shape
	if xs[len(xs)-1] != in || b != nil && len(b.Value.Data) != out {
		panic(errShape)
	}
	n := len(x.Value.Data) / in
	var dims [4]int
	shape := append(append(dims[:0], xs[:len(xs)-1]...), out)
	y := t.nodeOver(shape, x, w, b)
	yd := y.Value.Data
	if b != nil {
		fillRows(yd[:n*out], b.Value.Data)
	}
	beta := float32(0)
	if b != nil {
		beta = 1
	}
	gemmPanels(n, out, in, 1, x.Value.Data, in, w.Value.Data, t.weightPanels(w, out, in), beta, yd, out)
	if !y.needs {
		return y // no backward rule: no closure to allocate
	}
	var rows rowMap
	if t.batch != nil {
		rows = t.batch.rows
	}
	t.record(y, func(g []float32) {
		if x.needs {
			kernels.Gemm(false, false, n, in, out, 1, g, out, w.Value.Data, in, 1, t.g(x), in)
		}
		if t.batch != nil {
			if w.rows != nil {
				panic(errGathered)
			}
			t.batch.affine(t, rows, w, b, g, x.Value.Data, n, out, in)
			return
		}
		switch {
		case w.rows != nil:
			// The gathered rows only: their output columns of g, [n, K],
			// times x.
			K := len(w.rows)
			gs := t.floatsOver(n * K)
			for i := 0; i < n; i++ {
				gi, si := g[i*out:(i+1)*out], gs[i*K:(i+1)*K]
				for k, r := range w.rows {
					si[k] = gi[r]
				}
			}
			kernels.Gemm(true, false, K, in, n, 1, gs, K, x.Value.Data, in, 1, w.Grad, in)
		case w.needs:
			kernels.Gemm(true, false, out, in, n, 1, g, out, x.Value.Data, in, 1, t.g(w), in)
		}
		if b != nil && b.needs {
			gb := t.g(b)
			for i := 0; i < n; i++ {
				axpy(1, g[i*out:(i+1)*out], gb)
			}
		}
	})
	return y
}

// fillRows sets every row of y (rows of len(r) elements) to r: the first
// row from r, then each copy doubles the rows written, so that a long
// matrix of short rows takes a few long copies rather than one short copy
// a row.
func fillRows(y, r []float32) {
	c := len(r)
	if len(y) == 0 {
		return
	}
	if thinOff {
		for i := 0; i < len(y); i += c {
			copy(y[i:i+c], r)
		}
		return
	}
	copy(y[:c], r)
	for k := c; k < len(y); k *= 2 {
		copy(y[k:], y[:k])
	}
}

// Add returns a + b elementwise. The shapes must have the same number of
// elements; the result has a's shape.
func (t *Tape) Add(a, b *Node) *Node {
	if len(a.Value.Data) != len(b.Value.Data) {
		panic(errShape)
	}
	y := t.nodeOver(a.Value.Shape, a, b)
	ad, bd, yd := a.Value.Data, b.Value.Data, y.Value.Data
	for i := addVec(yd, ad, bd); i < len(ad); i++ {
		yd[i] = ad[i] + bd[i]
	}
	t.record(y, func(g []float32) {
		if a.needs {
			t.gAxpy(a, 1, g)
		}
		if b.needs {
			t.gAxpy(b, 1, g)
		}
	})
	return y
}

// AddRows returns x + r with the vector r added to every row of x.
func (t *Tape) AddRows(x, r *Node) *Node {
	c := len(r.Value.Data)
	if x.Value.Cols() != c {
		panic(errShape)
	}
	y := t.node(x.Value.Shape, x, r)
	rows := x.Value.Rows()
	for i := 0; i < rows; i++ {
		yr, xr := y.Value.Data[i*c:(i+1)*c], x.Value.Data[i*c:(i+1)*c]
		for j, v := range xr {
			yr[j] = v + r.Value.Data[j]
		}
	}
	t.record(y, func(g []float32) {
		if x.needs {
			axpy(1, g, t.g(x))
		}
		if r.needs {
			gr := t.g(r)
			for i := 0; i < rows; i++ {
				axpy(1, g[i*c:(i+1)*c], gr)
			}
		}
	})
	return y
}

// Scale returns s·x.
func (t *Tape) Scale(x *Node, s float32) *Node {
	y := t.node(x.Value.Shape, x)
	for i, v := range x.Value.Data {
		y.Value.Data[i] = s * v
	}
	t.record(y, func(g []float32) { axpy(s, g, t.g(x)) })
	return y
}

// Weighted returns Σ w_i·x_i for scalar or same-sized nodes x_i.
func (t *Tape) Weighted(w []float32, xs ...*Node) *Node {
	if len(w) != len(xs) || len(xs) == 0 {
		panic(errLength)
	}
	// The first term is written as +0 + w₀·x₀ (axpyVec with no a), the
	// bits of axpy into a cleared output, without clearing it first.
	y := t.nodeOver(xs[0].Value.Shape, xs...)
	x0, yd := xs[0].Value.Data, y.Value.Data
	if len(x0) != len(yd) {
		panic(errLength)
	}
	j := axpyVec(yd, nil, x0, w[0])
	clear(yd[j:])
	for ; j < len(yd); j++ {
		yd[j] += float32(w[0] * x0[j])
	}
	for i, x := range xs[1:] {
		axpy(w[i+1], x.Value.Data, yd)
	}
	t.record(y, func(g []float32) {
		for i, x := range xs {
			if x.needs {
				t.gAxpy(x, w[i], g)
			}
		}
	})
	return y
}

const invSqrt2 = 0.70710678118654752440
const invSqrt2Pi = 0.39894228040143267794

// GELU returns the Gaussian error linear unit x·Φ(x) elementwise (the exact
// form, not the tanh approximation), computed in float32 by gelu32 (vmath.go:
// Φ within 2.5e-7), eight lanes at a time where the CPU has AVX2.
func (t *Tape) GELU(x *Node) *Node {
	y := t.nodeOver(x.Value.Shape, x)
	var d []float32
	if y.needs {
		d = t.floatsOver(len(x.Value.Data))
		t.bytes += int64(4 * len(d))
	}
	geluFwd(y.Value.Data, d, x.Value.Data)
	t.record(y, func(g []float32) {
		t.gMulAdd(x, g, d)
	})
	return y
}

// ReLU returns max(x, 0) elementwise. The derivative at 0 is taken as 0.
func (t *Tape) ReLU(x *Node) *Node {
	y := t.node(x.Value.Shape, x)
	for i, v := range x.Value.Data {
		if v > 0 {
			y.Value.Data[i] = v
		}
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for i, v := range x.Value.Data {
			if v > 0 {
				gx[i] += g[i]
			}
		}
	})
	return y
}

// Tanh returns tanh(x) elementwise.
func (t *Tape) Tanh(x *Node) *Node {
	y := t.node(x.Value.Shape, x)
	for i, v := range x.Value.Data {
		y.Value.Data[i] = float32(math.Tanh(float64(v)))
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for i, v := range y.Value.Data {
			gx[i] += float32(g[i] * (1 - float32(v*v)))
		}
	})
	return y
}

// LayerNorm normalises every row of x to zero mean and unit variance (with
// eps added to the variance, statistics in float64), then applies the gain g
// and bias b (b may be nil).
func (t *Tape) LayerNorm(x, g, b *Node, eps float64) *Node {
	c := len(g.Value.Data)
	if x.Value.Cols() != c || b != nil && len(b.Value.Data) != c {
		panic(errShape)
	}
	rows := len(x.Value.Data) / c
	y := t.nodeOver(x.Value.Shape, x, g, b)
	var bd []float32
	if b != nil {
		bd = b.Value.Data
	}
	if t.infer && !y.needs {
		// Nothing reads the normalised rows back: no backward pass.
		layerNormRows(y.Value.Data, x.Value.Data, c, g.Value.Data, bd, eps)
		return y
	}
	xhat := t.floatsOver(len(x.Value.Data))
	rstd := make([]float64, rows)
	t.bytes += int64(4*len(xhat) + 8*rows)
	if !gradOff {
		// The same arithmetic, several rows' statistics at once.
		layerNormRowsH(y.Value.Data, xhat, rstd, x.Value.Data, c, g.Value.Data, bd, eps)
	}
	for i := 0; i < rows && gradOff; i++ {
		xr := x.Value.Data[i*c : (i+1)*c]
		var m float64
		for _, v := range xr {
			m += float64(v)
		}
		m /= float64(c)
		var s float64
		for _, v := range xr {
			d := float64(v) - m
			s += float64(d * d)
		}
		r := 1 / math.Sqrt(s/float64(c)+eps)
		rstd[i] = r
		hr, yr := xhat[i*c:(i+1)*c], y.Value.Data[i*c:(i+1)*c]
		for j, v := range xr {
			h := float32((float64(v) - m) * r)
			hr[j] = h
			yr[j] = float32(h * g.Value.Data[j])
			if b != nil {
				yr[j] += b.Value.Data[j]
			}
		}
	}
	// On a per-example batched tape the bias's gradient goes to each
	// example's own vector, summed over its rows (batchRows.bias).
	var perExample *batchRows
	var rm rowMap
	if t.batch != nil && b != nil && b.needs {
		perExample, rm = t.batch, t.batch.rows
	}
	t.record(y, func(gy []float32) {
		if perExample != nil {
			perExample.bias(t, rm, b, gy, rows)
		}
		i0 := 0
		if x.needs && !gradOff {
			i0 = layerNormBackRows4(t.g(x), gy, xhat, rstd, g.Value.Data, c)
		}
		for i := 0; i < rows; i++ {
			gr, hr := gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c]
			if g.needs {
				gg := t.g(g)
				for j, v := range gr {
					gg[j] += float32(v * hr[j])
				}
			}
			if b != nil && b.needs && perExample == nil {
				axpy(1, gr, t.g(b))
			}
			if x.needs && i >= i0 {
				var s1, s2 float64
				for j, v := range gr {
					d := float64(float64(v) * float64(g.Value.Data[j]))
					s1 += d
					s2 += float64(d * float64(hr[j]))
				}
				s1 /= float64(c)
				s2 /= float64(c)
				gx := t.g(x)[i*c : (i+1)*c]
				for j, v := range gr {
					d := float64(float64(v) * float64(g.Value.Data[j]))
					gx[j] += float32(rstd[i] * (d - s1 - float64(float64(hr[j])*s2)))
				}
			}
		}
	})
	return y
}

// layerNormBackRows4 adds LayerNorm's gradient with respect to x to gx
// for the first rows, four at a time, and returns how many: each row's
// two float64 sums s1 = Σ gy·g and s2 = Σ gy·g·x̂ in Tape.LayerNorm's
// order, four rows' chains in one loop so that they overlap, then the
// rows' elements as that loop computes them. The same bits.
func layerNormBackRows4(gx, gy, xhat []float32, rstd []float64, g []float32, c int) int {
	rows := len(rstd)
	fc := float64(c)
	i := 0
	for ; i+4 <= rows; i += 4 {
		var s1, s2 [4]float64
		g0, g1, g2, g3 := gy[i*c:(i+1)*c], gy[(i+1)*c:(i+2)*c], gy[(i+2)*c:(i+3)*c], gy[(i+3)*c:(i+4)*c]
		h0, h1, h2, h3 := xhat[i*c:(i+1)*c], xhat[(i+1)*c:(i+2)*c], xhat[(i+2)*c:(i+3)*c], xhat[(i+3)*c:(i+4)*c]
		g = g[:c]
		g1, g2, g3, h0, h1, h2, h3 = g1[:c], g2[:c], g3[:c], h0[:c], h1[:c], h2[:c], h3[:c]
		for j, v := range g0[:c] {
			w := float64(g[j])
			d0, d1, d2, d3 := float64(float64(v)*w), float64(float64(g1[j])*w), float64(float64(g2[j])*w), float64(float64(g3[j])*w)
			s1[0] += d0
			s1[1] += d1
			s1[2] += d2
			s1[3] += d3
			s2[0] += float64(d0 * float64(h0[j]))
			s2[1] += float64(d1 * float64(h1[j]))
			s2[2] += float64(d2 * float64(h2[j]))
			s2[3] += float64(d3 * float64(h3[j]))
		}
		for k := range 4 {
			a1, a2, r := s1[k]/fc, s2[k]/fc, rstd[i+k]
			gr, hr, gxr := gy[(i+k)*c:(i+k+1)*c], xhat[(i+k)*c : (i+k+1)*c][:c], gx[(i+k)*c : (i+k+1)*c][:c]
			for j, v := range gr {
				d := float64(float64(v) * float64(g[j]))
				gxr[j] += float32(r * (d - a1 - float64(float64(hr[j])*a2)))
			}
		}
	}
	return i
}

// layerNormRow sets yr to the row xr normalised to zero mean and unit
// variance (statistics in float64, eps added to the variance), times the
// gain g, plus the bias b (none when nil), and, when hr is not nil, hr to
// the normalised row; it returns the reciprocal standard deviation. It is
// the arithmetic of Tape.LayerNorm's loop, for the inference path.
func layerNormRow(yr, hr, xr, g, b []float32, eps float64) float64 {
	c := len(xr)
	var m float64
	for _, v := range xr {
		m += float64(v)
	}
	m /= float64(c)
	var s float64
	for _, v := range xr {
		d := float64(v) - m
		s += float64(d * d)
	}
	r := 1 / math.Sqrt(s/float64(c)+eps)
	normRow(yr, hr, xr, g, b, m, r)
	return r
}

// normRow is the last pass of layerNormRow, given the row's mean m and
// reciprocal standard deviation r.
//
// Without normalised rows (hr nil) its elements go through normRowVec
// where the CPU has it (the same operations, four lanes at a time), the
// rest through the loop here.
func normRow(yr, hr, xr, g, b []float32, m, r float64) {
	var j0 int
	if hr == nil {
		j0 = normRowVec(yr, xr, g, b, m, r)
	} else {
		j0 = normRowHVec(yr, hr, xr, g, b, m, r)
	}
	for j := j0; j < len(xr); j++ {
		v := xr[j]
		h := float32((float64(v) - m) * r)
		if hr != nil {
			hr[j] = h
		}
		yr[j] = float32(h * g[j])
		if b != nil {
			yr[j] += b[j]
		}
	}
}

// layerNormRows is layerNormRow (without the normalised rows) on every row
// of c values of x into y. It computes the statistics of sixteen rows at
// once in vector lanes where the CPU has them (rowStats16), then of eight
// rows in one loop (then four, then one at a time), each with its own sums
// in layerNormRow's order, so that the dependency chains overlap: the same
// bits, in less time.
func layerNormRows(y, x []float32, c int, g, b []float32, eps float64) {
	layerNormRowsH(y, nil, nil, x, c, g, b, eps)
}

// layerNormRowsH is layerNormRows that also writes, when hr is not nil,
// the normalised rows to hr and each row's reciprocal standard deviation
// to rstd (a training tape's LayerNorm): the arithmetic of
// Tape.LayerNorm's loop.
func layerNormRowsH(y, hr []float32, rstd []float64, x []float32, c int, g, b []float32, eps float64) {
	rows := len(x) / c
	fc := float64(c)
	h := func(i int) []float32 {
		if hr == nil {
			return nil
		}
		return hr[i*c : (i+1)*c]
	}
	norm := func(i int, m, s float64) {
		r := 1 / math.Sqrt(s/fc+eps)
		if rstd != nil {
			rstd[i] = r
		}
		normRow(y[i*c:(i+1)*c], h(i), x[i*c:(i+1)*c], g, b, m/fc, r)
	}
	i := 0
	for ; i+16 <= rows; i += 16 {
		m, s, ok := rowStats16(x[i*c:], c)
		if !ok {
			break
		}
		for k := range 16 {
			norm(i+k, m[k], s[k])
		}
	}
	for ; !vrowOff && i+8 <= rows; i += 8 {
		var xs [8][]float32
		for k := range xs {
			xs[k] = x[(i+k)*c : (i+k+1)*c]
		}
		m, s := rowStats8(&xs)
		for k := range xs {
			norm(i+k, m[k], s[k])
		}
	}
	for ; i+4 <= rows; i += 4 {
		x0, x1, x2, x3 := x[i*c:(i+1)*c], x[(i+1)*c:(i+2)*c], x[(i+2)*c:(i+3)*c], x[(i+3)*c:(i+4)*c]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		var m0, m1, m2, m3 float64
		for j, v := range x0 {
			m0 += float64(v)
			m1 += float64(x1[j])
			m2 += float64(x2[j])
			m3 += float64(x3[j])
		}
		m0, m1, m2, m3 = m0/fc, m1/fc, m2/fc, m3/fc
		var s0, s1, s2, s3 float64
		for j, v := range x0 {
			d0 := float64(v) - m0
			d1 := float64(x1[j]) - m1
			d2 := float64(x2[j]) - m2
			d3 := float64(x3[j]) - m3
			s0 += float64(d0 * d0)
			s1 += float64(d1 * d1)
			s2 += float64(d2 * d2)
			s3 += float64(d3 * d3)
		}
		for k, r := range [4]float64{1 / math.Sqrt(s0/fc+eps), 1 / math.Sqrt(s1/fc+eps), 1 / math.Sqrt(s2/fc+eps), 1 / math.Sqrt(s3/fc+eps)} {
			if rstd != nil {
				rstd[i+k] = r
			}
			normRow(y[(i+k)*c:(i+k+1)*c], h(i+k), x[(i+k)*c:(i+k+1)*c], g, b, [4]float64{m0, m1, m2, m3}[k], r)
		}
	}
	for ; i < rows; i++ {
		r := layerNormRow(y[i*c:(i+1)*c], h(i), x[i*c:(i+1)*c], g, b, eps)
		if rstd != nil {
			rstd[i] = r
		}
	}
}

// rowStats8 returns, for each of the eight rows xs (of one length), the
// sum of its values (m) and, with the mean m/len, the sum of its squared
// deviations (s), each in layerNormRow's order.
func rowStats8(xs *[8][]float32) (m, s [8]float64) {
	x0 := xs[0]
	n := len(x0)
	x1, x2, x3, x4, x5, x6, x7 := xs[1][:n], xs[2][:n], xs[3][:n], xs[4][:n], xs[5][:n], xs[6][:n], xs[7][:n]
	var m0, m1, m2, m3, m4, m5, m6, m7 float64
	for j, v := range x0 {
		m0 += float64(v)
		m1 += float64(x1[j])
		m2 += float64(x2[j])
		m3 += float64(x3[j])
		m4 += float64(x4[j])
		m5 += float64(x5[j])
		m6 += float64(x6[j])
		m7 += float64(x7[j])
	}
	m = [8]float64{m0, m1, m2, m3, m4, m5, m6, m7}
	fc := float64(n)
	a0, a1, a2, a3, a4, a5, a6, a7 := m0/fc, m1/fc, m2/fc, m3/fc, m4/fc, m5/fc, m6/fc, m7/fc
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for j, v := range x0 {
		d0 := float64(v) - a0
		d1 := float64(x1[j]) - a1
		d2 := float64(x2[j]) - a2
		d3 := float64(x3[j]) - a3
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
		d4 := float64(x4[j]) - a4
		d5 := float64(x5[j]) - a5
		d6 := float64(x6[j]) - a6
		d7 := float64(x7[j]) - a7
		s4 += float64(d4 * d4)
		s5 += float64(d5 * d5)
		s6 += float64(d6 * d6)
		s7 += float64(d7 * d7)
	}
	return m, [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
}

// Embed returns the rows of table (shape [n, d]) at ids, shape [len(ids), d].
// It panics if an id is out of range.
func (t *Tape) Embed(table *Node, ids []int) *Node {
	n, d := table.Value.Rows(), table.Value.Cols()
	y := t.nodeOver([]int{len(ids), d}, table)
	for i, id := range ids {
		if id < 0 || id >= n {
			panic(errIndex)
		}
		copy(y.Value.Data[i*d:(i+1)*d], table.Value.Data[id*d:(id+1)*d])
	}
	ids = append([]int(nil), ids...)
	t.record(y, func(g []float32) {
		gt := t.g(table)
		for i, id := range ids {
			axpy(1, g[i*d:(i+1)*d], gt[id*d:(id+1)*d])
		}
	})
	return y
}

// Gather returns the rows of x at idx (repeats allowed), shape
// [len(idx), cols].
func (t *Tape) Gather(x *Node, idx []int) *Node {
	return t.Embed(x, idx)
}

// Slice returns rows [from, to) of x.
func (t *Tape) Slice(x *Node, from, to int) *Node {
	if from < 0 || to > x.Value.Rows() || from > to {
		panic(errIndex)
	}
	c := x.Value.Cols()
	shape := append([]int{to - from}, x.Value.Shape[1:]...)
	y := t.nodeOver(shape, x)
	copy(y.Value.Data, x.Value.Data[from*c:to*c])
	t.record(y, func(g []float32) { axpy(1, g, t.g(x)[from*c:to*c]) })
	return y
}

// Concat stacks the rows of xs, which must have the same number of columns.
func (t *Tape) Concat(xs ...*Node) *Node {
	c := xs[0].Value.Cols()
	rows := 0
	for _, x := range xs {
		if x.Value.Cols() != c {
			panic(errShape)
		}
		rows += x.Value.Rows()
	}
	shape := append([]int{rows}, xs[0].Value.Shape[1:]...)
	y := t.nodeOver(shape, xs...)
	off := 0
	for _, x := range xs {
		copy(y.Value.Data[off:], x.Value.Data)
		off += len(x.Value.Data)
	}
	t.record(y, func(g []float32) {
		off := 0
		for _, x := range xs {
			n := len(x.Value.Data)
			if x.needs {
				axpy(1, g[off:off+n], t.g(x))
			}
			off += n
		}
	})
	return y
}

// ConcatCols joins a [n, c1] and b [n, c2] side by side into [n, c1+c2].
func (t *Tape) ConcatCols(a, b *Node) *Node {
	n := a.Value.Rows()
	if b.Value.Rows() != n {
		panic(errShape)
	}
	c1, c2 := a.Value.Cols(), b.Value.Cols()
	y := t.node([]int{n, c1 + c2}, a, b)
	for i := 0; i < n; i++ {
		copy(y.Value.Data[i*(c1+c2):], a.Value.Data[i*c1:(i+1)*c1])
		copy(y.Value.Data[i*(c1+c2)+c1:], b.Value.Data[i*c2:(i+1)*c2])
	}
	t.record(y, func(g []float32) {
		for i := 0; i < n; i++ {
			if a.needs {
				axpy(1, g[i*(c1+c2):i*(c1+c2)+c1], t.g(a)[i*c1:(i+1)*c1])
			}
			if b.needs {
				axpy(1, g[i*(c1+c2)+c1:(i+1)*(c1+c2)], t.g(b)[i*c2:(i+1)*c2])
			}
		}
	})
	return y
}

// Reshape returns x with a new shape of the same number of elements.
func (t *Tape) Reshape(x *Node, shape ...int) *Node {
	if numel(shape) != len(x.Value.Data) {
		panic(errShape)
	}
	y := t.newNode()
	y.Value, y.needs = Tensor{Shape: append([]int(nil), shape...), Data: x.Value.Data}, x.needs
	t.record(y, func(g []float32) { axpy(1, g, t.g(x)) })
	return y
}

// MeanRows returns the mean of the rows of x, shape [1, cols].
func (t *Tape) MeanRows(x *Node) *Node {
	rows, c := x.Value.Rows(), x.Value.Cols()
	y := t.node([]int{1, c}, x)
	acc := make([]float64, c)
	for i := 0; i < rows; i++ {
		for j, v := range x.Value.Data[i*c : (i+1)*c] {
			acc[j] += float64(v)
		}
	}
	for j := range acc {
		y.Value.Data[j] = float32(acc[j] / float64(rows))
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		s := 1 / float32(rows)
		for i := 0; i < rows; i++ {
			axpy(s, g, gx[i*c:(i+1)*c])
		}
	})
	return y
}

// Dropout zeroes each element of x with probability p and scales the others
// by 1/(1−p) when t.Train is true and p > 0; otherwise it returns x.
func (t *Tape) Dropout(x *Node, p float64) *Node {
	if !t.Train || p <= 0 {
		return x
	}
	if t.Rand == nil {
		panic(Error{"nn: dropout in training mode needs Tape.Rand"})
	}
	keep := make([]bool, len(x.Value.Data))
	y := t.node(x.Value.Shape, x)
	s := float32(1 / (1 - p))
	for i, v := range x.Value.Data {
		if t.Rand.Float64() >= p {
			keep[i] = true
			y.Value.Data[i] = v * s
		}
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for i, k := range keep {
			if k {
				gx[i] += float32(g[i] * s)
			}
		}
	})
	return y
}

// CrossEntropy returns Σ_i w_i·(log Σ_j exp z_ij − z_i,targets[i]) over the
// rows of logits z (shape [n, classes]) as a scalar. A nil w means w_i = 1/n
// (the mean). Normalisers are computed in float64. It panics if a target is
// out of range.
func (t *Tape) CrossEntropy(logits *Node, targets []int, w []float32) *Node {
	n := logits.Value.Rows()
	if len(targets) != n || w != nil && len(w) != n {
		panic(errLength)
	}
	return t.crossEntropies(logits, targets, w, []int{0, n}, []int{})
}

// crossEntropies is CrossEntropy of each block of rows [segs[e],
// segs[e+1]) of logits on its own (the mean over the block when w is nil):
// a vector of len(segs)−1 losses, of the given shape, whose entry e is the
// bits CrossEntropy gives for block e alone. A batched tape builds the
// losses of all its examples with one call.
func (t *Tape) crossEntropies(logits *Node, targets []int, w []float32, segs []int, shape []int) *Node {
	c := logits.Value.Cols()
	y := t.node(shape, logits)
	if len(y.Value.Data) != len(segs)-1 {
		panic(errShape)
	}
	probs := t.floats(len(logits.Value.Data))
	t.bytes += int64(4 * len(probs))
	for e := range y.Value.Data {
		r0, r1 := segs[e], segs[e+1]
		var we []float32
		if w != nil {
			we = w[r0:r1]
		}
		y.Value.Data[e] = float32(ceForward(logits.Value.Data[r0*c:r1*c], probs[r0*c:r1*c], targets[r0:r1], we, c))
	}
	targets = append([]int(nil), targets...)
	t.record(y, func(g []float32) {
		gz := t.g(logits)
		for e, ge := range g {
			r0, r1 := segs[e], segs[e+1]
			var we []float32
			if w != nil {
				we = w[r0:r1]
			}
			ceBackward(gz[r0*c:r1*c], probs[r0*c:r1*c], targets[r0:r1], we, c, ge)
		}
	})
	return y
}

// ceForward writes the softmax of the rows of z (c columns) into probs and
// returns the weighted cross-entropy of CrossEntropy.
func ceForward(z, probs []float32, targets []int, w []float32, c int) float64 {
	n := len(targets)
	var loss float64
	for i := 0; i < n; i++ {
		zr := z[i*c : (i+1)*c]
		if targets[i] < 0 || targets[i] >= c {
			panic(errIndex)
		}
		lse := softmaxRow(zr, probs[i*c:(i+1)*c])
		wi := 1 / float64(n)
		if w != nil {
			wi = float64(w[i])
		}
		loss += float64(wi * (lse - float64(zr[targets[i]])))
	}
	return loss
}

// ceBackward adds to gz the gradient of ceForward's loss, scaled by g0.
func ceBackward(gz, probs []float32, targets []int, w []float32, c int, g0 float32) {
	n := len(targets)
	for i := 0; i < n; i++ {
		wi := g0 / float32(n)
		if w != nil {
			wi = g0 * w[i]
		}
		pr, gr := probs[i*c:(i+1)*c], gz[i*c:(i+1)*c]
		for j, p := range pr {
			gr[j] += float32(wi * p)
		}
		gr[targets[i]] -= wi
	}
}

// softmaxRow writes softmax(z) into p and returns log Σ exp z, in float64
// (the losses that membership-inference scores read keep float64
// precision; attention uses the float32 softmaxRow32).
func softmaxRow(z, p []float32) float64 {
	m := math.Inf(-1)
	for _, v := range z {
		if float64(v) > m {
			m = float64(v)
		}
	}
	var s float64
	var buf [expChunk]float64
	for from := 0; from < len(z); from += expChunk {
		e := buf[:min(expChunk, len(z)-from)]
		expDiffs(e, z[from:], m) // math.Exp(float64(z[j]) − m)
		pr := p[from : from+len(e)]
		for j, v := range e {
			pr[j] = float32(v)
			s += v
		}
	}
	inv := 1 / s
	for j := range p {
		p[j] = float32(float64(p[j]) * inv)
	}
	return m + math.Log(s)
}

// logSumExp returns log Σ_j exp z_j as softmaxRow computes it (the same
// maximum, exponentials and sum, in the same order), without writing the
// probabilities.
func logSumExp(z []float32) float64 {
	m := math.Inf(-1)
	for _, v := range z {
		if float64(v) > m {
			m = float64(v)
		}
	}
	var s float64
	var buf [expChunk]float64
	for from := 0; from < len(z); from += expChunk {
		e := buf[:min(expChunk, len(z)-from)]
		expDiffs(e, z[from:], m) // math.Exp(float64(z[j]) − m)
		for _, v := range e {
			s += v
		}
	}
	return m + math.Log(s)
}

// expChunk is how many exponentials softmaxRow and logSumExp take from
// expDiffs at a time (a buffer on the stack); they add them in order.
const expChunk = 128

// Sum returns the sum of all elements of x as a scalar, accumulated in
// float64.
func (t *Tape) Sum(x *Node) *Node {
	y := t.node([]int{}, x)
	var s float64
	for _, v := range x.Value.Data {
		s += float64(v)
	}
	y.Value.Data[0] = float32(s)
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for i := range gx {
			gx[i] += g[0]
		}
	})
	return y
}

// Mul returns a ⊙ b elementwise.
func (t *Tape) Mul(a, b *Node) *Node {
	if len(a.Value.Data) != len(b.Value.Data) {
		panic(errShape)
	}
	y := t.node(a.Value.Shape, a, b)
	for i, v := range a.Value.Data {
		y.Value.Data[i] = v * b.Value.Data[i]
	}
	t.record(y, func(g []float32) {
		if a.needs {
			ga := t.g(a)
			for i, v := range g {
				ga[i] += float32(v * b.Value.Data[i])
			}
		}
		if b.needs {
			gb := t.g(b)
			for i, v := range g {
				gb[i] += float32(v * a.Value.Data[i])
			}
		}
	})
	return y
}
