// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// This file holds the float32 elementwise kernels of softmax and GELU: an
// exponential and the normal distribution's Φ and φ, in Go (exp32,
// gelu32) and, on amd64 with AVX2 and FMA, eight lanes at a time in
// assembly (vmath_amd64.s). The assembly performs, lane by lane, exactly
// the float32 operations of the Go code (a fused multiply-add wherever
// the Go code calls fma32), so both give the same bits.
//
// Accuracy, checked against float64 in vmath_test.go:
//   - exp32(x) is within one ulp (relative error 1.2e-7) of eˣ for
//     −87.3 ≤ x ≤ 88, returns 0 below and e⁸⁸ above.
//   - gelu32's Φ(x) is within 2.5e-7 of Φ, and φ(x) within a relative
//     2e-7 + 3e-8·x² of φ (x² is rounded to float32 before the
//     exponential), so GELU(x) = x·Φ(x) is off by at most 2.5e-7·|x|
//     plus its own rounding.
//
// References:
//   - S. L. Moshier, Cephes Mathematical Library, expf.c (the reduction
//     x = n·ln 2 + r in two parts and the degree-5 polynomial of
//     (eʳ − 1 − r)/r²).
//   - M. Abramowitz and I. A. Stegun, Handbook of Mathematical Functions,
//     formula 7.1.26 (erfc(u) ≈ t·P(t)·e^(−u²), t = 1/(1 + p·u), with
//     |error| ≤ 1.5e-7).

// vmathConsts are the constants of both kernels, each replicated over
// eight lanes so the assembly reads them as vector operands; the indices
// are the vc* constants below.
var vmathConsts = func() (c [vcN][8]float32) {
	v := [vcN]float32{
		vcLo: expLo, vcHi: expHi, vcLog2e: math.Log2E,
		vcNegLn2Hi: -ln2Hi, vcNegLn2Lo: -ln2Lo,
		vcE5: expC5, vcE4: expC4, vcE3: expC3, vcE2: expC2, vcE1: expC1, vcE0: expC0,
		vcOne: 1, vcNegHalf: -0.5, vcHalf: 0.5, vcInvSqrt2: invSqrt2, vcInvSqrt2Pi: invSqrt2Pi,
		vcP: erfP, vcA1: erfA1, vcA2: erfA2, vcA3: erfA3, vcA4: erfA4, vcA5: erfA5,
		vcAbs: math.Float32frombits(0x7fffffff),
	}
	for i := range c {
		for j := range c[i] {
			c[i][j] = v[i]
		}
	}
	c[vcBias] = [8]float32{}
	for j := range c[vcBias] {
		c[vcBias][j] = math.Float32frombits(127) // the integer 127
	}
	return c
}()

// Indices of vmathConsts (the assembly uses them times 32 bytes).
const (
	vcLo = iota
	vcHi
	vcLog2e
	vcNegLn2Hi
	vcNegLn2Lo
	vcE5
	vcE4
	vcE3
	vcE2
	vcE1
	vcE0
	vcOne
	vcBias
	vcNegHalf
	vcHalf
	vcInvSqrt2
	vcInvSqrt2Pi
	vcP
	vcA1
	vcA2
	vcA3
	vcA4
	vcA5
	vcAbs
	vcN
)

// Constants of exp32 (Cephes expf.c): ln 2 = ln2Hi + ln2Lo with ln2Hi
// exact in few bits, and the polynomial coefficients.
const (
	expLo = -87.33654 // ≈ ln(2⁻¹²⁶): below, exp32 is 0
	expHi = 88.0      // above, exp32 is e⁸⁸ (n stays ≤ 127)
	ln2Hi = 0.693359375
	ln2Lo = -2.12194440e-4
	expC5 = 1.9875691500e-4
	expC4 = 1.3981999507e-3
	expC3 = 8.3334519073e-3
	expC2 = 4.1665795894e-2
	expC1 = 1.6666665459e-1
	expC0 = 5.0000001201e-1
)

// Constants of Abramowitz and Stegun 7.1.26.
const (
	erfP  = 0.3275911
	erfA1 = 0.254829592
	erfA2 = -0.284496736
	erfA3 = 1.421413741
	erfA4 = -1.453152027
	erfA5 = 1.061405429
)

// exp32 returns eˣ in float32 (see the file comment for its accuracy).
func exp32(x float32) float32 {
	if x != x {
		return x
	}
	if x < expLo {
		return 0
	}
	x = min(x, expHi)
	n := float32(math.RoundToEven(float64(x * float32(math.Log2E))))
	r := fma32(n, -ln2Hi, x)
	r = fma32(n, -ln2Lo, r)
	q := fma32(r, expC5, expC4)
	q = fma32(r, q, expC3)
	q = fma32(r, q, expC2)
	q = fma32(r, q, expC1)
	q = fma32(r, q, expC0)
	y := fma32(r*r, q, r)
	y = y + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// gelu32 returns Φ(x) and φ(x) of the standard normal distribution in
// float32: φ(x) = exp32(−x²/2)/√(2π), and Φ from erfc(|x|/√2) by
// Abramowitz and Stegun 7.1.26, which needs the same exponential.
func gelu32(x float32) (cdf, pdf float32) {
	e := exp32(x * x * -0.5)
	u := abs32(x) * invSqrt2
	t := 1 / fma32(u, erfP, 1)
	q := fma32(t, erfA5, erfA4)
	q = fma32(t, q, erfA3)
	q = fma32(t, q, erfA2)
	q = fma32(t, q, erfA1)
	half := float32(q * t * e * 0.5) // erfc(|x|/√2)/2; converted so that 1 − half is not fused
	cdf = 1 - half
	if x < 0 {
		cdf = half
	}
	return cdf, e * invSqrt2Pi
}

// abs32 returns |x| by clearing the sign bit, as the assembly does.
func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

// expShift sets dst[i] = exp32(src[i] − shift), the exponentials of a
// softmax row.
func expShift(dst, src []float32, shift float32) {
	src = src[:len(dst)]
	i := expShiftVec(dst, src, shift)
	for ; i < len(dst); i++ {
		dst[i] = exp32(src[i] - shift)
	}
}

// geluFwd sets y[i] = x[i]·Φ(x[i]) and, when d is not nil, d[i] = Φ(x[i]) +
// x[i]·φ(x[i]), the derivative.
func geluFwd(y, d, x []float32) {
	x = x[:len(y)]
	if d != nil {
		d = d[:len(y)]
	}
	i := geluVec(y, d, x)
	for ; i < len(y); i++ {
		cdf, pdf := gelu32(x[i])
		y[i] = x[i] * cdf
		if d != nil {
			d[i] = fma32(x[i], pdf, cdf)
		}
	}
}

// softmaxRow32 replaces the row z by softmax(z): the exponentials in
// float32 (exp32, within one ulp), their sum and its reciprocal in
// float64. It is the softmax of attention, where no normaliser is kept.
func softmaxRow32(z []float32) {
	m := rowMax32(z)
	expShift(z, z, m)
	var s float64
	for _, e := range z {
		s += float64(e)
	}
	scaleRow32(z, s)
}

// scaleRow32 divides the row z by its sum s as softmaxRow32 does: z[j]·(1/s)
// in float64, converted.
func scaleRow32(z []float32, s float64) {
	inv := 1 / s
	for j := scale64Vec(z, inv); j < len(z); j++ {
		z[j] = float32(float64(z[j]) * inv)
	}
}

// softmaxRows4 replaces the first m[r] values of each of the four rows at
// p[r·stride:] by their softmax, as softmaxRow32 does a row at a time,
// bit for bit: each row's maximum and exponentials as there, then the
// four rows' float64 sums over their common first columns at once in
// softSums4 (a chain a lane, each in column order), each chain continued
// here over the rest of its row (all of it without the kernel), and
// each row scaled by its own sum.
func softmaxRows4(p []float32, stride int, m [4]int) {
	for r := range 4 {
		z := p[r*stride : r*stride+m[r]]
		expShift(z, z, rowMax32(z))
	}
	s, done := softSums4(p, stride, min(m[0], m[1], m[2], m[3]))
	for r := range 4 {
		z := p[r*stride : r*stride+m[r]]
		for _, e := range z[done:] {
			s[r] += float64(e)
		}
		scaleRow32(z, s[r])
	}
}

// rowMax32 returns the largest value of z by max (−Inf for an empty z;
// NaN if z holds one; +0 over −0): its first values through maxVec where
// that gives max's bits, the rest one by one.
func rowMax32(z []float32) float32 {
	m := float32(math.Inf(-1))
	vm, j := maxVec(z)
	if j > 0 {
		m = vm
	}
	for _, v := range z[j:] {
		m = max(m, v)
	}
	return m
}

// vrowOff turns off the kernels of vrow_amd64.s and layerNormRows' eight
// rows at a time (BenchmarkVecKernels' comparison in one process).
var vrowOff bool
