// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
)

// PCG streams of the random draws of a build; the model's initial values
// use nn's own streams of the seed.
const (
	streamBatches  = 101 // batch order and training episodes
	streamEval     = 102 // held-out episodes
	streamFineTune = 103 // fine-tuning check
	streamVision   = 104 // stage 1 image order
	streamICL      = 105 // stage 2 episodes
	streamPrune    = 106 // stage 3 token-dropping augmentation
	streamScenes   = 107 // stage 1 scene object order (Plan.VisionScenes)
	streamShapesQA = 108 // public shapes questions (Plan.Mix[srcShapesQA])
	streamCaptions = 109 // captions-only stage order (Plan.CaptionSteps)
	streamCellOrd  = 110 // the stage's shuffled cell orders and fresh scenes (Plan.CaptionForm)
	streamCellMix  = 111 // the mixture's shuffled cell orders and fresh scenes
	// streamCellProbe is the stream of CellProbe's shuffled orders (seed 1,
	// whatever the base's).
	streamCellProbe = 112
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
			NoDecay: p.Kind == nn.KindBias || p.Kind == nn.KindNorm || p.Kind == nn.KindEmbedding || p.Kind == nn.KindSmear}
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

// gradStep computes the summed gradient of batch on m (the images of
// batch[i] through the visual transform vts[i]; a nil or short vts, or a
// nil entry, means every visual token), checks that the mean loss is
// finite, makes one optimizer step and returns that loss. The examples run
// on one tape each (as m.Gradient does when, as here, every tensor of the
// trained parts is trainable).
func (t *trainer) gradStep(m *nn.TinyMLLM, step int, batch []nn.Sequence, vts []nn.VisualTransform) (float64, error) {
	g, losses, _, err := nn.Gradient(t.layout, len(batch), func(tp *nn.Tape, i int) (*nn.Node, error) {
		var vt nn.VisualTransform
		if i < len(vts) {
			vt = vts[i]
		}
		return m.Loss(tp, &batch[i], nil, vt)
	}, nil)
	if err != nil {
		return 0, err
	}
	loss := mean(losses)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, fmt.Errorf("loss is %v", loss)
	}
	t.step(step, g, len(batch))
	return loss, nil
}

// trainedParts are the parts of the TinyMLLM that stages 2 and 3 train; the
// vision encoder stays as stage 1 left it.
var trainedParts = []string{"projector", "lm"}

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
	tv := time.Now()
	if err := b.visionStage(ctx, m); err != nil {
		return nil, err
	}
	b.timings.Vision = time.Since(tv).Seconds()
	ti := time.Now()
	if err := b.iclStage(ctx, m); err != nil {
		return nil, err
	}
	b.timings.ICL = time.Since(ti).Seconds()
	tc := time.Now()
	if err := b.captionStage(ctx, m); err != nil {
		return nil, err
	}
	b.timings.Captions = time.Since(tc).Seconds()
	base := cfg.PEFT
	full := base
	full.Method, full.Parts = "full", trainedParts
	layout, err := m.SetPEFT(full)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	p := b.plan
	tr, err := newTrainer(layout, p.LR, p.MinLR, p.Warmup, p.Steps, p.WeightDecay, p.ClipNorm)
	if err != nil {
		return nil, err
	}
	if p.Mix[srcShapesQA] > 0 && b.corpus.train[srcShapesQA] == nil {
		if err := b.corpus.addShapesQuestions(b.seed); err != nil {
			return nil, err
		}
	}
	crng := rand.New(rand.NewPCG(b.seed, streamCellMix))
	if p.Mix[srcShapesCells] > 0 && b.corpus.train[srcShapesCells] == nil {
		if err := b.corpus.addCellForm(p.CaptionForm, crng); err != nil {
			return nil, err
		}
	}
	mix := newMixer(b.corpus, &p, b.seed)
	if p.Mix[srcShapesCells] > 0 && redrawn(p.CaptionForm) {
		mix.redraw = map[string]func() ([]nn.Sequence, error){srcShapesCells: func() ([]nn.Sequence, error) {
			return b.corpus.cellSequences(p.CaptionForm, crng)
		}}
	}
	aug := newAugmenter(&p, b.seed)
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s: mixture", b.arch, b.scale), p.Steps)
	prog.note("training %d steps of %d examples (%d parameters)", p.Steps, p.batchSize(), layout.Size)
	if p.PruneShare > 0 {
		prog.note("token-dropping augmentation: %.0f%% of image sequences pruned at retention %.2g–%.2g", 100*p.PruneShare, p.PruneMin, p.PruneMax)
	}
	t0 := time.Now()
	var ema, tail float64
	tailN := 0
	for step := range p.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch, err := mix.batch()
		if err != nil {
			return nil, fmt.Errorf("pretrain: step %d: %w", step, err)
		}
		loss, err := tr.gradStep(m, step, batch, keepCells(aug.transforms(batch), mix.srcs))
		if err != nil {
			return nil, fmt.Errorf("pretrain: step %d: %w", step, err)
		}
		if step == 0 {
			ema = loss
		}
		ema = float64(0.95*ema) + float64(0.05*loss)
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

// visionStage trains m's vision encoder as an image classifier of the
// public training images' fine classes (stage 1, see Plan.VisionSteps),
// and with Plan.VisionScenes of the public scenes' objects' colours and
// shapes.
func (b *builder) visionStage(ctx context.Context, m *nn.TinyMLLM) error {
	p := b.plan
	if p.VisionSteps == 0 {
		return nil
	}
	vc := b.cfg
	vc.Classes = len(b.corpus.iclTrain)
	var objs []image
	if p.VisionScenes > 0 {
		var err error
		if objs, err = b.corpus.sceneObjects(vc.Classes); err != nil {
			return err
		}
		vc.Classes += datasets.SceneObjectClasses
	}
	vc.PEFT.Method, vc.PEFT.Parts = "full", nil
	v, err := nn.NewViT(vc)
	if err != nil {
		return fmt.Errorf("pretrain: %w", err)
	}
	// The two encoders are built from the same seed and names, so they start
	// equal; copy anyway so the stage does not depend on it.
	if err := copyParams(v, m, "vision."); err != nil {
		return err
	}
	layout := nn.NewLayout(v.Params())
	tr, err := newTrainer(layout, p.VisionLR, p.VisionLR/10, p.VisionSteps/20, p.VisionSteps, p.WeightDecay, p.ClipNorm)
	if err != nil {
		return err
	}
	var imgs []image
	for _, c := range b.corpus.iclTrain {
		imgs = append(imgs, c...)
	}
	rng := rand.New(rand.NewPCG(b.seed, streamVision))
	var order []int
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s: vision", b.arch, b.scale), p.VisionSteps)
	srng := rand.New(rand.NewPCG(b.seed, streamScenes))
	var sorder []int
	batch := make([]image, p.VisionBatch+p.VisionScenes)
	for step := range p.VisionSteps {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range p.VisionBatch {
			if len(order) == 0 {
				order = rng.Perm(len(imgs))
			}
			batch[i] = imgs[order[0]]
			order = order[1:]
		}
		for i := p.VisionBatch; i < len(batch); i++ {
			if len(sorder) == 0 {
				sorder = srng.Perm(len(objs))
			}
			batch[i] = objs[sorder[0]]
			sorder = sorder[1:]
		}
		g, losses, _, err := nn.Gradient(layout, len(batch), func(t *nn.Tape, i int) (*nn.Node, error) {
			return v.Loss(t, batch[i].px, batch[i].class, nil)
		}, &nn.Options{Reuse: true}) // no hook keeps a tensor
		if err != nil {
			return fmt.Errorf("pretrain: vision step %d: %w", step, err)
		}
		tr.step(step, g, len(batch))
		prog.update(step+1, mean(losses))
	}
	return copyParams(m, v, "vision.")
}

// clsOnly is the visual transform of the in-context stage: an image enters
// the language model as its [CLS] token alone.
func clsOnly(int, nn.Tensor, nn.Tensor) nn.TokenMix { return clsOnlyMix }

var clsOnlyMix = nn.TokenMix{Rows: []nn.MixRow{{Src: []int{0}, Weight: []float32{1}}}}

// alike returns n copies of vt, one per sequence of a batch.
func alike(vt nn.VisualTransform, n int) []nn.VisualTransform {
	vts := make([]nn.VisualTransform, n)
	for i := range vts {
		vts[i] = vt
	}
	return vts
}

// iclStage trains m's projector and language model on in-context episodes
// whose images enter as their [CLS] token alone, with the vision encoder
// frozen (stage 2, see Plan.ICLSteps).
func (b *builder) iclStage(ctx context.Context, m *nn.TinyMLLM) error {
	p := b.plan
	if p.ICLSteps == 0 {
		return nil
	}
	pe := b.cfg.PEFT
	pe.Method, pe.Parts = "full", trainedParts
	layout, err := m.SetPEFT(pe)
	if err != nil {
		return fmt.Errorf("pretrain: %w", err)
	}
	tr, err := newTrainer(layout, p.ICLLR, p.ICLLR/10, max(1, p.ICLSteps/20), p.ICLSteps, p.WeightDecay, p.ClipNorm)
	if err != nil {
		return err
	}
	shots := b.corpus.trainShots(&p)
	rng := rand.New(rand.NewPCG(b.seed, streamICL))
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s: in-context", b.arch, b.scale), p.ICLSteps)
	batch := make([]nn.Sequence, p.ICLBatch)
	clsOnlyAll := alike(clsOnly, len(batch))
	for step := range p.ICLSteps {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range batch {
			batch[i] = b.corpus.newEpisode(rng, b.corpus.iclTrain, shots, true).seq
		}
		loss, err := tr.gradStep(m, step, batch, clsOnlyAll)
		if err != nil {
			return fmt.Errorf("pretrain: in-context step %d: %w", step, err)
		}
		prog.update(step+1, loss)
	}
	return nil
}

// captionStage trains the parts Plan.CaptionParts of m on public
// captions alone, with every visual token and the vision encoder frozen
// (Plan.CaptionSteps; LLaVA's feature-alignment stage).
func (b *builder) captionStage(ctx context.Context, m *nn.TinyMLLM) error {
	p := b.plan
	if p.CaptionSteps == 0 {
		return nil
	}
	orng := rand.New(rand.NewPCG(b.seed, streamCellOrd))
	pool := func() ([]nn.Sequence, error) {
		if p.CaptionCells && p.CaptionForm != "" {
			return b.corpus.captionsIn(p.CaptionForm, orng)
		}
		return b.corpus.captions(p.CaptionCells)
	}
	caps, err := pool()
	if err != nil {
		return err
	}
	// Shuffled descriptions draw the cells' orders, fresh scenes the
	// scenes, afresh for every pass.
	deal := &passPool{seqs: caps, rng: rand.New(rand.NewPCG(b.seed, streamCaptions))}
	if p.CaptionCells && redrawn(p.CaptionForm) {
		deal.redraw = pool
	}
	pe := b.cfg.PEFT
	pe.Method, pe.Parts = "full", p.CaptionParts
	layout, err := m.SetPEFT(pe)
	if err != nil {
		return fmt.Errorf("pretrain: %w", err)
	}
	tr, err := newTrainer(layout, p.CaptionLR, p.CaptionLR/10, max(1, p.CaptionSteps/20), p.CaptionSteps, p.WeightDecay, p.ClipNorm)
	if err != nil {
		return err
	}
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s: captions", b.arch, b.scale), p.CaptionSteps)
	prog.note("training %s on %d public captions, %d steps of %d", strings.Join(p.CaptionParts, " and "), len(caps), p.CaptionSteps, p.CaptionBatch)
	batch := make([]nn.Sequence, p.CaptionBatch)
	for step := range p.CaptionSteps {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range batch {
			if batch[i], err = deal.next(); err != nil {
				return err
			}
		}
		loss, err := tr.gradStep(m, step, batch, nil)
		if err != nil {
			return fmt.Errorf("pretrain: caption step %d: %w", step, err)
		}
		prog.update(step+1, loss)
	}
	return nil
}

// redrawn reports whether the cell form's pool is drawn afresh for every
// pass: with shuffled descriptions or fresh scenes.
func redrawn(form string) bool {
	parts, _ := CellFormParts(form)
	return slices.Contains(parts, formShuffled) || slices.Contains(parts, formFresh)
}

// passPool deals the sequences of a pool one by one in an order drawn
// from rng and drawn again after every pass; with redraw, every pass
// after the first deals redraw's pool, drawn afresh (it must hold as many
// sequences).
type passPool struct {
	seqs   []nn.Sequence
	rng    *rand.Rand
	redraw func() ([]nn.Sequence, error)
	order  []int
	passes int
}

// next returns the next sequence.
func (p *passPool) next() (nn.Sequence, error) {
	if len(p.order) == 0 {
		if p.redraw != nil && p.passes > 0 {
			seqs, err := p.redraw()
			if err != nil {
				return nn.Sequence{}, err
			}
			if len(seqs) != len(p.seqs) {
				return nn.Sequence{}, fmt.Errorf("pretrain: a pool of %d sequences drawn again holds %d", len(p.seqs), len(seqs))
			}
			p.seqs = seqs
		}
		p.order = p.rng.Perm(len(p.seqs))
		p.passes++
	}
	s := p.seqs[p.order[0]]
	p.order = p.order[1:]
	return s, nil
}

// augmenter deals stage 3's token-dropping augmentation (Plan.PruneShare)
// from its own stream, in the training goroutine, so the draws do not
// depend on the number of workers and the batches are those without it.
type augmenter struct {
	p   *Plan
	rng *rand.Rand
}

func newAugmenter(p *Plan, seed uint64) *augmenter {
	return &augmenter{p: p, rng: rand.New(rand.NewPCG(seed, streamPrune))}
}

// transforms returns the visual transform of each sequence of batch: nil
// (every visual token) for a sequence without images or not drawn, or
// Mechanism 1 (nn.TokenPruning, no noise) at a retention drawn uniformly
// from [PruneMin, PruneMax]. Two numbers are drawn per sequence, images
// or not.
func (a *augmenter) transforms(batch []nn.Sequence) []nn.VisualTransform {
	p := a.p
	if p.PruneShare <= 0 {
		return nil
	}
	vts := make([]nn.VisualTransform, len(batch))
	for i := range batch {
		u, r := a.rng.Float64(), a.rng.Float64()
		if len(batch[i].Images) == 0 || u >= p.PruneShare {
			continue
		}
		tp := nn.TokenPruning{Retention: p.PruneMin + float64(r*(p.PruneMax-p.PruneMin)), Contextual: p.PruneContextual}
		vts[i] = tp.Transform()
	}
	return vts
}

// keepCells returns vts with no transform for the sequences of the
// cell-first captions (srcs names each sequence's source): the
// token-dropping augmentation still draws for them, so the other
// sequences' draws stay as they were, but they keep every visual token in
// its place, which naming what a cell holds from its patches needs.
func keepCells(vts []nn.VisualTransform, srcs []string) []nn.VisualTransform {
	for i := range vts {
		if srcs[i] == srcShapesCells {
			vts[i] = nil
		}
	}
	return vts
}

// copyParams copies the values of src's tensors whose names start with
// prefix into dst's tensors of the same names and shapes.
func copyParams(dst, src nn.Module, prefix string) error {
	n := 0
	for _, p := range src.Params() {
		if !strings.HasPrefix(p.Name, prefix) {
			continue
		}
		q := nn.Lookup(dst, p.Name)
		if q == nil || len(q.Data) != len(p.Data) {
			return fmt.Errorf("pretrain: no tensor %s of %d values to copy into", p.Name, len(p.Data))
		}
		copy(q.Data, p.Data)
		n++
	}
	if n == 0 {
		return fmt.Errorf("pretrain: no tensor named %s* to copy", prefix)
	}
	return nil
}

// newRand returns a generator on stream streamBatches of seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, streamBatches)) }

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
