// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestInferLoRA checks Linear's LoRA product on inference tapes
// (Tape.addLoRA: x·Aᵀ, whose rank-8 panel now runs on the narrow AVX2
// kernels, then the product with Bᵀ added into y) bit for bit against the
// definition of the kernels' result (gemmNaive: u = x·Aᵀ, then
// y + round(s·(u·Bᵀ)) with the chains and roundings of gemm.go's file
// comment), with thinOff on and off, and, without special values, against
// the ordinary tape (Tape.Affine and Tape.Weighted). Every kernel this CPU
// runs, with B's panels packed by the product and taken from a pack
// scope; shapes whose rows and columns do and do not fill the kernels'
// tiles; inputs with ±0, subnormals, the largest finite values and ±Inf
// (vrowValues); NaNs count as equal whatever their payloads (firstDiff).
//
// With special values the ordinary tape may differ: its sum
// (0 + y) + round(s·c) turns y = −0 and a chain c that underflows to −0
// into +0, where the inference tape's store gives −0.
func TestInferLoRA(t *testing.T) {
	saved := gemmUse
	defer func() { gemmUse, thinOff = saved, false }()
	rng := rand.New(rand.NewPCG(40, 6))
	for _, kern := range gemmKernels() {
		gemmUse = kern
		for _, n := range []int{1, 4, 6, 7, 13, 29, 64, 233} {
			for _, in := range []int{1, 3, 8, 17, 96} {
				for _, r := range []int{1, 2, 8, 9} {
					for _, out := range []int{1, 5, 16, 33} {
						special := rng.IntN(3) == 0
						desc := fmt.Sprintf("%s n=%d in=%d r=%d out=%d special=%v", kern.name, n, in, r, out, special)
						checkInferLoRA(t, rng, desc, n, in, r, out, special)
					}
				}
			}
		}
	}
}

func checkInferLoRA(t *testing.T, rng *rand.Rand, desc string, n, in, r, out int, special bool) {
	t.Helper()
	x := vrowValues(rng, n*in, special)
	a, b := newParam("lora_a", KindLoRAA, r, in), newParam("lora_b", KindLoRAB, out, r)
	copy(a.Data, vrowValues(rng, r*in, special))
	copy(b.Data, vrowValues(rng, out*r, special))
	y0 := vrowValues(rng, n*out, special)
	s := float32(rng.Float64()*4 + 0.1)

	// The definition: u = x·aᵀ, then y + s·(u·bᵀ).
	u := make([]float32, n*r)
	gemmNaive(false, true, n, r, in, 1, x, in, a.Data, in, 0, u, r)
	want := append([]float32(nil), y0...)
	gemmNaive(false, true, n, out, r, s, u, r, b.Data, r, 1, want, out)

	l := &Linear{LoRAA: a, LoRAB: b, LoRAScale: s}
	for _, off := range []bool{false, true} {
		thinOff = off
		tapes := []*Tape{newInferTape(nil), newInferTape(newPackScope(nil))}
		if !special {
			tapes = append(tapes, NewTape(nil, nil))
		}
		for i, tp := range tapes {
			y := l.addLoRA(tp, tp.Input(Tensor{Shape: []int{n, in}, Data: x}, false),
				tp.Input(Tensor{Shape: []int{n, out}, Data: append([]float32(nil), y0...)}, false), nil)
			if j := firstDiff(y.Value.Data, want); j >= 0 {
				t.Fatalf("%s thinOff=%v tape %d: element %d is %g, want %g", desc, off, i, j, y.Value.Data[j], want[j])
			}
			tp.Release()
		}
	}
	thinOff = false
}

// TestFillRows checks fillRows against one copy a row (its loop before
// the doubling copies), on every row count up to 70 and widths that do
// and do not divide the doublings' lengths.
func TestFillRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 7))
	for _, c := range []int{1, 3, 8, 96, 384} {
		for n := 0; n <= 70; n++ {
			r := vrowValues(rng, c, true)
			want := make([]float32, n*c)
			for i := 0; i < n; i++ {
				copy(want[i*c:(i+1)*c], r)
			}
			got := vrowValues(rng, n*c, false)
			fillRows(got, r)
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("c=%d n=%d: element %d is %g, want %g", c, n, i, got[i], want[i])
			}
		}
	}
}
