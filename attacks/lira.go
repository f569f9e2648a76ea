// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
)

// LogitConfidence returns LiRA's logit-scaled confidence of an answer
// whose tokens have the given cross-entropies: with p = exp(−Σ loss) the
// probability of the whole answer, φ = log(p/(1−p)), computed stably as
// −s − log(−expm1(−s)) for s = Σ loss.
func LogitConfidence(losses []float64) float64 {
	s := 0.0
	for _, l := range losses {
		s += l
	}
	if s <= 0 {
		return math.Inf(1)
	}
	return -s - math.Log(-math.Expm1(-s))
}

// A LiRAFit is the Gaussian fit of one example's logit-scaled confidences
// over the shadow models that trained on it (In) and those that did not
// (Out).
type LiRAFit struct {
	MuIn, SigmaIn, MuOut, SigmaOut float64
}

// FitLiRA returns the per-example fits of the confidences in[i] and out[i]
// of example i under the shadow models with and without it: means and
// standard deviations (the maximum-likelihood, divide-by-n, estimate).
// With fixedVariance, every example gets the same σ_in and σ_out, the
// root-mean-square of the per-example ones, which Carlini et al.
// recommend with few shadows (§VI-A). An example without in (out) shadows
// gets NaN there; LiRA's scores are then NaN too (offline needs only out).
func FitLiRA(in, out [][]float64, fixedVariance bool) []LiRAFit {
	if len(in) != len(out) {
		panic("attacks: LiRA: in and out confidences for different numbers of examples")
	}
	fits := make([]LiRAFit, len(in))
	var vin, vout float64
	var nin, nout int
	for i := range in {
		f := &fits[i]
		f.MuIn, f.SigmaIn = meanStd(in[i])
		f.MuOut, f.SigmaOut = meanStd(out[i])
		if !math.IsNaN(f.SigmaIn) {
			vin += float64(f.SigmaIn * f.SigmaIn)
			nin++
		}
		if !math.IsNaN(f.SigmaOut) {
			vout += float64(f.SigmaOut * f.SigmaOut)
			nout++
		}
	}
	if fixedVariance {
		sin, sout := math.Sqrt(vin/float64(nin)), math.Sqrt(vout/float64(nout))
		for i := range fits {
			fits[i].SigmaIn, fits[i].SigmaOut = sin, sout
		}
	}
	return fits
}

// meanStd returns the mean and the divide-by-n standard deviation of x, NaN
// for both if x is empty.
func meanStd(x []float64) (mu, sigma float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mu += v
	}
	mu /= float64(len(x))
	for _, v := range x {
		sigma += float64((v - mu) * (v - mu))
	}
	return mu, math.Sqrt(sigma / float64(len(x)))
}

// LiRA returns the online and offline likelihood-ratio scores of Carlini
// et al. (2022, Algorithm 1) of a target model's confidence phi on an
// example with fit f (higher: member):
//
//	online  = log N(φ; μ_in, σ_in²) − log N(φ; μ_out, σ_out²),
//	offline = log Φ((φ − μ_out)/σ_out),
//
// the offline test being one-sided: a member's confidence is higher than
// the out distribution's.
//
// References:
//   - N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr,
//     Membership inference attacks from first principles, IEEE S&P 2022,
//     arXiv:2112.03570.
func LiRA(phi float64, f LiRAFit) (online, offline float64) {
	const eps = 1e-30 // the reference code's guard against σ = 0
	logpdf := func(x, mu, s float64) float64 {
		s += eps
		z := (x - mu) / s
		return float64(-0.5*z*z) - math.Log(s) - float64(0.5*math.Log(2*math.Pi))
	}
	online = logpdf(phi, f.MuIn, f.SigmaIn) - logpdf(phi, f.MuOut, f.SigmaOut)
	z := (phi - f.MuOut) / (f.SigmaOut + eps)
	offline = math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
	return online, offline
}
