// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !amd64 || purego

package nn

// The kernels of vrow_amd64.s leave all the work to the Go loops here.
func normRowVec(y, x, g, b []float32, m, r float64) int { return 0 }
func addVec(y, a, b []float32) int                      { return 0 }
func smearVec(y, x, p, s, t []float32) bool             { return false }
func scale64Vec(z []float32, s float64) int             { return 0 }
func maxVec(z []float32) (m float32, n int)             { return 0, 0 }
func negZeroVec(x []float32, rows, cols, ld int) (found, ok bool) {
	return false, false
}

// rowStats16 leaves LayerNorm's statistics to layerNormRows' Go loops.
func rowStats16(x []float32, c int) (m, s [16]float64, ok bool) { return m, s, false }
