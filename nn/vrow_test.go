// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The tests of vrow_amd64.s hold each kernel, through the function that
// calls it, to a scalar reference in this file: the Go loop the kernel
// replaced, element by element. Where the CPU has no AVX2 (or with
// REPRO_GEMM=go or -tags purego) the functions run their own Go loops,
// and the same tests check those.

// vrowValues returns n values for the kernels' tests: normal values of
// several magnitudes and, when special is set, ±0, subnormals, the
// largest finite values and ±Inf at random positions.
func vrowValues(rng *rand.Rand, n int, special bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
		if special && rng.IntN(4) == 0 {
			x[i] = []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -1e-40,
				math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1))}[rng.IntN(8)]
		}
	}
	return x
}

// firstDiff returns the first index at which got and want differ in their
// bits (two NaNs count as equal whatever their payloads), -1 if none.
func firstDiff(got, want []float32) int {
	if len(got) != len(want) {
		return 0
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			return i
		}
	}
	return -1
}

// refNormRow is normRow's loop without normalised rows, one element at a
// time (the reference of normRowAVX2).
func refNormRow(yr, xr, g, b []float32, m, r float64) {
	for j, v := range xr {
		h := float32((float64(v) - m) * r)
		yr[j] = float32(h * g[j])
		if b != nil {
			yr[j] += b[j]
		}
	}
}

// refLayerNormRow is layerNormRow without normalised rows, one element at
// a time: float64 sums in order, then refNormRow.
func refLayerNormRow(yr, xr, g, b []float32, eps float64) {
	var m float64
	for _, v := range xr {
		m += float64(v)
	}
	m /= float64(len(xr))
	var s float64
	for _, v := range xr {
		d := float64(v) - m
		s += float64(d * d)
	}
	refNormRow(yr, xr, g, b, m, 1/math.Sqrt(s/float64(len(xr))+eps))
}

// TestNormRowVec checks normRow without normalised rows (normRowAVX2 on
// amd64) against refNormRow on rows of every length up to 40 and of 96
// and 384 values, with and without a bias, with special values in x, g
// and b.
func TestNormRowVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	for _, special := range []bool{false, true} {
		for n := 0; n <= 400; n++ {
			if n > 40 && n != 96 && n != 384 {
				continue
			}
			x, g, b := vrowValues(rng, n, special), vrowValues(rng, n, special), vrowValues(rng, n, special)
			m, r := rng.NormFloat64(), math.Exp(rng.NormFloat64())
			for _, bias := range [][]float32{nil, b} {
				got, want := make([]float32, n), make([]float32, n)
				normRow(got, nil, x, g, bias, m, r)
				refNormRow(want, x, g, bias, m, r)
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("n=%d, bias %t, special %t: y[%d] = %v, want %v (x = %v, g = %v)",
						n, bias != nil, special, i, got[i], want[i], x[i], g[i])
				}
			}
		}
	}
}

// TestLayerNormRows checks layerNormRows (sixteen rows at a time in
// rowStats16's lanes, then eight, then four, normRow's vector kernel)
// against refLayerNormRow on every row, for 1 to 40 rows of 3, 13, 64 and
// 96 values, with and without a bias.
func TestLayerNormRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, c := range []int{3, 13, 64, 96} {
		g, b := make([]float32, c), make([]float32, c)
		for j := range g {
			g[j], b[j] = float32(1+rng.NormFloat64()), float32(rng.NormFloat64())
		}
		for rows := 1; rows <= 40; rows++ {
			x := make([]float32, rows*c)
			for i := range x {
				x[i] = float32(3*rng.NormFloat64() + float64(i%c))
			}
			for _, bias := range [][]float32{nil, b} {
				got, want := make([]float32, len(x)), make([]float32, len(x))
				layerNormRows(got, x, c, g, bias, 1e-5)
				for i := range rows {
					refLayerNormRow(want[i*c:(i+1)*c], x[i*c:(i+1)*c], g, bias, 1e-5)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Errorf("c=%d, %d rows, bias %t: element %d = %v, want %v", c, rows, bias != nil, i, got[i], want[i])
				}
			}
		}
	}
}

// TestAddVec checks Tape.Add (addAVX2 on amd64) against the sum one
// element at a time, for every length up to 40 and 96, with special
// values.
func TestAddVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 2))
	for n := 1; n <= 96; n++ {
		if n > 40 && n != 96 {
			continue
		}
		a, b := vrowValues(rng, n, true), vrowValues(rng, n, true)
		tp := NewInferenceTape()
		got := tp.Add(tp.Input(Tensor{Shape: []int{n}, Data: a}, false), tp.Input(Tensor{Shape: []int{n}, Data: b}, false)).Value.Data
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		if i := firstDiff(got, want); i >= 0 {
			t.Fatalf("n=%d: a + b at %d = %v, want %v (a = %v, b = %v)", n, i, got[i], want[i], a[i], b[i])
		}
		tp.Release()
	}
}

// TestSmearVec checks Tape.smearKeys (smearAVX2 on amd64, where the width
// is a multiple of eight) against its loop over heads, one element at a
// time, on stacked sequences (first rows with no row before them) of
// widths 96 (4 heads), 32 (2 heads) and 12 (3 heads: the loop only).
func TestSmearVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 3))
	for _, tc := range []struct{ D, heads int }{{96, 4}, {32, 2}, {12, 3}} {
		segs := []int{0, 1, 9, 20, 29}
		T, D, dh := segs[len(segs)-1], tc.D, tc.D/tc.heads
		x := vrowValues(rng, T*D, true)
		logit := vrowValues(rng, tc.heads, false)
		tp := NewInferenceTape()
		got := tp.smearKeys(tp.Input(Tensor{Shape: []int{T, D}, Data: x}, false),
			tp.Input(Tensor{Shape: []int{tc.heads}, Data: logit}, false), tc.heads, segs).Value.Data
		first := map[int]bool{}
		for _, r := range segs {
			first[r] = true
		}
		want := make([]float32, T*D)
		for j := 0; j < T; j++ {
			for h := 0; h < tc.heads; h++ {
				s := float32(1 / (1 + math.Exp(-float64(logit[h]))))
				for c := 0; c < dh; c++ {
					o := j*D + h*dh + c
					want[o] = float32(s * x[o])
					if !first[j] {
						want[o] += float32((1 - s) * x[o-D])
					}
				}
			}
		}
		if i := firstDiff(got, want); i >= 0 {
			t.Fatalf("D=%d: element %d (row %d) = %v, want %v", D, i, i/D, got[i], want[i])
		}
		tp.Release()
	}
}

// TestSoftmaxRow32Bits checks softmaxRow32 (its last pass in scale64AVX2 on
// amd64) against the same steps with that pass one element at a time,
// on rows of every length up to 40.
func TestSoftmaxRow32Bits(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 4))
	for n := 1; n <= 40; n++ {
		z := vrowValues(rng, n, false)
		got := append([]float32(nil), z...)
		softmaxRow32(got)
		want := append([]float32(nil), z...)
		m := float32(math.Inf(-1))
		for _, v := range want {
			m = max(m, v)
		}
		expShift(want, want, m)
		var s float64
		for _, e := range want {
			s += float64(e)
		}
		inv := 1 / s
		for j, e := range want {
			want[j] = float32(float64(e) * inv)
		}
		if i := firstDiff(got, want); i >= 0 {
			t.Fatalf("n=%d: p[%d] = %v, want %v", n, i, got[i], want[i])
		}
	}
}

// TestRowMax32 checks rowMax32 (maxAVX2 on amd64 where it gives max's
// bits) against max one value at a time, on rows of every length up to
// 40 with special values, NaNs, and rows whose largest value is −0 or +0
// (where the assembly's ordering of zeros differs and rowMax32 must fall
// back).
func TestRowMax32(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 5))
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	for n := 0; n <= 40; n++ {
		for trial := range 40 {
			z := vrowValues(rng, n, trial%2 == 1)
			switch {
			case trial%5 == 2 && n > 0:
				z[rng.IntN(n)] = nan
			case trial%5 == 3: // nothing above zero, zeros of both signs
				for i := range z {
					z[i] = -float32(math.Abs(float64(z[i])))
					if rng.IntN(3) == 0 {
						z[i] = []float32{0, negZero}[rng.IntN(2)]
					}
				}
			}
			want := float32(math.Inf(-1))
			for _, v := range z {
				want = max(want, v)
			}
			got := rowMax32(z)
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("n=%d, trial %d: rowMax32 = %v (bits %#x), want %v (bits %#x); row %v",
					n, trial, got, math.Float32bits(got), want, math.Float32bits(want), z)
			}
		}
	}
}

// TestExpShiftMasked checks expShift (expShiftMaskedAVX2 on amd64, the
// last partial vector masked) against exp32 one element at a time, for
// every length up to 40 with special values, and that the elements after
// dst, in the same array, keep their values (the masked store writes no
// lane it does not select).
func TestExpShiftMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 6))
	for n := 1; n <= 40; n++ {
		x := append(vrowValues(rng, n, true), -88, 89, -87.3)
		rng.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
		x = x[:n]
		shift := float32(rng.NormFloat64())
		buf := make([]float32, n+8)
		for i := range buf {
			buf[i] = 1234.5
		}
		expShift(buf[:n], x, shift)
		want := make([]float32, n)
		for i := range want {
			want[i] = exp32(x[i] - shift)
		}
		if i := firstDiff(buf[:n], want); i >= 0 {
			t.Fatalf("n=%d: exp(x[%d] − shift) = %v, want %v (x = %v)", n, i, buf[i], want[i], x[i])
		}
		for i := n; i < len(buf); i++ {
			if buf[i] != 1234.5 {
				t.Fatalf("n=%d: element %d after dst written: %v", n, i, buf[i])
			}
		}
	}
}

// TestRowStats checks LayerNorm's statistics of sixteen rows
// (rowStats16: rowSums16AVX2 and rowSqDev16AVX2 on amd64) and of eight
// (rowStats8) against each row's float64 chains one value at a time, as
// layerNormRow sums them, bit for bit: rows of 4 to 13, 64 and 96 values
// over narrow and wide spans of magnitudes, where a reordered or fused sum
// changes the last bits (each such mistake in the assembly was checked to
// fail it).
func TestRowStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 7))
	for _, tc := range []struct{ c, span int }{
		{4, 3}, {5, 3}, {7, 3}, {9, 3}, {13, 3}, {64, 3}, {96, 3},
		{4, 15}, {6, 15}, {8, 15}, {12, 15}, {13, 15}, {64, 15}, {96, 15},
	} {
		// Magnitudes 10^−span to 10^span. Over a narrow span the squared
		// deviations' roundings show a fused sum; a wide one shows a
		// reordered sum, since float64 sums of float32 values within about
		// 2²⁹ of one another are exact in any order.
		c := tc.c
		x := make([]float32, 16*c)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(2*tc.span+1)-tc.span)))
		}
		var wm, ws [16]float64
		for k := range 16 {
			for _, v := range x[k*c : (k+1)*c] {
				wm[k] += float64(v)
			}
			a := wm[k] / float64(c)
			for _, v := range x[k*c : (k+1)*c] {
				d := float64(v) - a
				ws[k] += float64(d * d)
			}
		}
		check := func(name string, k int, gm, gs float64) {
			t.Helper()
			if math.Float64bits(gm) != math.Float64bits(wm[k]) || math.Float64bits(gs) != math.Float64bits(ws[k]) {
				t.Fatalf("c=%d, %s, row %d: sums %v, %v, want %v, %v", c, name, k, gm, gs, wm[k], ws[k])
			}
		}
		if m, s, ok := rowStats16(x, c); ok {
			for k := range 16 {
				check("rowStats16", k, m[k], s[k])
			}
		} else if gemmUse.name != "go" { // vmathAVX2 where it is defined
			t.Fatalf("c=%d: rowStats16 did not run with AVX2", c)
		}
		for h := range 2 {
			var xs [8][]float32
			for k := range xs {
				xs[k] = x[(8*h+k)*c : (8*h+k+1)*c]
			}
			m, s := rowStats8(&xs)
			for k := range 8 {
				check("rowStats8", 8*h+k, m[k], s[k])
			}
		}
	}
}
