// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !amd64 || purego

package nn

// gemmKernels lists the kernels this CPU runs: only the pure-Go one, on
// this architecture or with the purego build tag.
func gemmKernels() []gemmKernel { return []gemmKernel{gemmGo} }

// gemmPackT8 reports that no assembly transposes here.
func gemmPackT8([]float32, int, []float32, int, int) bool { return false }

// expShiftVec and geluVec leave all the work to the Go loops here.
func expShiftVec(dst, src []float32, shift float32) int { return 0 }
func geluVec(y, d, x []float32) int                     { return 0 }

// expDiffsVec leaves expDiffs to math.Exp.
func expDiffsVec(dst []float64, src []float32, shift float64) int { return 0 }
