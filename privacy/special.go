// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import "math"

// normCDF returns Φ(x), the standard normal distribution function.
func normCDF(x float64) float64 { return float64(0.5 * math.Erfc(-x/math.Sqrt2)) }

// normSF returns 1 − Φ(x) without cancellation.
func normSF(x float64) float64 { return float64(0.5 * math.Erfc(x/math.Sqrt2)) }

// logNormCDF returns log Φ(x), accurate in the far left tail where Φ(x)
// underflows. For x < −30 it uses the asymptotic series
// Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + …) (Abramowitz & Stegun
// 26.2.12), whose truncation error there is below 1e-13 relative.
func logNormCDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x == math.Inf(-1):
		return math.Inf(-1)
	case x < -30:
		x2 := 1 / (x * x)
		// Horner's rule from the innermost term, 1 + x2·(−1 + x2·(3 + …)),
		// each product rounded (no fused multiply-add; docs/engine.md).
		s := 10395.0
		for _, c := range [...]float64{-945, 105, -15, 3, -1, 1} {
			s = c + float64(x2*s)
		}
		return float64(-0.5*x*x) - math.Log(-x) - float64(0.5*math.Log(2*math.Pi)) + math.Log(s)
	case x > 5:
		return math.Log1p(-normSF(x))
	}
	return math.Log(normCDF(x))
}

// logNormSF returns log(1 − Φ(x)).
func logNormSF(x float64) float64 { return logNormCDF(-x) }

// logErfc returns log erfc(x), accurate for large x.
func logErfc(x float64) float64 { return math.Ln2 + logNormCDF(-x*math.Sqrt2) }

// logAdd returns log(eᵃ + eᵇ).
func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if b == math.Inf(-1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// logSub returns log(eᵃ − eᵇ) for a ≥ b; it returns −Inf if a == b.
func logSub(a, b float64) float64 {
	if b == math.Inf(-1) {
		return a
	}
	if a <= b {
		return math.Inf(-1)
	}
	d := b - a
	if d > -math.Ln2 {
		return a + math.Log(-math.Expm1(d))
	}
	return a + math.Log1p(-math.Exp(d))
}

// normQuantile returns Φ⁻¹(p) for p in (0, 1) by Newton iterations on
// log Φ from a closed-form start; it is used only outside hot loops.
func normQuantile(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	// Start from the inverse of a bisection-safe bracket, then refine by
	// bisection on Φ, which is monotone; 200 halvings of [-40, 40] reach
	// machine precision.
	lo, hi := -40.0, 40.0
	lp := math.Log(p)
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid == lo || mid == hi {
			break
		}
		if logNormCDF(mid) < lp {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}
