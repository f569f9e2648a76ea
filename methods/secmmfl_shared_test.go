// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"math"
	"testing"

	"github.com/repro-dp/repro/privacy"
)

// TestSecMMFLSharedSample checks effectiveSigma, the record-level
// accounting of one DP-SGD step of Sec-MMFL, against the mechanism
// itself: one Poisson sample (rate q) enters both modalities' blocks, each
// block of an example's gradient clipped to C on its own (so the pair moves
// by up to C·√2, not C) with noise σ_i·C on block i. In units of C, one
// example added or removed shifts the mean of the two-dimensional
// Gaussian N(0, diag(σ_1², σ_2²)) by (1, 1) with probability q. The
// reference is δ(ε) of that mixture against the Gaussian, both ways
// (add-remove), integrated numerically on a two-dimensional grid (midpoint
// rule, step σ_i/200 over ±11σ_i): it holds the one-dimensional
// Poisson-subsampled Gaussian of noise multiplier effectiveSigma(σ) (a
// one-dimensional integral) to within the integration error, and the PLD
// accountant of that event to an upper bound within 2%. Composing the
// blocks as independently sampled releases (per-modality events), or
// taking the smaller σ_i alone (sensitivity C), both understate δ, as the
// method's comments say.
func TestSecMMFLSharedSample(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sigma  []float64
		q, eps float64
	}{
		{[]float64{0.8, 1.5}, 0.3, 0.3},
		{[]float64{1.2, 1.2}, 0.5, 0.5}, // equal σ: σ/√2
		{[]float64{2.5, 0.9}, 0.1, 0.1},
	} {
		exact := sharedSampleDelta2D(tc.sigma, tc.q, tc.eps)
		eff := effectiveSigma(tc.sigma)
		if tc.sigma[0] == tc.sigma[1] {
			if want := tc.sigma[0] / math.Sqrt2; math.Abs(eff-want) > 1e-15*want {
				t.Errorf("effectiveSigma(%v) = %v, want σ/√2 = %v", tc.sigma, eff, want)
			}
		}
		oneD := subsampledDelta1D(eff, tc.q, tc.eps)
		if math.Abs(oneD-exact) > 1e-5*exact {
			t.Errorf("σ %v, q %v, ε %v: two-dimensional δ %v, one Gaussian of effectiveSigma %v gives %v", tc.sigma, tc.q, tc.eps, exact, eff, oneD)
		}
		pldDelta := func(evs ...privacy.Event) float64 {
			a, err := newMMAccountant("pld", exampleRelation)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if err := a.Compose(ev, 1); err != nil {
					t.Fatal(err)
				}
			}
			d, err := a.Delta(tc.eps)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		if got := pldDelta(exampleEvent(tc.q, eff, 1)); got < exact*(1-1e-6) || got > exact*1.02 {
			t.Errorf("σ %v, q %v, ε %v: the PLD of the record's event gives δ %v, want in [%v, %v]", tc.sigma, tc.q, tc.eps, got, exact, 1.02*exact)
		}
		if got := pldDelta(exampleEvent(tc.q, tc.sigma[0], 1), exampleEvent(tc.q, tc.sigma[1], 1)); !(got < exact) {
			t.Errorf("σ %v, q %v, ε %v: independently sampled blocks give δ %v, not below the mechanism's %v", tc.sigma, tc.q, tc.eps, got, exact)
		}
		if got := subsampledDelta1D(min(tc.sigma[0], tc.sigma[1]), tc.q, tc.eps); !(got < exact) {
			t.Errorf("σ %v, q %v, ε %v: the smaller σ alone gives δ %v, not below the mechanism's %v", tc.sigma, tc.q, tc.eps, got, exact)
		}
		t.Logf("σ %v, q %v, ε %v: δ %.6g (2-D), %.6g (effectiveSigma %.4f)", tc.sigma, tc.q, tc.eps, exact, oneD, eff)
	}
}

// sharedSampleDelta2D returns δ(ε) under add-remove of one example in the
// two-dimensional mechanism of TestSecMMFLSharedSample, the larger of the
// two directions' hockey-stick divergences, by the midpoint rule on a grid
// of step σ_i/200 over [−11σ_i, 1 + 11σ_i] in each coordinate (the
// densities are products of one-dimensional Gaussians, tabulated per
// axis).
func sharedSampleDelta2D(sigma []float64, q, eps float64) float64 {
	type axis struct {
		h    float64
		a, b []float64
	} // a: N(0, σ²), b: N(1, σ²), at the midpoints
	axes := make([]axis, 2)
	for i, s := range sigma {
		lo, hi := -11*s, 1+11*s
		h := s / 200
		n := int(math.Ceil((hi - lo) / h))
		ax := axis{h: h, a: make([]float64, n), b: make([]float64, n)}
		for k := range n {
			x := lo + (float64(k)+0.5)*h
			ax.a[k] = math.Exp(-x*x/(2*s*s)) / (s * math.Sqrt(2*math.Pi))
			ax.b[k] = math.Exp(-(x-1)*(x-1)/(2*s*s)) / (s * math.Sqrt(2*math.Pi))
		}
		axes[i] = ax
	}
	e := math.Exp(eps)
	var remove, add float64 // P: with the example (mixture), Q: without
	for i, a1 := range axes[0].a {
		b1 := axes[0].b[i]
		for j, a2 := range axes[1].a {
			Q := a1 * a2
			P := (1-q)*Q + q*b1*axes[1].b[j]
			remove += max(P-e*Q, 0)
			add += max(Q-e*P, 0)
		}
	}
	cell := axes[0].h * axes[1].h
	return max(remove, add) * cell
}

// subsampledDelta1D returns δ(ε) under add-remove of the Poisson-subsampled
// one-dimensional Gaussian (rate q, noise multiplier sigma, sensitivity 1),
// by the midpoint rule, step σ/20000 over [−11σ, 1 + 11σ].
func subsampledDelta1D(sigma, q, eps float64) float64 {
	lo, hi := -11*sigma, 1+11*sigma
	h := sigma / 20000
	e := math.Exp(eps)
	var remove, add float64
	for k := range int(math.Ceil((hi - lo) / h)) {
		x := lo + (float64(k)+0.5)*h
		Q := math.Exp(-x*x/(2*sigma*sigma)) / (sigma * math.Sqrt(2*math.Pi))
		P := (1-q)*Q + q*math.Exp(-(x-1)*(x-1)/(2*sigma*sigma))/(sigma*math.Sqrt(2*math.Pi))
		remove += max(P-e*Q, 0)
		add += max(Q-e*P, 0)
	}
	return max(remove, add) * h
}
