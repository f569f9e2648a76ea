// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"time"

	"github.com/repro-dp/repro/nn"
)

// A Batch is the private batch whose update is released: images in [0, 1]
// (C×H×W, channel-major), token sequences (nil for image-only models) and
// labels.
type Batch struct {
	Images [][]float32
	Tokens [][]int
	Labels []int
	// Loss are the loss masks of TinyMLLM sequences (nn.Sequence.Loss,
	// true on the answer tokens); nil for the classifiers.
	Loss [][]bool
}

// An Outcome is what one attack on one released update recovered, scored
// against the batch.
type Outcome struct {
	// Images are the reconstructions, in the order of the batch after
	// Hungarian matching (Images[i] is matched to the batch's image i).
	Images [][]float32
	// PSNR and SSIM are per matched pair (peak 1).
	PSNR, SSIM []float64
	// Labels are the recovered labels; LabelAcc their accuracy (multiset,
	// LabelAccuracy).
	Labels   []int
	LabelAcc float64
	// Tokens are the recovered bag of words and TRR its token recovery
	// rate (NaN for image-only models).
	Tokens []int
	TRR    float64
	// Sequence is the recovered token sequence of a batch of one (nil
	// otherwise) and PositionTRR its position-wise recovery rate (NaN
	// without one).
	Sequence    []int
	PositionTRR float64
	// FeatDist is the mean FeatureDistance of the matched pairs (NaN
	// until ScoreFeatures).
	FeatDist float64
	// Elapsed is the attack's wall time.
	Elapsed time.Duration
	// Match is the final gradient-matching objective of an optimising
	// attack (AttackMLLMLoRA; distance plus TV), 0 for the others.
	Match float64
}

// ScoreFeatures sets o.FeatDist from o.Images (after Score) and the
// originals under the encoder v.
func (o *Outcome) ScoreFeatures(v *nn.VisionEncoder, orig [][]float32) {
	var s float64
	for i, x := range o.Images {
		s += FeatureDistance(v, x, orig[i])
	}
	o.FeatDist = s / float64(len(o.Images))
}

// MeanPSNR returns the mean of o.PSNR, with +Inf values (exact
// reconstructions) counted as 100 dB so the mean stays finite.
func (o *Outcome) MeanPSNR() float64 { return meanCapped(o.PSNR) }

// MaxPSNR returns the largest of o.PSNR, capped at 100 dB.
func (o *Outcome) MaxPSNR() float64 {
	m := math.Inf(-1)
	for _, v := range o.PSNR {
		m = max(m, min(v, psnrCap))
	}
	return m
}

// MeanSSIM returns the mean of o.SSIM.
func (o *Outcome) MeanSSIM() float64 { return meanCapped(o.SSIM) }

// psnrCap replaces +Inf (identical images) in means.
const psnrCap = 100

func meanCapped(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range xs {
		s += min(v, psnrCap)
	}
	return s / float64(len(xs))
}

// Score matches the reconstructions recon to the originals orig (both of
// c×h×w images, as many of each) by the Hungarian algorithm on the mean
// squared error, as breaching matches on its metric before scoring, and
// fills o.Images, o.PSNR and o.SSIM in the originals' order.
func (o *Outcome) Score(recon, orig [][]float32, c, h, w int) error {
	if len(recon) != len(orig) {
		return fmt.Errorf("gia: %d reconstructions of %d images", len(recon), len(orig))
	}
	cost := make([][]float64, len(orig))
	for i := range orig {
		cost[i] = make([]float64, len(recon))
		for j := range recon {
			cost[i][j] = mse(recon[j], orig[i])
		}
	}
	p := Assign(cost)
	o.Images = make([][]float32, len(orig))
	o.PSNR = make([]float64, len(orig))
	o.SSIM = make([]float64, len(orig))
	for i, j := range p {
		o.Images[i] = recon[j]
		o.PSNR[i] = PSNR(recon[j], orig[i], 1)
		s, err := SSIM(recon[j], orig[i], c, h, w, 1)
		if err != nil {
			return err
		}
		o.SSIM[i] = s
	}
	return nil
}

func mse(x, y []float32) float64 {
	if len(x) != len(y) {
		panic("gia: image length mismatch")
	}
	var s float64
	for i := range x {
		d := float64(x[i]) - float64(y[i])
		s += float64(d * d)
	}
	return s / float64(len(x))
}

// clamp01 projects an image onto [0, 1] in place and returns it.
func clamp01(x []float32) []float32 {
	for i, v := range x {
		x[i] = min(1, max(0, v))
	}
	return x
}

// labels recovers the batch's labels from the head's bias gradient (nil if
// the bias is not released).
func labels(gb []float32, b int) []int {
	if gb == nil {
		return nil
	}
	if b == 1 {
		return []int{LabelIDLG(gb)}
	}
	return LabelsSign(gb, b)
}

// replicate returns b references to img: the attacks that recover one
// image from a batch's update offer it as the reconstruction of every
// example, and matching scores it against each.
func replicate(img []float32, b int) [][]float32 {
	out := make([][]float32, b)
	for i := range out {
		out[i] = img
	}
	return out
}

// AttackViT attacks the released update g (over layout l) of batch on the
// ViT m: labels from the head's bias gradient, the image by
// PatchRecovery, exact for a batch of one (for larger batches the
// recovered image mixes the batch's and is scored against each). If the
// update does not carry what PatchRecovery needs, the reconstruction is
// fallback (the attacker's data-independent guess, e.g. the mean image).
func AttackViT(m *nn.ViT, l *nn.Layout, g []float32, batch Batch, fallback []float32) (*Outcome, error) {
	start := time.Now()
	c := m.Config
	o := &Outcome{TRR: math.NaN(), PositionTRR: math.NaN(), FeatDist: math.NaN()}
	o.Labels = labels(block(l, g, m.Head.B), len(batch.Images))
	o.LabelAcc = LabelAccuracy(o.Labels, batch.Labels)
	img, err := PatchRecovery(m.Vision, l, g)
	if err != nil {
		img = fallback
	} else {
		clamp01(img)
	}
	if err := o.Score(replicate(img, len(batch.Images)), batch.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
		return nil, err
	}
	o.Elapsed = time.Since(start)
	return o, nil
}

// AttackFusion attacks the released update g (over layout l) of batch on
// the fusion classifier m: labels from the head's bias gradient, the bag of
// words from the rows of the text.tok gradient (keeping the n largest rows
// when n > 0), and the image: under the "mlp" image encoder in closed form
// from the gradients of its first layer image.fc (LinearInput: exact for a
// batch of one, clipping included), under the "cnn" encoder by gradient
// matching on the released gradients of the convolutions and image.proj
// (ConvMatch; Inverting Gradients' cosine distance, or DLG's ℓ₂ with
// opt.L2) minimised by Invert. If a tensor the attack needs is not
// released (frozen or pruned) the reconstruction is fallback.
func AttackFusion(m *nn.Fusion, l *nn.Layout, g []float32, batch Batch, n int, fallback []float32, opt *InvertOptions) (*Outcome, error) {
	start := time.Now()
	c := m.Config
	o := &Outcome{TRR: math.NaN(), PositionTRR: math.NaN(), FeatDist: math.NaN()}
	o.Labels = labels(block(l, g, m.Head.B), len(batch.Images))
	o.LabelAcc = LabelAccuracy(o.Labels, batch.Labels)
	if ge := block(l, g, m.Tok); ge != nil {
		o.Tokens = BagOfWords(ge, c.Width, n)
		o.TRR = TRR(o.Tokens, batch.Tokens)
		if gp := block(l, g, m.Pos); gp != nil && len(batch.Tokens) == 1 {
			offset := 0
			if c.FusionMode == "early" {
				offset = 1 // the image feature is the first token
			}
			o.Sequence = Sequence(ge, gp, c.Width, o.Tokens, offset, 0)
			o.PositionTRR = PositionTRR(o.Sequence, batch.Tokens[0])
		}
	}
	img := fallback
	if m.ImgFC != nil {
		if gw, gb := block(l, g, m.ImgFC.W), block(l, g, m.ImgFC.B); gw != nil && gb != nil {
			if x, err := LinearInput(gw, gb); err == nil {
				img = x
				clamp01(img)
			}
		}
	} else if cm, err := NewConvMatch(m, l, g); err == nil {
		cm.L2 = opt != nil && opt.L2
		obj := func(x, grad []float32) (float64, error) { return cm.Objective(x, grad), nil }
		if img, _, err = Invert(obj, c.Channels, c.ImageSize, c.ImageSize, opt); err != nil {
			return nil, err
		}
	}
	if err := o.Score(replicate(img, len(batch.Images)), batch.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
		return nil, err
	}
	o.Elapsed = time.Since(start)
	return o, nil
}

// MeanImage returns the pixel-wise mean of imgs: the data-independent
// baseline reconstruction of an attacker who knows only the data
// distribution (computed from public data).
func MeanImage(imgs [][]float32) []float32 {
	if len(imgs) == 0 {
		return nil
	}
	s := make([]float64, len(imgs[0]))
	for _, x := range imgs {
		for i, v := range x {
			s[i] += float64(v)
		}
	}
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v / float64(len(imgs)))
	}
	return out
}

// AttackMLLM attacks the released update g (over layout l) of a batch of
// TinyMLLM sequences, each with one image (batch.Images) and its tokens
// (batch.Tokens, prompt and answer): the image by PatchRecovery on the
// vision encoder (exact for a batch of one when the encoder is released;
// otherwise fallback), the bag of words from the rows of lm.tok's gradient,
// keeping the n rows of largest norm when n > 0. The language model's
// head is tied to lm.tok, so its gradient reaches every row; the input
// embedding's rows dominate but are not the only non-zero ones, so the
// attacker needs n (it takes the number of distinct tokens).
func AttackMLLM(m *nn.TinyMLLM, l *nn.Layout, g []float32, batch Batch, n int, fallback []float32) (*Outcome, error) {
	start := time.Now()
	c := m.Config
	o := &Outcome{TRR: math.NaN(), PositionTRR: math.NaN(), LabelAcc: math.NaN(), FeatDist: math.NaN()}
	if ge := block(l, g, m.Tok); ge != nil {
		o.Tokens = BagOfWords(ge, c.Width, n)
		o.TRR = TRR(o.Tokens, batch.Tokens)
	}
	img, err := PatchRecovery(m.Vision, l, g)
	if err != nil {
		img = fallback
	} else {
		clamp01(img)
	}
	if err := o.Score(replicate(img, len(batch.Images)), batch.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
		return nil, err
	}
	o.Elapsed = time.Since(start)
	return o, nil
}
