// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGammaMoments compares sample moments with the Gamma(k, 1) mean k and
// variance k. With n = 200000 the sample mean has standard error √(k/n);
// the tolerance of 5 standard errors rejects falsely with probability below
// 6e-7 per case. The variance tolerance uses the standard error of the
// sample variance, √((μ₄ − σ⁴)/n) with μ₄ = 3k² + 6k for Gamma(k, 1).
func TestGammaMoments(t *testing.T) {
	t.Parallel()
	const n = 200000
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []float64{0.05, 0.5, 1, 3.7, 20} {
		var s, s2 float64
		for range n {
			x := Gamma(rng, k)
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("Gamma(%v) drew %v", k, x)
			}
			s += x
			s2 += x * x
		}
		mean := s / n
		variance := s2/n - mean*mean
		if se := math.Sqrt(k / n); math.Abs(mean-k) > 5*se {
			t.Errorf("Gamma(%v): mean %.5f, want %v ± %.5f", k, mean, k, 5*se)
		}
		if se := math.Sqrt((3*k*k + 6*k - k*k) / n); math.Abs(variance-k) > 5*se {
			t.Errorf("Gamma(%v): variance %.5f, want %v ± %.5f", k, variance, k, 5*se)
		}
	}
}

func TestDirichlet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	// Mean of each coordinate is 1/K; with α = 1, K = 4, the marginal is
	// Beta(1, 3) of variance 3/80.
	const n, k = 50000, 4
	p := make([]float64, k)
	var mean [k]float64
	for range n {
		Dirichlet(rng, p, 1)
		sum := 0.0
		for i, x := range p {
			sum += x
			mean[i] += x / n
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("draw %v sums to %v", p, sum)
		}
	}
	for i, m := range mean {
		if se := math.Sqrt(3.0 / 80 / n); math.Abs(m-0.25) > 5*se {
			t.Errorf("coordinate %d: mean %.4f, want 0.25 ± %.4f", i, m, 5*se)
		}
	}
	// Tiny α still gives a distribution.
	Dirichlet(rng, p, 1e-300)
	if s := p[0] + p[1] + p[2] + p[3]; math.Abs(s-1) > 1e-12 {
		t.Errorf("α = 1e-300: draw %v sums to %v", p, s)
	}
}

func TestDirichletPartition(t *testing.T) {
	t.Parallel()
	labels := make([]int, 1000)
	for i := range labels {
		labels[i] = i % 10
	}
	for _, alpha := range []float64{0.01, 0.5, 100} {
		rng := rand.New(rand.NewPCG(3, 3))
		got := DirichletPartition(rng, labels, 7, alpha)
		counts := make([]int, 7)
		for _, c := range got {
			if c < 0 || c >= 7 {
				t.Fatalf("α = %v: client %d", alpha, c)
			}
			counts[c]++
		}
		for c, n := range counts {
			if n == 0 {
				t.Errorf("α = %v: client %d is empty", alpha, c)
			}
		}
		again := DirichletPartition(rand.New(rand.NewPCG(3, 3)), labels, 7, alpha)
		for i := range got {
			if got[i] != again[i] {
				t.Fatalf("α = %v: partition not reproducible", alpha)
			}
		}
	}
	for _, tc := range []struct {
		desc string
		fn   func()
	}{
		{"zero clients", func() { DirichletPartition(rand.New(rand.NewPCG(1, 1)), labels, 0, 1) }},
		{"negative label", func() { DirichletPartition(rand.New(rand.NewPCG(1, 1)), []int{-1}, 2, 1) }},
		{"bad shape", func() { Gamma(rand.New(rand.NewPCG(1, 1)), math.NaN()) }},
	} {
		if !panics(tc.fn) {
			t.Errorf("%s: did not panic", tc.desc)
		}
	}
}

func panics(fn func()) (p bool) {
	defer func() { p = recover() != nil }()
	fn()
	return false
}
