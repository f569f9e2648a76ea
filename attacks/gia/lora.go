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

// AttackMLLMLoRA attacks the update g (over layout l) that a TinyMLLM
// fine-tuning method releases for a batch of B sequences, when the
// trainable tensors are the language model's LoRA factors (the methods'
// default: package methods, nn.PEFT "lora" on part lm) and the vision
// encoder and projector are frozen, so PatchRecovery has nothing to use.
//
// Threat model: besides the weights and the release, the attacker knows
// every sequence's tokens (prompt and answer, batch.Tokens[i]) and loss
// mask (batch.Loss[i]), and the visual-token transform vt the model runs
// with (Dual-Priv's pruning and fusion without its training noise, whose
// draw is the method's secret; nil for none); the text side has its own
// attacks (BagOfWords). No label or token rule is needed: the tokens are
// given. It recovers the images by Inverting Gradients (Geiping et al.
// 2020): GradientMatch's cosine distance (ℓ₂ with opt.L2) between the
// candidate batch's summed LoRA gradient (SumGrad: the images are fitted
// jointly; per-example clipping is modelled for B = 1 only, where
// opt.Clip clips the candidate as the release clips each example:
// GradientMatch.Clip) and the release, over the released
// tensors, with its gradient in the images by the finite-difference
// Hessian-vector product, plus total variation, minimised by Invert
// (Adam, box [0, 1], restarts, the first from opt.Init when set; B = 1
// only), or, with a prior, by InvertPriorBatch over the prior's
// coordinates (each image restricted to the conditional means of the
// public Gaussian model given its patch embeddings, the part of the image
// the update can carry; see EmbeddingPrior). The reconstructions are
// scored after Hungarian matching. The model's parameters are perturbed
// and restored during the attack, so m must not be used concurrently.
func AttackMLLMLoRA(m *nn.TinyMLLM, l *nn.Layout, g []float32, batch Batch, prior *EmbeddingPrior, vt nn.VisualTransform, opt *InvertOptions) (*Outcome, error) {
	return attackMLLM(m, l, batch, prior, vt, opt, "LoRA", func(fs []GradFunc) (Objective, error) {
		f := fs[0]
		if len(fs) > 1 {
			f = SumGrad(fs, len(batch.Images[0]))
		}
		gm, err := NewGradientMatch(l, f, g)
		if err != nil {
			return nil, err
		}
		gm.L2 = opt != nil && opt.L2
		if opt != nil && len(fs) == 1 {
			gm.Clip = opt.Clip
		}
		return gm.Objective, nil
	})
}

// attackMLLM inverts an update of TinyMLLM for the images of batch: the
// objective that objective builds from the batch's per-sequence gradient
// functions is minimised over the prior's coordinates (InvertPriorBatch)
// or, without a prior and for B = 1, over the pixels (Invert), and the
// reconstructions are scored after Hungarian matching. what names the
// attack in errors.
func attackMLLM(m *nn.TinyMLLM, l *nn.Layout, batch Batch, prior *EmbeddingPrior, vt nn.VisualTransform, opt *InvertOptions, what string, objective func(fs []GradFunc) (Objective, error)) (*Outcome, error) {
	start := time.Now()
	b := len(batch.Images)
	if b == 0 || len(batch.Tokens) != b || len(batch.Loss) != b {
		return nil, fmt.Errorf("gia: the %s attack takes sequences with their images and loss masks, got %d images, %d sequences, %d masks", what, b, len(batch.Tokens), len(batch.Loss))
	}
	if b > 1 && prior == nil {
		return nil, fmt.Errorf("gia: the %s attack on a batch of %d needs a prior", what, b)
	}
	c := m.Config
	o := &Outcome{TRR: math.NaN(), PositionTRR: math.NaN(), LabelAcc: math.NaN(), FeatDist: math.NaN()}
	fs := make([]GradFunc, b)
	for i := range b {
		s := nn.Sequence{Tokens: batch.Tokens[i], Images: batch.Images[i : i+1], Loss: batch.Loss[i]}
		if err := m.Check(&s); err != nil {
			return nil, fmt.Errorf("gia: %w", err)
		}
		fs[i] = MLLMGrad(m, l, s, vt)
	}
	obj, err := objective(fs)
	if err != nil {
		return nil, err
	}
	var imgs [][]float32
	if prior != nil {
		imgs, o.Match, err = InvertPriorBatch(obj, prior, b, opt)
	} else {
		var img []float32
		img, o.Match, err = Invert(obj, c.Channels, c.ImageSize, c.ImageSize, opt)
		imgs = [][]float32{img}
	}
	if err != nil {
		return nil, err
	}
	if err := o.Score(imgs, batch.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
		return nil, err
	}
	o.Elapsed = time.Since(start)
	return o, nil
}
