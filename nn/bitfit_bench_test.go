// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// bitfitBench builds the TinyMLLM of preset with BitFit on the language
// model's biases (the methods' default peft: bitfit, lora_parts [lm]) and
// a batch of the methods' default size at that scale (32 at smoke, 64 at
// small) of VQA examples of 12 text tokens and one image.
func bitfitBench(b *testing.B, preset string) (*TinyMLLM, *Layout, []Sequence) {
	c, err := Preset(preset, 600)
	if err != nil {
		b.Fatal(err)
	}
	c.PEFT = PEFT{Method: "bitfit", Parts: []string{"lm"}}
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	n := map[string]int{"smoke": 32, "small": 64}[preset]
	rng := rand.New(rand.NewPCG(7, 7))
	batch := make([]Sequence, n)
	for i := range batch {
		batch[i] = vqa(rng, c, 8, 2)
	}
	return m, NewLayout(m.Params()), batch
}

// BenchmarkBitFit measures one BitFit step at the smoke and small presets
// on the methods' path (TinyMLLM.PerSample and Gradient, with the tapes'
// memory reused as the methods do): DP-SGD (per-sample gradients, clipping
// to norm 1, Gaussian noise of σ = 1, a plain SGD update) and the
// non-private step (the summed gradient). It reports examples per second
// (ex/s), process CPU time per step (cpu-ns/op) and, for DP-SGD, the
// step's peak training state plus the model (peak-B/step). The same file
// compiled against the engine before BitFit was batched times one tape per
// example (docs/engine.md, "Engine speed").
func BenchmarkBitFit(b *testing.B) {
	for _, preset := range []string{"smoke", "small"} {
		m, l, batch := bitfitBench(b, preset)
		gradient := func() ([]float32, error) {
			g, _, _, err := m.Gradient(l, batch, nil, nil, anchorOptions)
			return g, err
		}
		perSample := func() (*Result, error) { return m.PerSample(l, batch, nil, nil, anchorOptions) }
		b.Run(preset+"/dpsgd", func(b *testing.B) { anchorDPSGD(b, m, l, len(batch), perSample) })
		b.Run(preset+"/nonprivate", func(b *testing.B) { anchorNonPrivate(b, l, len(batch), gradient) })
		bitfitCached(b, preset, m, l, batch)
	}
}
