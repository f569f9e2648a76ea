// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "testing"

// bitfitCached adds to BenchmarkBitFit the steps of the methods' loops,
// which also cache the batch's visual tokens (Options.Visual): the cache
// is filled before the timer starts, as it is after the first epoch.
func bitfitCached(b *testing.B, preset string, m *TinyMLLM, l *Layout, batch []Sequence) {
	opt := &Options{Reuse: true, Visual: NewVisualCache(1 << 30)}
	gradient := func() ([]float32, error) {
		g, _, _, err := m.Gradient(l, batch, nil, nil, opt)
		return g, err
	}
	perSample := func() (*Result, error) { return m.PerSample(l, batch, nil, nil, opt) }
	if _, err := perSample(); err != nil {
		b.Fatal(err)
	}
	b.Run(preset+"/cached/dpsgd", func(b *testing.B) { anchorDPSGD(b, m, l, len(batch), perSample) })
	b.Run(preset+"/cached/nonprivate", func(b *testing.B) { anchorNonPrivate(b, l, len(batch), gradient) })
}
