// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

package nn

//go:noescape
func expShiftAVX2(dst, src *float32, n8 int, shift float32, c *[vcN][8]float32)

//go:noescape
func expDiffsAVX2(dst *float64, src *float32, n4 int, shift float64, c *[veN][4]float64) int

//go:noescape
func geluAVX2(y, d, x *float32, n8 int, c *[vcN][8]float32)

// vmathAVX2 says whether the AVX2 kernels of vmath_amd64.s run: where the
// CPU has AVX2 and FMA, unless REPRO_GEMM=go asks for pure Go.
var vmathAVX2 = gemmUse.name != "go"

// expShiftVec computes the elements of expShift in assembly where it can
// and returns how many it computed (all or none).
//
// The last len(dst) mod 8 elements go through the assembly too, copied
// into a vector of their own (the lanes do not interact), since the Go
// loop's emulated fused multiply-adds are slow and the rows of attention
// are short.
func expShiftVec(dst, src []float32, shift float32) int {
	if !vmathAVX2 || len(dst) == 0 {
		return 0
	}
	if !vrowOff {
		// The last partial vector in the same call (vrow_amd64.s).
		expShiftMasked(dst, src, shift)
		return len(dst)
	}
	n8 := len(dst) / 8
	if n8 > 0 {
		expShiftAVX2(&dst[0], &src[0], n8, shift, &vmathConsts)
	}
	if r := len(dst) - 8*n8; r > 0 {
		var in, out [8]float32
		copy(in[:], src[8*n8:])
		expShiftAVX2(&out[0], &in[0], 1, shift, &vmathConsts)
		copy(dst[8*n8:], out[:r])
	}
	return len(dst)
}

// geluVec computes the elements of geluFwd in assembly where it can and
// returns how many it computed (all or none).
// Like expShiftVec, it runs the last len(y) mod 8 elements as a vector of
// their own.
func geluVec(y, d, x []float32) int {
	if !vmathAVX2 || len(y) == 0 {
		return 0
	}
	n8 := len(y) / 8
	if n8 > 0 {
		var dp *float32
		if d != nil {
			dp = &d[0]
		}
		geluAVX2(&y[0], dp, &x[0], n8, &vmathConsts)
	}
	if r := len(y) - 8*n8; r > 0 {
		var in, out, dout [8]float32
		copy(in[:], x[8*n8:])
		geluAVX2(&out[0], &dout[0], &in[0], 1, &vmathConsts)
		copy(y[8*n8:], out[:r])
		if d != nil {
			copy(d[8*n8:], dout[:r])
		}
	}
	return len(y)
}

// expDiffsVec computes elements of expDiffs in assembly from the first
// on, in groups of four, and returns how many it computed: it stops before
// a group with a lane that math.Exp takes through a special case, and
// before the last len(dst) mod 4 elements.
func expDiffsVec(dst []float64, src []float32, shift float64) int {
	n4 := len(dst) / 4
	if !vmathAVX2 || n4 == 0 {
		return 0
	}
	return 4 * expDiffsAVX2(&dst[0], &src[0], n4, shift, &ve64)
}
