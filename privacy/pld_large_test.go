// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

// refLogSF is log Φ̄(z) for the reference below, independent of the
// package's special functions: log(erfc(z/√2)/2) where erfc does not
// underflow, otherwise −z²/2 − log √(2π) + log R(z) with Mills' ratio R by
// Laplace's continued fraction R(z) = 1/(z+1/(z+2/(z+3/(z+…)))) (Abramowitz
// and Stegun, Handbook of Mathematical Functions, 26.2.14), evaluated
// bottom-up.
func refLogSF(z float64) float64 {
	if z < 30 {
		return math.Log(0.5 * math.Erfc(z/math.Sqrt2))
	}
	f := z
	for k := 200; k >= 1; k-- {
		f = z + float64(k)/f
	}
	return -z*z/2 - 0.5*math.Log(2*math.Pi) - math.Log(f)
}

// refLogHockeyRemove is log δ(e) of one step of the Poisson-subsampled
// Gaussian in the remove direction (P = (1−q)N(0,σ²) + qN(1,σ²),
// Q = N(0,σ²)), the direction that carries large losses, computed entirely
// in log space so that e in the thousands is exact to rounding: with the
// threshold x* where the loss equals e,
// δ(e) = P(x > x*) − e^e·Q(x > x*) (the hockey-stick divergence, as in
// Doroshenko et al., "Connect the dots: tighter discrete approximations of
// privacy loss distributions", PETS 2022).
func refLogHockeyRemove(q, sigma, e float64) float64 {
	s2 := sigma * sigma
	// log(e^e − (1−q)) = e + log1p(−(1−q)e^(−e)).
	x := s2*(e+math.Log1p(-(1-q)*math.Exp(-e))-math.Log(q)) + 0.5
	lp := logAdd(math.Log1p(-q)+refLogSF(x/sigma), math.Log(q)+refLogSF((x-1)/sigma))
	lq := e + refLogSF(x/sigma)
	return lp + math.Log1p(-math.Exp(lq-lp))
}

// refEpsilonRemove solves δ(e) = delta by bisection (δ decreases in e).
func refEpsilonRemove(q, sigma, delta float64) float64 {
	lo, hi := 0.0, 1e5
	ld := math.Log(delta)
	for range 200 {
		mid := (lo + hi) / 2
		if refLogHockeyRemove(q, sigma, mid) > ld {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TestPLDLargeLosses checks one step of the Poisson-subsampled Gaussian
// whose privacy loss runs into the thousands (q = 0.5, σ = 0.0127, where
// e^ℓ overflows a float64) against the exact ε from the log-space
// hockey stick above: the PLD must never be below it (it is an upper
// bound) and within a grid step of it. The add direction's loss is at most
// −log(1−q), so the remove direction alone is the exact ε. Twenty steps are
// checked against RDP: RDP's converted ε is an upper bound too, looser, so
// the PLD may be below it but not far below (here it is the same order).
func TestPLDLargeLosses(t *testing.T) {
	t.Parallel()
	q, sigma, delta := 0.5, 0.0127, 1e-5
	want := refEpsilonRemove(q, sigma, delta)
	if want < 2000 || want > 5000 {
		t.Fatalf("reference ε = %g, want thousands (the test's premise)", want)
	}
	// Sanity of the reference at an ordinary setting against the package's
	// linear-space exact form (pld_exact_test.go's hockey1).
	if a, b := math.Exp(refLogHockeyRemove(0.2, 1, 0.3)), hockey1(0.2, 1, 0.3, true); math.Abs(a-b) > 1e-12 {
		t.Fatalf("log-space hockey stick %.15g, linear %.15g", a, b)
	}
	for _, h := range []float64{1e-3, 1e-2, 0.1} {
		a := pldOf(t, &PLDOptions{Interval: h}, PoissonGaussian{Q: q, Sigma: sigma}, 1)
		got, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		if got < want*(1-1e-9) || got > want+2*h+1e-6*want {
			t.Errorf("h=%g: PLD ε = %.6f, exact %.6f", h, got, want)
		}
	}
	r, err := NewRDP(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Compose(PoissonGaussian{Q: q, Sigma: sigma}, 20); err != nil {
		t.Fatal(err)
	}
	rdp, err := r.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	a := pldOf(t, &PLDOptions{Interval: 0.1}, PoissonGaussian{Q: q, Sigma: sigma}, 20)
	got, err := a.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	// Twenty steps cannot be less private than one.
	if got < want || got < rdp/2 || got > rdp*(1+1e-9) {
		t.Errorf("20 steps: PLD ε = %.3f, RDP %.3f, one step exact %.3f", got, rdp, want)
	}
	t.Logf("one step exact %.4f; 20 steps PLD %.3f, RDP %.3f", want, got, rdp)
}
