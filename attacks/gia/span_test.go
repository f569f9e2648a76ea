// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// TestSpanText runs the span attack on the LoRA update of private
// fashion-vqa sequences at smoke, on the pretrained base with LoRA's B
// drawn (σ 0.02: the update at trained weights, where every factor
// carries gradient; at B = 0 the A factors get none and the span test has
// nothing to read): raw, clipped jointly, clipped in two random
// partitions (Rap-FT's form, the ratio undone) and at ε = 1.
func TestSpanText(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains the smoke TinyMLLM")
	}
	t.Parallel()
	m, l, d := mllmLoRABase(t, datasets.Smoke, 0.02)
	vocab := TextVocab(m)
	// A mask of whole tensors (the first block's query A in part 0, the
	// rest in part 1): scaling whole rows leaves their span as it is, so
	// any ρ recovers the prompt (ρ is not identifiable and not checked),
	// but one part alone has rank r, which a ratio chosen by σ_{k+1}/σ_1
	// would take for a fit.
	byTensor := make([]float32, l.Size)
	qa := l.Index(m.LM.Blocks[0].Q.LoRAA)
	for i := l.Offsets[qa]; i < l.Offsets[qa+1]; i++ {
		byTensor[i] = 1
	}
	const n = 6
	for _, tc := range []struct {
		desc string
		mech Mechanism
		min  float64 // least mean position TRR
		max  float64
	}{
		{"raw", Mechanism{}, 0.9, 1},
		{"clip", Mechanism{Rule: nn.Flat(1e-3)}, 0.9, 1},
		{"partitions", Mechanism{Rule: randomParts(l.Size, 5)}, 0.9, 1},
		{"tensor partitions", Mechanism{Rule: nn.MaskParts(byTensor, 1e-4, 1e-3)}, 0.9, 1},
		{"eps=1", Mechanism{Rule: nn.Flat(1), Sigma: []float64{sigmaEps1(t)}, Seed: 3}, 0, 0.2},
	} {
		var trr float64
		for k := range n {
			b, s, at, want := promptCase(d.Private, k)
			g := mllmUpdate(t, m, l, b, tc.mech)
			o, err := SpanText(m, l, g, s, at, vocab, nil, &SpanOptions{Rule: tc.mech.Rule})
			if err != nil {
				t.Fatal(err)
			}
			trr += PositionTRR(o.Tokens, want) / n
			if tc.desc == "partitions" && len(at) < o.Rows {
				// The ratio undone against the clip factors' own:
				// part p is scaled by min(1, C_p/‖g_p‖).
				raw := mllmUpdate(t, m, l, b, Mechanism{})
				var n2 [2]float64
				for i, v := range raw {
					n2[tc.mech.Rule.Part[i]] += float64(v) * float64(v)
				}
				c := tc.mech.Rule.C
				c0, c1 := min(1, c[0]/math.Sqrt(n2[0])), min(1, c[1]/math.Sqrt(n2[1]))
				if want := c0 / c1; math.Abs(o.Ratio/want-1) > 1e-3 {
					t.Errorf("private %d: ratio %.6g, the clip factors' %.6g", k, o.Ratio, want)
				}
			}
			t.Logf("%s, private %d: %q → %q, position TRR %.2f, ρ %.4g, rows %d, rank %d, residuals %.2g, σ %.2g, %v",
				tc.desc, k, words(want), words(o.Tokens), PositionTRR(o.Tokens, want), o.Ratio, o.Rows, o.Rank, o.Residual, o.Singular, o.Elapsed)
		}
		t.Logf("%s: position TRR %.3f", tc.desc, trr)
		if trr < tc.min || trr > tc.max {
			t.Errorf("%s: position TRR %.3f, want in [%v, %v]", tc.desc, trr, tc.min, tc.max)
		}
	}
}

// TestSpanTextErrors checks SpanText's refusals.
func TestSpanTextErrors(t *testing.T) {
	m, l, s := smokeMLLMLoRA(t, 0.02)
	at := PromptPositions(s)
	vocab := TextVocab(m)
	g := make([]float32, l.Size)
	if _, err := MLLMGrad(m, l, s, nil)(s.Images[0], g, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc string
		g    []float32
		at   []int
		opt  *SpanOptions
		want string
	}{
		{"short update", g[1:], at, nil, "layout of"},
		{"three parts", g, at, &SpanOptions{Rule: nn.ClipRule{Part: make([]int32, l.Size), C: []float64{1, 1, 1}}}, "at most two parts"},
		{"parts not covering the layout", g, at, &SpanOptions{Rule: nn.ClipRule{Part: make([]int32, 3), C: []float64{1, 1}}}, "cover 3 values"},
		{"loss target", g, []int{len(s.Tokens) - 1}, nil, "loss target"},
		{"repeated position", g, []int{at[0], at[0]}, nil, "repeated"},
		{"nothing released", make([]float32, l.Size), at, nil, "releases no LoRA A"},
	} {
		if _, err := SpanText(m, l, tc.g, s, tc.at, vocab, nil, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.desc, err, tc.want)
		}
	}
	for _, bad := range [][]int{nil, {nn.TokenImage}, {m.Config.Vocab}} {
		if _, err := SpanText(m, l, g, s, at, bad, nil, nil); err == nil || errors.Is(err, ErrSpanRank) {
			t.Errorf("candidates %v: got %v, want an input error", bad, err)
		}
	}
	// Where the test does not apply the error says so (ErrSpanRank), so
	// that the run path falls back to the relaxed matching.
	if _, err := SpanText(m, l, make([]float32, l.Size), s, at, vocab, nil, nil); !errors.Is(err, ErrSpanRank) {
		t.Errorf("nothing released: %v, want ErrSpanRank", err)
	}
	if o, err := SpanText(m, l, g, s, nil, vocab, nil, nil); err != nil || len(o.Tokens) != 0 || o.Ratio != 1 {
		t.Errorf("no positions: %+v, %v", o, err)
	}
}

// objectiveFunc adapts an Objective to checkObjectiveFD.
type objectiveFunc Objective

func (f objectiveFunc) Objective(x, grad []float32) (float64, error) { return f(x, grad) }

// TestSpanImage checks SpanImage's objective on the raw LoRA update of a
// private fashion-vqa sequence at smoke (B drawn with σ 0.02, as at
// trained weights): near zero at the true image (float32 rounding), well
// above it at the public mean image, and its gradient in the image
// against central differences of the objective (checkObjectiveFD).
func TestSpanImage(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains the smoke TinyMLLM")
	}
	t.Parallel()
	m, l, d := mllmLoRABase(t, datasets.Smoke, 0.02)
	b, s, _, _ := promptCase(d.Private, 0)
	g := mllmUpdate(t, m, l, b, Mechanism{})
	obj, err := SpanImage(m, l, g, s, nil, nn.ClipRule{})
	if err != nil {
		t.Fatal(err)
	}
	truth, err := obj(b.Images[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	mean := MeanImage(publicImages(d))
	atMean, err := obj(mean, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("objective at the truth %.3g, at the public mean %.3g", truth, atMean)
	if truth > 1e-8 || atMean < 1e-3 {
		t.Errorf("objective %.3g at the truth (want ≤ 1e-8), %.3g at the mean (want ≥ 1e-3)", truth, atMean)
	}
	checkObjectiveFD(t, objectiveFunc(obj), mean, rand.New(rand.NewPCG(3, 3)), "span objective")

	// Clipped in two random parts: the ratio undone, the truth is again
	// a zero.
	rule := randomParts(l.Size, 6)
	obj, err = SpanImage(m, l, mllmUpdate(t, m, l, b, Mechanism{Rule: rule}), s, nil, rule)
	if err != nil {
		t.Fatal(err)
	}
	if truth, err := obj(b.Images[0], nil); err != nil || truth > 1e-8 {
		t.Errorf("two clip parts: objective %.3g at the truth (want ≤ 1e-8), %v", truth, err)
	}
}

// TestAttackTargetSpan checks the run path's choice of image attack for a
// batch of 1 (attackTarget): with span, the span attack where the
// released rows hold the visual tokens (LoRA on q, k and v: 12 rows for
// 5 tokens at smoke), and gradient matching, the same as without span,
// where they do not (LoRA on v alone: 4 rows, ErrSpanRank).
func TestAttackTargetSpan(t *testing.T) {
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pub := publicImages(d)[:16]
	for _, tc := range []struct {
		targets []string
		span    bool // whether the span attack applies
	}{
		{[]string{"q", "k", "v"}, true},
		{[]string{"v"}, false},
	} {
		c, err := nn.Preset("smoke", datasets.Vocab().Len())
		if err != nil {
			t.Fatal(err)
		}
		c.PEFT = nn.PEFT{Method: "lora", Rank: 4, Alpha: 8, Targets: tc.targets, BInitStd: 0.02}
		m, err := nn.NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		prior, err := NewEmbeddingPrior(m.Vision, pub)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _, _ := promptCase(d.Private, 0)
		tgt := &attacks.Target{Model: m, Release: &methods.Release{}}
		opt := &InvertOptions{Iterations: 5, Restarts: 1, LR: DefaultLR, TV: DefaultTV, Scout: 4, Seed: 1}
		withSpan, err := attackTarget(tgt, b, prior, opt, true)
		if err != nil {
			t.Fatal(err)
		}
		without, err := attackTarget(tgt, b, prior, opt, false)
		if err != nil {
			t.Fatal(err)
		}
		l := nn.NewLayout(m.Params())
		g := mllmUpdate(t, m, l, b, Mechanism{})
		so := *opt
		so.Iterations, so.TV = DefaultSpanIterations, DefaultSpanTV
		span, err := AttackMLLMSpan(m, l, g, b, prior, nil, nn.ClipRule{}, &so)
		if tc.span {
			if err != nil || withSpan.Match != span.Match || withSpan.MeanPSNR() != span.MeanPSNR() {
				t.Errorf("LoRA on %v: run path %v / %.4g dB, span attack %v / %v", tc.targets, withSpan.Match, withSpan.MeanPSNR(), span, err)
			}
			continue
		}
		if !errors.Is(err, ErrSpanRank) || withSpan.Match != without.Match || withSpan.MeanPSNR() != without.MeanPSNR() {
			t.Errorf("LoRA on %v: span attack error %v; run path with span %v / %.4g dB, without %v / %.4g dB", tc.targets, err, withSpan.Match, withSpan.MeanPSNR(), without.Match, without.MeanPSNR())
		}
	}
}

// randomParts returns a clip rule of two parts over n values, part 0 a
// random 30% (drawn from seed) clipped to 10⁻³, part 1 the rest clipped
// to 10⁻⁴: Rap-FT's form, with a mask that gives both parts elements in
// every row of every tensor.
func randomParts(n int, seed uint64) nn.ClipRule {
	rng := rand.New(rand.NewPCG(seed, seed))
	part := make([]float32, n)
	for i := range part {
		if rng.Float64() < 0.3 {
			part[i] = 1
		}
	}
	return nn.MaskParts(part, 1e-3, 1e-4)
}
