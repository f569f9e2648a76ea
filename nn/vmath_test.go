// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExp32 checks exp32 against math.Exp in float64 on a dense grid of
// [−87.3, 88] and at its edges: relative error at most 1.2e-7 (one ulp
// of float32; Cephes states 1 ulp for expf), 0 below −87.33654 and e⁸⁸
// above 88.
func TestExp32(t *testing.T) {
	const bound = 1.2e-7
	var worst float64
	for i := 0; i <= 2000000; i++ {
		x := float32(-87.3 + (88+87.3)*float64(i)/2000000)
		want := math.Exp(float64(x))
		e := math.Abs(float64(exp32(x))-want) / want
		worst = max(worst, e)
		if e > bound {
			t.Fatalf("exp32(%v) = %v, want %v (relative error %.3g > %.3g)", x, exp32(x), want, e, bound)
		}
	}
	t.Logf("worst relative error %.3g", worst)
	for _, tc := range []struct{ x, want float32 }{
		{0, 1}, {-100, 0}, {float32(math.Inf(-1)), 0}, {1000, exp32(88)}, {float32(math.Inf(1)), exp32(88)},
	} {
		if got := exp32(tc.x); got != tc.want {
			t.Errorf("exp32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if v := exp32(float32(math.NaN())); v == v {
		t.Errorf("exp32(NaN) = %v, want NaN", v)
	}
}

// TestGELU32 checks gelu32's Φ and φ against float64 (Φ(x) =
// erfc(−x/√2)/2, φ(x) = e^(−x²/2)/√(2π)) on a grid of [−12, 12]: Φ within
// 2.5e-7 absolutely (Abramowitz and Stegun's 1.5e-7 for erf, halved, plus
// float32 rounding), and φ within 2e-7 + 3e-8·x² relatively (exp32's
// ulp, the rounding of the product with 1/√(2π), and the rounding of x²
// to float32, relative error 2⁻²⁴, which becomes an absolute error of
// x²·2⁻²⁵ in the exponent).
func TestGELU32(t *testing.T) {
	var worstC, worstP float64
	for i := 0; i <= 240000; i++ {
		x := float32(-12 + 24*float64(i)/240000)
		cdf, pdf := gelu32(x)
		wc := 0.5 * math.Erfc(-float64(x)*invSqrt2)
		wp := invSqrt2Pi * math.Exp(-0.5*float64(x)*float64(x))
		ec := math.Abs(float64(cdf) - wc)
		ep := math.Abs(float64(pdf)-wp) / wp
		worstC, worstP = max(worstC, ec), max(worstP, ep)
		if ec > 2.5e-7 || ep > 2e-7+3e-8*float64(x)*float64(x) {
			t.Fatalf("gelu32(%v) = %v, %v, want %v, %v", x, cdf, pdf, wc, wp)
		}
	}
	t.Logf("worst |ΔΦ| %.3g, worst relative Δφ %.3g", worstC, worstP)
}

// TestVmathKernels checks the assembly kernels (where the CPU runs them)
// bit for bit against the Go loops, on lengths that do and do not fill
// the eight lanes, with special values among the inputs.
func TestVmathKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	specials := []float32{0, float32(math.Copysign(0, -1)), -87.3, -87.4, -100, 88, 89, 1e-30, -1e-30, 7, -7, 40, -40, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, n := range []int{1, 7, 8, 9, 16, 33, 100} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
			if rng.IntN(4) == 0 {
				x[i] = specials[rng.IntN(len(specials))]
			}
		}
		shift := float32(rng.NormFloat64())
		got, want := make([]float32, n), make([]float32, n)
		expShift(got, x, shift)
		for i := range want {
			want[i] = exp32(x[i] - shift)
		}
		sameBits(t, "expShift", x, got, want)
		y, d := make([]float32, n), make([]float32, n)
		geluFwd(y, d, x)
		wy, wd := make([]float32, n), make([]float32, n)
		for i, v := range x {
			cdf, pdf := gelu32(v)
			wy[i], wd[i] = v*cdf, fma32(v, pdf, cdf)
		}
		sameBits(t, "gelu", x, y, wy)
		sameBits(t, "gelu derivative", x, d, wd)
		y2 := make([]float32, n)
		geluFwd(y2, nil, x)
		sameBits(t, "gelu without derivative", x, y2, wy)
	}
}

func sameBits(t *testing.T, name string, x, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d of %d (x = %v): %v, want %v", name, i, len(got), x[i], got[i], want[i])
		}
	}
}

// TestSoftmaxRow32 checks attention's float32 softmax against the
// definition in float64 on random rows of every length up to 40: each
// probability within 3e-7 relatively (exp32's ulp, the rounding of z − m,
// which is at most 2⁻²⁴·|z − m| absolutely in the exponent, and the final
// rounding), and the row summing to 1 within 1e-6.
func TestSoftmaxRow32(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for n := 1; n <= 40; n++ {
		z := make([]float32, n)
		for i := range z {
			z[i] = float32(rng.NormFloat64() * 4)
		}
		want := make([]float64, n)
		m := math.Inf(-1)
		for _, v := range z {
			m = max(m, float64(v))
		}
		var s float64
		for i, v := range z {
			want[i] = math.Exp(float64(v) - m)
			s += want[i]
		}
		p := append([]float32(nil), z...)
		softmaxRow32(p)
		var sum float64
		for i := range p {
			want[i] /= s
			sum += float64(p[i])
			tol := 3e-7 + 6e-8*math.Abs(float64(z[i])-m)
			if e := math.Abs(float64(p[i])-want[i]) / want[i]; e > tol {
				t.Fatalf("n=%d: p[%d] = %v, want %v (relative error %.3g > %.3g)", n, i, p[i], want[i], e, tol)
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("n=%d: probabilities sum to %v", n, sum)
		}
	}
}
