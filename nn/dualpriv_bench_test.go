// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "testing"

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
		m, l, batch, _ := benchLoRA(b, preset, 10)
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
