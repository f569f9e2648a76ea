// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

func init() { attacks.Register(Attack{}) }

// Attack is the gradient-inversion attack of the run path, registered as
// "gia": it attacks the update that the run's method would release for a
// batch of the run's private examples at the trained weights (the step
// after the last), as the method releases it (attacks.Target.Release:
// the raw mean gradient for nonprivate, clipped and noised with the run's
// σ for dpsgd, for dualpriv the same restricted to its update ratio's
// blocks, computed on its pruned and fused visual tokens with the fusion
// noise of its training forward pass, for rapft clipped and noised per
// relevance partition, and for dpzo the privatised scalar along a public
// direction, attacked by AttackMLLMZO). The attacker knows the weights,
// the release mechanism, every sequence's tokens and loss mask and the
// model's visual-token transform (without the fusion noise's draw), and
// has the task's public images; it runs AttackMLLMLoRA over the
// EmbeddingPrior of the model's vision encoder fitted to them (Adam, lr
// 0.05, TV 0.05, one restart, from the best match among the conditional
// means of the first 256 public images for a batch of 1 and from the
// public mean for larger batches: the settings chosen on public examples,
// docs/gia.md).
//
// Options (a spec's attacks: [{name: gia, batch: [1, 8]}]): batch, the
// batch sizes B (one score set gia_b<B> each); trials, the disjoint
// batches per size (the first trials·B private examples, in order);
// iterations, Adam's iterations; restarts, scout, lr, tv and gauss, the
// reconstruction's settings (InvertOptions; defaults DefaultRestarts,
// DefaultScout, DefaultLR, DefaultTV, DefaultGauss); span: 1 inverts the
// image of a batch of 1 by the span objective instead (AttackMLLMSpan,
// with DefaultSpanIterations and DefaultSpanTV in place of iterations and
// tv; gradient matching where the span test does not apply, ErrSpanRank).
// Results per set, prefixed gia_b<B>_:
// psnr_mean, psnr_max (mean over the trials of the batch's mean and
// maximum PSNR, dB), ssim, feat_dist (FeatureDistance under the model's
// vision encoder), baseline_psnr, baseline_ssim, baseline_feat_dist (the
// public mean image as the guess), match (the final objective) and
// seconds_per_image (wall time). Images: the first trial's originals and
// reconstructions, b<B>-orig-<i> and b<B>-recon-<i>. With option text
// each batch of 1 also goes to a text attack (textCell.add; a separate
// threat model in which the attacker knows the image, the answer tokens,
// the loss mask and the length, and recovers the prompt; not for a
// zeroth-order release, one number with no gradient): text: 1 the
// span test of the first block's LoRA A gradients (SpanText, DAGER's test;
// milliseconds a sequence), text: 2 relaxed-token gradient matching
// (RecoverText with its defaults; minutes a sequence at small), with
// results gia_b1_trr, gia_b1_trr_bag, gia_b1_trr_baseline and
// gia_b1_trr_seconds.
type Attack struct {
	// Batches are the batch sizes; nil means 1 and 8.
	Batches []int
	// Trials, Iterations and Restarts are 0 for their defaults, 1, 300
	// and DefaultRestarts.
	Trials, Iterations, Restarts int
	// LR and TV are Adam's step size and the total-variation weight, 0
	// for DefaultLR and DefaultTV.
	LR, TV float64
	// Gauss is the Gaussian prior's weight (InvertOptions.Gauss); nil
	// means DefaultGauss.
	Gauss *float64
	// Scout is the number of public images scouted as starts
	// (InvertOptions.Scout); nil means DefaultScout.
	Scout *int
	// Text adds a text attack to the batches of 1: 0 none, TextSpan or
	// TextMatch.
	Text int
	// Span inverts the images of batches of 1 by the span objective
	// (AttackMLLMSpan, DefaultSpanIterations, DefaultSpanTV) instead of
	// gradient matching, where the span holds the visual tokens.
	Span bool
	// text, when not nil, replaces the text attack's default settings
	// (tests).
	text *TextOptions
}

// Name implements attacks.Attack.
func (Attack) Name() string { return "gia" }

// Options implements attacks.Optioned.
func (Attack) Options() []attacks.Option {
	return []attacks.Option{
		{Name: "batch", Elem: "batch size", Kind: attacks.Numbers, Doc: "sizes of the attacked batches, integers in [1, 64]",
			Check: integerIn(1, 64), Default: []string{"1", "8"}},
		{Name: "trials", Elem: "trials", Kind: attacks.Numbers, Doc: "disjoint batches attacked per size, one integer in [1, 64]",
			Check: integerIn(1, 64), Default: []string{"1"}},
		{Name: "iterations", Elem: "iterations", Kind: attacks.Numbers, Doc: "Adam iterations of the reconstruction, one integer in [1, 100000]",
			Check: integerIn(1, 100000), Default: []string{"300"}},
		{Name: "restarts", Elem: "restarts", Kind: attacks.Numbers, Doc: "starts of the reconstruction (the public mean, then prior draws; the best match is kept), one integer in [1, 64]",
			Check: integerIn(1, 64), Default: []string{strconv.Itoa(DefaultRestarts)}},
		{Name: "scout", Elem: "scouted images", Kind: attacks.Numbers, Doc: "public images whose conditional means are tried as starts of a batch of 1 (InvertOptions.Scout), one integer in [0, 100000]",
			Check: integerIn(0, 100000), Default: []string{strconv.Itoa(DefaultScout)}},
		{Name: "lr", Elem: "step size", Kind: attacks.Numbers, Doc: "Adam's step size over the prior's coordinates, one number in (0, 10]",
			Check: numberIn(0, 10), Default: []string{fmtFloat(DefaultLR)}},
		{Name: "tv", Elem: "TV weight", Kind: attacks.Numbers, Doc: "weight of the total-variation prior, one number in (0, 10]",
			Check: numberIn(0, 10), Default: []string{fmtFloat(DefaultTV)}},
		{Name: "gauss", Elem: "Gaussian weight", Kind: attacks.Numbers, Doc: "weight of the Gaussian prior's term (InvertOptions.Gauss), one number in [0, 100]",
			Check: func(x float64) error {
				if x < 0 || x > 100 {
					return fmt.Errorf("must be in [0, 100]")
				}
				return nil
			}, Default: []string{fmtFloat(DefaultGauss)}},
		{Name: "span", Elem: "span switch", Kind: attacks.Numbers, Doc: fmt.Sprintf("1: invert a batch of 1's image by the span of the first block's LoRA A gradients (AttackMLLMSpan, %d iterations and TV %g in place of iterations and tv; gradient matching where the span test does not apply); 0: by gradient matching", DefaultSpanIterations, DefaultSpanTV),
			Check: integerIn(0, 1), Default: []string{"0"}},
		{Name: "text", Elem: "text attack", Kind: attacks.Numbers, Doc: "also recover each batch of 1's prompt tokens from its update: 1 by the span test of the first block's LoRA A gradients (SpanText), 2 by relaxed-token gradient matching (RecoverText); results gia_b1_trr, gia_b1_trr_bag, gia_b1_trr_baseline, gia_b1_trr_seconds; 0: images only",
			Check: integerIn(0, 2), Default: []string{"0"}},
	}
}

// The attack's default settings, chosen on public examples
// (docs/gia.md).
const (
	DefaultLR       = 0.05
	DefaultTV       = 0.05
	DefaultGauss    = 0.0
	DefaultRestarts = 1
	DefaultDecay    = false
	DefaultScout    = 256
)

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func integerIn(lo, hi float64) func(float64) error {
	return func(x float64) error {
		if x != math.Trunc(x) || x < lo || x > hi {
			return fmt.Errorf("must be an integer in [%v, %v]", lo, hi)
		}
		return nil
	}
}

// numberIn checks x ∈ (lo, hi].
func numberIn(lo, hi float64) func(float64) error {
	return func(x float64) error {
		if x <= lo || x > hi {
			return fmt.Errorf("must be in (%v, %v]", lo, hi)
		}
		return nil
	}
}

// WithOptions implements attacks.Optioned.
func (a Attack) WithOptions(opts map[string][]string) (attacks.Attack, error) {
	out := Attack{}
	for name, vals := range opts {
		var xs []float64
		for _, v := range vals {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("option %s: %q is not a number", name, v)
			}
			xs = append(xs, x)
		}
		if name == "batch" {
			for _, x := range xs {
				if x != math.Trunc(x) {
					return nil, fmt.Errorf("option batch: %v is not an integer", x)
				}
				out.Batches = append(out.Batches, int(x))
			}
			continue
		}
		if len(xs) != 1 {
			return nil, fmt.Errorf("option %s takes one value, got %d", name, len(xs))
		}
		x := xs[0]
		switch name {
		case "trials", "iterations", "restarts":
			if x != math.Trunc(x) {
				return nil, fmt.Errorf("option %s: %v is not an integer", name, x)
			}
			switch name {
			case "trials":
				out.Trials = int(x)
			case "iterations":
				out.Iterations = int(x)
			default:
				out.Restarts = int(x)
			}
		case "scout":
			if x != math.Trunc(x) {
				return nil, fmt.Errorf("option scout: %v is not an integer", x)
			}
			k := int(x)
			out.Scout = &k
		case "text":
			if x != 0 && x != TextSpan && x != TextMatch {
				return nil, fmt.Errorf("option text: %v is not 0, 1 or 2", x)
			}
			out.Text = int(x)
		case "span":
			if x != 0 && x != 1 {
				return nil, fmt.Errorf("option span: %v is not 0 or 1", x)
			}
			out.Span = x == 1
		case "lr":
			out.LR = x
		case "tv":
			out.TV = x
		case "gauss":
			out.Gauss = &x
		default:
			return nil, fmt.Errorf("no option %q", name)
		}
	}
	return out, nil
}

func (a Attack) batches() []int {
	if a.Batches == nil {
		return []int{1, 8}
	}
	return a.Batches
}

// Sets implements attacks.Optioned: gia_b<B> per batch size.
func (a Attack) Sets() []string {
	var out []string
	for _, b := range a.batches() {
		out = append(out, "gia_b"+strconv.Itoa(b))
	}
	return out
}

var ownsRE = regexp.MustCompile(`^gia_b[0-9]+_`)

// Owns implements attacks.Optioned.
func (Attack) Owns(metric string) bool { return ownsRE.MatchString(metric) }

// Run implements attacks.Attack. It returns an error when the target's
// method declares no release, the task has fewer than two public images
// or too few private examples for the batches.
func (a Attack) Run(ctx context.Context, t *attacks.Target) (*attacks.Report, error) {
	if t.Release == nil {
		return nil, fmt.Errorf("gia: the method that trained the target declares no update release (modelled: nonprivate, dpsgd, dualpriv with its norm ranking, rapft, dpzo, sparta)")
	}
	if t.Model == nil && t.Classifier != nil {
		return a.runClassifier(ctx, t)
	}
	var pub [][]float32
	for _, e := range t.Public {
		if len(e.Seq.Images) > 0 {
			pub = append(pub, e.Seq.Images[0])
		}
	}
	prior, err := NewEmbeddingPrior(t.Model.Vision, pub)
	if err != nil {
		return nil, err
	}
	mean := MeanImage(pub)
	var pubPrompts [][]int
	for _, e := range t.Public {
		pubPrompts = append(pubPrompts, prompt(e.Seq))
	}
	trials := cmp.Or(a.Trials, 1)
	// A zeroth-order release is one number per step, no gradient to
	// match tokens to: the text attacks do not apply, and its rows have no
	// text results.
	text := a.Text != 0 && t.Release.ZO == nil
	rep := &attacks.Report{Results: map[string]float64{}, Images: map[string][]byte{}}
	for _, b := range a.batches() {
		if b*trials > len(t.Members) {
			return nil, fmt.Errorf("gia: %d batches of %d need more than the %d private examples", trials, b, len(t.Members))
		}
		c := cell{prefix: "gia_b" + strconv.Itoa(b) + "_", mean: mean}
		var tc textCell
		for k := range trials {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			bt, err := memberBatch(t.Members[k*b : (k+1)*b])
			if err != nil {
				return nil, err
			}
			seed := uint64(0x676961)<<20 ^ uint64(b)<<10 ^ uint64(k)
			out, err := attackTarget(t, bt, prior, a.invertOptions(seed), a.Span)
			if err != nil {
				return nil, err
			}
			if err := c.add(t.Model, bt, out); err != nil {
				return nil, err
			}
			if text && b == 1 {
				if err := tc.add(t, t.Members[k].Seq, pubPrompts, seed, a.Text, a.text); err != nil {
					return nil, err
				}
			}
			if k == 0 {
				if err := addImages(rep.Images, b, t.Model.Config, bt.Images, out.Images); err != nil {
					return nil, err
				}
			}
		}
		c.record(rep.Results, trials, b)
		if text && b == 1 {
			tc.record(rep.Results, trials)
		}
	}
	return rep, nil
}

// prompt returns the tokens of s before its first loss target.
func prompt(s nn.Sequence) []int {
	for i := range s.Tokens {
		if s.Loss != nil && s.Loss[i] {
			return s.Tokens[:i]
		}
	}
	return s.Tokens
}

// A textCell sums the text attack's scores over the trials of batches of
// 1.
type textCell struct {
	trr, bag, base, elapsedNS float64
}

// The text attacks of option text.
const (
	// TextSpan is SpanText, the span test of the first block's LoRA A
	// gradients, undoing a two-part clip rule (Rap-FT's).
	TextSpan = 1
	// TextMatch is RecoverText, relaxed-token gradient matching.
	TextMatch = 2
)

// add runs the text attack kind (TextSpan or TextMatch) on the update
// that t's method releases for the sequence s alone (noise seeded by
// seed, the image attack's release), to recover s's prompt
// (PromptPositions); the attacker knows the rest of s (its image, answer,
// length and loss mask). SpanText is told the release's clip rule; where
// it does not apply (ErrSpanRank) the relaxed matching runs instead;
// RecoverText, with the default settings or opt, starts at the public
// prompts pub's positional prior (PositionPrior, DefaultTextPriorMix) and
// matches by the per-tensor cosine. The data-independent baseline is
// PriorGuess.
func (tc *textCell) add(t *attacks.Target, s nn.Sequence, pub [][]int, seed uint64, kind int, opt *TextOptions) error {
	m := t.Model
	l := nn.NewLayout(m.Params())
	if len(s.Images) != 1 {
		return fmt.Errorf("gia: text attack on a sequence of %d images, it takes one", len(s.Images))
	}
	if t.Release.ZO != nil {
		return fmt.Errorf("gia: no text attack on a zeroth-order release")
	}
	bt := Batch{Images: s.Images, Tokens: [][]int{s.Tokens}, Loss: [][]bool{s.Loss}}
	g, err := releaseUpdate(m, l, bt, t.Release, t.Visual, seed)
	if err != nil {
		return err
	}
	at := PromptPositions(s)
	want := make([]int, len(at))
	for i, p := range at {
		want[i] = s.Tokens[p]
	}
	vocab := TextVocab(m)
	var got []int
	switch kind {
	case TextSpan:
		out, err := SpanText(m, l, g, s, at, vocab, t.Visual, &SpanOptions{Rule: t.Release.Rule})
		if errors.Is(err, ErrSpanRank) {
			// The span test does not apply to this release: the
			// relaxed matching is the attack there.
			return tc.add(t, s, pub, seed, TextMatch, opt)
		}
		if err != nil {
			return err
		}
		got, tc.elapsedNS = out.Tokens, tc.elapsedNS+float64(out.Elapsed)
	case TextMatch:
		o := TextOptions{PerBlock: true}
		if opt != nil {
			o = *opt
		}
		o.Init, o.Seed = PositionPrior(pub, at, vocab, DefaultTextPriorMix), seed
		out, err := RecoverText(m, l, g, s, at, vocab, t.Visual, &o)
		if err != nil {
			return err
		}
		got, tc.elapsedNS = out.Tokens, tc.elapsedNS+float64(out.Elapsed)
	default:
		return fmt.Errorf("gia: no text attack %d", kind)
	}
	tc.trr += PositionTRR(got, want)
	tc.bag += TRR(got, [][]int{want})
	tc.base += PositionTRR(PriorGuess(PositionPrior(pub, at, vocab, 0), vocab), want)
	return nil
}

// record writes the means over n trials: gia_b1_trr (position TRR),
// gia_b1_trr_bag (bag TRR), gia_b1_trr_baseline (PriorGuess's position
// TRR) and gia_b1_trr_seconds (wall time per sequence).
func (tc *textCell) record(res map[string]float64, n int) {
	f := float64(n)
	res["gia_b1_trr"] = tc.trr / f
	res["gia_b1_trr_bag"] = tc.bag / f
	res["gia_b1_trr_baseline"] = tc.base / f
	res["gia_b1_trr_seconds"] = tc.elapsedNS / float64(time.Second) / f
}

// memberBatch returns the batch of the examples es: one image each.
func memberBatch(es []attacks.Example) (Batch, error) {
	var bt Batch
	for _, e := range es {
		if len(e.Seq.Images) != 1 {
			return bt, fmt.Errorf("gia: example %d has %d images, the attack takes one", e.ID, len(e.Seq.Images))
		}
		bt.Images = append(bt.Images, e.Seq.Images[0])
		bt.Tokens = append(bt.Tokens, e.Seq.Tokens)
		bt.Loss = append(bt.Loss, e.Seq.Loss)
	}
	return bt, nil
}

// invertOptions returns the reconstruction's settings of a, seeded by
// seed.
func (a Attack) invertOptions(seed uint64) *InvertOptions {
	o := &InvertOptions{Iterations: cmp.Or(a.Iterations, 300), Restarts: cmp.Or(a.Restarts, DefaultRestarts),
		LR: cmp.Or(a.LR, DefaultLR), TV: cmp.Or(a.TV, DefaultTV), Gauss: DefaultGauss, Decay: DefaultDecay, Seed: seed}
	if a.Gauss != nil {
		o.Gauss = *a.Gauss
	}
	o.Scout = DefaultScout
	if a.Scout != nil {
		o.Scout = *a.Scout
	}
	return o
}

// attackTarget releases the update of bt as t's method would and attacks
// it with AttackMLLMLoRA under opt; opt.Seed seeds the release's noise.
// A zeroth-order release (DPZO's scalar along a public direction) is
// released by the method's own step and attacked by AttackMLLMZO; a
// gradient release with per-group clipping (Rap-FT's partitions) has its
// clip modelled in the candidate of a batch of one (InvertOptions.Clip).
// With span, a batch of one is inverted by AttackMLLMSpan instead (told
// the release's clip rule; DefaultSpanIterations and DefaultSpanTV),
// unless its visual tokens outnumber the released rows (ErrSpanRank).
func attackTarget(t *attacks.Target, bt Batch, prior *EmbeddingPrior, opt *InvertOptions, span bool) (*Outcome, error) {
	m := t.Model
	l := nn.NewLayout(m.Params())
	if r := t.Release.ZO; r != nil {
		s, z, err := releaseZO(m, l, bt, r, opt.Seed)
		if err != nil {
			return nil, err
		}
		return AttackMLLMZO(m, l, r, z, s, bt, prior, t.Visual, opt)
	}
	g, err := releaseUpdate(m, l, bt, t.Release, t.Visual, opt.Seed)
	if err != nil {
		return nil, err
	}
	o := *opt
	if span && len(bt.Images) == 1 {
		o.Iterations, o.TV = DefaultSpanIterations, DefaultSpanTV
		out, err := AttackMLLMSpan(m, l, g, bt, prior, t.Visual, t.Release.Rule, &o)
		if !errors.Is(err, ErrSpanRank) {
			return out, err
		}
		o = *opt
	}
	o.Clip = t.Release.Rule
	return AttackMLLMLoRA(m, l, g, bt, prior, t.Visual, &o)
}

// releaseUpdate returns the update that r releases for the batch bt of
// TinyMLLM m over layout l: each example's gradient with the training
// transform r.Train(i) (vt when r has none), then Release's clipping,
// noise (seeded by seed) and block pruning.
func releaseUpdate(m *nn.TinyMLLM, l *nn.Layout, bt Batch, r *methods.Release, vt nn.VisualTransform, seed uint64) ([]float32, error) {
	grads := make([][]float32, len(bt.Images))
	for i := range grads {
		tv := vt
		if r.Train != nil {
			tv = r.Train(i)
		}
		s := nn.Sequence{Tokens: bt.Tokens[i], Images: bt.Images[i : i+1], Loss: bt.Loss[i]}
		grads[i] = make([]float32, l.Size)
		if _, err := MLLMGrad(m, l, s, tv)(bt.Images[i], grads[i], nil); err != nil {
			return nil, err
		}
	}
	return Release(l, grads, MechanismOf(r, seed))
}

// MechanismOf returns the Mechanism of the gradient release r (r.ZO nil):
// its clip rule and noise multipliers (DP-SGD's joint clip, Rap-FT's
// partitions) and update ratio, the noise seeded by seed.
func MechanismOf(r *methods.Release, seed uint64) Mechanism {
	return Mechanism{Rule: r.Rule, Sigma: slices.Clone(r.Sigmas), Keep: r.Keep, Seed: seed}
}

// A cell sums one batch size's scores over its trials.
type cell struct {
	prefix                                  string
	mean                                    []float32
	psnr, psnrMax, ssim, feat, match        float64
	basePSNR, baseSSIM, baseFeat, elapsedNS float64
}

// add scores one trial's outcome and the mean-image baseline on bt.
func (c *cell) add(m *nn.TinyMLLM, bt Batch, out *Outcome) error {
	return c.score(m.Vision, m.Config, bt, out)
}

// score adds the outcome of one trial on a model of configuration cf
// whose vision encoder v gives the feature distance (nil: none, NaN).
func (c *cell) score(v *nn.VisionEncoder, cf nn.Config, bt Batch, out *Outcome) error {
	var base Outcome
	if err := base.Score(replicate(c.mean, len(bt.Images)), bt.Images, cf.Channels, cf.ImageSize, cf.ImageSize); err != nil {
		return err
	}
	base.FeatDist = math.NaN()
	if v != nil {
		out.ScoreFeatures(v, bt.Images)
		base.ScoreFeatures(v, bt.Images)
	}
	c.psnr += out.MeanPSNR()
	c.psnrMax += out.MaxPSNR()
	c.ssim += out.MeanSSIM()
	c.feat += out.FeatDist
	c.match += out.Match
	c.basePSNR += base.MeanPSNR()
	c.baseSSIM += base.MeanSSIM()
	c.baseFeat += base.FeatDist
	c.elapsedNS += float64(out.Elapsed)
	return nil
}

// record writes the means over n trials of batches of b.
func (c *cell) record(res map[string]float64, n, b int) {
	f := float64(n)
	for k, v := range map[string]float64{
		"psnr_mean": c.psnr, "psnr_max": c.psnrMax, "ssim": c.ssim, "feat_dist": c.feat, "match": c.match,
		"baseline_psnr": c.basePSNR, "baseline_ssim": c.baseSSIM, "baseline_feat_dist": c.baseFeat,
	} {
		res[c.prefix+k] = v / f
	}
	res[c.prefix+"seconds_per_image"] = c.elapsedNS / float64(time.Second) / (f * float64(b))
}

// addImages adds the originals and reconstructions of one trial as PNG
// files b<B>-orig-<i> and b<B>-recon-<i>, B the batch size b.
func addImages(imgs map[string][]byte, b int, cf nn.Config, orig, recon [][]float32) error {
	tag := "b" + strconv.Itoa(b)
	for i := range orig {
		for kind, x := range map[string][]float32{"orig": orig[i], "recon": recon[i]} {
			p, err := EncodePNG(x, cf.Channels, cf.ImageSize, cf.ImageSize)
			if err != nil {
				return err
			}
			imgs[fmt.Sprintf("%s-%s-%d", tag, kind, i)] = p
		}
	}
	return nil
}

// EncodePNG returns the PNG file of the c×h×w image x in [0, 1] (c = 1 or
// 3; values outside are clamped), 8 bits per channel.
func EncodePNG(x []float32, c, h, w int) ([]byte, error) {
	if (c != 1 && c != 3) || len(x) != c*h*w {
		return nil, fmt.Errorf("gia: image of %d values is not %d×%d×%d", len(x), c, h, w)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw(img, x, c, h, w, 1, 0, 0)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
