// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"testing"

	"github.com/repro-dp/repro/nn"
)

// benchBuilder prepares the data and model of a scale as Base does.
func benchBuilder(b *testing.B, scale string) (*builder, *nn.TinyMLLM, *nn.Layout) {
	bd, err := prepare(Options{Scale: scale})
	if err != nil {
		b.Fatal(err)
	}
	if err := bd.loadData(); err != nil {
		b.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(bd.cfg)
	if err != nil {
		b.Fatal(err)
	}
	p := bd.cfg.PEFT
	p.Method, p.Parts = "full", trainedParts
	l, err := m.SetPEFT(p)
	if err != nil {
		b.Fatal(err)
	}
	return bd, m, l
}

// BenchmarkStep measures one stage-3 training step (a whole mixture batch,
// forward, backward and AdamW) at each scale; Plan.Steps times it is the
// bulk of a build's training time.
func BenchmarkStep(b *testing.B) {
	for _, scale := range []string{"smoke", "small"} {
		b.Run(scale, func(b *testing.B) {
			bd, m, l := benchBuilder(b, scale)
			p := bd.plan
			tr, err := newTrainer(l, p.LR, p.MinLR, p.Warmup, p.Steps, p.WeightDecay, p.ClipNorm)
			if err != nil {
				b.Fatal(err)
			}
			mix := newMixer(bd.corpus, &p, 1)
			step := 0
			for b.Loop() {
				if _, err := tr.gradStep(m, step%p.Steps, mustBatch(b, mix), nil); err != nil {
					b.Fatal(err)
				}
				step++
			}
		})
	}
}

// BenchmarkICLStep measures one stage-2 training step (Plan.ICLBatch
// episodes whose images enter as their [CLS] token alone, forward, backward
// and AdamW) at each scale.
func BenchmarkICLStep(b *testing.B) {
	for _, scale := range []string{"smoke", "small"} {
		b.Run(scale, func(b *testing.B) {
			bd, m, l := benchBuilder(b, scale)
			p := bd.plan
			tr, err := newTrainer(l, p.ICLLR, p.ICLLR/10, 1, p.ICLSteps, p.WeightDecay, p.ClipNorm)
			if err != nil {
				b.Fatal(err)
			}
			c, rng := bd.corpus, newRand(1)
			batch := make([]nn.Sequence, p.ICLBatch)
			step := 0
			for b.Loop() {
				for i := range batch {
					batch[i] = c.newEpisode(rng, c.iclTrain, c.trainShots(&p), true).seq
				}
				if _, err := tr.gradStep(m, step%p.ICLSteps, batch, alike(clsOnly, len(batch))); err != nil {
					b.Fatal(err)
				}
				step++
			}
		})
	}
}

// BenchmarkEpisode measures the forward and backward pass of one training
// episode at each scale.
func BenchmarkEpisode(b *testing.B) {
	for _, scale := range []string{"smoke", "small"} {
		b.Run(scale, func(b *testing.B) {
			bd, m, l := benchBuilder(b, scale)
			c := bd.corpus
			ep := c.newEpisode(newRand(1), c.iclTrain, c.shots, true)
			g := make([]float32, l.Size)
			for b.Loop() {
				t := nn.NewTape(l, g)
				out, err := m.Loss(t, &ep.seq, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				t.Backward(out)
			}
		})
	}
}

// mustBatch returns mix's next batch; it stops the benchmark on an error.
func mustBatch(b *testing.B, mix *mixer) []nn.Sequence {
	batch, err := mix.batch()
	if err != nil {
		b.Fatal(err)
	}
	return batch
}
