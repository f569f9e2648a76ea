// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/nn"
)

// ClassifierPlan is the recipe of the classifier bases (vit, cnn, fusion):
// full training with AdamW and a cosine schedule on one public split.
type ClassifierPlan struct {
	Steps       int     `json:"steps"`
	Batch       int     `json:"batch"`
	LR          float64 `json:"lr"`
	MinLR       float64 `json:"min_lr"`
	Warmup      int     `json:"warmup"`
	WeightDecay float64 `json:"weight_decay"`
	ClipNorm    float64 `json:"clip_norm"`
	// Eval is the largest number of held-out examples measured.
	Eval int `json:"eval"`
}

// classifierPlans are the classifier recipes by scale.
var classifierPlans = map[datasets.Scale]ClassifierPlan{
	datasets.Smoke: {Steps: 150, Batch: 16, LR: 3e-3, MinLR: 3e-4, Warmup: 10, WeightDecay: 0.01, ClipNorm: 1, Eval: 500},
	datasets.Small: {Steps: 600, Batch: 32, LR: 2e-3, MinLR: 2e-4, Warmup: 30, WeightDecay: 0.01, ClipNorm: 1, Eval: 1000},
	datasets.Full:  {Steps: 5000, Batch: 64, LR: 1e-3, MinLR: 1e-4, Warmup: 200, WeightDecay: 0.01, ClipNorm: 1, Eval: 2000},
}

// classifierTask is the public split each classifier base trains on:
// the ViT and the CNN on fashion-cls's coarse labels (SPARTA's public
// pretraining), the fusion model on fl-mm's public image + caption pairs
// (Sec-MMFL), also with the four coarse labels (coarseLabels), so that the
// federation has the fine labels to learn: the methods fine-tune the base's
// encoders under a new head.
var classifierTask = map[string]string{"vit": srcCoarse, "cnn": srcCoarse, "cnn-gn": srcCoarse, "fusion": "fl-mm"}

// coarseLabels marks the classifier bases whose public split carries fine
// labels that pretraining replaces by their coarse category
// (datasets.FashionCoarseOf).
var coarseLabels = map[string]bool{"fusion": true}

// cnnGroups is the number of groups of the group norm in each block of the
// cnn-gn base (nn.Config.ConvGroups): four, which divides every preset's
// widths; the group-normalised Wide-ResNets that DP fine-tuning uses have
// a group norm in place of batch normalisation.
const cnnGroups = 4

// DefaultImageEncoder is the fusion base's image encoder unless
// Options.ImageEncoder says otherwise: "mlp", whose first layer is linear
// in the pixels, so that the non-private batch-1 upload leaks the image
// exactly (the control of the gradient-inversion attacks).
const DefaultImageEncoder = "mlp"

// classifierConfig returns the model configuration of a classifier base.
func classifierConfig(arch string, cfg nn.Config, d *datasets.Dataset, opt Options) nn.Config {
	cfg.Classes = len(d.PublicClasses)
	if coarseLabels[arch] {
		cfg.Classes = len(datasets.FashionCoarse)
	}
	if arch == "cnn-gn" {
		cfg.ConvGroups = cnnGroups
	}
	if arch == "fusion" {
		cfg.ImageEncoder = cmp.Or(opt.ImageEncoder, DefaultImageEncoder)
		cfg.FusionMode = cmp.Or(opt.FusionMode, "late")
	}
	// TinyMLLM's language-model options; neither classifier has one, so
	// they stay out of its configuration and cache key.
	cfg.SmearKeys, cfg.CLSLast = false, false
	return cfg
}

// trainClassifier trains the ViT, CNN or fusion base on its public split and
// measures its accuracy on the held-out public examples.
func (b *builder) trainClassifier(ctx context.Context) (nn.Model, error) {
	d := b.data[classifierTask[b.arch]]
	var train, eval []*datasets.Example
	for i := range d.Public {
		e := &d.Public[i]
		if coarseLabels[b.arch] {
			c := *e
			c.Label = datasets.FashionCoarseOf[e.Label]
			e = &c
		}
		if heldOut(e.Items) {
			eval = append(eval, e)
		} else {
			train = append(train, e)
		}
	}
	c, err := b.newClassifier()
	if err != nil {
		return nil, err
	}
	if err := b.fitClassifier(ctx, c, d.Task, train); err != nil {
		return nil, err
	}
	if err := c.restore(); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	if err := b.evalClassifier(c, eval); err != nil {
		return nil, err
	}
	return c.m, nil
}

// classifier is a classifier base being trained: the model with every
// tensor trainable (layout), its loss and prediction on one example, and
// restore, which sets the model's PEFT back to the configuration's.
type classifier struct {
	m       nn.Model
	layout  *nn.Layout
	loss    func(t *nn.Tape, e *datasets.Example) (*nn.Node, error)
	pred    func(e *datasets.Example) (int, error)
	restore func() error
}

// newClassifier builds the base of b.arch from b.cfg with every tensor
// trainable.
func (b *builder) newClassifier() (*classifier, error) {
	full := b.cfg.PEFT
	full.Method, full.Parts = "full", nil
	c := &classifier{}
	switch b.arch {
	case "vit":
		v, err := nn.NewViT(b.cfg)
		if err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		base := v.Config.PEFT
		c.m, c.restore = v, func() error { _, err := v.SetPEFT(base); return err }
		if c.layout, err = v.SetPEFT(full); err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		c.loss = func(t *nn.Tape, e *datasets.Example) (*nn.Node, error) { return v.Loss(t, e.Images[0], e.Label, nil) }
		c.pred = func(e *datasets.Example) (int, error) { c, _, err := v.Predict(e.Images[0]); return c, err }
	case "cnn", "cnn-gn":
		v, err := nn.NewCNN(b.cfg)
		if err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		base := v.Config.PEFT
		c.m, c.restore = v, func() error { _, err := v.SetPEFT(base); return err }
		if c.layout, err = v.SetPEFT(full); err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		c.loss = func(t *nn.Tape, e *datasets.Example) (*nn.Node, error) { return v.Loss(t, e.Images[0], e.Label, nil) }
		c.pred = func(e *datasets.Example) (int, error) { c, _, err := v.Predict(e.Images[0]); return c, err }
	case "fusion":
		f, err := nn.NewFusion(b.cfg)
		if err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		base := f.Config.PEFT
		c.m, c.restore = f, func() error { _, err := f.SetPEFT(base); return err }
		if c.layout, err = f.SetPEFT(full); err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		c.loss = func(t *nn.Tape, e *datasets.Example) (*nn.Node, error) {
			return f.Loss(t, e.Images[0], e.Prompt, e.Label, nil)
		}
		c.pred = func(e *datasets.Example) (int, error) { c, _, err := f.Predict(e.Images[0], e.Prompt); return c, err }
	default:
		panic("pretrain: no classifier " + b.arch)
	}
	return c, nil
}

// fitClassifier trains c on train (the public split of task) by the
// classifier plan, and records the timings and the final training loss.
func (b *builder) fitClassifier(ctx context.Context, c *classifier, task string, train []*datasets.Example) error {
	p := b.cplan
	tr, err := newTrainer(c.layout, p.LR, p.MinLR, p.Warmup, p.Steps, p.WeightDecay, p.ClipNorm)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(b.seed, streamBatches))
	var order []int
	prog := newProgress(b.opt.Progress, fmt.Sprintf("pretrain %s %s", b.arch, b.scale), p.Steps)
	prog.note("training %d steps of %d examples on %s public (%d parameters)", p.Steps, p.Batch, task, c.layout.Size)
	batch := make([]*datasets.Example, p.Batch)
	t0 := time.Now()
	var tail float64
	tailN := 0
	for step := range p.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range batch {
			if len(order) == 0 {
				order = rng.Perm(len(train))
			}
			batch[i] = train[order[0]]
			order = order[1:]
		}
		g, losses, _, err := nn.Gradient(c.layout, len(batch), func(t *nn.Tape, i int) (*nn.Node, error) { return c.loss(t, batch[i]) }, &nn.Options{Reuse: true})
		if err != nil {
			return fmt.Errorf("pretrain: step %d: %w", step, err)
		}
		tr.step(step, g, len(batch))
		if step >= p.Steps-max(1, p.Steps/10) {
			tail += mean(losses)
			tailN++
		}
		prog.update(step+1, mean(losses))
	}
	b.timings.Train = time.Since(t0).Seconds()
	b.timings.Steps = p.Steps
	b.timings.PerStep = b.timings.Train / float64(p.Steps)
	b.metrics["train_loss"] = tail / float64(tailN)
	return nil
}

// evalClassifier measures c's accuracy on at most the plan's Eval examples
// of eval, with the majority label's as its chance level.
func (b *builder) evalClassifier(c *classifier, eval []*datasets.Example) error {
	t1 := time.Now()
	eval = eval[:min(len(eval), b.cplan.Eval)]
	ok := make([]bool, len(eval))
	err := parallel.For(len(eval), 0, func(i int) error {
		k, err := c.pred(eval[i])
		ok[i] = k == eval[i].Label
		return err
	})
	if err != nil {
		return fmt.Errorf("pretrain: %w", err)
	}
	n := 0
	count := map[int]int{}
	maj := 0
	for i := range eval {
		if ok[i] {
			n++
		}
		count[eval[i].Label]++
		maj = max(maj, count[eval[i].Label])
	}
	b.metrics["heldout_acc"] = float64(n) / float64(len(eval))
	b.chance["heldout_acc"] = float64(maj) / float64(len(eval))
	b.metrics["heldout_n"] = float64(len(eval))
	b.timings.Eval = time.Since(t1).Seconds()
	return nil
}

// ViTFor returns a ViT for a task with classes labels that starts from the
// vision encoder of base: the encoder's tensors are copied and the head is
// new, drawn from seed (SPARTA fine-tunes the public-pretrained ViT with a
// new head for the private fine labels). With classes equal to base's, the
// head is copied too.
func ViTFor(base *nn.ViT, classes int, seed uint64) (*nn.ViT, error) {
	cfg := base.Config
	cfg.Classes = classes
	cfg.Seed = seed
	v, err := nn.NewViT(cfg)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	prefix := "vision."
	if classes == base.Config.Classes {
		prefix = ""
	}
	if err := copyParams(v, base, prefix); err != nil {
		return nil, err
	}
	return v, nil
}
