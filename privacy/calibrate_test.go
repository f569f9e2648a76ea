// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func newRDP() (Accountant, error) { return NewRDP(nil) }

func dpsgd(q float64, steps int) func(float64) Event {
	return func(s float64) Event { return SelfComposed{Event: PoissonGaussian{Q: q, Sigma: s}, Count: steps} }
}

// TestCalibrateOpacus checks Opacus's get_noise_multiplier values for the
// RDP accountant (opacus/tests/accountants_test.py): ε=8, δ=1e-5, q=0.04,
// 90 epochs (2250 steps) gives σ = 1.416 (4 places, with Opacus's
// epsilon_tolerance 0.01 on ε); 2000 steps gives σ = 1.3562. Opacus returns
// the upper end of a bracket of ε width 0.01, so its σ is slightly larger
// than the smallest: ours must lie in [0.995, 1.001]×Opacus's (RelTol is
// 1e-3).
func TestCalibrateOpacus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		steps int
		want  float64
	}{{2250, 1.416}, {2000, 1.3562}} {
		c, err := Calibrate(newRDP, dpsgd(0.04, tc.steps), 8, 1e-5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Sigma > tc.want*(1+1e-3) || c.Sigma < tc.want*(1-5e-3) {
			t.Errorf("steps %d: σ = %.6g, want %g (−0.5%%)", tc.steps, c.Sigma, tc.want)
		}
		if c.Epsilon > 8 {
			t.Errorf("steps %d: ε(σ) = %g > 8", tc.steps, c.Epsilon)
		}
	}
}

// TestCalibrateNeverOvershoots is the property test of Opacus's
// test_get_noise_multiplier_overshoot: ε ∈ [1, 10], epochs ∈ [10, 100],
// q ∈ {1e-4 … 1e-1}, δ ∈ {1e-4, 1e-5, 1e-6}. Re-accounting the returned σ
// gives ε ≤ target, and 0.5% less noise gives ε > target.
func TestCalibrateNeverOvershoots(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 30
	if testing.Short() {
		n = 8
	}
	for range n {
		eps := 1 + 9*rng.Float64()
		epochs := 10 + rng.IntN(91)
		q := math.Pow(10, -1-3*rng.Float64())
		delta := []float64{1e-4, 1e-5, 1e-6}[rng.IntN(3)]
		steps := int(float64(epochs) / q) // Opacus: int(epochs / sample_rate)
		c, err := Calibrate(newRDP, dpsgd(q, steps), eps, delta, nil)
		if err != nil {
			t.Fatalf("ε=%g q=%g steps=%d δ=%g: %v", eps, q, steps, delta, err)
		}
		check := func(sigma float64) float64 {
			a, _ := NewRDP(nil)
			if err := a.Compose(PoissonGaussian{Q: q, Sigma: sigma}, steps); err != nil {
				t.Fatal(err)
			}
			e, _ := a.Epsilon(delta)
			return e
		}
		if got := check(c.Sigma); got > eps {
			t.Errorf("ε=%g q=%g steps=%d δ=%g: σ=%g gives ε=%g > target", eps, q, steps, delta, c.Sigma, got)
		}
		if got := check(c.Sigma * (1 - 5e-3)); got <= eps {
			t.Errorf("ε=%g q=%g steps=%d δ=%g: σ=%g is not within 0.5%% of the smallest (ε(0.995σ)=%g)", eps, q, steps, delta, c.Sigma, got)
		}
	}
}

func TestCalibrateEdges(t *testing.T) {
	t.Parallel()
	if c, err := Calibrate(newRDP, dpsgd(0.01, 100), math.Inf(1), 1e-5, nil); err != nil || c.Sigma != 0 {
		t.Errorf("ε=+Inf: got %+v, %v, want σ = 0", c, err)
	}
	if c, err := Calibrate(newRDP, dpsgd(0, 100), 1, 1e-5, nil); err != nil || c.Sigma != 0 || c.Epsilon != 0 {
		t.Errorf("q=0: got %+v, %v, want σ = 0", c, err)
	}
	if _, err := Calibrate(newRDP, dpsgd(0.5, 100000), 1e-3, 1e-10, &CalibrateOptions{MaxSigma: 10}); err == nil {
		t.Errorf("unreachable target: got nil error")
	}
	for _, bad := range [][2]float64{{0, 1e-5}, {math.NaN(), 1e-5}, {1, 1}, {1, -1}, {1, math.NaN()}} {
		if _, err := Calibrate(newRDP, dpsgd(0.1, 10), bad[0], bad[1], nil); err == nil {
			t.Errorf("Calibrate(ε=%g, δ=%g): got nil error", bad[0], bad[1])
		}
	}
	if _, err := Calibrate(newRDP, dpsgd(0.1, 10), 1, 1e-5, &CalibrateOptions{RelTol: 0.1}); err == nil {
		t.Errorf("RelTol 0.1: got nil error")
	}
	// Small σ: the search halves from Initial.
	c, err := Calibrate(newRDP, func(s float64) Event { return Gaussian{Sigma: s} }, 50, 1e-5, nil)
	if err != nil || c.Sigma >= 1 || c.Epsilon > 50 {
		t.Errorf("ε=50 Gaussian: got %+v, %v", c, err)
	}
}

// TestCalibrateAnalyticGaussian calibrates one Gaussian release with the
// RDP accountant and checks it against the exact (analytic) σ: RDP is
// looser, so its σ is larger, but not by more than 30% here.
func TestCalibrateAnalyticGaussian(t *testing.T) {
	t.Parallel()
	c, err := Calibrate(newRDP, func(s float64) Event { return Gaussian{Sigma: s} }, 1, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := AnalyticGaussianSigma(1, 1e-5, 1)
	if c.Sigma < exact || c.Sigma > 1.3*exact {
		t.Errorf("RDP σ = %g, analytic σ = %g", c.Sigma, exact)
	}
}

// TestCalibratePLDInterval checks calibration with the PLD accountant on
// the grid that follows the target ε (PLDInterval) for DP-SGD's sampled
// Gaussian (q = 0.06, 200 steps, δ = 1e-5) at ε = 1, 8 and 1000: the
// accounted ε never exceeds the target and is within 1% of it (a grid that
// cannot hold a small σ's losses settles on a larger σ far below the
// target), and σ is at most the RDP accountant's σ, an independent upper
// bound (RDP's ε is never below the PLD's).
func TestCalibratePLDInterval(t *testing.T) {
	const q, steps, delta = 0.06, 200, 1e-5
	family := func(s float64) Event { return SelfComposed{Event: PoissonGaussian{Q: q, Sigma: s}, Count: steps} }
	newRDP := func() (Accountant, error) { return NewRDP(nil) }
	for _, eps := range []float64{1, 8, 1000} {
		rdp, err := Calibrate(newRDP, family, eps, delta, nil)
		if err != nil {
			t.Fatalf("ε = %v: RDP: %v", eps, err)
		}
		newPLD := func() (Accountant, error) { return NewPLD(&PLDOptions{Interval: PLDInterval(eps)}) }
		pld, err := Calibrate(newPLD, family, eps, delta, &CalibrateOptions{Initial: rdp.Sigma, Step: 1.1})
		if err != nil {
			t.Fatalf("ε = %v: PLD: %v", eps, err)
		}
		a, _ := newPLD()
		if err := a.Compose(family(pld.Sigma), 1); err != nil {
			t.Fatal(err)
		}
		got, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		if got != pld.Epsilon || got > eps || got < 0.99*eps {
			t.Errorf("ε = %v: σ = %v accounts ε = %v (calibration said %v), want in [%v, %v]", eps, pld.Sigma, got, pld.Epsilon, 0.99*eps, eps)
		}
		if pld.Sigma > rdp.Sigma {
			t.Errorf("ε = %v: PLD σ = %v above RDP's %v", eps, pld.Sigma, rdp.Sigma)
		}
		t.Logf("ε = %v: h = %v, σ PLD %.5g (ε %.5g, %d evaluations), RDP %.5g", eps, PLDInterval(eps), pld.Sigma, pld.Epsilon, pld.Evaluations, rdp.Sigma)
	}
}
