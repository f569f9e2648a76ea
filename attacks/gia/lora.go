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
// fine-tuning method releases for a batch of one sequence, when the
// trainable tensors are the language model's LoRA factors (the methods'
// default: package methods, nn.PEFT "lora" on part lm) and the vision
// encoder and projector are frozen, so PatchRecovery has nothing to use.
//
// Threat model: besides the weights and the release, the attacker knows
// the sequence's tokens (prompt and answer, batch.Tokens[0]) and its loss
// mask (batch.Loss[0]); the text side has its own attacks (BagOfWords).
// It recovers the image by Inverting Gradients (Geiping et al. 2020):
// GradientMatch's cosine distance (ℓ₂ with opt.L2) between the candidate's
// LoRA gradient and the release, over the released tensors, with its
// gradient in x by the finite-difference Hessian-vector product, plus
// total variation, minimised by Invert (Adam, box [0, 1], restarts, the
// first from opt.Init when set), or, with a prior, by InvertPrior over
// the prior's coordinates (the image restricted to the conditional means
// of the public Gaussian model given the patch embeddings, the part of
// the image the update can carry; see EmbeddingPrior). The model's parameters are perturbed and
// restored during the attack, so m must not be used concurrently.
//
// Batches of more than one sequence are not attacked (an error): the
// joint optimisation over B images is not implemented.
func AttackMLLMLoRA(m *nn.TinyMLLM, l *nn.Layout, g []float32, batch Batch, prior *EmbeddingPrior, opt *InvertOptions) (*Outcome, error) {
	start := time.Now()
	if len(batch.Images) != 1 || len(batch.Tokens) != 1 || len(batch.Loss) != 1 {
		return nil, fmt.Errorf("gia: the LoRA attack takes a batch of one sequence with its loss mask, got %d images", len(batch.Images))
	}
	c := m.Config
	o := &Outcome{TRR: math.NaN(), PositionTRR: math.NaN(), LabelAcc: math.NaN(), FeatDist: math.NaN()}
	s := nn.Sequence{Tokens: batch.Tokens[0], Images: batch.Images, Loss: batch.Loss[0]}
	if err := m.Check(&s); err != nil {
		return nil, fmt.Errorf("gia: %w", err)
	}
	gm, err := NewGradientMatch(l, MLLMGrad(m, l, s), g)
	if err != nil {
		return nil, err
	}
	gm.L2 = opt != nil && opt.L2
	var img []float32
	if prior != nil {
		img, o.Match, err = InvertPrior(gm.Objective, prior, opt)
	} else {
		img, o.Match, err = Invert(gm.Objective, c.Channels, c.ImageSize, c.ImageSize, opt)
	}
	if err != nil {
		return nil, err
	}
	if err := o.Score([][]float32{img}, batch.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
		return nil, err
	}
	o.Elapsed = time.Since(start)
	return o, nil
}
