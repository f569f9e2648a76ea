// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCausalBits holds causal attention on the mask's tiles (causal.go)
// to the products over every column (causalOff, the code before it: three
// Gemm calls a head), bit for bit, in attendForward (outputs and
// probabilities) and attendRows (outputs at subsets of the rows), with
// every kernel, for sequence lengths around the tiles' and panels' edges,
// 1–4 heads and head widths 8 and 24, on
//   - normal values;
//   - values with ±0, subnormals, the largest finite values and ±Inf
//     (vrowValues), in the queries, keys and values;
//   - queries of zero (uniform probabilities 1/w) and values of ±2⁻¹⁴⁹,
//     whose products with the probabilities round to ±0: the chains end
//     at −0, and the masked terms fma(+0, v, −0) of the whole product turn
//     some of them into +0 (causalFix's corner);
//   - the same with an infinite or NaN value in some row (causalFix's
//     fallback to the whole product).
func TestCausalBits(t *testing.T) {
	saved := gemmUse
	defer func() { gemmUse, causalOff = saved, false }()
	rng := rand.New(rand.NewPCG(29, 24))
	for _, kern := range gemmKernels() {
		gemmUse = kern
		for _, T := range []int{1, 2, 5, 6, 7, 9, 12, 13, 16, 17, 29, 33, 64} {
			for _, heads := range []int{1, 2, 4} {
				for _, dh := range []int{8, 24} {
					for mode := range 4 {
						desc := fmt.Sprintf("%s T=%d heads=%d dh=%d mode=%d", kern.name, T, heads, dh, mode)
						checkCausal(t, rng, desc, T, heads, dh, mode)
					}
				}
			}
		}
	}
}

// TestNegZeroVec holds negZeroVec to a loop over the bits of every
// element, on blocks of 1–9 rows of 8–40 columns inside wider rows, with
// one −0 or none, +0 and the other zeros of vrowValues around it, and −0
// just outside the block (after its columns, or in the row after).
func TestNegZeroVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 0))
	looked := false
	for range 2000 {
		rows, cols := 1+rng.IntN(9), 8*(1+rng.IntN(5))
		ld := cols + rng.IntN(9)
		x := vrowValues(rng, (rows+1)*ld, true)
		for i, v := range x {
			if math.Float32bits(v) == 1<<31 {
				x[i] = 0
			}
		}
		want := false
		switch rng.IntN(4) {
		case 0:
			x[rng.IntN(rows)*ld+rng.IntN(cols)] = float32(math.Copysign(0, -1))
			want = true
		case 1:
			if ld > cols {
				x[rng.IntN(rows)*ld+cols] = float32(math.Copysign(0, -1))
			}
		case 2:
			x[rows*ld+rng.IntN(ld)] = float32(math.Copysign(0, -1))
		}
		found, ok := negZeroVec(x, rows, cols, ld)
		if !ok {
			continue
		}
		looked = true
		if found != want {
			t.Fatalf("rows=%d cols=%d ld=%d: found %v, want %v", rows, cols, ld, found, want)
		}
	}
	if !looked && gemmUse.name != "go" {
		t.Fatal("negZeroVec never looked with AVX2")
	}
}

// causalInputs returns queries, keys and values of one sequence of T rows
// and D columns (heads of width dh) for TestCausalBits' mode.
func causalInputs(rng *rand.Rand, T, D, dh, mode int) (q, k, v []float32) {
	q, k, v = vrowValues(rng, T*D, mode == 1), vrowValues(rng, T*D, mode == 1), vrowValues(rng, T*D, mode == 1)
	if mode < 2 {
		return q, k, v
	}
	clear(q)
	tiny := float32(math.SmallestNonzeroFloat32)
	for c := range D {
		cut := rng.IntN(T + 1)
		for j := range T {
			x := &v[j*D+c]
			switch c % 4 {
			case 0: // −0 chains everywhere, −0 masked terms
				*x = -tiny
			case 1: // −0 chains, +0 masked terms from row cut on
				*x = -tiny
				if j >= cut {
					*x = tiny
				}
			case 2: // one +0 value
				*x = -tiny
				if j == cut {
					*x = 0
				}
			}
		}
	}
	if mode == 3 {
		v[rng.IntN(T)*D+rng.IntN(D)] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[rng.IntN(3)]
	}
	return q, k, v
}

// checkCausal compares attendForward and attendRows with causalOff set
// and cleared on one set of inputs.
func checkCausal(t *testing.T, rng *rand.Rand, desc string, T, heads, dh, mode int) {
	t.Helper()
	D := heads * dh
	q, k, v := causalInputs(rng, T, D, dh, mode)
	run := func(off bool) (out, probs []float32) {
		causalOff = off
		out, probs = make([]float32, T*D), make([]float32, heads*T*T)
		for i := range out {
			out[i] = float32(math.NaN()) // every element must be written
		}
		attendForward(q, k, v, out, probs, T, D, heads, true)
		return out, probs
	}
	wantOut, wantP := run(true)
	gotOut, gotP := run(false)
	if i := bitsDiff(gotOut, wantOut); i >= 0 {
		t.Fatalf("%s: attendForward output %d: %v (%#x), want %v (%#x)", desc, i, gotOut[i], math.Float32bits(gotOut[i]), wantOut[i], math.Float32bits(wantOut[i]))
	}
	if i := bitsDiff(gotP, wantP); i >= 0 {
		t.Fatalf("%s: attendForward probability %d: %v, want %v", desc, i, gotP[i], wantP[i])
	}
	// attendRows at a subset of the rows, in a sequence starting at row lo
	// of the stacked sequences.
	const lo = 3
	var rows []int
	for j := range T {
		if rng.IntN(3) > 0 || j == T-1 && rng.IntN(2) == 0 {
			rows = append(rows, lo+j)
		}
	}
	if len(rows) == 0 {
		rows = []int{lo + rng.IntN(T)}
	}
	qr := make([]float32, len(rows)*D)
	for i, r := range rows {
		copy(qr[i*D:(i+1)*D], q[(r-lo)*D:])
	}
	runRows := func(off bool) []float32 {
		causalOff = off
		out, p := make([]float32, len(rows)*D), make([]float32, len(rows)*T)
		for i := range out {
			out[i] = float32(math.NaN())
		}
		attendRows(qr, k, v, out, p, rows, lo, T, D, heads, true)
		return out
	}
	want, got := runRows(true), runRows(false)
	if i := bitsDiff(got, want); i >= 0 {
		t.Fatalf("%s rows %v: attendRows output %d: %v (%#x), want %v (%#x)", desc, rows, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
	}
}

// bitsDiff returns the first index at which got and want differ in their
// bits, NaN payloads included, -1 if none.
func bitsDiff(got, want []float32) int {
	if len(got) != len(want) {
		return 0
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i
		}
	}
	return -1
}

// BenchmarkCausalAttend measures attendForward on one causal sequence of
// the small preset's shape (T = 29, 4 heads of 24) and of the anchor's
// length doubled (T = 64), with causalOff set and cleared, alternated
// (rounds of off, on, on, off) as BenchmarkCausal does the steps.
func BenchmarkCausalAttend(b *testing.B) {
	defer func() { causalOff = false }()
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range 4 {
		for _, o := range [][]bool{{true, false}, {false, true}}[r%2] {
			name := "on"
			if o {
				name = "off"
			}
			for _, T := range []int{29, 64} {
				const heads, dh = 4, 24
				D := heads * dh
				q, k, v := causalInputs(rng, T, D, dh, 0)
				out, probs := make([]float32, T*D), make([]float32, heads*T*T)
				b.Run(fmt.Sprintf("T=%d/%s", T, name), func(b *testing.B) {
					causalOff = o
					cpu := startCPU(b)
					for b.Loop() {
						attendForward(q, k, v, out, probs, T, D, heads, true)
					}
					cpu.stop(b)
				})
			}
		}
	}
}
