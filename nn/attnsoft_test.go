// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refSoftmaxBack is attendBackward's softmax backward as the Go loop
// that softmaxBack replaced, a row at a time (the reference of
// softDot4AVX2 and softBackAVX2).
func refSoftmaxBack(p, d []float32, T int) {
	for i := 0; i < T; i++ {
		pr, dr := p[i*T:(i+1)*T], d[i*T:(i+1)*T]
		var s float64
		for j, x := range pr {
			s += float64(float64(x) * float64(dr[j]))
		}
		for j, x := range pr {
			dr[j] = float32(float64(x) * (float64(dr[j]) - s))
		}
	}
}

// TestSoftmaxBack checks softmaxBack (four rows' dots a kernel call, the
// last pass four elements at a time) against refSoftmaxBack, bit for
// bit, on every T up to 40 and the models' widths: values whose
// magnitudes span 10^±15, so that a dot taken in another order gives
// other bits (checked below, so the test can see a reordered sum), with
// ±0, subnormals, the largest finite values and ±Inf, and causal rows
// whose probabilities are +0 past the diagonal. softDots4's sums are
// checked against each row's chain in float64 as well.
func TestSoftmaxBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 1))
	reordered, vec := 0, false
	for _, special := range []bool{false, true} {
		for _, causal := range []bool{false, true} {
			for _, T := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 20, 23, 24, 31, 32, 33, 39, 40, 64, 65, 96} {
				p, d := wideValues(rng, T*T, special), wideValues(rng, T*T, special)
				if causal {
					for i := range T {
						clear(p[i*T+i+1 : (i+1)*T])
					}
				}
				for i := 0; i+4 <= T; i += 4 {
					s, ok := softDots4(p[i*T:], d[i*T:], T, T)
					if !ok {
						continue
					}
					vec = true
					for r := range 4 {
						var want, back float64
						pr, dr := p[(i+r)*T:(i+r+1)*T], d[(i+r)*T:(i+r+1)*T]
						for j, x := range pr {
							want += float64(float64(x) * float64(dr[j]))
						}
						for j := len(pr) - 1; j >= 0; j-- {
							back += float64(float64(pr[j]) * float64(dr[j]))
						}
						if math.Float64bits(back) != math.Float64bits(want) && !math.IsNaN(want) {
							reordered++
						}
						if math.Float64bits(s[r]) != math.Float64bits(want) && !(math.IsNaN(s[r]) && math.IsNaN(want)) {
							t.Fatalf("softDots4 T=%d row %d special %t: %v, want %v", T, i+r, special, s[r], want)
						}
					}
				}
				got, want := append([]float32(nil), d...), append([]float32(nil), d...)
				softmaxBack(p, got, T)
				refSoftmaxBack(p, want, T)
				if k := firstDiff(got, want); k >= 0 {
					t.Fatalf("softmaxBack T=%d causal %t special %t: d[%d] (row %d) = %v, want %v",
						T, causal, special, k, k/T, got[k], want[k])
				}
			}
		}
	}
	if vec && reordered == 0 {
		t.Fatal("no row's dot changes when reversed: the inputs cannot show a reordered sum")
	}
}

// TestAttnSoftmaxModel checks the per-example gradients and losses of
// the batched engine (PerSample) and the inference path's token losses
// with the softmax's four-row kernels on against the same with them off
// (attnOff: the Go loops of refSoftmaxBack and refSoftmaxRows), bit for
// bit, on the models of batchCases and ragged batches.
func TestAttnSoftmaxModel(t *testing.T) {
	defer func() { attnOff = false }()
	for _, tc := range batchCases {
		m, l := batchModel(t, tc)
		batch := raggedBatch(rand.New(rand.NewPCG(72, 72)), m.Config, 5)
		var res [2]*Result
		for k, off := range []bool{true, false} {
			attnOff = off
			r, err := m.PerSample(l, batch, nil, nil, &Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			res[k] = r
		}
		if !slices.Equal(res[0].Losses, res[1].Losses) {
			t.Errorf("%s: losses differ with the kernels on", tc.desc)
		}
		for i := range batch {
			if !bitsEqual(res[0].Grads[i], res[1].Grads[i]) {
				t.Errorf("%s: gradient of example %d differs with the kernels on", tc.desc, i)
			}
		}
		if p := stillTensor(l, res[0].Grads); p != "" {
			t.Errorf("%s: no example moves %s, the check is vacuous there", tc.desc, p)
		}
		for i := range batch { // the inference path (attendRows)
			var tl [2][]float64
			for k, off := range []bool{true, false} {
				attnOff = off
				l, _, err := m.TokenLosses(&batch[i], nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				tl[k] = l
			}
			if len(tl[0]) == 0 || !slices.EqualFunc(tl[0], tl[1], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
				t.Errorf("%s: token losses of example %d differ with the kernels on (or none)", tc.desc, i)
			}
		}
	}
}

// refSoftmaxRows is the loop that softmaxRows replaced in attendForward
// and attendRows: softmaxRow32 on each row's first values (all n, or
// its position + 1 when causal), the rest set to zero.
func refSoftmaxRows(p []float32, nq, n int, causal bool, rows []int, lo int) {
	for i := range nq {
		row := p[i*n : (i+1)*n]
		m := n
		if causal {
			m = i + 1
			if rows != nil {
				m = rows[i] - lo + 1
			}
		}
		softmaxRow32(row[:m])
		for j := m; j < n; j++ {
			row[j] = 0
		}
	}
}

// TestSoftmaxRows checks softmaxRows (four rows' sums a kernel call in
// softmaxRows4) against refSoftmaxRows, bit for bit: 1 to 13 rows of 1 to
// 40 and 64 and 96 columns, causal (rows at consecutive positions, and
// at scattered positions as attendRows passes them) or not, with scores
// spread over 60 below the row's maximum, so that the exponentials span
// 2^±86 and a sum taken in another order gives other bits (checked
// below, so the test can see a reordered sum), and with −Inf (masked
// scores), ±0, subnormals, the largest finite values, +Inf and NaN.
func TestSoftmaxRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 1))
	reordered := 0
	ns := []int{64, 96}
	for n := 1; n <= 40; n++ {
		ns = append(ns, n)
	}
	for _, special := range []bool{false, true} {
		for _, n := range ns {
			for _, nq := range []int{1, 3, 4, 5, 8, 13} {
				for _, mode := range []string{"full", "causal", "rows"} {
					causal := mode != "full"
					var rows []int
					lo := 0
					if causal && nq > n {
						continue
					}
					if mode == "rows" {
						lo = rng.IntN(5)
						for _, r := range rng.Perm(n)[:nq] {
							rows = append(rows, lo+r)
						}
						slices.Sort(rows)
					}
					p := make([]float32, nq*n)
					for i := range p {
						p[i] = float32(-60 * rng.Float64())
						if special && rng.IntN(5) == 0 {
							p[i] = []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 3,
								math.MaxFloat32, float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN())}[rng.IntN(8)]
						}
					}
					got, want := append([]float32(nil), p...), append([]float32(nil), p...)
					softmaxRows(got, nq, n, causal, rows, lo)
					refSoftmaxRows(want, nq, n, causal, rows, lo)
					if k := firstDiff(got, want); k >= 0 {
						t.Fatalf("softmaxRows %d×%d %s special %t: p[%d] (row %d) = %v, want %v",
							nq, n, mode, special, k, k/n, got[k], want[k])
					}
					if special || mode != "full" {
						continue
					}
					for i := range nq { // can a reordered sum show here?
						row := append([]float32(nil), p[i*n:(i+1)*n]...)
						expShift(row, row, rowMax32(row))
						var fwd, back float64
						for j := range row {
							fwd += float64(row[j])
							back += float64(row[len(row)-1-j])
						}
						if fwd != back {
							reordered++
						}
					}
				}
			}
		}
	}
	if reordered == 0 {
		t.Fatal("no row's sum changes when reversed: the inputs cannot show a reordered sum")
	}
}

// TestSoftSums4 checks softSums4's four chains against each row's float64
// chain in column order, bit for bit (a reordered sum rarely shows
// through softmaxRows' float32 outputs): rows of 0 to 40 and 64 and 96
// values whose magnitudes span 10^±15, with and without ±0, subnormals,
// the largest finite values and ±Inf, at strides longer than a row.
func TestSoftSums4(t *testing.T) {
	rng := rand.New(rand.NewPCG(74, 1))
	for _, special := range []bool{false, true} {
		for _, n := range vgradLengths[:43] {
			stride := n + rng.IntN(5)
			p := wideValues(rng, 3*stride+n, special)
			s, done := softSums4(p, stride, n)
			if done == 0 {
				continue
			}
			if done != n&^3 {
				t.Fatalf("n=%d: %d summed, want %d", n, done, n&^3)
			}
			for r := range 4 {
				var want float64
				for _, v := range p[r*stride : r*stride+done] {
					want += float64(v)
				}
				if math.Float64bits(s[r]) != math.Float64bits(want) && !(math.IsNaN(s[r]) && math.IsNaN(want)) {
					t.Fatalf("n=%d special %t row %d: %v, want %v", n, special, r, s[r], want)
				}
			}
		}
	}
}

// BenchmarkAttnSoftmaxRows measures the attention softmax's per-element
// passes alone on one head's T×T causal scores (softmaxRows, then
// softmaxBack on a gradient), with the four-row kernels off and on
// (attnOff), alternated: rounds of off, on, on, off.
func BenchmarkAttnSoftmaxRows(b *testing.B) {
	defer func() { attnOff = false }()
	for _, T := range []int{16, 33, 64} {
		rng := rand.New(rand.NewPCG(75, uint64(T)))
		scores, grad := make([]float32, T*T), make([]float32, T*T)
		for i := range scores {
			scores[i], grad[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		p, d := make([]float32, T*T), make([]float32, T*T)
		for _, off := range []bool{true, false, false, true} {
			name := "on"
			if off {
				name = "off"
			}
			b.Run(fmt.Sprintf("T%d/%s", T, name), func(b *testing.B) {
				attnOff = off
				for b.Loop() {
					copy(p, scores)
					copy(d, grad)
					softmaxRows(p, T, T, true, nil, 0)
					softmaxBack(p, d, T)
				}
			})
		}
	}
}
