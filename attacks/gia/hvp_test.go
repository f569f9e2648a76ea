// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// linearisedFusion returns the GradFunc of L_δ(x; θ) = ⟨δ, W_proj·h_k(x)⟩,
// the fusion classifier's image.proj output paired with a fixed δ, over the
// layout of the convolutions and image.proj's weight. Its parameter
// gradient is exactly ConvMatch's candidate gradient (δᵢ back-propagated
// from δ, and δ·h_kᵀ), so GradientMatch on it and ConvMatch are the same
// objective, one by finite differences and one in closed form.
func linearisedFusion(m *nn.Fusion, l *nn.Layout, delta []float32) GradFunc {
	c := m.Config
	return func(x, gtheta, gx []float32) (float64, error) {
		t := gradTape(l, gtheta)
		in := t.Input(nn.Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: x}, gx != nil)
		h := FusionFeatures(m)(t, in)
		out := t.Affine(t.Reshape(h, 1, len(h.Value.Data)), t.Param(m.ImgProj.W), nil)
		var v float64
		for i, d := range delta {
			v += float64(d) * float64(out.Value.Data[i])
		}
		t.BackwardFrom(out, delta)
		if gx != nil {
			clear(gx)
			if in.Grad != nil {
				copy(gx, in.Grad)
			}
		}
		return v, nil
	}
}

func relErr(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den)
}

// TestGradientMatchConvMatch checks the finite-difference Hessian-vector
// product against the exact second-order gradient of ConvMatch, on the
// fusion classifier where both apply (the linearised loss of
// linearisedFusion): objective values equal to float32 rounding and
// gradients within 1% relative error at the step η = 10⁻⁵, for both
// distances, at a random image away from the truth. This encoder is
// piecewise linear (ReLU, max pooling), so the difference has no
// truncation error inside a linear piece, but a step that moves one
// pre-activation across zero (or one pooling argmax) between θ − h·v and
// θ + h·v adds a jump divided by 2h: at η ≥ 10⁻⁴ that happens (relative
// errors 0.7–10 at η = 10⁻³…10⁻¹, measured 2026-11-25), at η = 10⁻⁵ it did
// not and the error, 9·10⁻⁴, is the float32 rounding of θ ± h·v. It logs
// the error at each step.
func TestGradientMatchConvMatch(t *testing.T) {
	t.Parallel()
	m, l := smokeFusion(t)
	b, _ := smokeBatch(t, 1)
	g, err := Release(l, fusionGrads(t, m, l, b), Mechanism{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := NewConvMatch(m, l, g)
	if err != nil {
		t.Fatal(err)
	}
	sub := nn.NewLayout(append(convParams(m), m.ImgProj.W))
	gm, err := NewGradientMatch(sub, linearisedFusion(m, sub, cm.delta), concat(cm.want))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float32, len(b.Images[0]))
	for i := range x {
		x[i] = 0.2 + 0.6*rng.Float32()
	}
	want, got := make([]float32, len(x)), make([]float32, len(x))
	for _, l2 := range []bool{false, true} {
		cm.L2, gm.L2 = l2, l2
		vw := cm.Objective(x, want)
		for _, eta := range []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5} {
			gm.Step = eta
			vg, err := gm.Objective(x, got)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(vg-vw) > 1e-5*max(1, math.Abs(vw)) {
				t.Errorf("l2 %v: objective %v, ConvMatch %v", l2, vg, vw)
			}
			e := relErr(got, want)
			t.Logf("l2 %v, η %g: relative error of ∇_x D %.2e", l2, eta, e)
			if eta == 1e-5 && e > 0.01 {
				t.Errorf("l2 %v, η %g: relative error %.3g of the gradient, want ≤ 0.01", l2, eta, e)
			}
		}
	}
}

// smokeMLLMLoRA returns a TinyMLLM of the -gia.scale preset (smoke unless
// set; seeded initialisation) with LoRA on the language model as the
// methods add it at that scale (loraRank), B drawn non-zero so that every
// LoRA tensor has a gradient, its layout, and a fashion-vqa sequence.
func smokeMLLMLoRA(t testing.TB, bInit float64) (*nn.TinyMLLM, *nn.Layout, nn.Sequence) {
	t.Helper()
	sc := datasets.Scale(*giaScale)
	rank, ok := loraRank[sc]
	if !ok {
		t.Fatalf("no LoRA rank for scale %q", sc)
	}
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: sc, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := nn.Preset(string(sc), datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = nn.PEFT{Method: "lora", Rank: rank, Alpha: 2 * float64(rank), Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: bInit}
	m, err := nn.NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	ex := &d.Private[0]
	seq, mask := ex.Sequence()
	return m, nn.NewLayout(m.Params()), nn.Sequence{Tokens: seq, Images: ex.Images, Loss: mask}
}

// TestGradientMatchFD checks GradientMatch's gradient on the LoRA update
// of a smoke TinyMLLM (-gia.scale small: the small preset) against a brute-force central difference of the
// whole objective in x (the objective evaluated at x ± s·d along random
// directions d, nothing held fixed; TinyMLLM is smooth: GELU, softmax,
// LayerNorm). Both are float32 estimates: the tolerance is 5% of the
// directional derivative.
func TestGradientMatchFD(t *testing.T) {
	t.Parallel()
	m, l, s := smokeMLLMLoRA(t, 0.02)
	f := MLLMGrad(m, l, s, nil)
	want := make([]float32, l.Size)
	if _, err := f(s.Images[0], want, nil); err != nil {
		t.Fatal(err)
	}
	gm, err := NewGradientMatch(l, f, want)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float32, len(s.Images[0]))
	for i := range x {
		x[i] = 0.2 + 0.6*rng.Float32()
	}
	for _, l2 := range []bool{false, true} {
		gm.L2 = l2
		checkObjectiveFD(t, gm, x, rng, fmt.Sprint("l2 ", l2))
	}
}

// An objectiver is a matching objective with its gradient in the input
// (GradientMatch, ZOMatch).
type objectiver interface {
	Objective(x, grad []float32) (float64, error)
}

// checkObjectiveFD checks gm's gradient with respect to the input at x
// against central differences of its objective (step 1e-2) along three
// random directions drawn from rng, to 5% (plus 1e-6); label names the
// case in errors.
func checkObjectiveFD(t *testing.T, gm objectiver, x []float32, rng *rand.Rand, label string) {
	t.Helper()
	checkObjectiveFDStep(t, gm, x, rng, label, 1e-2)
}

// checkObjectiveFDStep is checkObjectiveFD with the central differences'
// step in x (a piecewise-linear model needs one that crosses few
// activation switches).
func checkObjectiveFDStep(t *testing.T, gm objectiver, x []float32, rng *rand.Rand, label string, step float64) {
	t.Helper()
	grad, scratch := make([]float32, len(x)), make([]float32, len(x))
	if _, err := gm.Objective(x, grad); err != nil {
		t.Fatal(err)
	}
	for trial := range 3 {
		dir := make([]float64, len(x))
		var an float64
		for i := range dir {
			dir[i] = rng.NormFloat64()
			an += dir[i] * float64(grad[i])
		}
		eval := func(sg float64) float64 {
			y := make([]float32, len(x))
			for i := range y {
				y[i] = float32(float64(x[i]) + sg*step*dir[i])
			}
			v, err := gm.Objective(y, scratch)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		fd := (eval(1) - eval(-1)) / (2 * step)
		t.Logf("%s, direction %d: finite difference %.6g, Hessian-vector %.6g", label, trial, fd, an)
		if math.Abs(fd-an) > 0.05*math.Abs(fd)+1e-6 {
			t.Errorf("%s, direction %d: finite difference %v, Hessian-vector product %v", label, trial, fd, an)
		}
	}
}
