// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"testing"
)

// BenchmarkPatchRecovery times the ViT attack (APRIL closed form) on the
// raw update of one smoke image.
func BenchmarkPatchRecovery(b *testing.B) {
	m, l := smokeViT(b)
	bt, mean := smokeBatch(b, 1)
	g, err := Release(l, vitGrads(b, m, l, bt), Mechanism{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := AttackViT(m, l, g, bt, mean); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvMatchObjective times one evaluation of the Inverting
// Gradients objective and its gradient on the smoke fusion classifier:
// an attack costs Iterations·Restarts of them.
func BenchmarkConvMatchObjective(b *testing.B) {
	m, l := smokeFusion(b)
	bt, _ := smokeBatch(b, 1)
	g, err := Release(l, fusionGrads(b, m, l, bt), Mechanism{})
	if err != nil {
		b.Fatal(err)
	}
	cm, err := NewConvMatch(m, l, g)
	if err != nil {
		b.Fatal(err)
	}
	x := bt.Images[0]
	grad := make([]float32, len(x))
	for b.Loop() {
		cm.Objective(x, grad)
	}
}

// BenchmarkTextDistance times one exact-distance evaluation of the text
// attack (one first-order pass of TinyMLLM with relaxed prompt
// embeddings, GradientMatch.Distance over TextGrad) on the LoRA update of
// a private fashion-vqa sequence at -gia.scale: RecoverText costs
// TextOutcome.Evals of these (a Hessian-vector product is two).
func BenchmarkTextDistance(b *testing.B) {
	m, l, s := smokeMLLMLoRA(b, 0.02)
	at := PromptPositions(s)
	g := make([]float32, l.Size)
	if _, err := MLLMGrad(m, l, s, nil)(s.Images[0], g, nil); err != nil {
		b.Fatal(err)
	}
	f, err := TextGrad(m, l, s, at, nil)
	if err != nil {
		b.Fatal(err)
	}
	gm, err := NewGradientMatch(l, f, g)
	if err != nil {
		b.Fatal(err)
	}
	w := m.Config.Width
	x := make([]float32, len(at)*w)
	for k, p := range at {
		copy(x[k*w:(k+1)*w], m.Tok.Data[s.Tokens[p]*w:(s.Tokens[p]+1)*w])
	}
	for b.Loop() {
		if _, err := gm.Distance(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpanText times the span attack (SpanText, one rule part) on the
// raw LoRA update of a private fashion-vqa sequence at -gia.scale.
func BenchmarkSpanText(b *testing.B) {
	m, l, s := smokeMLLMLoRA(b, 0.02)
	at := PromptPositions(s)
	g := make([]float32, l.Size)
	if _, err := MLLMGrad(m, l, s, nil)(s.Images[0], g, nil); err != nil {
		b.Fatal(err)
	}
	vocab := TextVocab(m)
	for b.Loop() {
		if _, err := SpanText(m, l, g, s, at, vocab, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
