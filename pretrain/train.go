// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
)

// PCG streams of the random draws of a build; the model's initial values
// use nn's own streams of the seed.
const (
	streamBatches  = 101 // batch order and training episodes
	streamEval     = 102 // held-out episodes
	streamFineTune = 103 // fine-tuning check
)

// trainer runs AdamW with a cosine schedule and global-norm clipping over a
// layout.
type trainer struct {
	layout *nn.Layout
	params []optim.Param
	opt    optim.Optimizer
	sched  optim.Cosine
	clip   float64
}

func newTrainer(l *nn.Layout, lr, minLR float64, warmup, steps int, wd, clip float64) (*trainer, error) {
	params := make([]optim.Param, len(l.Params))
	for i, p := range l.Params {
		params[i] = optim.Param{Name: p.Name, Data: p.Data, Grad: p.Grad,
			NoDecay: p.Kind == nn.KindBias || p.Kind == nn.KindNorm || p.Kind == nn.KindEmbedding}
	}
	opt, err := optim.New("adamw", params, &optim.Settings{WeightDecay: wd})
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	s := optim.Cosine{Peak: lr, Min: minLR, Warmup: warmup, Steps: steps}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	return &trainer{layout: l, params: params, opt: opt, sched: s, clip: clip}, nil
}

// step applies the summed gradient g of n examples: it takes the mean,
// clips its norm and makes one optimizer step.
func (t *trainer) step(step int, g []float32, n int) {
	scale := 1 / float64(n)
	if norm := nn.Norm(g) * scale; t.clip > 0 && norm > t.clip {
		scale *= t.clip / norm
	}
	s := float32(scale)
	for i := range g {
		g[i] *= s
	}
	t.layout.SetGrad(g)
	t.opt.Step(t.params, t.sched.LR(step), nil)
}

// progress prints training progress at most every interval.
type progress struct {
	w        io.Writer
	label    string
	total    int
	start    time.Time
	last     time.Time
	interval time.Duration
}

func newProgress(w io.Writer, label string, total int) *progress {
	now := time.Now()
	return &progress{w: w, label: label, total: total, start: now, last: now, interval: 2 * time.Second}
}

func (p *progress) update(done int, loss float64) {
	if p.w == nil {
		return
	}
	now := time.Now()
	if done < p.total && now.Sub(p.last) < p.interval {
		return
	}
	p.last = now
	el := now.Sub(p.start)
	eta := time.Duration(0)
	if done > 0 {
		eta = time.Duration(float64(el) / float64(done) * float64(p.total-done))
	}
	fmt.Fprintf(p.w, "%s: step %d/%d (%.0f%%) loss %.3f elapsed %s eta %s\n", p.label, done, p.total,
		100*float64(done)/float64(p.total), loss, el.Round(time.Second), eta.Round(time.Second))
}

func (p *progress) note(format string, args ...any) {
	if p.w != nil {
		fmt.Fprintf(p.w, "%s: %s\n", p.label, fmt.Sprintf(format, args...))
	}
}

// train pretrains the TinyMLLM on the public mixture and measures it.
func (b *builder) train(ctx context.Context) (nn.Model, error) {
	cfg := b.cfg
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	base := cfg.PEFT
	full := base
	full.Method, full.Parts = "full", []string{"vision", "projector", "lm"}
	layout, err := m.SetPEFT(full)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	p := b.plan
	tr, err := newTrainer(layout, p.LR, p.MinLR, p.Warmup, p.Steps, p.WeightDecay, p.ClipNorm)
	if err != nil {
		return nil, err
	}
	mix := newMixer(b.corpus, &p, b.seed)
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s", b.arch, b.scale), p.Steps)
	prog.note("training %d steps of %d examples (%d parameters)", p.Steps, p.batchSize(), layout.Size)
	t0 := time.Now()
	var ema, tail float64
	tailN := 0
	for step := range p.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := mix.batch()
		g, losses, _, err := m.Gradient(layout, batch, nil, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("pretrain: step %d: %w", step, err)
		}
		loss := mean(losses)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return nil, fmt.Errorf("pretrain: step %d: loss is %v", step, loss)
		}
		tr.step(step, g, len(batch))
		if step == 0 {
			ema = loss
		}
		ema = 0.95*ema + 0.05*loss
		if step >= p.Steps-max(1, p.Steps/10) {
			tail += loss
			tailN++
		}
		prog.update(step+1, ema)
	}
	b.timings.Train = time.Since(t0).Seconds()
	b.timings.Steps = p.Steps
	b.timings.PerStep = b.timings.Train / float64(p.Steps)
	b.metrics["train_loss"] = tail / float64(tailN)
	if _, err := m.SetPEFT(base); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	t1 := time.Now()
	prog.note("measuring on held-out public data")
	if err := b.evaluate(ctx, m); err != nil {
		return nil, err
	}
	b.timings.Eval = time.Since(t1).Seconds()
	return m, nil
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
