// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"math/bits"
)

// fft computes the discrete Fourier transform of x in place,
// X[k] = Σⱼ x[j]·exp(∓2πi·jk/n) (− for forward, + for inverse, the inverse
// also divided by n), by the iterative radix-2 Cooley–Tukey algorithm.
// len(x) must be a power of two; fft panics otherwise. Twiddle factors are
// computed directly with Sincos for each stage, so rounding errors do not
// accumulate through a recurrence.
func fft(x []complex128, inverse bool) {
	n := len(x)
	if n == 0 || n&(n-1) != 0 {
		panic("privacy: fft length not a power of two")
	}
	if n == 1 {
		return
	}
	shift := 64 - bits.TrailingZeros(uint(n))
	for i := range n {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	w := make([]complex128, n/2)
	for k := range w {
		s, c := math.Sincos(sign * 2 * math.Pi * float64(k) / float64(n))
		w[k] = complex(c, s)
	}
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		step := n / size
		for start := 0; start < n; start += size {
			for k := range half {
				t := cmul(w[k*step], x[start+k+half])
				u := x[start+k]
				x[start+k] = u + t
				x[start+k+half] = u - t
			}
		}
	}
	if inverse {
		f := 1 / float64(n)
		for i := range x {
			x[i] = complex(real(x[i])*f, imag(x[i])*f)
		}
	}
}

// nextPow2 returns the smallest power of two ≥ n (n ≥ 1).
func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// convolve returns the linear convolution of a and b (length
// len(a)+len(b)−1) computed by FFT. Negative results of rounding are set to
// zero, since the inputs are probability masses.
func convolve(a, b []float64) []float64 {
	m := len(a) + len(b) - 1
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	if len(a) < 64 || len(b) < 64 {
		out := make([]float64, m)
		for i, x := range a {
			if x == 0 {
				continue
			}
			for j, y := range b {
				out[i+j] += float64(x * y)
			}
		}
		return out
	}
	n := max(nextPow2(m), 2)
	fa := rfft(a, n)
	fb := rfft(b, n)
	for i := range fa {
		fa[i] = cmul(fa[i], fb[i])
	}
	r := irfft(fa, n)
	out := make([]float64, m)
	for i := range out {
		out[i] = math.Max(0, r[i])
	}
	return out
}

// rfft returns X[0..n/2] of the DFT of the real sequence x zero-padded to
// length n (a power of two ≥ 2, n ≥ len(x)), computed with one complex FFT
// of length n/2 on z[k] = x[2k] + i·x[2k+1] and the split
// X[k] = E[k] + e^(−2πik/n)·O[k], where E and O are the DFTs of the even and
// odd samples: E[k] = (Z[k] + conj Z[n/2−k])/2, O[k] = (Z[k] − conj Z[n/2−k])/(2i).
func rfft(x []float64, n int) []complex128 {
	m := n / 2
	z := make([]complex128, m)
	for k := range m {
		var re, im float64
		if 2*k < len(x) {
			re = x[2*k]
		}
		if 2*k+1 < len(x) {
			im = x[2*k+1]
		}
		z[k] = complex(re, im)
	}
	fft(z, false)
	out := make([]complex128, m+1)
	for k := 0; k <= m; k++ {
		zk := z[k%m]
		zc := conj(z[(m-k)%m])
		e := (zk + zc) / 2
		o := (zk - zc) / complex(0, 2)
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		out[k] = e + cmul(complex(c, s), o)
	}
	return out
}

// irfft inverts rfft: given X[0..n/2] of a real sequence of length n, it
// returns the sequence, using E[k] = (X[k] + conj X[n/2−k])/2 and
// O[k] = e^(2πik/n)·(X[k] − conj X[n/2−k])/2, then one inverse complex FFT
// of Z = E + i·O.
func irfft(x []complex128, n int) []float64 {
	m := n / 2
	z := make([]complex128, m)
	for k := range m {
		xc := conj(x[m-k])
		e := (x[k] + xc) / 2
		s, c := math.Sincos(2 * math.Pi * float64(k) / float64(n))
		o := cmul(complex(c, s), x[k]-xc) / 2
		z[k] = e + cmul(complex(0, 1), o)
	}
	fft(z, true)
	out := make([]float64, n)
	for k, v := range z {
		out[2*k] = real(v)
		out[2*k+1] = imag(v)
	}
	return out
}

func conj(z complex128) complex128 { return complex(real(z), -imag(z)) }

// cmul returns x·y as Go's complex multiplication defines it,
// (a + bi)(c + di) = (ac − bd) + (ad + bc)i, with each product rounded
// before the sum. The compiler may fuse the products of x*y with the sums
// (it does on arm64), which changes the last bits; the explicit
// conversions forbid that (docs/engine.md). At GOAMD64=v1, where nothing
// is fused, cmul(x, y) and x*y have the same bits.
func cmul(x, y complex128) complex128 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	return complex(float64(a*c)-float64(b*d), float64(a*d)+float64(b*c))
}
