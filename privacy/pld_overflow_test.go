// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

// TestPLDSampledLargeLoss: one step of a Poisson-subsampled Gaussian whose
// privacy loss passes log(max float64) ≈ 709.78 (q = ½, σ = 0.0127: the
// loss of an included record is about log q + 1/(2σ²) ≈ 3100, with
// standard deviation 1/σ ≈ 79). A lower bound on the exact ε at δ:
// δ(ε) ≥ P(L > ε + 1)·(1 − e⁻¹), and with probability q the record is in
// and L > 2001 whenever x > ½ + σ²·(2001 − log q), 13.9 standard
// deviations below its mean 1, so δ(2000) ≥ ½·0.63 ≫ 10⁻⁵ and ε > 2000.
// The accountant must not report less on any grid (an ε below the true
// one is unsafe); the inverse of the loss used to overflow in e^ℓ − 1
// above 709.78 and put every larger loss in the cell at 709.8.
func TestPLDSampledLargeLoss(t *testing.T) {
	t.Parallel()
	const q, sigma, delta = 0.5, 0.0127, 1e-5
	for _, h := range []float64{1e-2, 0.1} {
		a, err := NewPLD(&PLDOptions{Interval: h})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(PoissonGaussian{Q: q, Sigma: sigma}, 1); err != nil {
			t.Fatal(err)
		}
		eps, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		// The upper side: the loss is at most log q + (2x − 1)/(2σ²)
		// + log(1 + …) with x ≤ 1 + 40σ, so ε stays below 1/(2σ²) + 40/σ.
		if !(eps > 2000) || !(eps < 1/(2*sigma*sigma)+40/sigma) || math.IsInf(eps, 0) {
			t.Errorf("interval %v: ε = %v, want above 2000 (the exact ε's lower bound) and finite", h, eps)
		}
	}
}
