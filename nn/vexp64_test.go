// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpDiffs holds expDiffs to its reference, math.Exp of the same
// difference, bit for bit: on random logits and shifts as the losses take
// them (x − max ≤ 0), on a grid over the whole range where exp is a normal
// number and beyond it (the edges where archExp goes through its denormal,
// underflow and overflow branches), on ±0, ±Inf and NaN, and on every
// length from 0 to 19 with a special lane at each position (the groups
// the assembly leaves to math.Exp).
func TestExpDiffs(t *testing.T) {
	check := func(name string, src []float32, shift float64) {
		t.Helper()
		dst := make([]float64, len(src))
		expDiffs(dst, src, shift)
		for j, v := range src {
			want := math.Exp(float64(v) - shift)
			if math.Float64bits(dst[j]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(dst[j])) {
				t.Fatalf("%s: exp(%v − %v) = %v (%#x), math.Exp gives %v (%#x)", name, v, shift, dst[j], math.Float64bits(dst[j]), want, math.Float64bits(want))
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for n := range 200 {
		z := make([]float32, 1+rng.IntN(700))
		scale := []float64{0.1, 1, 10, 100}[n%4]
		m := math.Inf(-1)
		for j := range z {
			z[j] = float32(rng.NormFloat64() * scale)
			m = max(m, float64(z[j]))
		}
		check("random logits", z, m)
	}
	// A grid of arguments from −760 to 720, through the normal range and
	// past both of archExp's bounds (about −708.4 and 709.78).
	grid := make([]float32, 0, 1<<20)
	for i := range 1 << 20 {
		grid = append(grid, float32(-760+1480*float64(i)/(1<<20)))
	}
	check("grid", grid, 0)
	check("grid shifted", grid, 0.3)
	// Near the bounds, one float32 step at a time.
	for _, x0 := range []float32{-745.2, -708.4, -707.7, 709.78, 88.7} {
		var z []float32
		x := x0
		for range 4000 {
			z = append(z, x)
			x = math.Nextafter32(x, float32(math.Inf(1)))
		}
		check("near a bound", z, 0)
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e30, -1e30}
	for _, s := range special {
		for n := range 20 {
			for at := range n {
				z := make([]float32, n)
				for j := range z {
					z[j] = float32(j) * -0.37
				}
				z[at] = s
				check("special lane", z, 0)
			}
		}
	}
	// The shift itself not finite.
	for _, shift := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		check("special shift", []float32{0, 1, -1, 2, 3, 4, 5, 6, 7}, shift)
	}
}

// TestSoftmaxRowBits holds softmaxRow and logSumExp, which take their
// exponentials from expDiffs in chunks, to the one-element-at-a-time loops
// over math.Exp they replace (written out here as the reference), bit for
// bit: rows of every length up to three chunks and beyond, with p aliasing
// z as the key-value cache calls it.
func TestSoftmaxRowBits(t *testing.T) {
	ref := func(z, p []float32) float64 {
		m := math.Inf(-1)
		for _, v := range z {
			if float64(v) > m {
				m = float64(v)
			}
		}
		var s float64
		for j, v := range z {
			e := math.Exp(float64(v) - m)
			p[j] = float32(e)
			s += e
		}
		inv := 1 / s
		for j := range p {
			p[j] = float32(float64(p[j]) * inv)
		}
		return m + math.Log(s)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for n := 0; n <= 3*expChunk+9; n++ {
		z := make([]float32, n)
		for j := range z {
			z[j] = float32(rng.NormFloat64() * 6)
		}
		if n > 5 {
			z[n/2] = -1e4 // an exponential of 0
		}
		want := make([]float32, n)
		wantL := ref(z, want)
		p := make([]float32, n)
		l := softmaxRow(z, p)
		ls := logSumExp(z)
		alias := append([]float32(nil), z...)
		la := softmaxRow(alias, alias)
		for _, got := range []float64{l, ls, la} {
			if math.Float64bits(got) != math.Float64bits(wantL) {
				t.Fatalf("n = %d: log-sum-exp %v, reference %v", n, got, wantL)
			}
		}
		for j := range want {
			if math.Float32bits(p[j]) != math.Float32bits(want[j]) || math.Float32bits(alias[j]) != math.Float32bits(want[j]) {
				t.Fatalf("n = %d: p[%d] = %v (aliased %v), reference %v", n, j, p[j], alias[j], want[j])
			}
		}
	}
}
