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

// bitsEqual64 reports whether a and b hold the same bits.
func bitsEqual64(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestMeanLossesBatched checks that TinyMLLM.MeanLosses (the batched
// engine, with and without the visual-token cache) gives the bits of the
// package function MeanLosses (one tape per sequence) on every model of
// the batched engine's tests, for batches of 1 to 19 ragged sequences, 1,
// 2 and 3 workers, and a cache empty, then filled. The cache must be used
// where the encoder and projector are frozen and read (a wrong entry
// changes a loss), and left empty where they are trainable. A batch with
// an invalid sequence gives the package function's error.
func TestMeanLossesBatched(t *testing.T) {
	t.Parallel()
	for _, tc := range batchCases {
		t.Run(tc.desc, func(t *testing.T) {
			m, l := batchModel(t, tc)
			rng := rand.New(rand.NewPCG(91, 91))
			vc := NewVisualCache(1 << 30)
			var batch []Sequence
			var want []float64
			for _, n := range tc.sizes([]int{1, 8, 13, 19}) {
				batch = raggedBatch(rng, m.Config, n)
				want = make([]float64, n)
				if err := MeanLosses(m, batch, nil, 1, want); err != nil {
					t.Fatal(err)
				}
				for _, w := range []int{1, 2, 3} {
					for pass, cache := range []*VisualCache{nil, vc, vc} {
						got := make([]float64, n)
						if err := m.MeanLosses(l, batch, &Options{Workers: w, Visual: cache}, got); err != nil {
							t.Fatal(err)
						}
						if !bitsEqual64(got, want) {
							t.Errorf("%d sequences, %d workers, pass %d: losses differ from one tape per sequence", n, w, pass)
						}
					}
				}
			}
			meanLossesCacheRead(t, m, l, batch, want, vc)
			bad := append(slices.Clone(batch[:5]), Sequence{}, batch[5])
			wantErr := MeanLosses(m, bad, nil, 1, make([]float64, len(bad)))
			err := m.MeanLosses(l, bad, &Options{Workers: 2, Visual: vc}, make([]float64, len(bad)))
			if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
				t.Errorf("invalid sequence: error %v, want %v", err, wantErr)
			}
		})
	}
}

// meanLossesCacheRead checks that vc holds tokens if and only if the
// encoder and projector of m are frozen in l, and, where it does, that
// MeanLosses reads them: with every cached token shifted, a loss of batch
// (whose losses are want) changes.
func meanLossesCacheRead(t *testing.T, m *TinyMLLM, l *Layout, batch []Sequence, want []float64, vc *VisualCache) {
	t.Helper()
	frozen := true
	for _, p := range m.visualParams() {
		frozen = frozen && l.Index(p) < 0
	}
	if frozen != (len(vc.tokens) > 0) {
		t.Fatalf("encoder frozen %v, but the cache holds %d images", frozen, len(vc.tokens))
	}
	if !frozen {
		return
	}
	for _, v := range vc.tokens {
		for i := range v.Data {
			v.Data[i] += 0.5
		}
	}
	got := make([]float64, len(batch))
	if err := m.MeanLosses(l, batch, &Options{Workers: 2, Visual: vc}, got); err != nil {
		t.Fatal(err)
	}
	if bitsEqual64(got, want) {
		t.Error("shifted cache entries change no loss: the cache is not read")
	}
}
