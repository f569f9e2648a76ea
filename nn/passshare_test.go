// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPassShare runs zeroth-order steps as DPZO takes them (Reset, the
// losses at θ + φz, the losses at θ − φz, with a PassShare and the
// visual cache) on every shape of inferShapes and holds every loss to the
// reference, the package function MeanLosses (one ordinary tape per
// sequence, nothing shared), bit for bit. The layouts are each model's
// trainable tensors and, to reach every level of sharing, those plus the
// first block's first LayerNorm gain (only the input rows shared), plus
// its query weight (the key and value products still shared), and plus
// the token embeddings (nothing shared). It checks which levels each
// layout shares, and that a call on another batch after the first panics.
// The steps run on 1 to 4 workers.
func TestPassShare(t *testing.T) {
	for name, m := range inferShapes(t) {
		batch := inferBatch(m)
		b0 := m.LM.Blocks[0]
		trainable := NewLayout(m.Params()).Params
		with := func(p *Param) []*Param { return append(append([]*Param(nil), trainable...), p) }
		// The LoRA shapes train tensors of the language model's blocks
		// only and the rotary one none; the adapter shape trains adapters
		// of the vision encoder and the projector too.
		lora := name != "smoke/adapter"
		layouts := []struct {
			name   string
			params []*Param
			embed  bool
		}{{"trainable", trainable, lora}}
		if lora {
			layouts = append(layouts, []struct {
				name   string
				params []*Param
				embed  bool
			}{
				{"+ln1", with(b0.LN1.G), true},
				{"+q", with(b0.Q.W), true},
				{"+tok", with(m.Tok), false},
			}...)
		}
		for _, lc := range layouts {
			extra := lc.params[len(trainable):]
			for _, p := range extra {
				p.Trainable = true
			}
			l := NewLayout(lc.params)
			for _, p := range extra {
				p.Trainable = false
			}
			lv := m.shareLevels(l)
			if lv.embed != lc.embed {
				t.Fatalf("%s %s: embeddings shared %v, want %v", name, lc.name, lv.embed, lc.embed)
			}
			if lc.embed {
				ln1 := lc.name != "+ln1"
				if lv.ln1 != ln1 || lv.proj != [3]bool{ln1 && lc.name != "+q", ln1, ln1} {
					t.Fatalf("%s %s: levels %+v", name, lc.name, lv)
				}
			}
			theta := l.Values()
			rng := rand.New(rand.NewPCG(11, 11))
			share := &PassShare{}
			opts := &Options{Share: share, Visual: NewVisualCache(8 << 20)}
			v := make([]float32, l.Size)
			got, want := make([]float64, len(batch)), make([]float64, len(batch))
			for step := range 3 {
				z := make([]float32, l.Size)
				for j := range z {
					z[j] = float32(rng.NormFloat64())
				}
				share.Reset()
				for pass, f := range []float32{1e-2, -1e-2} {
					// Results do not depend on the number of workers,
					// also when the two passes of a step differ in it.
					opts.Workers = []int{1, 3, 0, 2, 4, 1}[2*step+pass]
					for j := range theta {
						v[j] = theta[j] + f*z[j]
					}
					l.SetValues(v)
					if err := m.MeanLosses(l, batch, opts, got); err != nil {
						t.Fatal(err)
					}
					if err := MeanLosses(m, batch, nil, 1, want); err != nil {
						t.Fatal(err)
					}
					for e := range got {
						if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
							t.Fatalf("%s %s step %d φ %v: loss %d = %v, reference %v", name, lc.name, step, f, e, got[e], want[e])
						}
					}
				}
				for j := range theta {
					theta[j] -= 1e-3 * z[j]
				}
			}
			if lc.embed {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s %s: MeanLosses on another batch after the first did not panic", name, lc.name)
						}
					}()
					_ = m.MeanLosses(l, batch[1:], opts, got[1:])
				}()
			}
		}
	}
}
