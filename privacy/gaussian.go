// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"errors"
	"math"
)

// GaussianDelta returns the smallest δ such that the Gaussian mechanism
// f(D) + N(0, σ² I), for f of ℓ₂ sensitivity Δ, is (ε, δ)-DP. It is exact
// (Balle & Wang 2018, Theorem 8):
//
//	δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ),
//
// evaluated in log space so that it keeps its relative accuracy for tiny δ.
// Edge cases, as in the Google DP library: Δ = 0 or ε = +Inf gives 0;
// σ = 0 (with Δ > 0) or Δ = +Inf gives 1; a subnormal Δ gives 0.
//
// References:
//   - B. Balle, Y.-X. Wang. Improving the Gaussian mechanism for
//     differential privacy: analytical calibration and optimal denoising.
//     ICML 2018. arXiv:1805.06530.
func GaussianDelta(sigma, sensitivity, epsilon float64) (float64, error) {
	if err := CheckSigma(sigma); err != nil {
		return 0, err
	}
	if err := CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if err := CheckLoss(epsilon); err != nil {
		return 0, err
	}
	switch {
	case sensitivity == 0 || math.IsInf(epsilon, 1):
		return 0, nil
	case sigma == 0 || math.IsInf(sensitivity, 1):
		return 1, nil
	}
	return gaussianDelta(sensitivity/sigma, epsilon), nil
}

// gaussianDelta is δ(ε) for the Gaussian mechanism with μ = Δ/σ > 0.
func gaussianDelta(mu, eps float64) float64 {
	a := float64(mu/2) - eps/mu
	b := float64(-mu/2) - eps/mu
	la := logNormCDF(a)
	lb := eps + logNormCDF(b)
	if math.IsInf(la, -1) || lb >= la {
		return 0
	}
	return math.Exp(la) * -math.Expm1(lb-la)
}

// GaussianEpsilon returns the smallest ε such that the Gaussian mechanism
// with noise standard deviation sigma and ℓ₂ sensitivity Δ is (ε, δ)-DP: the
// inverse of GaussianDelta, found by bisection to full precision and
// rounded up. It returns +Inf if σ = 0 or δ = 0 (with Δ > 0).
func GaussianEpsilon(sigma, sensitivity, delta float64) (float64, error) {
	if err := CheckSigma(sigma); err != nil {
		return 0, err
	}
	if err := CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	switch {
	case sensitivity == 0:
		return 0, nil
	case sigma == 0 || delta == 0 || math.IsInf(sensitivity, 1):
		return math.Inf(1), nil
	}
	mu := sensitivity / sigma
	if gaussianDelta(mu, 0) <= delta {
		return 0, nil
	}
	lo, hi := 0.0, 1.0
	for gaussianDelta(mu, hi) > delta {
		lo, hi = hi, 2*hi
		if hi > 1e300 {
			return math.Inf(1), nil
		}
	}
	for range 2000 {
		mid := lo + float64((hi-lo)/2)
		if mid <= lo || mid >= hi {
			break
		}
		if gaussianDelta(mu, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// AnalyticGaussianSigma returns the smallest noise standard deviation σ such
// that the Gaussian mechanism for a function of ℓ₂ sensitivity Δ is
// (ε, δ)-DP: the analytic Gaussian mechanism of Balle & Wang (2018),
// Algorithm 1, solved by bisection on GaussianDelta to full float64
// precision and rounded up, so the returned σ never gives more than δ. It
// returns 0 if ε = +Inf or Δ = 0, and an error if δ = 0 (no finite σ gives
// (ε, 0)-DP) or Δ = +Inf.
func AnalyticGaussianSigma(epsilon, delta, sensitivity float64) (float64, error) {
	if err := CheckEpsilon(epsilon); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	switch {
	case math.IsInf(epsilon, 1) || sensitivity == 0:
		return 0, nil
	case delta == 0:
		return 0, errors.New("privacy: the Gaussian mechanism is not (ε, 0)-DP for any finite sigma; delta must be > 0")
	case math.IsInf(sensitivity, 1):
		return 0, errors.New("privacy: sensitivity is +Inf; no finite sigma gives a guarantee")
	}
	// Work with s = σ/Δ; δ decreases in s.
	f := func(s float64) float64 { return gaussianDelta(1/s, epsilon) }
	lo, hi := 1.0, 1.0
	for f(hi) > delta {
		lo, hi = hi, 2*hi
	}
	for f(lo) <= delta && lo > 1e-300 {
		hi, lo = lo, lo/2
	}
	for range 2000 {
		mid := lo + float64((hi-lo)/2)
		if mid <= lo || mid >= hi {
			break
		}
		if f(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	// σ = hi·Δ is rounded, and GaussianDelta evaluates δ at Δ/σ, which
	// differs from 1/hi in the last bits; δ's log-space evaluation carries
	// relative rounding of up to ~1e-11 where its two terms nearly cancel.
	// Step σ up until the caller's own check, GaussianDelta(σ, Δ, ε) ≤ δ,
	// holds exactly.
	sigma := hi * sensitivity
	for range 1000 {
		if gaussianDelta(sensitivity/sigma, epsilon) <= delta {
			break
		}
		sigma *= 1 + 0x1p-40
	}
	return sigma, nil
}

// ClassicalGaussianSigma returns the classical calibration
// σ = Δ·√(2 ln(1.25/δ))/ε of the Gaussian mechanism (Dwork & Roth 2014,
// Theorem A.1), which the theorem proves only for ε < 1; it is provided to
// reproduce papers that use it (Sec-MMFL), not to calibrate new releases.
// It requires δ > 0 and returns 0 if ε = +Inf.
func ClassicalGaussianSigma(epsilon, delta, sensitivity float64) (float64, error) {
	if err := CheckEpsilon(epsilon); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := CheckSensitivity(sensitivity); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, errors.New("privacy: the classical Gaussian bound needs delta > 0")
	}
	if math.IsInf(epsilon, 1) {
		return 0, nil
	}
	return sensitivity * math.Sqrt(2*math.Log(1.25/delta)) / epsilon, nil
}
