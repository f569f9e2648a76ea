// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import "math"

// The host half of the clipping kernels: nn/cuda computes each example's
// factor from its norm on the host and scale_rows applies it on the
// device, as nn.Clip does on the CPU.

// NudgeFactor is the factor of nn.Clip's nudges, 1 − 2⁻²², which
// scale_rows applies with its nudge flag set to the rows whose norm
// float32 rounding left above the bound.
const NudgeFactor = float32(1 - 1.0/(1<<22))

// ClipFactor returns the factor nn.Clip applies to a gradient of norm norm
// under bound c, which scale_rows multiplies a row by: 0 for a non-finite
// norm (the row is dropped), float32(c/norm) above the bound, 1 otherwise.
func ClipFactor(norm, c float64) float32 {
	switch {
	case math.IsNaN(norm) || math.IsInf(norm, 0):
		return 0
	case norm > c:
		return float32(c / norm)
	}
	return 1
}
