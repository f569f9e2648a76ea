// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"testing"
)

// TestCausalModelBits holds whole forward passes with causal attention on
// the mask's tiles (causal.go) to the same passes over every column
// (causalOff), bit for bit, on every shape of inferShapes (LoRA on every
// map, the anchor's shape, adapters, rotary positions), with and without
// Dual-Priv's token pruning as the visual transform: the logits of every
// row on an ordinary tape (refLogits), TokenLosses' logits and losses on
// an inference tape (the last block on the loss rows only, attendRows),
// and ForwardBatch's hidden states (stacked sequences of several
// lengths).
func TestCausalModelBits(t *testing.T) {
	defer func() { causalOff = false }()
	vts := []VisualTransform{nil, TokenPruning{Retention: 0.4, Contextual: 0.3}.Transform()}
	for name, m := range inferShapes(t) {
		batch := inferBatch(m)
		run := func(off bool) [][]float32 {
			causalOff = off
			var out [][]float32
			for e := range batch {
				for _, vt := range vts {
					ref, _ := refLogits(t, m, &batch[e], vt)
					losses, z, err := m.TokenLosses(&batch[e], nil, vt)
					if err != nil {
						t.Fatal(err)
					}
					l32 := make([]float32, 0, 2*len(losses))
					for _, l := range losses { // the float64 bits, in two halves
						b := math.Float64bits(l)
						l32 = append(l32, math.Float32frombits(uint32(b>>32)), math.Float32frombits(uint32(b)))
					}
					out = append(out, ref.Data, z.Data, l32)
				}
			}
			tp := NewInferenceTape()
			hid, _, _, err := m.ForwardBatch(tp, batch)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hid.Value.Clone().Data)
			tp.Release()
			return out
		}
		want, got := run(true), run(false)
		for i := range want {
			if !equalBits(got[i], want[i]) {
				t.Errorf("%s: output %d (%s) differs with causal attention on the mask's tiles", name, i, describe(i, len(vts), len(want)))
			}
		}
	}
}

// describe names output i of TestCausalModelBits' run.
func describe(i, nvt, n int) string {
	if i == n-1 {
		return "ForwardBatch"
	}
	kind := []string{"ordinary tape's logits", "TokenLosses' logits", "TokenLosses' losses"}[i%3]
	return fmt.Sprintf("sequence %d, transform %d, %s", i/3/nvt, i/3%nvt, kind)
}
