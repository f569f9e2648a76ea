// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds the statistics of repro verify and repro compare: the
// t-tests of an effect over seeds, Holm's correction, the percentile
// bootstrap interval and the power of a t-test.

// A TTest is a t-test of an effect over seeds: the difference of the means
// of two samples (Welch), the mean of the paired differences (paired), or
// the mean of one sample.
type TTest struct {
	// Kind is "welch", "paired" or "one-sample".
	Kind string `json:"kind"`
	// Effect is the estimate: mean(a) − mean(b), the mean difference, or
	// the mean. SE is its standard error and DF the degrees of freedom
	// (Welch–Satterthwaite for Welch; n−1 otherwise).
	Effect float64 `json:"effect"`
	SE     float64 `json:"se"`
	DF     float64 `json:"df"`
}

// welch returns the Welch t-test of mean(a) − mean(b). a and b must each
// hold at least two values. When both variances are 0, DF is
// len(a)+len(b)−2 and SE is 0.
//
// References:
//   - B. L. Welch, "The generalization of 'Student's' problem when several
//     different population variances are involved", Biometrika 34, 1947.
func welch(a, b []float64) TTest {
	ma, sa := meanStd(a)
	mb, sb := meanStd(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	t := TTest{Kind: "welch", Effect: ma - mb, SE: math.Sqrt(va + vb)}
	if va+vb == 0 {
		t.DF = float64(len(a) + len(b) - 2)
		return t
	}
	t.DF = (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	return t
}

// oneSample returns the t-test of the mean of x (at least two values); it
// is the paired test when x holds the paired differences.
func oneSample(x []float64, kind string) TTest {
	m, s := meanStd(x)
	return TTest{Kind: kind, Effect: m, SE: s / math.Sqrt(float64(len(x))), DF: float64(len(x) - 1)}
}

// cdf returns P(T ≤ (Effect − x)/SE) for T of Student's t with t.DF
// degrees of freedom. With SE = 0 the effect is known exactly: the result
// is 1 above x, 0 below and ½ at x (no evidence either way).
func (t TTest) cdf(x float64) float64 {
	d := t.Effect - x
	if t.SE == 0 || math.IsNaN(t.SE) {
		switch {
		case d > 0:
			return 1
		case d < 0:
			return 0
		}
		return 0.5
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: t.DF}.CDF(d / t.SE)
}

// PAbove returns the one-sided p-value of the null hypothesis "the effect
// is at most x" (small when the effect is significantly above x).
func (t TTest) PAbove(x float64) float64 { return 1 - t.cdf(x) }

// PBelow returns the one-sided p-value of "the effect is at least x".
func (t TTest) PBelow(x float64) float64 { return t.cdf(x) }

// holm returns the p-values p adjusted by Holm's step-down method, which
// controls the family-wise error rate: the i-th smallest p is multiplied
// by m−i+1 (i from 1), made non-decreasing in that order, and capped at 1.
// A test is rejected at level α when its adjusted p is at most α. The
// result has the order of p; p is not modified.
//
// References:
//   - S. Holm, "A simple sequentially rejective multiple test procedure",
//     Scandinavian Journal of Statistics 6(2), 1979.
func holm(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmpFloat(p[i], p[j]) })
	adj := make([]float64, m)
	running := 0.0
	for r, i := range order {
		running = math.Max(running, math.Min(1, float64(m-r)*p[i]))
		adj[i] = running
	}
	return adj
}

// holmLevels returns, for each test, the level Holm's method compares its
// p-value with at its rank: α/(m−r+1) for the r-th smallest p.
func holmLevels(p []float64, alpha float64) []float64 {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmpFloat(p[i], p[j]) })
	lv := make([]float64, len(p))
	for r, i := range order {
		lv[i] = alpha / float64(len(p)-r)
	}
	return lv
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bootstrapCI returns the percentile bootstrap interval at level 1−α of
// the effect that stat computes from resamples: with b nil, of the mean of
// a (a one-sample or paired effect, a holding the differences); else of
// mean(a) − mean(b), a and b resampled independently. It draws n
// resamples from rng.
//
// References:
//   - B. Efron, R. J. Tibshirani, "An Introduction to the Bootstrap",
//     Chapman & Hall 1993, ch. 13 (the percentile interval).
func bootstrapCI(rng *rand.Rand, a, b []float64, alpha float64, n int) (lo, hi float64) {
	mean := func(x []float64) float64 {
		var s float64
		for range x {
			s += x[rng.IntN(len(x))]
		}
		return s / float64(len(x))
	}
	est := make([]float64, n)
	for i := range est {
		est[i] = mean(a)
		if b != nil {
			est[i] -= mean(b)
		}
	}
	slices.Sort(est)
	return quantileSorted(est, alpha/2), quantileSorted(est, 1-float64(alpha/2))
}

// quantileSorted returns the p-quantile of the sorted x by linear
// interpolation between order statistics (R's quantile type 7).
func quantileSorted(x []float64, p float64) float64 {
	h := float64(p * float64(len(x)-1))
	i := int(math.Floor(h))
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + float64((h-float64(i))*(x[i+1]-x[i]))
}

// power returns the probability that the two-sided t-test of t at level
// alpha finds the effect significantly positive when the true effect is
// effect, with t's standard error and degrees of freedom: P(T' > t_{1−α/2})
// for T' noncentral t with noncentrality effect/SE. (For a claim that the
// effect is negative, the caller passes −effect.) It is NaN when SE is 0
// or NaN.
func (t TTest) power(effect, alpha float64) float64 {
	if !(t.SE > 0) {
		return math.NaN()
	}
	tc := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: t.DF}.Quantile(1 - float64(alpha/2))
	return 1 - nctCDF(tc, t.DF, effect/t.SE)
}

// nctCDF returns P(T ≤ x) for T noncentral t with df ≥ 1 degrees of
// freedom and noncentrality delta. T = (Z + δ)/S with S = √(V/df), V
// chi-squared with df degrees of freedom, so
//
//	P(T ≤ x) = ∫₀^∞ Φ(x·s − δ) g(s) ds,  g(s) = 2 (df/2)^{df/2} s^{df−1} e^{−df·s²/2} / Γ(df/2),
//
// integrated by Gauss–Legendre quadrature on [0, 1] and [1, 1 + 12/√df]
// (beyond, g has less than 1e-15 of its mass).
//
// References:
//   - N. L. Johnson, S. Kotz, N. Balakrishnan, "Continuous Univariate
//     Distributions", vol. 2, 2nd ed., Wiley 1995, ch. 31 (eq. 31.1).
func nctCDF(x, df, delta float64) float64 {
	lg, _ := math.Lgamma(df / 2)
	logC := math.Ln2 + float64(df/2*math.Log(df/2)) - lg
	f := func(s float64) float64 {
		if s == 0 {
			if df == 1 {
				return math.Exp(logC) * distuv.UnitNormal.CDF(-delta)
			}
			return 0
		}
		g := math.Exp(logC + float64((df-1)*math.Log(s)) - float64(df*s*s/2))
		return distuv.UnitNormal.CDF(float64(x*s)-delta) * g
	}
	hi := 1 + 12/math.Sqrt(df)
	p := quad.Fixed(f, 0, 1, 200, nil, 0) + quad.Fixed(f, 1, hi, 400, nil, 0)
	return math.Min(1, math.Max(0, p))
}
