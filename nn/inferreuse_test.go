// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"slices"
	"sync"
	"testing"
)

// TestInferTapeReuse checks that inference tapes, whose nodes, shapes and
// values live in pooled arenas (arena.go, infer.go), never alias live
// memory nor read what a released tape left: on the smoke preset with
// LoRA on every map, with and without Dual-Priv's token pruning,
//   - TokenLosses twice in a row on each sequence gives the same bits,
//     and the same as the first pass over all sequences (the reference:
//     each call's own result, cloned before the next call);
//   - with every pooled arena's values, nodes and shapes overwritten by
//     NaN and garbage between calls (a released tape's memory), the
//     results keep their bits: nothing is read before it is written;
//   - with one inference tape held unreleased (its ForwardBatch output
//     cloned first), calls on four goroutines at once give the reference
//     bits, and the held tape's output keeps its bits and its shape: no
//     arena in use is handed out again.
func TestInferTapeReuse(t *testing.T) {
	m := inferShapes(t)["smoke/lora"]
	batch := inferBatch(m)
	vts := []VisualTransform{nil, TokenPruning{Retention: 0.4, Contextual: 0.3}.Transform()}
	type result struct {
		losses []float64
		z      Tensor
	}
	call := func(e, v int) result {
		losses, z, err := m.TokenLosses(&batch[e], nil, vts[v])
		if err != nil {
			t.Error(err)
			return result{}
		}
		return result{slices.Clone(losses), z.Clone()}
	}
	same := func(a, b result) bool {
		return equalBits(a.z.Data, b.z.Data) && slices.Equal(a.z.Shape, b.z.Shape) && slices.Equal(a.losses, b.losses)
	}
	want := make([][2]result, len(batch))
	for e := range batch {
		for v := range vts {
			want[e][v] = call(e, v)
		}
	}
	// Twice in a row, and after a released tape's memory is poisoned.
	poison := func() {
		a := inferArenas.Get().(*arena)
		for _, s := range a.slabs {
			for i := range s {
				s[i] = float32(math.NaN())
			}
		}
		for _, c := range a.nodes {
			for i := range c {
				c[i] = Node{Value: Tensor{Shape: []int{-1}, Data: []float32{float32(math.NaN())}}, needs: true}
			}
		}
		for _, c := range a.ints {
			for i := range c {
				c[i] = -1
			}
		}
		inferArenas.Put(a)
	}
	for e := range batch {
		for v := range vts {
			for round := range 3 {
				if round == 2 {
					poison()
				}
				if got := call(e, v); !same(got, want[e][v]) {
					t.Errorf("sequence %d, transform %d, call %d: TokenLosses differ from the first call's", e, v, round+2)
				}
			}
		}
	}
	// One tape held while others are taken and released concurrently.
	held := NewInferenceTape()
	hid, _, _, err := m.ForwardBatch(held, batch)
	if err != nil {
		t.Fatal(err)
	}
	hidWant := hid.Value.Clone()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range len(batch) {
				e := (i + g*3) % len(batch)
				for v := range vts {
					if got := call(e, v); !same(got, want[e][v]) {
						t.Errorf("goroutine %d: sequence %d, transform %d: TokenLosses differ from the serial call's", g, e, v)
					}
				}
			}
		}()
	}
	wg.Wait()
	poison()
	if !equalBits(hid.Value.Data, hidWant.Data) || !slices.Equal(hid.Value.Shape, hidWant.Shape) {
		t.Errorf("the held tape's output changed while other tapes were used (shape %v, want %v)", hid.Value.Shape, hidWant.Shape)
	}
	held.Release()
}
