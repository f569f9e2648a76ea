// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

package nn

//go:noescape
func expShiftAVX2(dst, src *float32, n8 int, shift float32, c *[vcN][8]float32)

//go:noescape
func geluAVX2(y, d, x *float32, n8 int, c *[vcN][8]float32)

// vmathAVX2 says whether the AVX2 kernels of vmath_amd64.s run: where the
// CPU has AVX2 and FMA, unless REPRO_GEMM=go asks for pure Go.
var vmathAVX2 = gemmUse.name != "go"

// expShiftVec computes the first 8·⌊len(dst)/8⌋ elements of expShift in
// assembly where it can and returns how many it computed.
func expShiftVec(dst, src []float32, shift float32) int {
	n8 := len(dst) / 8
	if !vmathAVX2 || n8 == 0 {
		return 0
	}
	expShiftAVX2(&dst[0], &src[0], n8, shift, &vmathConsts)
	return 8 * n8
}

// geluVec computes the first 8·⌊len(y)/8⌋ elements of geluFwd in
// assembly where it can and returns how many it computed.
func geluVec(y, d, x []float32) int {
	n8 := len(y) / 8
	if !vmathAVX2 || n8 == 0 {
		return 0
	}
	var dp *float32
	if d != nil {
		dp = &d[0]
	}
	geluAVX2(&y[0], dp, &x[0], n8, &vmathConsts)
	return 8 * n8
}
