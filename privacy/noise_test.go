// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"slices"
	"testing"
)

func TestNoiseReproducible(t *testing.T) {
	t.Parallel()
	a, b := make([]float64, 1000), make([]float64, 1000)
	NewNoise(7, "dpsgd/gradient").AddGaussian(a, 2)
	NewNoise(7, "dpsgd/gradient").AddGaussian(b, 2)
	if !slices.Equal(a, b) {
		t.Errorf("same seed and purpose gave different noise")
	}
	c := make([]float64, 1000)
	NewNoise(7, "dualpriv/fusion").AddGaussian(c, 2)
	d := make([]float64, 1000)
	NewNoise(8, "dpsgd/gradient").AddGaussian(d, 2)
	if slices.Equal(a, c) || slices.Equal(a, d) {
		t.Errorf("different purpose or seed gave the same noise")
	}
	// Bit-for-bit golden values of the first draws, so that a change of
	// generator or stream derivation is noticed. Recorded from this
	// implementation (math/rand/v2 PCG, FNV-1a stream) on first commit.
	n := NewNoise(1, "test")
	got := []float64{n.Normal(), n.Normal(), n.Normal()}
	want := []float64{1.5907371643908692, 0.15889308834090343, 0.22756838561737103}
	if !slices.Equal(got, want) {
		t.Errorf("first draws of NewNoise(1, \"test\") = %v, want %v", got, want)
	}
	x := []float32{1, 2, 3}
	NewNoise(1, "test").AddGaussian32(x, 0.5)
	for i := range x {
		if w := float32(float64(i+1) + 0.5*want[i]); x[i] != w {
			t.Errorf("AddGaussian32[%d] = %v, want %v", i, x[i], w)
		}
	}
}

// TestNoiseMoments checks mean and variance of 10⁵ draws of N(0, σ²), σ = 3.
// The bounds are 5 standard errors, so a correct generator fails with
// probability below 1.2e-6 per statistic (the draws are seeded, so the test
// is in fact deterministic).
func TestNoiseMoments(t *testing.T) {
	t.Parallel()
	for _, n := range []*Noise{NewNoise(3, "moments"), mustSecure(t)} {
		const m, sigma = 100000, 3.0
		x := make([]float64, m)
		n.AddGaussian(x, sigma)
		var mean, v float64
		for _, xi := range x {
			mean += xi
		}
		mean /= m
		for _, xi := range x {
			v += (xi - mean) * (xi - mean)
		}
		v /= m - 1
		if se := sigma / math.Sqrt(m); math.Abs(mean) > 5*se {
			t.Errorf("mean %g, want 0 ± %g", mean, 5*se)
		}
		// The variance estimate has standard error σ²√(2/(m−1)).
		if se := sigma * sigma * math.Sqrt(2.0/(m-1)); math.Abs(v-sigma*sigma) > 5*se {
			t.Errorf("variance %g, want %g ± %g", v, sigma*sigma, 5*se)
		}
	}
}

func mustSecure(t *testing.T) *Noise {
	n, err := NewSecureNoise()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNoisePanics(t *testing.T) {
	t.Parallel()
	for _, s := range []float64{-1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if r := recover(); r != "privacy: invalid noise standard deviation" {
					t.Errorf("AddGaussian(σ=%v): recovered %v", s, r)
				}
			}()
			NewNoise(1, "x").AddGaussian(make([]float64, 1), s)
		}()
	}
}
