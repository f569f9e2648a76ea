// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

package nn

//go:noescape
func normRowAVX2(y, x, gain, b *float32, n4 int, m, r float64)

//go:noescape
func addAVX2(y, a, b *float32, n8 int)

//go:noescape
func smearAVX2(y, x, p, s, t *float32, n8 int)

//go:noescape
func scale64AVX2(z *float32, n4 int, s float64)

//go:noescape
func negZeroAVX2(x *float32, rows, n8, ld int) bool

// negZeroVec reports in assembly whether any of the first cols elements
// of rows rows of x (row stride ld) is −0, and whether it looked: only
// with AVX2 and cols a multiple of eight. x must hold every element of
// the rows.
func negZeroVec(x []float32, rows, cols, ld int) (found, ok bool) {
	if !vmathAVX2 || vrowOff || rows <= 0 || cols <= 0 || cols%8 != 0 {
		return false, false
	}
	_ = x[(rows-1)*ld+cols-1] // bounds: panics if short
	return negZeroAVX2(&x[0], rows, cols/8, ld), true
}

// normRowVec computes the first elements of normRow without normalised
// rows (hr nil) in assembly, four at a time, and returns how many: a
// multiple of four, 0 without AVX2. y, g and b (when not nil) must hold
// len(x) elements.
func normRowVec(y, x, g, b []float32, m, r float64) int {
	n4 := len(x) / 4
	if !vmathAVX2 || vrowOff || n4 == 0 {
		return 0
	}
	y, g = y[:4*n4], g[:4*n4] // bounds: panics if short
	var bp *float32
	if b != nil {
		bp = &b[:4*n4][0]
	}
	normRowAVX2(&y[0], &x[0], &g[0], bp, n4, m, r)
	return 4 * n4
}

// addVec computes the first elements of y = a + b in assembly, eight at a
// time, and returns how many: a multiple of eight, 0 without AVX2. a and
// b must hold len(y) elements.
func addVec(y, a, b []float32) int {
	n8 := len(y) / 8
	if !vmathAVX2 || vrowOff || n8 == 0 {
		return 0
	}
	a, b = a[:8*n8], b[:8*n8]
	addAVX2(&y[0], &a[0], &b[0], n8)
	return 8 * n8
}

// smearVec computes y = s·x + t·p elementwise (y = s·x when p is nil) in
// assembly and reports whether it did: only with AVX2 and a length that
// is a multiple of eight. x, p, s and t must hold len(y) elements.
func smearVec(y, x, p, s, t []float32) bool {
	if !vmathAVX2 || vrowOff || len(y) == 0 || len(y)%8 != 0 {
		return false
	}
	n := len(y)
	x, s, t = x[:n], s[:n], t[:n]
	var pp *float32
	if p != nil {
		pp = &p[:n][0]
	}
	smearAVX2(&y[0], &x[0], pp, &s[0], &t[0], n/8)
	return true
}

// scale64Vec computes the first elements of z[j] = float32(float64(z[j])·s)
// in assembly, four at a time, and returns how many: a multiple of four, 0
// without AVX2.
func scale64Vec(z []float32, s float64) int {
	n4 := len(z) / 4
	if !vmathAVX2 || vrowOff || n4 == 0 {
		return 0
	}
	scale64AVX2(&z[0], n4, s)
	return 4 * n4
}

//go:noescape
func maxAVX2(z *float32, n8 int) (m float32, ok bool)

// maxVec returns the largest of the first n values of z in assembly, n a
// multiple of eight, and n; n = 0 (m to be ignored) without AVX2, for
// fewer than eight values, or when the largest is zero or one of them a
// NaN, where the Go loop's max orders −0 before +0 and returns the NaN.
// Otherwise m is max's result over those n values, bit for bit: a
// largest value that is not zero is unique in its bits.
func maxVec(z []float32) (m float32, n int) {
	n8 := len(z) / 8
	if !vmathAVX2 || vrowOff || n8 == 0 {
		return 0, 0
	}
	m, ok := maxAVX2(&z[0], n8)
	if !ok || m == 0 {
		return 0, 0
	}
	return m, 8 * n8
}

//go:noescape
func expShiftMaskedAVX2(dst, src *float32, n8 int, shift float32, c *[vcN][8]float32, mask *int32)

// tailMasks holds eight all-ones lanes then eight zeros: the eight int32
// at &tailMasks[8−r] select the first r lanes of a vector.
var tailMasks = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}

// expShiftMasked computes every element of expShift in one call of
// expShiftMaskedAVX2, the last len(dst) mod 8 through its masked vector.
func expShiftMasked(dst, src []float32, shift float32) {
	n8, r := len(dst)/8, len(dst)%8
	src = src[:len(dst)]
	var mask *int32
	if r > 0 {
		mask = &tailMasks[8-r]
	}
	expShiftMaskedAVX2(&dst[0], &src[0], n8, shift, &vmathConsts, mask)
}

//go:noescape
func rowSums16AVX2(x *float32, stride, n4 int, m *[16]float64)

//go:noescape
func rowSqDev16AVX2(x *float32, stride, n4 int, a, s *[16]float64)

// rowStats16 returns, for the sixteen rows of c values at the start of x,
// the sum of each row's values (m) and, with the mean m/c, the sum of its
// squared deviations (s), each in layerNormRow's order: the first
// columns, four at a time, in rowSums16AVX2 and rowSqDev16AVX2, the last
// c mod 4 continuing each chain here. ok is false (nothing computed)
// without AVX2 or with fewer than four columns.
func rowStats16(x []float32, c int) (m, s [16]float64, ok bool) {
	n4 := c / 4
	if !vmathAVX2 || vrowOff || n4 == 0 {
		return m, s, false
	}
	x = x[:16*c] // bounds: panics if short
	rowSums16AVX2(&x[0], 4*c, n4, &m)
	for k := range m {
		for _, v := range x[k*c+4*n4 : (k+1)*c] {
			m[k] += float64(v)
		}
	}
	var a [16]float64
	for k := range a {
		a[k] = m[k] / float64(c)
	}
	rowSqDev16AVX2(&x[0], 4*c, n4, &a, &s)
	for k := range s {
		for _, v := range x[k*c+4*n4 : (k+1)*c] {
			d := float64(v) - a[k]
			s[k] += d * d
		}
	}
	return m, s, true
}
