// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// logAFracAbs is log A_α of the fractional-order series of Mironov, Talwar
// & Zhang (2019, §3.3) summed with the absolute values |C(α,i)| of the
// binomial coefficients, as dp_accounting's current _compute_log_a_frac
// does (it calls _log_comb, which is log|C(α,i)|, and always _log_add;
// Opacus and older TF Privacy keep the sign of C(α,i), which alternates for
// i > α, and subtract). Dropping the sign bounds A_α from above, so
// dp_accounting's RDP at fractional orders is a valid but looser bound than
// the exact one we compute. The loop and the stopping rule follow
// dp_accounting's (at most 1000 terms; stop when both terms decrease and
// are 30 nats below the total).
func logAFracAbs(q, sigma, alpha float64) float64 {
	la0, la1 := math.Inf(-1), math.Inf(-1)
	z0 := sigma*sigma*math.Log(1/q-1) + 0.5
	lq, l1q := math.Log(q), math.Log1p(-q)
	last0, last1 := math.Inf(-1), math.Inf(-1)
	for i := range 1000 {
		fi := float64(i)
		lc, _ := logAbsBinom(alpha, fi)
		j := alpha - fi
		ls0 := lc + fi*lq + j*l1q + (fi*fi-fi)/(2*sigma*sigma) + math.Log(0.5) + logErfc((fi-z0)/(math.Sqrt2*sigma))
		ls1 := lc + j*lq + fi*l1q + (j*j-j)/(2*sigma*sigma) + math.Log(0.5) + logErfc((z0-j)/(math.Sqrt2*sigma))
		la0, la1 = logAdd(la0, ls0), logAdd(la1, ls1)
		tot := logAdd(la0, la1)
		if ls0 < last0 && ls1 < last1 && math.Max(ls0, ls1) < tot-30 {
			return tot
		}
		last0, last1 = ls0, ls1
	}
	return math.Inf(1)
}

// TestDPAccountingFractionalOrders settles the two dp_accounting test vectors
// that the exact RDP does not reproduce. Both come from dp_accounting's
// absolute-value series (logAFracAbs), not from a transcription error:
//
//   - dp_accounting rdp_privacy_accountant_test.py,
//     test_compute_rdp_poisson_subsampled_gaussian: q = 0.01, σ = 2.5, 50
//     steps, RDP 6.70579741e-04 at order 1.5 (np.allclose, rtol 1e-4). The
//     absolute-value series gives 6.705797407e-4; the exact A_α (the
//     integral, logAQuad) gives 6.500708973e-4.
//   - TF Privacy compute_dp_sgd_privacy_test.py,
//     test_compute_dp_sgd_example_privacy, no microbatching, q = 0.01:
//     ε = 3.2392676 (assertAlmostEqual, 7 places) for 120 steps of σ = 0.7
//     at δ = 1e-5, with dp_accounting's RDP accountant. The
//     absolute-value series at the optimal order 4.4 gives 3.23926765; the
//     exact RDP gives 3.2391922 at the same order.
//
// Our accountant is exact (as Opacus is), so its values are below
// dp_accounting's at fractional orders and equal at integer ones.
func TestDPAccountingFractionalOrders(t *testing.T) {
	t.Parallel()
	abs := 50 * logAFracAbs(0.01, 2.5, 1.5) / 0.5
	if !equalWithinRel(abs, 6.70579741e-4, 1e-8) {
		t.Errorf("absolute-value series RDP at 1.5 = %.10g, want dp_accounting's 6.70579741e-4", abs)
	}
	exact := 50 * SampledGaussianRDP(0.01, 2.5, 1.5)
	quad := 50 * logAQuad(0.01, 2.5, 1.5, 50000) / 0.5
	if !equalWithinRel(exact, quad, 1e-6) || exact >= abs {
		t.Errorf("exact RDP at 1.5 = %.10g, quadrature %.10g, dp_accounting %.10g", exact, quad, abs)
	}

	// TF Privacy's value: the same conversion over our default orders, with
	// the absolute-value series at fractional orders.
	best, order := math.Inf(1), 0.0
	for _, a := range DefaultOrders() {
		la := logA(0.01, 0.7, a)
		if a != math.Trunc(a) {
			ab := logAFracAbs(0.01, 0.7, a)
			if la > ab+1e-12*math.Abs(ab) {
				t.Errorf("order %v: exact log A %.15g above the absolute-value series %.15g", a, la, ab)
			}
			la = ab
		}
		r := 120 * la / (a - 1)
		if e := r + math.Log1p(-1/a) - (math.Log(1e-5)+math.Log(a))/(a-1); e < best {
			best, order = e, a
		}
	}
	if math.Abs(best-3.2392676) > 5e-8 || order != 4.4 {
		t.Errorf("absolute-value series ε = %.10g at order %v, want TF Privacy's 3.2392676 at 4.4", best, order)
	}
	g := rdpEpsilon(t, nil, PoissonGaussian{Q: 0.01, Sigma: 0.7}, 120, 1e-5)
	if math.Abs(g.Epsilon-3.2391922) > 5e-8 || g.Order != 4.4 {
		t.Errorf("exact ε = %.10g at order %v, want 3.2391922 at 4.4", g.Epsilon, g.Order)
	}
}

// TestPLDDirectionsPessimistic checks each direction of one step of the
// Poisson-subsampled Gaussian, separately, against the exact hockey-stick
// divergence (hockey1) at corners of q and σ, including negative ε (which
// composition needs): the discretised pair must never be below it.
func TestPLDDirectionsPessimistic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ q, sigma float64 }{
		{1e-4, 0.5}, {0.01, 0.3}, {0.5, 0.5}, {0.9, 2}, {0.99, 0.7}, {0.2, 10},
	} {
		a := pldOf(t, &PLDOptions{Interval: 1e-3}, PoissonGaussian{Q: tc.q, Sigma: tc.sigma}, 1)
		for d, remove := range []bool{true, false} {
			for _, e := range []float64{-0.5, -0.01, 0, 0.01, 0.1, 0.5, 1, 2, 5} {
				got := a.dir[d].delta(e, a.h)
				want := hockey1(tc.q, tc.sigma, e, remove)
				if got < want*(1-1e-9)-1e-15 || got > want+1e-3*math.Max(want, 1e-4) {
					t.Errorf("q=%g σ=%g remove=%v: δ(%g) = %.12g, exact %.12g", tc.q, tc.sigma, remove, e, got, want)
				}
			}
		}
	}
}

// TestPLDTPRClosedForm checks that the TPR bound is a valid upper bound and
// close to the exact trade-off curve: for the Gaussian mechanism with
// μ = 1/σ, TPR(FPR) = Φ(Φ⁻¹(FPR) + μ) (Dong, Roth & Su 2019); for one step
// of the Poisson-subsampled Gaussian, the Neyman–Pearson test in each
// direction, a threshold test on the observation x:
// remove: FPR = Φ̄(x/σ), TPR = (1−q)Φ̄(x/σ) + qΦ̄((x−1)/σ);
// add: FPR = (1−q)Φ(x/σ) + qΦ((x−1)/σ), TPR = Φ(x/σ).
func TestPLDTPRClosedForm(t *testing.T) {
	t.Parallel()
	for _, sigma := range []float64{0.5, 1, 3} {
		a := pldOf(t, nil, Gaussian{Sigma: sigma}, 1)
		for _, fpr := range []float64{1e-9, 1e-6, 1e-3, 0.01, 0.3, 0.9} {
			got, _ := a.TPR(fpr)
			want := normCDF(normQuantile(fpr) + 1/sigma)
			if got < want*(1-1e-9) || got > want+1e-4*want {
				t.Errorf("Gaussian σ=%g: TPR(%g) = %.10g, exact %.10g", sigma, fpr, got, want)
			}
		}
	}
	q, sigma := 0.3, 0.8
	a := pldOf(t, nil, PoissonGaussian{Q: q, Sigma: sigma}, 1)
	for _, x := range []float64{-2, -0.5, 0, 0.5, 1, 2, 3} {
		fr := normSF(x / sigma)
		tr := (1-q)*normSF(x/sigma) + q*normSF((x-1)/sigma)
		fa := (1-q)*normCDF(x/sigma) + q*normCDF((x-1)/sigma)
		ta := normCDF(x / sigma)
		for _, c := range []struct{ fpr, tpr float64 }{{fr, tr}, {fa, ta}} {
			if got, _ := a.TPR(c.fpr); got < c.tpr*(1-1e-9) {
				t.Errorf("q=%g σ=%g: TPR(%g) = %.10g below the Neyman–Pearson test's %.10g", q, sigma, c.fpr, got, c.tpr)
			}
		}
	}
}

// TestPLDEpsilonNearOne checks ε(δ) for δ just below 1, above the
// discretised distribution's total mass after rounding: every ε ≥ 0 meets
// it, so ε is 0, never NaN.
func TestPLDEpsilonNearOne(t *testing.T) {
	t.Parallel()
	for _, e := range []Event{Gaussian{Sigma: 1}, PoissonGaussian{Q: 0.01, Sigma: 1}} {
		a := pldOf(t, &PLDOptions{Interval: 1e-3}, e, 10)
		for _, delta := range []float64{1 - 1e-12, 1 - 1e-15, math.Nextafter(1, 0)} {
			eps, err := a.Epsilon(delta)
			if err != nil || math.IsNaN(eps) || eps < 0 || eps > 1e-3 {
				t.Errorf("%v: ε(%v) = %v, %v", e, delta, eps, err)
			}
			lo, hi, err := a.EpsilonBounds(delta)
			if err != nil || math.IsNaN(lo) || math.IsNaN(hi) {
				t.Errorf("%v: EpsilonBounds(%v) = %v, %v, %v", e, delta, lo, hi, err)
			}
		}
	}
}

// TestPureRDPTinyEpsilon checks the RDP of ε-DP for ε down to 1e-12, where
// the difference of logarithms in the closed form cancels: it must stay
// within 1e-6 of the second-order value αε²/2 (the exact value is
// αε²/2·(1 + O(αε))) and never be 0, or the conversion would call the
// mechanism (0, 0)-DP.
func TestPureRDPTinyEpsilon(t *testing.T) {
	t.Parallel()
	for _, eps := range []float64{1e-5, 1e-6, 1e-8, 1e-10, 1e-12} {
		for _, al := range []float64{1.01, 1.5, 2, 64, 1024} {
			got := pureRDP(eps, al)
			want := al * eps * eps / 2
			if !equalWithinRel(got, want, 1e-6+2*al*eps) {
				t.Errorf("pureRDP(%g, %g) = %.10g, want ≈ αε²/2 = %.10g", eps, al, got, want)
			}
		}
	}
	a, _ := NewRDP(nil)
	if err := a.Compose(EpsilonDelta{Epsilon: 1e-9}, 1); err != nil {
		t.Fatal(err)
	}
	// δ(0) of a 1e-9-DP mechanism is at least tanh(ε/2) ≈ 5e-10 (randomised
	// response), so no accountant may report 0.
	if d, _ := a.Delta(0); d < 5e-10 {
		t.Errorf("δ(0) of a 1e-9-DP mechanism = %g", d)
	}
}

// fakeAccountant reports ε = f(σ) for the σ of a Gaussian event; it lets
// the calibration tests use adversarial ε curves.
type fakeAccountant struct {
	f     func(float64) float64
	sigma float64
}

func (a *fakeAccountant) Compose(e Event, n int) error {
	g, ok := e.(Gaussian)
	if !ok {
		return errors.New("fake: not a Gaussian")
	}
	a.sigma = g.Sigma
	return nil
}
func (a *fakeAccountant) Epsilon(float64) (float64, error) { return a.f(a.sigma), nil }
func (a *fakeAccountant) Delta(float64) (float64, error)   { return 0, nil }

// TestCalibrateAdversarial checks that Calibrate never returns a σ whose ε
// exceeds the target, even when ε(σ) is not monotone (a PLD on a grid can
// wiggle) or jumps, and that the reported ε is the accountant's at the
// returned σ.
func TestCalibrateAdversarial(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	curves := []func(float64) float64{
		func(s float64) float64 { return 1/s + 0.05*math.Sin(40*s) },
		func(s float64) float64 { return math.Floor(10/s) / 10 },
		func(s float64) float64 {
			if s > 2.5 && s < 2.6 {
				return 100 // a spike above the target past the root
			}
			return 3 / s
		},
	}
	for ci, f := range curves {
		for range 50 {
			target := 0.3 + 5*rng.Float64()
			init := math.Pow(10, -2+4*rng.Float64())
			step := 1 + 3*rng.Float64()
			c, err := Calibrate(func() (Accountant, error) { return &fakeAccountant{f: f}, nil },
				func(s float64) Event { return Gaussian{Sigma: s} }, target, 1e-5,
				&CalibrateOptions{Initial: init, Step: step})
			if err != nil {
				t.Fatalf("curve %d, target %g: %v", ci, target, err)
			}
			if got := f(c.Sigma); got > target || got != c.Epsilon {
				t.Errorf("curve %d, target %g, Initial %g, Step %g: σ = %g has ε = %g, reported %g", ci, target, init, step, c.Sigma, got, c.Epsilon)
			}
		}
	}
}

// TestPLDMassNeverLost checks that composition never loses probability
// mass (it may only move it up or to +∞): the finite masses and the mass at
// +∞ add up to at least 1 in both directions, up to rounding, even with a
// large tail budget.
func TestPLDMassNeverLost(t *testing.T) {
	t.Parallel()
	for _, tm := range []float64{1e-15, 1e-6} {
		for _, e := range []Event{PoissonGaussian{Q: 0.01, Sigma: 1}, PoissonGaussian{Q: 0.3, Sigma: 0.8}, Gaussian{Sigma: 5}, EpsilonDelta{Epsilon: 0.3}} {
			for _, n := range []int{10, 300} {
				a := pldOf(t, &PLDOptions{TailMass: tm, Interval: 1e-3}, e, n)
				for d := range 2 {
					m := a.dir[d].inf
					for _, v := range a.dir[d].p {
						m += v
					}
					if m < 1-1e-12 {
						t.Errorf("TailMass %g, %v × %d, direction %d: total mass 1 − %g", tm, e, n, d, 1-m)
					}
				}
			}
		}
	}
}

// TestAnalyticGaussianNeverAboveDelta is a property test of
// AnalyticGaussianSigma's guarantee as callers check it: GaussianDelta at
// the returned σ (computed from σ and Δ, not from the search's σ/Δ) never
// exceeds δ, over ε from 0.01 to 10, δ from 1e-12 to 1e-2 and Δ from 1e-3
// to 1e3; and σ is within 1e-9 of the smallest such σ.
func TestAnalyticGaussianNeverAboveDelta(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	for range 3000 {
		eps := math.Pow(10, -2+3*rng.Float64())
		delta := math.Pow(10, -12+10*rng.Float64())
		sens := math.Pow(10, -3+6*rng.Float64())
		s, err := AnalyticGaussianSigma(eps, delta, sens)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := GaussianDelta(s, sens, eps); d > delta {
			t.Fatalf("ε=%g δ=%g Δ=%g: σ=%.17g gives δ=%.17g", eps, delta, sens, s, d)
		}
		if d, _ := GaussianDelta(s*(1-1e-9), sens, eps); d <= delta {
			t.Fatalf("ε=%g δ=%g Δ=%g: σ=%.17g is not the smallest", eps, delta, sens, s)
		}
	}
}

// TestPLDEpsilonDeltaGrid checks that an (ε, δ) event too wide for the
// grid is an error, not an allocation of 2ε/h points.
func TestPLDEpsilonDeltaGrid(t *testing.T) {
	t.Parallel()
	for _, eps := range []float64{1e4, 1e12} {
		if err := pldOfErr(nil, EpsilonDelta{Epsilon: eps}, 1); !errors.Is(err, ErrGridTooLarge) {
			t.Errorf("EpsilonDelta(ε=%g): got %v, want ErrGridTooLarge", eps, err)
		}
	}
	if err := pldOfErr(&PLDOptions{Interval: 0.1}, EpsilonDelta{Epsilon: 1e4}, 1); err != nil {
		t.Errorf("EpsilonDelta(ε=1e4), interval 0.1: %v", err)
	}
}

// TestPowerTimesDominates checks FFT self-composition against direct
// convolution: the result, with its mass at +∞, must stochastically
// dominate the exact n-fold composition (for every grid point t, at least
// as much mass at losses ≥ t), which is what makes every δ(ε) computed from
// it an upper bound. A large tail budget makes the window cut deep into
// both tails, so mass that wraps around the FFT circle outside the window
// must be kept, not dropped.
func TestPowerTimesDominates(t *testing.T) {
	t.Parallel()
	a, _ := NewPLD(nil)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tc := range []struct {
		n   int
		tau float64
	}{{7, 1e-3}, {20, 1e-2}, {30, 0.05}, {30, 1e-9}} {
		x := pmf{lo: -150, p: make([]float64, 300)}
		s := 0.0
		for i := range x.p {
			x.p[i] = rng.Float64() * math.Exp(-float64((i-120)*(i-120))/2000)
			s += x.p[i]
		}
		for i := range x.p {
			x.p[i] /= s
		}
		got, err := a.powerTimes(x, tc.n, identityPMF(), tc.tau)
		if err != nil {
			t.Fatal(err)
		}
		exact := []float64{1}
		for range tc.n {
			next := make([]float64, len(exact)+len(x.p)-1)
			for i, u := range exact {
				for j, v := range x.p {
					next[i+j] += u * v
				}
			}
			exact = next
		}
		lo := tc.n * x.lo
		// Tail sums from the top: mass at index ≥ k.
		above := func(p []float64, plo, k int) float64 {
			m := 0.0
			for i := len(p) - 1; i >= 0 && plo+i >= k; i-- {
				m += p[i]
			}
			return m
		}
		for k := lo; k < lo+len(exact); k++ {
			g := got.inf + above(got.p, got.lo, k)
			w := above(exact, lo, k)
			if g < w-1e-12 {
				t.Errorf("n=%d τ=%g: mass at index ≥ %d is %.15g, exact %.15g", tc.n, tc.tau, k, g, w)
				break
			}
		}
	}
}

// TestEpsilonDeltaConsistent is a property test of the two readings of each
// accountant: the ε certified at δ must give back at most δ (up to
// rounding), and the δ certified at ε must need at most ε.
func TestEpsilonDeltaConsistent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 42))
	n := 12
	if testing.Short() {
		n = 4
	}
	for range n {
		q := math.Pow(10, -3+3*rng.Float64())
		sigma := 0.6 + 3*rng.Float64()
		steps := 1 + rng.IntN(300)
		e := PoissonGaussian{Q: q, Sigma: sigma}
		p := pldOf(t, &PLDOptions{Interval: 1e-3}, e, steps)
		r, _ := NewRDP(nil)
		if err := r.Compose(e, steps); err != nil {
			t.Fatal(err)
		}
		for _, a := range []Accountant{p, r} {
			for _, delta := range []float64{0.3, 1e-3, 1e-6, 1e-10} {
				eps, _ := a.Epsilon(delta)
				if d, _ := a.Delta(eps); d > delta*(1+1e-9) {
					t.Errorf("%T %v × %d: δ(ε(%g) = %g) = %g", a, e, steps, delta, eps, d)
				}
			}
			for _, eps := range []float64{0, 0.1, 1, 5} {
				d, _ := a.Delta(eps)
				if d >= 1 {
					continue
				}
				if back, _ := a.Epsilon(d); back > eps+1e-9 {
					t.Errorf("%T %v × %d: ε(δ(%g) = %g) = %g", a, e, steps, eps, d, back)
				}
			}
		}
	}
}

// TestPLDLargeLoss checks events whose privacy loss exceeds ~709, where
// e^(−loss) underflows: the Gaussian mechanism with σ = 0.01 (losses around
// μ²/2 = 5000) on a grid of 1e-2, and an (ε, δ) event with ε = 800. Their ε
// must stay upper bounds on the exact values (the Gaussian's is closed
// form), not collapse to 0 because the masses became NaN and were dropped.
func TestPLDLargeLoss(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 10} {
		a := pldOf(t, &PLDOptions{Interval: 1e-2}, Gaussian{Sigma: 0.01}, n)
		exact, _ := GaussianEpsilon(0.01/math.Sqrt(float64(n)), 1, 1e-5)
		got, _ := a.Epsilon(1e-5)
		if got < exact || got > exact*(1+1e-4) {
			t.Errorf("Gaussian σ=0.01 × %d: ε = %g, exact %g", n, got, exact)
		}
	}
	// (ε₀, 0)-DP: δ(ε) = (1 − e^(ε−ε₀))·e^ε₀/(1+e^ε₀) for ε < ε₀, so
	// ε(1e-5) ≈ ε₀ − 1e-5 and δ(ε₀ − 1) ≈ 1 − e^(−1). ε₀ is off the grid,
	// so its atom is split between two grid points.
	a := pldOf(t, &PLDOptions{Interval: 1e-2}, EpsilonDelta{Epsilon: 800.005}, 1)
	if got, _ := a.Epsilon(1e-5); got < 800.005-1e-5-1e-9 || got > 800.02 {
		t.Errorf("EpsilonDelta(800.005): ε(1e-5) = %.10g", got)
	}
	if got, _ := a.Delta(799.005); got < -math.Expm1(-1)*(1-1e-9) {
		t.Errorf("EpsilonDelta(800.005): δ(799.005) = %.10g, exact %.10g", got, -math.Expm1(-1))
	}
}

// TestPLDTinySigma checks noise multipliers so small that the loss range
// overflows the grid arithmetic: the accountant must refuse
// (ErrGridTooLarge) or report ε = +Inf, never 0 or NaN.
func TestPLDTinySigma(t *testing.T) {
	t.Parallel()
	for _, e := range []Event{
		Gaussian{Sigma: 1e-300}, PoissonGaussian{Q: 0.5, Sigma: 1e-300},
		PoissonGaussian{Q: 0.5, Sigma: 1e-10}, Gaussian{Sigma: 1e-10},
		PoissonGaussian{Q: 1, Sigma: 1e-200},
	} {
		for _, h := range []float64{1e-4, 1e-2, 0.1} {
			a, _ := NewPLD(&PLDOptions{Interval: h})
			err := a.Compose(e, 3)
			if err != nil {
				if !errors.Is(err, ErrGridTooLarge) {
					t.Errorf("%v, interval %g: %v", e, h, err)
				}
				continue
			}
			if got, _ := a.Epsilon(1e-5); !math.IsInf(got, 1) {
				t.Errorf("%v, interval %g: ε = %v, want +Inf or ErrGridTooLarge", e, h, got)
			}
		}
	}
}

// TestCheckMass checks the guard Compose applies to every result.
func TestCheckMass(t *testing.T) {
	t.Parallel()
	for _, x := range []pmf{
		{p: []float64{0.5, 0.5 - 1e-6}},
		{p: []float64{0.5, math.NaN()}},
		{p: []float64{0.5, math.Inf(1)}},
		{p: []float64{1e-300}, inf: 0},
	} {
		if err := checkMass(x); !errors.Is(err, errMassLost) {
			t.Errorf("checkMass(%v) = %v, want errMassLost", x.p, err)
		}
	}
	for _, x := range []pmf{identityPMF(), {inf: 1}, {p: []float64{0.3, 0.7 - 1e-12}, inf: 1e-7}} {
		if err := checkMass(x); err != nil {
			t.Errorf("checkMass(%v, inf %v) = %v", x.p, x.inf, err)
		}
	}
}

// TestPLDBoundsConsistent is a randomised property test over events
// (Gaussian, Poisson-subsampled Gaussian, (ε, δ), a heterogeneous
// composition) and grids: every grid's upper bound on ε is at least every
// grid's lower bound, the RDP bound is at least the PLD's lower bound, the
// exact ε of Gaussian compositions lies inside each interval, and nothing
// is NaN. (A grid too small for the loss range may refuse.)
func TestPLDBoundsConsistent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(51, 52))
	iters := 25
	if testing.Short() {
		iters = 6
	}
	for range iters {
		var e Event
		switch rng.IntN(4) {
		case 0:
			e = Gaussian{Sigma: math.Pow(10, -1+2.5*rng.Float64())}
		case 1:
			e = PoissonGaussian{Q: math.Pow(10, -5*rng.Float64()), Sigma: math.Pow(10, -0.5+2*rng.Float64())}
		case 2:
			e = EpsilonDelta{Epsilon: 3 * rng.Float64() * rng.Float64(), Delta: []float64{0, 1e-8, 1e-4}[rng.IntN(3)]}
		default:
			e = Composed{PoissonGaussian{Q: rng.Float64(), Sigma: 0.5 + 3*rng.Float64()}, Gaussian{Sigma: 1 + 10*rng.Float64()}}
		}
		n := 1 + rng.IntN(100)
		delta := []float64{1e-3, 1e-5, 1e-8}[rng.IntN(3)]
		var ubs, lbs []float64
		for _, h := range []float64{1e-3, 1e-2} {
			a, _ := NewPLD(&PLDOptions{Interval: h})
			if err := a.Compose(e, n); err != nil {
				if !errors.Is(err, ErrGridTooLarge) {
					t.Errorf("%v × %d, interval %g: %v", e, n, h, err)
				}
				continue
			}
			lo, hi, _ := a.EpsilonBounds(delta)
			if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi || lo < 0 {
				t.Errorf("%v × %d, interval %g: bounds [%v, %v]", e, n, h, lo, hi)
			}
			ubs, lbs = append(ubs, hi), append(lbs, lo)
			if g, ok := e.(Gaussian); ok {
				ex, _ := GaussianEpsilon(g.Sigma/math.Sqrt(float64(n)), 1, delta)
				if ex < lo-1e-9 || ex > hi+1e-9 {
					t.Errorf("%v × %d, interval %g, δ=%g: exact ε %v outside [%v, %v]", e, n, h, delta, ex, lo, hi)
				}
			}
		}
		for _, u := range ubs {
			for _, l := range lbs {
				if u < l-1e-9 {
					t.Errorf("%v × %d, δ=%g: an upper bound %v below a lower bound %v", e, n, delta, u, l)
				}
			}
		}
		r, _ := NewRDP(nil)
		if err := r.Compose(e, n); err == nil {
			re, _ := r.Epsilon(delta)
			for _, l := range lbs {
				if re < l-1e-9 {
					t.Errorf("%v × %d, δ=%g: RDP ε %v below the PLD's lower bound %v", e, n, delta, re, l)
				}
			}
		}
	}
}

// TestPLDTPRLargeLoss checks the TPR bound where Q's mass of the highest
// losses underflows (Gaussian, σ = 0.01): never NaN, and above the exact
// curve Φ(Φ⁻¹(FPR) + μ).
func TestPLDTPRLargeLoss(t *testing.T) {
	t.Parallel()
	a := pldOf(t, &PLDOptions{Interval: 1e-2}, Gaussian{Sigma: 0.01}, 1)
	for _, fpr := range []float64{0, 1e-300, 1e-100, 1e-10, 0.5} {
		got, err := a.TPR(fpr)
		want := normCDF(normQuantile(fpr) + 100)
		if err != nil || math.IsNaN(got) || got > 1 || got < want*(1-1e-9) {
			t.Errorf("TPR(%g) = %v, %v; exact %v", fpr, got, err, want)
		}
	}
}

// gridFake is a fakeAccountant whose Compose fails with ErrGridTooLarge for
// σ below a threshold, as the PLD does for small noise.
type gridFake struct {
	fakeAccountant
	min float64
}

func (a *gridFake) Compose(e Event, n int) error {
	if g, ok := e.(Gaussian); ok && g.Sigma > 0 && g.Sigma < a.min {
		return ErrGridTooLarge
	}
	return a.fakeAccountant.Compose(e, n)
}

// TestCalibrateGridTooLarge checks that a σ the accountant cannot represent
// counts as missing the target instead of failing the calibration, and
// that the grid error is reported when no σ fits at all.
func TestCalibrateGridTooLarge(t *testing.T) {
	t.Parallel()
	newAcct := func(min float64) func() (Accountant, error) {
		return func() (Accountant, error) {
			return &gridFake{fakeAccountant{f: func(s float64) float64 { return 1 / s }}, min}, nil
		}
	}
	family := func(s float64) Event { return Gaussian{Sigma: s} }
	// Root at σ = 0.5; the search from 1 halves to 0.25, below the grid's
	// limit 0.3.
	c, err := Calibrate(newAcct(0.3), family, 2, 1e-5, nil)
	if err != nil || c.Sigma < 0.5 || c.Sigma > 0.5*(1+1e-3) || c.Epsilon > 2 {
		t.Errorf("got %+v, %v, want σ ≈ 0.5", c, err)
	}
	if _, err := Calibrate(newAcct(1e9), family, 2, 1e-5, nil); !errors.Is(err, ErrGridTooLarge) {
		t.Errorf("no σ fits: got %v, want ErrGridTooLarge", err)
	}
}

// TestRoundingBiasBound checks the per-step bound EpsilonBounds uses: the
// connect-the-dots rounding of a loss L = l₁ + u in a cell [l₁, l₁+h] goes
// up with probability (1 − e^(−u))/(1 − e^(−h)), so its bias
// E[L̂ − L] = h(1 − e^(−u))/(1 − e^(−h)) − u lies in [0, h²(1+h)/8] for
// every u (checked on a fine grid of u).
func TestRoundingBiasBound(t *testing.T) {
	t.Parallel()
	for _, h := range []float64{1e-4, 1e-3, 1e-2, 0.1} {
		bound := h * h * (1 + h) / 8
		worst := 0.0
		for i := 0; i <= 10000; i++ {
			u := h * float64(i) / 10000
			b := h*(-math.Expm1(-u))/(-math.Expm1(-h)) - u
			if b < -1e-15*h {
				t.Errorf("h=%g u=%g: bias %g < 0", h, u, b)
			}
			worst = math.Max(worst, b)
		}
		if worst > bound || worst < 0.9*bound {
			t.Errorf("h=%g: largest bias %g, bound %g", h, worst, bound)
		}
	}
}

// hockey2 is the exact δ(ε) of two steps of the Poisson-subsampled
// Gaussian in one direction: ∫ p(x)·δ₁(ε − L(x)) dx, the inner step in
// closed form (hockey1), the outer integral by Simpson's rule.
func hockey2(q, sigma, eps float64, remove bool) float64 {
	phi := func(x, m float64) float64 {
		z := (x - m) / sigma
		return math.Exp(-z*z/2) / (sigma * math.Sqrt(2*math.Pi))
	}
	lo, hi := -14*sigma, 1+14*sigma
	n := 40000
	h := (hi - lo) / float64(n)
	s := 0.0
	for i := 0; i <= n; i++ {
		x := lo + float64(i)*h
		p0, p1 := phi(x, 0), phi(x, 1)
		mix := (1-q)*p0 + q*p1
		p, l := mix, math.Log1p(q*math.Expm1((2*x-1)/(2*sigma*sigma)))
		if !remove {
			p, l = p0, -l
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

// TestPLDTwoStepsCorners extends the exact two-step check to corners of q
// and σ, in each direction separately.
func TestPLDTwoStepsCorners(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ q, sigma float64 }{{0.9, 0.6}, {0.01, 0.5}, {0.5, 2}} {
		a := pldOf(t, &PLDOptions{Interval: 1e-3}, PoissonGaussian{Q: tc.q, Sigma: tc.sigma}, 2)
		for d, remove := range []bool{true, false} {
			for _, eps := range []float64{0, 0.2, 1, 3} {
				got := a.dir[d].delta(eps, a.h)
				want := hockey2(tc.q, tc.sigma, eps, remove)
				if got < want*(1-1e-7)-1e-13 || got > want+1e-3*want+1e-9 {
					t.Errorf("q=%g σ=%g remove=%v: δ(%g) = %.10g, exact %.10g", tc.q, tc.sigma, remove, eps, got, want)
				}
			}
		}
	}
}
