// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !amd64 || purego

package nn

// The kernels of vgrad_amd64.s leave all the work to the Go loops.
func axpyVec(y, a, x []float32, alpha float32) int { return 0 }
func mulAddVec(y, s, a, b []float32) int           { return 0 }
func scaleVec(x []float32, alpha float32) int      { return 0 }

func sumSquares8(x *[8][]float32, n int) (s [8]float64, ok bool) { return s, false }
func acc4(acc []float64, g *[4][]float32) bool                   { return false }

// gradVec reports whether the kernels of vgrad_amd64.s run: never here.
func gradVec() bool { return false }

func normRowHVec(y, h, x, g, b []float32, m, r float64) int { return 0 }

func softDots4(p, d []float32, stride, n int) (s [4]float64, ok bool) { return s, false }
func softBackVec(p, d []float32, s float64) int                       { return 0 }
func softSums4(p []float32, stride, n int) (s [4]float64, done int)   { return s, 0 }
