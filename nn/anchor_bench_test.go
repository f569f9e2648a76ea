// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"testing"
)

// Shape of the anchor benchmark, the model and batch of the engine-speed
// side-by-side comparison with PyTorch + Opacus (bench/anchor.py builds the
// same shape): width 64 with 4 heads in both the vision encoder and the
// language model, 2 blocks each, 28×28 images cut into 7×7 patches (16
// patches and [CLS]: 17 visual tokens), 16 text tokens, vocabulary 600,
// LoRA of rank 8 on q and v, batches of 32.
const (
	anchorBatch    = 32
	anchorVocab    = 600
	anchorQuestion = 11 // <bos> <image>, 11 question tokens, 2 answer tokens, <eos>: 16 text tokens
	anchorAnswer   = 2
)

// anchorOptions are the options of the anchor's steps: the tapes' memory
// is reused (the methods' training loops do the same).
var anchorOptions = &Options{Reuse: true}

// anchorConfig is the model of the anchor benchmark: the small preset cut
// down to width 64 and two language-model blocks.
func anchorConfig() Config {
	c, err := Preset("small", anchorVocab)
	if err != nil {
		panic(err)
	}
	c.Width, c.Layers, c.Heads = 64, 2, 4
	c.VisionWidth, c.VisionLayers, c.VisionHeads = 64, 2, 4
	c.PEFT.Method, c.PEFT.Rank, c.PEFT.Alpha = "lora", 8, 16
	c.PEFT.Targets = []string{"q", "v"}
	return c
}

// anchorBench builds the anchor model and its batch.
func anchorBench(b *testing.B) (*TinyMLLM, *Layout, []Sequence) {
	c := anchorConfig()
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 21))
	batch := make([]Sequence, anchorBatch)
	for i := range batch {
		batch[i] = vqa(rng, c, anchorQuestion, anchorAnswer)
	}
	return m, NewLayout(m.Params()), batch
}

// BenchmarkAnchor measures one optimizer step on the engine-speed comparison's anchor shape
// (see anchorConfig), without privacy (the summed gradient) and with
// DP-SGD (per-sample gradients, clipping to norm 1, Gaussian noise of
// σ = 1, a plain SGD update), and reports examples per second (ex/s), the
// process CPU time per step (cpu-ns/op) and, for DP-SGD, the step's peak
// training state as Stats counts it plus the model (peak-B/step).
// nonprivate and dpsgd run the methods' path (TinyMLLM.Gradient and
// PerSample: the batched engine, batch.go); tapes/nonprivate and
// tapes/dpsgd run one tape per example (the package functions), the
// engine before batching. Compare it with PyTorch's step on the same shape
// with bench/anchor.py (docs/engine.md, "Engine speed"); run both with
// -cpu 1,2 and -count 10 and summarise with benchstat.
func BenchmarkAnchor(b *testing.B) {
	m, l, batch := anchorBench(b)
	loss := func(t *Tape, i int) (*Node, error) { return m.Loss(t, &batch[i], nil, nil) }
	batched := map[string]bool{"": true, "tapes/": false}
	for _, prefix := range []string{"", "tapes/"} {
		gradient := func() ([]float32, error) {
			if batched[prefix] {
				g, _, _, err := m.Gradient(l, batch, nil, nil, anchorOptions)
				return g, err
			}
			g, _, _, err := Gradient(l, len(batch), loss, anchorOptions)
			return g, err
		}
		perSample := func() (*Result, error) {
			if batched[prefix] {
				return m.PerSample(l, batch, nil, nil, anchorOptions)
			}
			return PerSample(l, len(batch), loss, anchorOptions)
		}
		b.Run(prefix+"nonprivate", func(b *testing.B) { anchorNonPrivate(b, l, anchorBatch, gradient) })
		b.Run(prefix+"dpsgd", func(b *testing.B) { anchorDPSGD(b, m, l, anchorBatch, perSample) })
	}
}

// anchorNonPrivate times a non-private step of a batch of n: the summed
// gradient and an SGD update.
func anchorNonPrivate(b *testing.B, l *Layout, n int, gradient func() ([]float32, error)) {
	cpu := startCPU(b)
	for b.Loop() {
		g, err := gradient()
		if err != nil {
			b.Fatal(err)
		}
		sgd(l, g, 1e-3/float32(n))
	}
	cpu.stop(b)
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "ex/s")
}

// anchorDPSGD times a DP-SGD step of a batch of n: per-sample gradients,
// clipping, noise and an SGD update.
func anchorDPSGD(b *testing.B, m *TinyMLLM, l *Layout, n int, perSample func() (*Result, error)) {
	rng := rand.New(rand.NewPCG(2, 2))
	var st Stats
	cpu := startCPU(b)
	for b.Loop() {
		r, err := perSample()
		if err != nil {
			b.Fatal(err)
		}
		ClipAll(r.Grads, Flat(1))
		g := Sum(nil, r.Grads)
		for j := range g {
			g[j] += float32(rng.NormFloat64())
		}
		sgd(l, g, 1e-3/float32(n))
		st = r.Stats
		st.GradBytes += int64(4 * len(g))
	}
	cpu.stop(b)
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "ex/s")
	b.ReportMetric(float64(st.PeakBytes()+ModelBytes(m)), "peak-B/step")
}

// TestAnchorShape checks that the anchor benchmark has the shape it claims:
// 17 visual and 16 text tokens per example.
func TestAnchorShape(t *testing.T) {
	c := anchorConfig()
	s := vqa(rand.New(rand.NewPCG(1, 1)), c, anchorQuestion, anchorAnswer)
	if got := len(s.Tokens); got != 16 {
		t.Errorf("text tokens = %d, want 16", got)
	}
	if got := (c.ImageSize/c.Patch)*(c.ImageSize/c.Patch) + 1; got != 17 {
		t.Errorf("visual tokens = %d, want 17", got)
	}
}
