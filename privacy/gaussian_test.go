// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

// TestAnalyticGaussianSigma reproduces the σ/Δ table of DP-MTV
// ("Differentially Private Multimodal In-Context Learning"; δ = 1e-5,
// derived from Balle & Wang 2018,
// Theorem 8; 3 decimals).
func TestAnalyticGaussianSigma(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		eps, delta, want, tol float64
	}{
		{0.1, 1e-5, 30.750, 5e-4},
		{0.25, 1e-5, 13.286, 5e-4},
		{0.5, 1e-5, 7.032, 5e-4},
		{1, 1e-5, 3.731, 5e-4},
		{2, 1e-5, 1.994, 5e-4},
		{4, 1e-5, 1.081, 5e-4},
		{5, 1e-5, 0.892, 5e-4},
		{8, 1e-5, 0.600, 5e-4},
		{10, 1e-5, 0.500, 5e-4},
	} {
		for _, sens := range []float64{1, 0.0566, 3} {
			got, err := AnalyticGaussianSigma(tc.eps, tc.delta, sens)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got/sens-tc.want) > tc.tol {
				t.Errorf("AnalyticGaussianSigma(%g, %g, %g)/Δ = %.10g, want %.10g", tc.eps, tc.delta, sens, got/sens, tc.want)
			}
			// Never above δ, and a hair less noise is above δ.
			d, _ := GaussianDelta(got, sens, tc.eps)
			d2, _ := GaussianDelta(got*(1-1e-9), sens, tc.eps)
			if d > tc.delta*(1+1e-9) || d2 <= tc.delta {
				t.Errorf("δ(σ) = %g, δ(σ(1−1e-9)) = %g around target %g", d, d2, tc.delta)
			}
		}
	}
}

// TestClassicalGaussianSigma reproduces the classical row of the DP-MTV
// note's table (Dwork & Roth Thm A.1 formula, δ = 1e-5). The table rounds
// to 3 decimals (its 0.485 at ε = 10 is 0.48448), hence the tolerance.
func TestClassicalGaussianSigma(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ eps, want float64 }{
		{0.1, 48.448}, {0.25, 19.379}, {0.5, 9.690}, {1, 4.845}, {2, 2.422},
		{4, 1.211}, {5, 0.969}, {8, 0.606}, {10, 0.485},
	} {
		got, err := ClassicalGaussianSigma(tc.eps, 1e-5, 1)
		if err != nil || math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("ClassicalGaussianSigma(%g, 1e-5, 1) = %.6g, %v, want %g", tc.eps, got, err, tc.want)
		}
	}
}

// TestGaussianDelta is the edge table of the Google DP library's
// TestDeltaForGaussian, plus closed forms: δ(0) = erf(Δ/(2√2σ)), and the
// μ-GDP value δ(1) = 0.126936 for μ = 1 from dp_accounting's PLD test.
func TestGaussianDelta(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, tc := range []struct {
		desc                   string
		sigma, sens, eps, want float64
		tol                    float64
	}{
		{"sigma 0", 0, 1, 1, 1, 0},
		{"eps inf", 1, 1, inf, 0, 0},
		{"sensitivity inf", 1, inf, 1, 1, 0},
		{"sensitivity 0", 1, 0, 1, 0, 0},
		{"subnormal sensitivity", 1, 5e-324, 1, 0, 0},
		{"sigma 0 sensitivity 0", 0, 0, 1, 0, 0},
		{"eps 0 closed form", 2, 1, 0, math.Erf(1 / (2 * math.Sqrt2 * 2)), 1e-14},
		{"mu 1 (dp_accounting)", 1, 1, 1, 0.126936, 1e-6},
		{"mu 1 scaled", 3, 3, 1, 0.126936, 1e-6},
		// Far tail: δ ≈ Φ(a)(1 − e^ε Φ(b)/Φ(a)); closed-form value from the
		// asymptotic series, computed by hand: μ = 0.1, ε = 2 gives
		// a = −19.95, b = −20.05.
		{"far tail", 10, 1, 2, math.Exp(logNormCDF(-19.95)) - math.Exp(2+logNormCDF(-20.05)), 1e-9},
	} {
		got, err := GaussianDelta(tc.sigma, tc.sens, tc.eps)
		if err != nil {
			t.Errorf("%s: %v", tc.desc, err)
			continue
		}
		if math.Abs(got-tc.want) > tc.tol*math.Max(1, tc.want) && !(tc.tol != 0 && equalWithinRel(got, tc.want, tc.tol)) {
			t.Errorf("%s: GaussianDelta(%g, %g, %g) = %.10g, want %.10g", tc.desc, tc.sigma, tc.sens, tc.eps, got, tc.want)
		}
	}
	for _, bad := range [][3]float64{{math.NaN(), 1, 1}, {-1, 1, 1}, {inf, 1, 1}, {1, -1, 1}, {1, math.NaN(), 1}, {1, 1, -1}, {1, 1, math.NaN()}} {
		if _, err := GaussianDelta(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("GaussianDelta%v: got nil error", bad)
		}
	}
}

func TestGaussianEpsilonRoundTrip(t *testing.T) {
	t.Parallel()
	for _, sigma := range []float64{0.3, 1, 4.530877117, 30} {
		for _, delta := range []float64{1e-3, 1e-6, 1e-10} {
			eps, err := GaussianEpsilon(sigma, 1, delta)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := GaussianDelta(sigma, 1, eps)
			if d > delta || !equalWithinRel(d, delta, 1e-9) {
				t.Errorf("σ=%g: δ(ε(%g)) = %g", sigma, delta, d)
			}
		}
	}
}

func TestAnalyticGaussianSigmaEdges(t *testing.T) {
	t.Parallel()
	if s, err := AnalyticGaussianSigma(math.Inf(1), 1e-5, 1); s != 0 || err != nil {
		t.Errorf("ε=+Inf: got %v, %v, want 0", s, err)
	}
	if s, err := AnalyticGaussianSigma(1, 1e-5, 0); s != 0 || err != nil {
		t.Errorf("Δ=0: got %v, %v, want 0", s, err)
	}
	for _, bad := range [][3]float64{{1, 0, 1}, {0, 1e-5, 1}, {-1, 1e-5, 1}, {math.NaN(), 1e-5, 1}, {1, 1, 1}, {1, math.NaN(), 1}, {1, 1e-5, math.Inf(1)}, {1, 1e-5, -1}} {
		if s, err := AnalyticGaussianSigma(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("AnalyticGaussianSigma%v = %v, want an error", bad, s)
		}
	}
}
