// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
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
			s += float64(x) * float64(dr[j])
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
							want += float64(x) * float64(dr[j])
						}
						for j := len(pr) - 1; j >= 0; j-- {
							back += float64(pr[j]) * float64(dr[j])
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

// TestSoftmaxBackModel checks the per-example gradients and losses of
// the batched engine (PerSample) with softmaxBack's kernels on against
// the same with them off (attnOff: the Go loops of refSoftmaxBack), bit
// for bit, on the models of batchCases and ragged batches.
func TestSoftmaxBackModel(t *testing.T) {
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
	}
}
