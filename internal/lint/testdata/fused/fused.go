// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package fused holds one loop the compiler may fuse and the same loop
// written so that it cannot; TestFusionCheckFinds builds it for arm64.
package fused

// Fusable returns Σ a[i]·b[i]: each product is added unrounded.
func Fusable(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Rounded returns Σ a[i]·b[i] with each product rounded first: the
// explicit conversion forbids the fusion.
func Rounded(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}
