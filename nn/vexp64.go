// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// This file holds expDiffs, the float64 exponentials of the losses'
// log-sum-exp (logSumExp, softmaxRow) four lanes at a time, with the
// bits of math.Exp.
//
// On amd64, math.Exp is the assembly archExp of the Go distribution
// (math/exp_amd64.s): Shibata's reduction x = n·ln 2 + r with ln 2 in
// two parts, r/16, a degree-8 Taylor polynomial, four squarings and the
// scaling by 2ⁿ, with fused multiply-adds where the CPU has AVX and FMA.
// The kernel expDiffsAVX2 (vexp64_amd64.s) runs exactly those operations
// in each of four lanes, so a lane's result is math.Exp's bits. It does
// not run archExp's special cases (x not finite, x above the overflow
// bound, 2ⁿ not a normal number): it stops before a group of four that
// holds such a lane and leaves that group to math.Exp itself.
// TestExpDiffs holds the two together on random, boundary and special
// arguments.
//
// References:
//   - N. Shibata, Efficient evaluation methods of elementary functions
//     suitable for SIMD computation, Computer Science – Research and
//     Development 25 (ISC'10), 2010, pp. 25–32.

// ve64 are the constants of expDiffsAVX2, each replicated over four
// lanes; the indices are the ve* constants below (the assembly uses them
// times 32 bytes). The values are math/exp_amd64.s's.
var ve64 = func() (c [veN][4]float64) {
	v := [veN]float64{
		veLog2e:     1.4426950408889634073599246810018920,
		veLn2U:      0.69314718055966295651160180568695068359375,
		veLn2L:      0.28235290563031577122588448175013436025525412068e-12,
		veSixteenth: 0.0625,
		veT8:        2.4801587301587301587e-5,
		veT7:        1.9841269841269841270e-4,
		veT6:        1.3888888888888888889e-3,
		veT5:        8.3333333333333333333e-3,
		veT4:        4.1666666666666666667e-2,
		veT3:        1.6666666666666666667e-1,
		veHalf:      0.5,
		veOne:       1,
		veTwo:       2,
	}
	for i := range c {
		for j := range c[i] {
			c[i][j] = v[i]
		}
	}
	return c
}()

// Indices of ve64.
const (
	veLog2e = iota
	veLn2U
	veLn2L
	veSixteenth
	veT8
	veT7
	veT6
	veT5
	veT4
	veT3
	veHalf
	veOne
	veTwo
	veN
)

// expDiffs sets dst[j] to math.Exp(float64(src[j]) − shift) for every j
// < len(dst), with the same bits; src must be at least as long as dst.
func expDiffs(dst []float64, src []float32, shift float64) {
	src = src[:len(dst)]
	for j := 0; j < len(dst); {
		j += expDiffsVec(dst[j:], src[j:], shift)
		// A group of four the assembly left (a special lane), or the
		// last len(dst) mod 4 elements.
		for end := min(j+4, len(dst)); j < end; j++ {
			dst[j] = math.Exp(float64(src[j]) - shift)
		}
	}
}
