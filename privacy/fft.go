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
				t := w[k*step] * x[start+k+half]
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
				out[i+j] += x * y
			}
		}
		return out
	}
	n := nextPow2(m)
	fa := make([]complex128, n)
	fb := make([]complex128, n)
	for i, x := range a {
		fa[i] = complex(x, 0)
	}
	for i, x := range b {
		fb[i] = complex(x, 0)
	}
	fft(fa, false)
	fft(fb, false)
	for i := range fa {
		fa[i] *= fb[i]
	}
	fft(fa, true)
	out := make([]float64, m)
	for i := range out {
		out[i] = math.Max(0, real(fa[i]))
	}
	return out
}
