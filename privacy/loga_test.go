// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

// logAQuad is an independent reference for log A_α: the defining integral
//
//	A_α = ∫ μ₀(z) (μ(z)/μ₀(z))^α dz,  μ₀ = N(0, σ²), μ = (1−q)μ₀ + q N(1, σ²)
//
// (Mironov, Talwar & Zhang 2019, §3.3) by composite Simpson's rule on n
// intervals over [−40σ−1, α+40σ+1], which holds all the mass of every
// binomial term. The integrand is evaluated in log space and shifted by its
// maximum. When log A_α is small, A_α − 1 is integrated instead (with the
// integrand φ(z)·expm1(α log1p(q expm1(t)))), so that the result keeps its
// relative accuracy; dp_accounting's test does the same check with mpmath.
func logAQuad(q, sigma, alpha float64, n int) float64 {
	lo, hi := -40*sigma-1, alpha+40*sigma+1
	h := (hi - lo) / float64(n)
	s2 := sigma * sigma
	lphi := func(z float64) float64 { return -z*z/(2*s2) - math.Log(sigma) - 0.5*math.Log(2*math.Pi) }
	// log of the likelihood ratio μ/μ₀ at z.
	lr := func(z float64) float64 {
		t := (2*z - 1) / (2 * s2)
		if t < 1 {
			return math.Log1p(q * math.Expm1(t))
		}
		return logAdd(math.Log1p(-q), math.Log(q)+t)
	}
	simpson := func(f func(float64) float64) float64 {
		s := f(lo) + f(hi)
		for i := 1; i < n; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			s += w * f(lo+float64(i)*h)
		}
		return s * h / 3
	}
	g := make([]float64, n+1)
	gmax := math.Inf(-1)
	for i := range g {
		z := lo + float64(i)*h
		g[i] = lphi(z) + alpha*lr(z)
		gmax = math.Max(gmax, g[i])
	}
	idx := func(z float64) int { return int(math.Round((z - lo) / h)) }
	la := gmax + math.Log(simpson(func(z float64) float64 { return math.Exp(g[idx(z)] - gmax) }))
	if la > 1e-2 {
		return la
	}
	am1 := simpson(func(z float64) float64 {
		v := alpha * lr(z)
		if v > 30 {
			return math.Exp(lphi(z) + v + math.Log1p(-math.Exp(-v)))
		}
		return math.Exp(lphi(z)) * math.Expm1(v)
	})
	return math.Log1p(am1)
}

// TestLogAQuadrature checks log A_α against the numerical integral at the
// corners dp_accounting's test_compute_log_a_equals_mp covers: q from 1e-7
// to 0.999, σ from 0.1 to 100, α from 1.01 to 256.1, integer and fractional.
func TestLogAQuadrature(t *testing.T) {
	t.Parallel()
	n := 200000
	if testing.Short() {
		n = 50000
	}
	for _, tc := range []struct{ q, sigma, alpha float64 }{
		{1e-7, 0.1, 1.01},
		{1e-6, 0.1, 256},
		{1e-5, 0.1, 256.1},
		{1e-6, 1, 27},
		{1e-4, 1, 1.5},
		{1e-3, 1, 2},
		{0.01, 2.5, 1.5},
		{0.01, 0.7, 4.4},
		{0.01, 10, 20},
		{0.1, 100, 20.5},
		{0.99, 0.1, 256},
		{0.999, 100, 256.1},
		{0.5, 1, 1.01},
		{0.04, 1.5, 7.3},
	} {
		got := logA(tc.q, tc.sigma, tc.alpha)
		want := logAQuad(tc.q, tc.sigma, tc.alpha, n)
		if !equalWithinRel(got, want, 1e-6) {
			t.Errorf("log A(q=%g, σ=%g, α=%g) = %.10g, quadrature %.10g", tc.q, tc.sigma, tc.alpha, got, want)
		}
	}
}
