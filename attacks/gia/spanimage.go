// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/repro-dp/repro/nn"
)

// SpanImage returns the objective of an image attack on the LoRA update g
// (over layout l) of TinyMLLM m for the sequence s of one image, by the
// span of the first block's LoRA A gradients (SpanText's structure, as in
// TIGER's subspace distance: Kalikman, Petrov, Dimitrov & Vechev,
// "TIGER: Inverting Transformer Gradients via Embedding-Subspace Distance
// Optimization", arXiv 2606.18312, 2026, who optimise token embeddings to
// it; here the image behind the visual tokens). The attacker knows s's tokens, so every text
// position's input is known and projected out of the stacked A gradients;
// what is left spans the first block's inputs at the image's visual
// positions, y_t = LN1(v_t(x) + pos[t]), whose number n is at most 3r.
// The objective of a candidate image x is the mean over the visual
// positions of ‖(I − P)(I − Π_K)y_t‖² / ‖(I − Π_K)y_t‖² (P the projection
// on that span, Π_K on the known inputs'): zero at the true image, and its
// gradient in x one backward pass through the first LayerNorm, the
// projector and the vision encoder (no Hessian-vector product). A
// two-part clip rule (Rap-FT's partitions) is undone by the ratio of its
// factors, as in SpanText. vt is the visual-token transform the attacker
// runs. It returns an error for the reasons SpanText gives, if s does not
// hold exactly one image, or if its visual tokens outnumber the released
// rows (the span no longer holds all of them; ErrSpanRank).
func SpanImage(m *nn.TinyMLLM, l *nn.Layout, g []float32, s nn.Sequence, vt nn.VisualTransform, rule nn.ClipRule) (Objective, error) {
	if m.Pos == nil {
		return nil, fmt.Errorf("gia: the span test needs learned position embeddings (the model has rotary positions): %w", ErrSpanRank)
	}
	if len(s.Images) != 1 {
		return nil, fmt.Errorf("gia: the span image attack takes a sequence of one image, got %d", len(s.Images))
	}
	rows0, rows1, nrows, err := releasedRows(m, l, g, rule)
	if err != nil {
		return nil, err
	}
	img := slices.Index(s.Tokens, nn.TokenImage)
	// The visual rows do not depend on the text: a blank image stands in
	// for the unknown one, whose rows are left out of the known inputs.
	blank := nn.Sequence{Tokens: s.Tokens, Images: [][]float32{make([]float32, len(s.Images[0]))}, Loss: s.Loss}
	inputs, pos, err := blockInputs(m, blank, vt)
	if err != nil {
		return nil, err
	}
	w := m.Config.Width
	T := inputs.Shape[0]
	p0, n := pos[img], T-(len(s.Tokens)-1)
	if n > nrows {
		return nil, fmt.Errorf("gia: %d visual tokens, more than the %d released rows can span: %w", n, nrows, ErrSpanRank)
	}
	var known [][]float64
	for t := range T {
		if t < p0 || t >= p0+n {
			known = append(known, f64(inputs.Data[t*w:(t+1)*w]))
		}
	}
	qk, err := orthBasis(known, w)
	if err != nil {
		return nil, err
	}
	ratio := 1.0
	if len(rule.C) == 2 {
		if n >= nrows {
			return nil, fmt.Errorf("gia: %d visual tokens leave none of the %d released rows to find the clip parts' ratio by: %w", n, nrows, ErrSpanRank)
		}
		ratio = partRatio(rows0, rows1, nrows, w, qk, n, nil)
	}
	mr := make([]float64, len(rows0))
	for i := range mr {
		mr[i] = rows0[i] + float64(ratio*rows1[i])
	}
	span, _ := spanBasis(mat.NewDense(nrows, w, mr), qk, n)
	if span == nil {
		return nil, errors.New("gia: SVD of the released rows failed")
	}
	b0 := m.LM.Blocks[0]
	order := make([]int, n) // the language model's order of the visual tokens
	for i := range order {
		order[i] = i
		if m.Config.CLSLast && n > 1 {
			order[i] = (i + 1) % n
		}
	}
	return func(x, grad []float32) (float64, error) {
		t := nn.NewTape(nil, nil)
		vis, in := m.EncodeImage(t, x, 0, grad != nil, nil, vt)
		if r := vis.Tokens.Value.Rows(); r != n {
			return 0, fmt.Errorf("gia: the image gives %d visual tokens, the sequence %d", r, n)
		}
		y := b0.LN1.Forward(t, t.Add(t.Gather(vis.Tokens, order), t.Slice(t.Param(m.Pos), p0, p0+n)), nil)
		seed := make([]float32, n*w)
		f := 0.0
		for r := range n {
			z := project(qk, f64(y.Value.Data[r*w:(r+1)*w]))
			res := project(qk, project(span, z)) // span ⊥ qk up to rounding
			zz, rr := dot(z, z), dot(res, res)
			if zz == 0 {
				continue
			}
			f += rr / zz / float64(n)
			// ∂(‖Rz‖²/‖z‖²)/∂y = 2(Ry/‖z‖² − ‖Ry‖²·z/‖z‖⁴), R and the
			// projection out of the known span symmetric and idempotent.
			for c := range w {
				seed[r*w+c] = float32(2 * (res[c]/zz - rr*z[c]/(zz*zz)) / float64(n))
			}
		}
		if grad != nil {
			t.BackwardFrom(y, seed)
			clear(grad)
			if in.Grad != nil {
				copy(grad, in.Grad)
			}
		}
		if math.IsNaN(f) {
			return 0, errors.New("gia: span objective is NaN")
		}
		return f, nil
	}, nil
}

// ErrSpanRank wraps the errors of SpanText and SpanImage that say the span
// test does not apply to this release (no first-block LoRA A released,
// more unknown inputs than released rows where the attack needs them
// fewer, known inputs filling the width), as opposed to invalid input.
var ErrSpanRank = errors.New("the span test does not apply")

// The span image attack's settings, chosen on public examples at small
// (docs/gia.md): more iterations than gradient matching, each a
// tenth of its cost, and almost no total variation (the objective is
// 10⁻⁴–10⁻⁶ near its minimum, where TV 0.05 would dominate it).
const (
	DefaultSpanIterations = 1500
	DefaultSpanTV         = 1e-6
)

// AttackMLLMSpan inverts the LoRA update g of a batch of one sequence by
// the span objective (SpanImage, told the release's clip rule), minimised
// as AttackMLLMLoRA minimises its gradient matching: over the prior's
// coordinates when prior is not nil (InvertPriorBatch), else over the
// pixels (Invert).
func AttackMLLMSpan(m *nn.TinyMLLM, l *nn.Layout, g []float32, batch Batch, prior *EmbeddingPrior, vt nn.VisualTransform, rule nn.ClipRule, opt *InvertOptions) (*Outcome, error) {
	if len(batch.Images) != 1 {
		return nil, fmt.Errorf("gia: the span image attack takes a batch of 1, got %d", len(batch.Images))
	}
	return attackMLLM(m, l, batch, prior, vt, opt, "span", func([]GradFunc) (Objective, error) {
		s := nn.Sequence{Tokens: batch.Tokens[0], Images: batch.Images, Loss: batch.Loss[0]}
		return SpanImage(m, l, g, s, vt, rule)
	})
}
