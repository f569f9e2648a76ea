// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// Exposure is the exposure of an inserted secret s (Carlini et al., "The
// Secret Sharer: Evaluating and Testing Unintended Memorization in Neural
// Networks", USENIX Security 2019, Definition 2):
//
//	exposure(s) = log₂|R| − log₂ rank(s)
//
// where R is the candidate space the secret was drawn from (|R| = space)
// and rank(s) ≥ 1 is the position of s among R ordered by increasing
// log-perplexity under the model (rank 1: the model's favourite). It is 0
// for the worst rank and log₂|R|, the maximum, for rank 1. It returns NaN
// for rank < 1 or rank > space.
func Exposure(rank, space float64) float64 {
	if !(rank >= 1 && rank <= space) {
		return math.NaN()
	}
	return math.Log2(space) - math.Log2(rank)
}

// Rank returns the rank of candidate secret among scores, the
// log-perplexities of every candidate of the space (the secret's
// included): 1 + the number of other candidates whose score is at most the
// secret's. Ties count against the secret (as TensorFlow Privacy's
// secret_sharer puts a tied reference first), so the exposure is never
// overstated. It panics if secret is out of range.
func Rank(scores []float64, secret int) int {
	s := scores[secret]
	r := 1
	for i, v := range scores {
		if i != secret && v <= s {
			r++
		}
	}
	return r
}

// ExtrapolatedExposure estimates the exposure of a secret with
// log-perplexity secret from sample, the log-perplexities of candidates
// drawn uniformly from the space, without enumerating it (the skew-normal
// approximation of Carlini et al. 2019, which TensorFlow Privacy's
// secret_sharer implements as compute_exposure_extrapolation): it fits a skew-normal distribution to sample by maximum likelihood and
// returns
//
//	exposure ≈ −log₂ F(secret)
//
// with F the fitted distribution function, the fraction of the space
// expected to be ranked above the secret. Unlike the exact rank it can
// exceed log₂|R|, and it is only as good as the skew-normal's fit of the
// left tail. It returns an error when the fit fails (fewer than 3 values,
// or no spread).
func ExtrapolatedExposure(sample []float64, secret float64) (float64, SkewNormal, error) {
	sn, err := FitSkewNormal(sample)
	if err != nil {
		return math.NaN(), sn, err
	}
	return -sn.LogCDF(secret) / math.Ln2, sn, nil
}

// SkewNormal is the skew-normal distribution of Azzalini (1985, "A class
// of distributions which includes the normal ones", Scandinavian Journal
// of Statistics 12(2)) with location Loc, scale Scale > 0 and shape Shape:
// its density is
//
//	f(x) = (2/ω)·φ(z)·Φ(α·z),  z = (x − ξ)/ω,
//
// with ξ = Loc, ω = Scale, α = Shape, φ and Φ the standard normal density
// and distribution function. Shape 0 is the normal distribution.
type SkewNormal struct {
	Loc, Scale, Shape float64
}

// LogProb returns log f(x).
func (d SkewNormal) LogProb(x float64) float64 {
	z := (x - d.Loc) / d.Scale
	return math.Ln2 - math.Log(d.Scale) - float64(z*z/2) - float64(0.5*math.Log(2*math.Pi)) + logNormCDF(d.Shape*z)
}

// CDF returns F(x) = P(X ≤ x).
func (d SkewNormal) CDF(x float64) float64 { return math.Exp(d.LogCDF(x)) }

// LogCDF returns log F(x), accurate far into the left tail where F(x)
// underflows: F(x) = 2·∫_{−∞}^{z} φ(t)·Φ(α·t) dt is integrated in log
// space by Simpson's rule over the window below z that holds all but
// e⁻⁴⁰ of the integral's mass (the integrand is log-concave).
func (d SkewNormal) LogCDF(x float64) float64 {
	z := (x - d.Loc) / d.Scale
	a := d.Shape
	logf := func(t float64) float64 { return float64(-t*t/2) - float64(0.5*math.Log(2*math.Pi)) + logNormCDF(a*t) }
	// The log-integrand's slope at t ≤ z is at least its slope at z (it is
	// concave); below z it falls by 40 within 40/slope.
	slope := -z + float64(a*math.Exp(logNormPDF(a*z)-logNormCDF(a*z)))
	width := 60.0
	if slope > 1 {
		width = min(width, 45/slope)
	}
	lo := z - width
	const n = 8000 // even number of Simpson intervals
	h := (z - lo) / n
	vals := make([]float64, n+1)
	mx := math.Inf(-1)
	for i := range vals {
		vals[i] = logf(lo + float64(float64(i)*h))
		mx = max(mx, vals[i])
	}
	var s float64
	for i, v := range vals {
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		s += float64(w * math.Exp(v-mx))
	}
	return math.Ln2 + mx + math.Log(s*h/3)
}

// logNormPDF returns log φ(x).
func logNormPDF(x float64) float64 { return float64(-x*x/2) - float64(0.5*math.Log(2*math.Pi)) }

// logNormCDF returns log Φ(x), using the asymptotic expansion
// Φ(x) ≈ φ(x)/|x|·(1 − 1/x² + 3/x⁴ − 15/x⁶) (Abramowitz & Stegun 26.2.12)
// below −30, where erfc underflows.
func logNormCDF(x float64) float64 {
	if x > -30 {
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	x2 := x * x
	return logNormPDF(x) - math.Log(-x) + math.Log1p(-1/x2+3/(x2*x2)-15/(x2*x2*x2))
}

// maxShape bounds the fitted skew-normal shape |α|: the likelihood can
// keep growing as |α| → ∞ for samples near the half-normal boundary
// (Azzalini & Capitanio 1999, §5), which this cap stops.
const maxShape = 50

// FitSkewNormal fits a skew-normal distribution to x by maximum
// likelihood (Nelder–Mead on (ξ, log ω, α), started at the method-of-
// moments estimate with the sample skewness clipped into the family's
// range), as scipy.stats.skewnorm.fit does for TensorFlow Privacy's
// secret_sharer extrapolation. It returns an error for fewer than 3
// values, non-finite values or no spread.
func FitSkewNormal(x []float64) (SkewNormal, error) {
	if len(x) < 3 {
		return SkewNormal{}, fmt.Errorf("attacks: skew-normal fit of %d values, need at least 3", len(x))
	}
	var mean float64
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return SkewNormal{}, errors.New("attacks: skew-normal fit of a non-finite value")
		}
		mean += v
	}
	n := float64(len(x))
	mean /= n
	var m2, m3 float64
	for _, v := range x {
		d := v - mean
		m2 += float64(d * d)
		m3 += float64(d * d * d)
	}
	m2 /= n
	m3 /= n
	if !(m2 > 0) {
		return SkewNormal{}, errors.New("attacks: skew-normal fit of values without spread")
	}
	start := momentsSkewNormal(mean, m2, m3/math.Pow(m2, 1.5))
	nll := func(p []float64) float64 {
		a := p[2]
		if math.Abs(a) > maxShape {
			return math.Inf(1)
		}
		d := SkewNormal{Loc: p[0], Scale: math.Exp(p[1]), Shape: a}
		var s float64
		for _, v := range x {
			s -= d.LogProb(v)
		}
		return s / n
	}
	res, err := optimize.Minimize(optimize.Problem{Func: nll},
		[]float64{start.Loc, math.Log(start.Scale), start.Shape},
		&optimize.Settings{MajorIterations: 4000, Converger: &optimize.FunctionConverge{Absolute: 1e-10, Iterations: 50}},
		&optimize.NelderMead{})
	if err != nil && res == nil {
		return start, fmt.Errorf("attacks: skew-normal fit: %w", err)
	}
	p := res.X
	fit := SkewNormal{Loc: p[0], Scale: math.Exp(p[1]), Shape: p[2]}
	if nll(p) > nll([]float64{start.Loc, math.Log(start.Scale), start.Shape}) {
		fit = start
	}
	return fit, nil
}

// momentsSkewNormal returns the skew-normal with the given mean, variance
// and skewness (method of moments; Azzalini 1985), the skewness clipped to
// the family's range |γ| < 0.995.
func momentsSkewNormal(mean, variance, skew float64) SkewNormal {
	g := math.Max(-0.99, math.Min(0.99, skew))
	// |δ|·√(2/π) = μ_z; γ = (4−π)/2·μ_z³/(1−μ_z²)^{3/2}.
	c := math.Cbrt(2 * math.Abs(g) / (4 - math.Pi))
	muz := c / math.Sqrt(1+float64(c*c))
	delta := math.Copysign(muz/math.Sqrt(2/math.Pi), g)
	delta = math.Max(-0.999, math.Min(0.999, delta))
	alpha := delta / math.Sqrt(1-float64(delta*delta))
	omega := math.Sqrt(variance / (1 - 2*delta*delta/math.Pi))
	return SkewNormal{Loc: mean - float64(omega*delta*math.Sqrt(2/math.Pi)), Scale: omega, Shape: math.Max(-maxShape, math.Min(maxShape, alpha))}
}
