// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import "math"

// PSNR returns the peak signal-to-noise ratio of x against the original
// orig in decibels, 10·log₁₀(peak²/MSE), for values in [0, peak]; +Inf
// when the images are equal. breaching (Geiping et al.) computes the same
// with peak 1 on de-normalised images. It panics if the lengths differ or
// are zero.
func PSNR(x, orig []float32, peak float64) float64 {
	if len(x) != len(orig) || len(x) == 0 {
		panic("gia: image length mismatch")
	}
	var s float64
	for i, v := range x {
		d := float64(v) - float64(orig[i])
		s += float64(d * d)
	}
	mse := s / float64(len(x))
	if mse == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(peak*peak/mse)
}
