// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkZO measures the forward passes of one DPZO step at the smoke
// and small presets: the mean loss of every example of a batch at θ + φz
// and at θ − φz, with the methods' default LoRA (every map of the
// language model, rank 4 at smoke and 8 at small) and a batch of the methods' default size (32 at
// smoke, 64 at small) of VQA examples of 12 text tokens and one image.
// tapes is the package function MeanLosses (one tape per sequence, DPZO's
// path before the batched engine), batched is TinyMLLM.MeanLosses, and
// cached adds the visual-token cache, kept across iterations as a run
// keeps it across steps. All three give the same bits
// (TestMeanLossesBatched).
func BenchmarkZO(b *testing.B) {
	for _, preset := range []string{"smoke", "small"} {
		m, l, batch, rng := benchLoRA(b, preset, 9)
		theta := l.Values()
		plus, minus := make([]float32, len(theta)), make([]float32, len(theta))
		for j, v := range theta {
			z := float32(rng.NormFloat64()) * 1e-2
			plus[j], minus[j] = v+z, v-z
		}
		cache := &Options{Visual: NewVisualCache(64 << 20)}
		for _, v := range []struct {
			name   string
			losses func(out []float64) error
		}{
			{"tapes", func(out []float64) error { return MeanLosses(m, batch, nil, 0, out) }},
			{"batched", func(out []float64) error { return m.MeanLosses(l, batch, &Options{}, out) }},
			{"cached", func(out []float64) error { return m.MeanLosses(l, batch, cache, out) }},
		} {
			b.Run(preset+"/"+v.name, func(b *testing.B) {
				out := make([]float64, len(batch))
				cpu := startCPU(b)
				for b.Loop() {
					for _, p := range [][]float32{plus, minus} {
						l.SetValues(p)
						if err := v.losses(out); err != nil {
							b.Fatal(err)
						}
					}
				}
				cpu.stop(b)
				b.ReportMetric(float64(len(batch)*b.N)/b.Elapsed().Seconds(), "ex/s")
			})
		}
		l.SetValues(theta)
	}
}

// benchLoRA returns the model of BenchmarkDualPriv and BenchmarkZO at
// preset: the methods' default LoRA (every map of the language model, rank
// 4 at smoke and 8 at small), its layout, a batch of the methods' default
// size (32, 64) of VQA examples of 12 text tokens and one image drawn with
// seed, and the generator, for the caller's further draws.
func benchLoRA(b *testing.B, preset string, seed uint64) (*TinyMLLM, *Layout, []Sequence, *rand.Rand) {
	c, err := Preset(preset, 600)
	if err != nil {
		b.Fatal(err)
	}
	c.PEFT = PEFT{Method: "lora", Rank: map[string]int{"smoke": 4, "small": 8}[preset],
		Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.1}
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	batch := make([]Sequence, map[string]int{"smoke": 32, "small": 64}[preset])
	for i := range batch {
		batch[i] = vqa(rng, c, 8, 2)
	}
	return m, NewLayout(m.Params()), batch, rng
}
