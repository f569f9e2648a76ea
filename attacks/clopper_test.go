// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"testing"
)

// TestClopperPearsonPublished checks published exact (Clopper–Pearson)
// 95% intervals; a two-sided 95% interval is two one-sided limits at
// α = 0.025.
func TestClopperPearsonPublished(t *testing.T) {
	for _, tc := range []struct {
		k, n    int
		lo, hi  float64
		tol     float64
		comment string
	}{
		// R's binom.test example (Mendel's peas), printed by
		// binom.test(682, 925, p = 0.75) to 7 digits.
		{682, 925, 0.7076683, 0.7654066, 5e-8, "R binom.test example"},
		// Newcombe (1998), "Two-sided confidence intervals for the single
		// proportion: comparison of seven methods", Statistics in
		// Medicine 17(8), Table II, method 5 (exact), to 4 decimals.
		{81, 263, 0.2527, 0.3676, 5e-5, "Newcombe example (a)"},
		{15, 148, 0.0578, 0.1617, 5e-5, "Newcombe example (b)"},
		{0, 20, 0, 0.1684, 5e-5, "Newcombe example (c)"},
		{1, 29, 0.0009, 0.1776, 5e-5, "Newcombe example (d)"},
	} {
		lo, hi := ClopperPearson(tc.k, tc.n, 0.025)
		if math.Abs(lo-tc.lo) > tc.tol || math.Abs(hi-tc.hi) > tc.tol {
			t.Errorf("%s: ClopperPearson(%d, %d, 0.025) = [%.6f, %.6f], want [%.4f, %.4f]", tc.comment, tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// binomMass returns P(i ≤ Bin(n, p) ≤ j) for 0 < p < 1 by summing the
// probability mass term by term in log space: a slow reference that does
// not use the incomplete beta function. Summing the tail itself, rather
// than one minus the rest, keeps the digits of a small tail.
func binomMass(i0, j, n int, p float64) float64 {
	if p <= 0 || p >= 1 {
		panic("binomMass: p not in (0, 1)")
	}
	lgn, _ := math.Lgamma(float64(n + 1))
	s := 0.0
	for i := i0; i <= j; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(lgn - a - b + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return min(s, 1)
}

// bisect returns the p in (0, 1) where f crosses y, to within 1e-15; f
// decreases if down, else increases.
func bisect(f func(float64) float64, y float64, down bool) float64 {
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-15 {
		mid := (lo + hi) / 2
		if (f(mid) > y) == down {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TestClopperPearsonDefinition checks the limits against their definition,
// solved by bisection on the binomial distribution function summed term by
// term: P(Bin(n, lo) ≥ k) = α and P(Bin(n, hi) ≤ k) = α, including the
// small α (2.5e-4) that Membership uses.
func TestClopperPearsonDefinition(t *testing.T) {
	for _, n := range []int{1, 2, 7, 50, 256, 1000} {
		for _, k := range []int{0, 1, 2, n / 3, n / 2, n - 1, n} {
			if k < 0 || k > n {
				continue
			}
			for _, alpha := range []float64{0.025, 2.5e-4, 1e-6} {
				lo, hi := ClopperPearson(k, n, alpha)
				wantHi := 1.0
				if k < n {
					wantHi = bisect(func(p float64) float64 { return binomMass(0, k, n, p) }, alpha, true)
				}
				wantLo := 0.0
				if k > 0 {
					wantLo = bisect(func(p float64) float64 { return binomMass(k, n, n, p) }, alpha, false)
				}
				const tol = 1e-9
				if math.Abs(lo-wantLo) > tol || math.Abs(hi-wantHi) > tol {
					t.Errorf("ClopperPearson(%d, %d, %g) = [%.12g, %.12g], bisection [%.12g, %.12g]", k, n, alpha, lo, hi, wantLo, wantHi)
				}
				if p := float64(k) / float64(n); lo > p || hi < p {
					t.Errorf("ClopperPearson(%d, %d, %g) = [%g, %g] misses k/n", k, n, alpha, lo, hi)
				}
			}
		}
	}
}

func TestClopperPearsonPanics(t *testing.T) {
	for _, tc := range []struct {
		k, n  int
		alpha float64
	}{{0, 0, 0.05}, {-1, 5, 0.05}, {6, 5, 0.05}, {1, 5, 0}, {1, 5, 1}, {1, 5, math.NaN()}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ClopperPearson(%d, %d, %v) did not panic", tc.k, tc.n, tc.alpha)
				}
			}()
			ClopperPearson(tc.k, tc.n, tc.alpha)
		}()
	}
}
