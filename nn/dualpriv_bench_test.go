// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkDualPriv measures a DP-SGD step with a visual transform, the
// path of Dual-Priv's steps (one tape per example, since the transform
// acts on each image's encoder output), at the smoke and small presets:
// the methods' default LoRA (every map of the language model, rank 4 at
// smoke and 8 at small), a batch of the methods' default size (32, 64) of
// VQA examples of 12 text tokens and one image, and pruneTransform (the
// cache tests' miniature of Dual-Priv's pruning). tapes calls Loss, as
// the methods did before; cached calls LossCached with the cache of
// encoder outputs, kept across iterations as a run keeps it across steps
// (same bits, TestLossCached).
func BenchmarkDualPriv(b *testing.B) {
	for _, preset := range []string{"smoke", "small"} {
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
		l := NewLayout(m.Params())
		rng := rand.New(rand.NewPCG(10, 10))
		batch := make([]Sequence, map[string]int{"smoke": 32, "small": 64}[preset])
		for i := range batch {
			batch[i] = vqa(rng, c, 8, 2)
		}
		cached := &Options{Reuse: true, Visual: NewVisualCache(64 << 20)}
		b.Run(preset+"/tapes", func(b *testing.B) {
			anchorDPSGD(b, m, l, len(batch), func() (*Result, error) {
				return PerSample(l, len(batch), func(t *Tape, i int) (*Node, error) {
					return m.Loss(t, &batch[i], nil, pruneTransform)
				}, anchorOptions)
			})
		})
		b.Run(preset+"/cached", func(b *testing.B) {
			anchorDPSGD(b, m, l, len(batch), func() (*Result, error) {
				vc := m.VisualCacheFor(l, cached)
				return PerSample(l, len(batch), func(t *Tape, i int) (*Node, error) {
					return m.LossCached(t, &batch[i], pruneTransform, vc)
				}, cached)
			})
		})
	}
}
