// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"math/big"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestFFT checks fft against the O(n²) definition of the DFT and the inverse
// round trip.
func TestFFT(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 4, 8, 64, 256} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		got := append([]complex128(nil), x...)
		fft(got, false)
		for k := range n {
			var want complex128
			for j := range n {
				want += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			if cmplx.Abs(got[k]-want) > 1e-12*float64(n) {
				t.Errorf("n=%d: X[%d] = %v, want %v", n, k, got[k], want)
			}
		}
		fft(got, true)
		for i := range x {
			if cmplx.Abs(got[i]-x[i]) > 1e-13 {
				t.Errorf("n=%d: round trip [%d] = %v, want %v", n, i, got[i], x[i])
			}
		}
	}
}

func TestConvolve(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	a, b := make([]float64, 300), make([]float64, 170)
	for i := range a {
		a[i] = rng.Float64()
	}
	for i := range b {
		b[i] = rng.Float64()
	}
	got := convolve(a, b)
	for k := range got {
		var want float64
		for i := range a {
			if j := k - i; j >= 0 && j < len(b) {
				want += a[i] * b[j]
			}
		}
		if math.Abs(got[k]-want) > 1e-10 {
			t.Errorf("conv[%d] = %v, want %v", k, got[k], want)
		}
	}
}

// TestRFFT checks rfft against the complex fft and irfft as its inverse.
func TestRFFT(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{2, 4, 16, 1024} {
		x := make([]float64, n-1) // one short: rfft zero-pads
		c := make([]complex128, n)
		for i := range x {
			x[i] = rng.NormFloat64()
			c[i] = complex(x[i], 0)
		}
		fft(c, false)
		got := rfft(x, n)
		for k := range got {
			if cmplx.Abs(got[k]-c[k]) > 1e-12*float64(n) {
				t.Errorf("n=%d: rfft[%d] = %v, want %v", n, k, got[k], c[k])
			}
		}
		back := irfft(got, n)
		for i := range back {
			want := 0.0
			if i < len(x) {
				want = x[i]
			}
			if math.Abs(back[i]-want) > 1e-13 {
				t.Errorf("n=%d: irfft[%d] = %v, want %v", n, i, back[i], want)
			}
		}
	}
}

func TestFFTPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r != "privacy: fft length not a power of two" {
			t.Errorf("fft of length 3: recovered %v", r)
		}
	}()
	fft(make([]complex128, 3), false)
}

// TestCmul holds cmul to complex multiplication with each product rounded
// to float64 before the sum, the products computed exactly with math/big
// and rounded to nearest (the reference is independent of what the
// compiler fuses). The inputs include pairs where a fused multiply-add
// would give other bits; the test checks that they occur.
func TestCmul(t *testing.T) {
	round := func(x, y float64) float64 {
		p := new(big.Float).SetPrec(2 * 53).SetFloat64(x)
		p.Mul(p, new(big.Float).SetFloat64(y))
		f, _ := p.Float64()
		return f
	}
	rng := rand.New(rand.NewPCG(40, 1))
	draw := func() float64 {
		return (rng.Float64()*2 - 1) * math.Ldexp(1, rng.IntN(80)-40)
	}
	vals := []complex128{0, complex(math.Copysign(0, -1), 1), complex(1, math.Copysign(0, -1)), complex(1e-310, 3), complex(1e300, -1e300), 1i}
	for range 2000 {
		vals = append(vals, complex(draw(), draw()))
	}
	fusedDiffers := 0
	for i, x := range vals {
		y := vals[(i*7+3)%len(vals)]
		a, b, c, d := real(x), imag(x), real(y), imag(y)
		want := complex(round(a, c)-round(b, d), round(a, d)+round(b, c))
		got := cmul(x, y)
		if math.Float64bits(real(got)) != math.Float64bits(real(want)) || math.Float64bits(imag(got)) != math.Float64bits(imag(want)) {
			t.Errorf("cmul(%v, %v) = %v, want %v", x, y, got, want)
		}
		if math.FMA(a, c, -round(b, d)) != real(want) {
			fusedDiffers++
		}
	}
	if fusedDiffers < 100 {
		t.Errorf("only %d of %d products differ when fused: the inputs do not test the rounding", fusedDiffers, len(vals))
	}
}
