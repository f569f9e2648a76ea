// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import "math"

// meanStd returns the mean and the sample standard deviation (n−1 in the
// denominator) of x. The standard deviation of a single value is 0; both are
// NaN for an empty x. It uses the two-pass algorithm with the compensating term
// of Chan, Golub and LeVeque (1983), eq. 1.7, so that values far from zero
// with a small spread lose no precision.
//
// References:
//   - T. F. Chan, G. H. Golub, R. J. LeVeque, "Algorithms for computing the
//     sample variance: analysis and recommendations", The American
//     Statistician 37(3), 1983.
func meanStd(x []float64) (mean, std float64) {
	n := len(x)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	var sum float64
	for _, v := range x {
		sum += v
	}
	mean = sum / float64(n)
	if n == 1 {
		return mean, 0
	}
	var ss, comp float64
	for _, v := range x {
		d := v - mean
		ss += float64(d * d)
		comp += d
	}
	variance := (ss - comp*comp/float64(n)) / float64(n-1)
	return mean, math.Sqrt(math.Max(variance, 0))
}
