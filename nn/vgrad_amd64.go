// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

package nn

//go:noescape
func axpyAVX2(y, a, x *float32, alpha float32, n8 int)

//go:noescape
func mulAddAVX2(y, s, a, b *float32, n8 int)

//go:noescape
func scaleAVX2(x *float32, alpha float32, n8 int)

//go:noescape
func sumSq8AVX2(x *[8]*float32, n4 int, s *[8]float64)

//go:noescape
func accAVX2(acc *float64, gs *[4]*float32, n4 int)

// gradVec reports whether the kernels of vgrad_amd64.s run.
func gradVec() bool { return vmathAVX2 && !gradOff }

// axpyVec computes the first elements of y[j] = a[j] + alpha·x[j] (a nil:
// +0 + alpha·x[j]) in assembly, eight at a time, and returns how many: a
// multiple of eight, 0 without AVX2. a (when not nil) and x must hold
// len(y) elements.
func axpyVec(y, a, x []float32, alpha float32) int {
	n8 := len(y) / 8
	if !gradVec() || n8 == 0 {
		return 0
	}
	x = x[:8*n8] // bounds: panics if short
	var ap *float32
	if a != nil {
		ap = &a[:8*n8][0]
	}
	axpyAVX2(&y[0], ap, &x[0], alpha, n8)
	return 8 * n8
}

// mulAddVec computes the first elements of y[j] = s[j] + a[j]·b[j] (s
// nil: +0 + a[j]·b[j]) in assembly, eight at a time, and returns how
// many: a multiple of eight, 0 without AVX2. s (when not nil), a and b
// must hold len(y) elements.
func mulAddVec(y, s, a, b []float32) int {
	n8 := len(y) / 8
	if !gradVec() || n8 == 0 {
		return 0
	}
	a, b = a[:8*n8], b[:8*n8]
	var sp *float32
	if s != nil {
		sp = &s[:8*n8][0]
	}
	mulAddAVX2(&y[0], sp, &a[0], &b[0], n8)
	return 8 * n8
}

// scaleVec computes the first elements of x[j] *= alpha in assembly,
// eight at a time, and returns how many: a multiple of eight, 0 without
// AVX2.
func scaleVec(x []float32, alpha float32) int {
	n8 := len(x) / 8
	if !gradVec() || n8 == 0 {
		return 0
	}
	scaleAVX2(&x[0], alpha, n8)
	return 8 * n8
}

// sumSquares8 returns sumSquares of each of the eight vectors x, all of
// length n, each chain in sumSquares' order: the first elements, four
// at a time, in sumSq8AVX2, the last n mod 4 continuing each chain here.
// ok is false (nothing computed) without AVX2 or with fewer than four
// elements.
func sumSquares8(x *[8][]float32, n int) (s [8]float64, ok bool) {
	n4 := n / 4
	if !gradVec() || n4 == 0 {
		return s, false
	}
	var p [8]*float32
	for k := range x {
		p[k] = &x[k][:n][0] // bounds: panics if short
	}
	sumSq8AVX2(&p, n4, &s)
	for k := range x {
		for _, v := range x[k][4*n4 : n] {
			s[k] += float64(v) * float64(v)
		}
	}
	return s, true
}

// acc4 adds the four vectors g, each of len(acc) elements, to acc in
// order, each element's chain in turn (acc[j] += float64(g_k[j]) for k =
// 0…3), and reports whether it did: the first elements four at a time in
// accAVX2, the rest here; false (nothing added) without AVX2 or with
// fewer than four elements.
func acc4(acc []float64, g *[4][]float32) bool {
	n := len(acc)
	n4 := n / 4
	if !gradVec() || n4 == 0 {
		return false
	}
	var p [4]*float32
	for k := range g {
		p[k] = &g[k][:n][0] // bounds: panics if short
	}
	accAVX2(&acc[0], &p, n4)
	for j := 4 * n4; j < n; j++ {
		for k := range g {
			acc[j] += float64(g[k][j])
		}
	}
	return true
}

//go:noescape
func normRowHAVX2(y, h, x, gain, b *float32, n4 int, m, r float64)

// normRowHVec computes the first elements of normRow with normalised rows
// (h) in assembly, four at a time, and returns how many: a multiple of
// four, 0 without AVX2. y, h, g and b (when not nil) must hold len(x)
// elements.
func normRowHVec(y, h, x, g, b []float32, m, r float64) int {
	n4 := len(x) / 4
	if !gradVec() || n4 == 0 {
		return 0
	}
	y, h, g = y[:4*n4], h[:4*n4], g[:4*n4] // bounds: panics if short
	var bp *float32
	if b != nil {
		bp = &b[:4*n4][0]
	}
	normRowHAVX2(&y[0], &h[0], &x[0], &g[0], bp, n4, m, r)
	return 4 * n4
}

//go:noescape
func softDot4AVX2(p, d *float32, stride, n4 int, s *[4]float64)

//go:noescape
func softBackAVX2(p, d *float32, s float64, n4 int)

// softDots4 returns the softmax backward's dots Σ_j float64(p_r[j])·
// float64(d_r[j]) of the four rows r = 0…3 of n elements at p[r·stride:]
// and d[r·stride:], each chain in the Go loop's order: the first columns
// four at a time in softDot4AVX2, the last n mod 4 continuing each chain
// here. ok is false (nothing computed) without AVX2, with attnOff or with
// fewer than four columns.
func softDots4(p, d []float32, stride, n int) (s [4]float64, ok bool) {
	n4 := n / 4
	if !vmathAVX2 || attnOff || n4 == 0 {
		return s, false
	}
	_, _ = p[3*stride+n-1], d[3*stride+n-1] // bounds: panics if short
	softDot4AVX2(&p[0], &d[0], stride, n4, &s)
	for r := range s {
		pr, dr := p[r*stride+4*n4:r*stride+n], d[r*stride+4*n4:r*stride+n]
		for j, x := range pr {
			s[r] += float64(x) * float64(dr[j])
		}
	}
	return s, true
}

// softBackVec computes the first elements of d[j] = float32(float64(p[j])·
// (float64(d[j]) − s)) in assembly, four at a time, and returns how many:
// a multiple of four, 0 without AVX2 or with attnOff. p must hold len(d)
// elements.
func softBackVec(p, d []float32, s float64) int {
	n4 := len(d) / 4
	if !vmathAVX2 || attnOff || n4 == 0 {
		return 0
	}
	p = p[:4*n4] // bounds: panics if short
	softBackAVX2(&p[0], &d[0], s, n4)
	return 4 * n4
}

//go:noescape
func softSum4AVX2(p *float32, stride, n4 int, s *[4]float64)

// softSums4 returns the softmax's sums Σ_j float64(p_r[j]) over the
// first 4·⌊n/4⌋ elements of the four rows r = 0…3 at p[r·stride:], each
// chain in the Go loop's order, and how many elements it summed; 0
// (nothing computed) without AVX2, with attnOff or with n < 4. The
// callers continue each chain.
func softSums4(p []float32, stride, n int) (s [4]float64, done int) {
	n4 := n / 4
	if !vmathAVX2 || attnOff || n4 == 0 {
		return s, 0
	}
	_ = p[3*stride+4*n4-1] // bounds: panics if short
	softSum4AVX2(&p[0], stride, n4, &s)
	return s, 4 * n4
}
