// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// hockey1 is the exact hockey-stick divergence δ(e) = ∫ (p − e^e·q)₊ of one
// step of the Poisson-subsampled Gaussian (noise multiplier σ, rate q) in
// the remove direction (p the mixture (1−q)N(0,σ²)+qN(1,σ²), q = N(0,σ²))
// or the add direction (roles swapped), for any real e. The set where
// p > e^e·q is a half-line {x > x*} (remove) or {x < x*} (add).
func hockey1(q, sigma, e float64, remove bool) float64 {
	s2 := sigma * sigma
	if remove {
		if e <= math.Log1p(-q) {
			return 1 - math.Exp(e)
		}
		x := s2*math.Log((math.Exp(e)-(1-q))/q) + 0.5
		return (1-q)*normSF(x/sigma) + q*normSF((x-1)/sigma) - math.Exp(e)*normSF(x/sigma)
	}
	if e >= -math.Log1p(-q) {
		return 0
	}
	x := s2*math.Log((math.Exp(-e)-(1-q))/q) + 0.5
	return normCDF(x/sigma) - math.Exp(e)*((1-q)*normCDF(x/sigma)+q*normCDF((x-1)/sigma))
}

// hockeyQuad is ∫ (p − e^e·q)₊ dx by the trapezoid rule on a fine grid: an
// independent check of hockey1.
func hockeyQuad(q, sigma, e float64, remove bool) float64 {
	phi := func(x, m float64) float64 {
		z := (x - m) / sigma
		return math.Exp(-z*z/2) / (sigma * math.Sqrt(2*math.Pi))
	}
	lo, hi := -12*sigma, 1+12*sigma
	n := 100000
	h := (hi - lo) / float64(n)
	s := 0.0
	for i := 0; i <= n; i++ {
		x := lo + float64(i)*h
		mix := (1-q)*phi(x, 0) + q*phi(x, 1)
		p, qq := mix, phi(x, 0)
		if !remove {
			p, qq = qq, mix
		}
		v := math.Max(0, p-math.Exp(e)*qq)
		if i == 0 || i == n {
			v /= 2
		}
		s += v
	}
	return s * h
}

func TestHockey1Quadrature(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ q, sigma, e float64 }{{0.2, 1, 0.3}, {0.05, 0.7, 0.01}, {0.5, 2, 0.1}, {0.2, 1, -0.05}} {
		for _, rem := range []bool{true, false} {
			got, want := hockey1(tc.q, tc.sigma, tc.e, rem), hockeyQuad(tc.q, tc.sigma, tc.e, rem)
			if math.Abs(got-want) > 1e-8 {
				t.Errorf("q=%g σ=%g e=%g remove=%v: closed form %.10g, quadrature %.10g", tc.q, tc.sigma, tc.e, rem, got, want)
			}
		}
	}
}

// TestPLDSampledExact checks the PLD of one and two steps of the
// Poisson-subsampled Gaussian against exact values: δ₁ = max over the two
// directions of hockey1, and for two steps
// δ₂(ε) = ∫ p(x)·δ₁(ε − L(x)) dx (the hockey stick of a product, with the
// inner step integrated in closed form), by Simpson's rule. The PLD must be
// pessimistic (never below) and close.
func TestPLDSampledExact(t *testing.T) {
	t.Parallel()
	q, sigma := 0.2, 1.0
	one := pldOf(t, nil, PoissonGaussian{Q: q, Sigma: sigma}, 1)
	two := pldOf(t, nil, PoissonGaussian{Q: q, Sigma: sigma}, 2)
	delta2 := func(eps float64, remove bool) float64 {
		// p(x) and L(x) of the outer step in the given direction.
		phi := func(x, m float64) float64 {
			z := (x - m) / sigma
			return math.Exp(-z*z/2) / (sigma * math.Sqrt(2*math.Pi))
		}
		lo, hi := -12*sigma, 1+12*sigma
		n := 20000
		h := (hi - lo) / float64(n)
		s := 0.0
		for i := 0; i <= n; i++ {
			x := lo + float64(i)*h
			mix := (1-q)*phi(x, 0) + q*phi(x, 1)
			p, l := mix, math.Log(mix/phi(x, 0))
			if !remove {
				p, l = phi(x, 0), -l
			}
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			if i == 0 || i == n {
				w = 1
			}
			s += w * p * hockey1(q, sigma, eps-l, remove)
		}
		return s * h / 3
	}
	for _, eps := range []float64{0, 0.1, 0.3, 0.7, 1.5} {
		want1 := math.Max(hockey1(q, sigma, eps, true), hockey1(q, sigma, eps, false))
		got1, _ := one.Delta(eps)
		if got1 < want1*(1-1e-9) || got1-want1 > 1e-7+1e-5*want1 {
			t.Errorf("1 step: δ(%g) = %.10g, exact %.10g", eps, got1, want1)
		}
		want2 := math.Max(delta2(eps, true), delta2(eps, false))
		got2, _ := two.Delta(eps)
		if got2 < want2*(1-1e-7) || got2-want2 > 1e-7+1e-5*want2 {
			t.Errorf("2 steps: δ(%g) = %.10g, exact %.10g", eps, got2, want2)
		}
	}
}

// TestCalibratePLDNeverOvershoots is the overshoot property test with the
// tight accountant (a coarser grid keeps it fast; the guarantee does not
// depend on the grid).
func TestCalibratePLDNeverOvershoots(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	newPLD := func() (Accountant, error) { return NewPLD(&PLDOptions{Interval: 1e-3}) }
	n := 2
	if testing.Short() {
		n = 1
	}
	for range n {
		eps := 1 + 9*rng.Float64()
		q := math.Pow(10, -1-2*rng.Float64())
		steps := 10 + rng.IntN(500)
		delta := []float64{1e-4, 1e-5, 1e-6}[rng.IntN(3)]
		c, err := Calibrate(newPLD, dpsgd(q, steps), eps, delta, nil)
		if err != nil {
			t.Fatalf("ε=%g q=%g steps=%d δ=%g: %v", eps, q, steps, delta, err)
		}
		check := func(sigma float64) float64 {
			a, _ := newPLD()
			if err := a.Compose(PoissonGaussian{Q: q, Sigma: sigma}, steps); err != nil {
				t.Fatal(err)
			}
			e, _ := a.Epsilon(delta)
			return e
		}
		if got := check(c.Sigma); got > eps {
			t.Errorf("ε=%g q=%g steps=%d δ=%g: σ=%g gives ε=%g", eps, q, steps, delta, c.Sigma, got)
		}
		if got := check(c.Sigma * 0.995); got <= eps {
			t.Errorf("ε=%g q=%g steps=%d δ=%g: σ=%g not within 0.5%% (ε(0.995σ) = %g)", eps, q, steps, delta, c.Sigma, got)
		}
	}
}
