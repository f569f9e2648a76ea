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

// TestGemmHeads holds gemmHeads to its reference, the backend's Gemm
// called on each head alone (what attention did before), bit for bit:
// every transposition, α and β as attention passes them, sequence lengths
// around the tile and panel edges (partial panels, padded and short row
// tiles), heads side by side in the columns of one matrix and stacked as
// separate matrices, with C's old values (β = 1) and NaN in C where β = 0.
// It also checks that the test can fail: a head's product with A and B of
// another head differs.
func TestGemmHeads(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
		}
		return x
	}
	for _, heads := range []int{1, 2, 4} {
		for _, dh := range []int{8, 16, 24, 40} {
			for _, T := range []int{1, 5, 6, 7, 13, 16, 17, 29, 33, 64} {
				D := heads * dh
				// The operands as attention lays them out: per-head
				// columns of [T, D] (stride D, head step dh) and per-head
				// [T, T] matrices (stride T, head step T·T).
				type op struct {
					tA, tB      bool
					m, n, k     int
					alpha, beta float32
					lda, sa     int
					ldb, sb     int
					ldc, sc     int
					na, nb, nc  int
				}
				for _, o := range []op{
					{false, true, T, T, dh, 0.2, 0, D, dh, D, dh, T, T * T, T * D, T * D, heads * T * T},
					{false, false, T, dh, T, 1, 0, T, T * T, D, dh, D, dh, heads * T * T, T * D, T * D},
					{true, false, T, dh, T, 1, 1, T, T * T, D, dh, D, dh, heads * T * T, T * D, T * D},
					{false, false, T, dh, T, 0.2, 1, T, T * T, D, dh, D, dh, heads * T * T, T * D, T * D},
				} {
					name := fmt.Sprintf("h%d/dh%d/T%d/tA%v/tB%v", heads, dh, T, o.tA, o.tB)
					a, b, c0 := fill(o.na), fill(o.nb), fill(o.nc)
					if o.beta == 0 {
						for i := range c0 {
							if i%3 == 0 {
								c0[i] = float32(math.NaN())
							}
						}
					}
					want := append([]float32(nil), c0...)
					for h := range heads {
						kernels.Gemm(o.tA, o.tB, o.m, o.n, o.k, o.alpha, a[h*o.sa:], o.lda, b[h*o.sb:], o.ldb, o.beta, want[h*o.sc:], o.ldc)
					}
					got := append([]float32(nil), c0...)
					gemmHeads(heads, o.tA, o.tB, o.m, o.n, o.k, o.alpha, a, o.lda, o.sa, b, o.ldb, o.sb, o.beta, got, o.ldc, o.sc)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: element %d: %v, want %v", name, i, got[i], want[i])
						}
					}
					if heads > 1 {
						// A head computed from another head's operands
						// must show: the comparison above can fail.
						wrong := append([]float32(nil), c0...)
						gemmHeads(heads, o.tA, o.tB, o.m, o.n, o.k, o.alpha, a, o.lda, 0, b, o.ldb, o.sb, o.beta, wrong, o.ldc, o.sc)
						same := true
						for i := range want {
							if math.Float32bits(wrong[i]) != math.Float32bits(want[i]) {
								same = false
								break
							}
						}
						if same {
							t.Fatalf("%s: head 0's A for every head gave the same bits", name)
						}
					}
				}
			}
		}
	}
}

// BenchmarkAttnHeadsOp measures one attention op's forward and backward
// (Tape.Attention on one causal sequence of T rows, 4 heads of 24: the
// small model's shape) with gemmHeads's shared plan off and on
// (headsOff), alternated: rounds of off, on, on, off.
func BenchmarkAttnHeadsOp(b *testing.B) {
	defer func() { headsOff = false }()
	const heads, dh = 4, 24
	for _, T := range []int{29, 64} {
		rng := rand.New(rand.NewPCG(76, uint64(T)))
		D := heads * dh
		x := make([][]float32, 4)
		for i := range x {
			x[i] = make([]float32, T*D)
			for j := range x[i] {
				x[i][j] = float32(rng.NormFloat64())
			}
		}
		for _, off := range []bool{true, false, false, true} {
			name := "on"
			if off {
				name = "off"
			}
			b.Run(fmt.Sprintf("T%d/%s", T, name), func(b *testing.B) {
				headsOff = off
				for b.Loop() {
					tp := NewTape(nil, nil)
					in := func(d []float32) *Node { return tp.Input(Tensor{Shape: []int{T, D}, Data: d}, true) }
					out, _ := tp.Attention(in(x[0]), in(x[1]), in(x[2]), heads, true)
					tp.BackwardFrom(out, x[3])
				}
			})
		}
	}
}
