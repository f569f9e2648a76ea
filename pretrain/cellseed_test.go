// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestCellSequencesSeeded checks that the cell forms drawn from a stream
// (shuffled orders, fresh public layouts) are a function of the stream's
// seed: two streams of one seed give the same sequences, tokens, losses
// and images, pass after pass, and another seed gives other ones (the
// base's seed, streamCellOrd and streamCellMix, seeds these streams).
func TestCellSequencesSeeded(t *testing.T) {
	b, err := prepare(Options{Scale: "smoke", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.loadData(); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"shuffled", "single+fresh", "shuffled+fresh"} {
		passes := func(seed uint64) [][]any {
			rng := rand.New(rand.NewPCG(seed, streamCellMix))
			var out [][]any
			for range 2 {
				seqs, err := b.corpus.cellSequences(form, rng)
				if err != nil {
					t.Fatal(err)
				}
				var p []any
				for _, s := range seqs {
					p = append(p, s.Tokens, s.Loss, s.Images)
				}
				out = append(out, p)
			}
			return out
		}
		a, again, other := passes(1), passes(1), passes(2)
		if !reflect.DeepEqual(a, again) {
			t.Errorf("%s: two streams of seed 1 give different sequences", form)
		}
		if reflect.DeepEqual(a[0], other[0]) || reflect.DeepEqual(a[1], other[1]) {
			t.Errorf("%s: seeds 1 and 2 give the same sequences", form)
		}
		if reflect.DeepEqual(a[0], a[1]) {
			t.Errorf("%s: the second pass repeats the first", form)
		}
	}
}
