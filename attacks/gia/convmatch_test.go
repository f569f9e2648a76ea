// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// TestConvMatchAtTruth checks that the candidate gradients of ConvMatch at
// the true image are the released ones (objective 0): its closed forms of
// the encoder's gradients agree with nn's backward pass.
func TestConvMatchAtTruth(t *testing.T) {
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
	grad := make([]float32, len(b.Images[0]))
	if v := cm.Objective(b.Images[0], grad); v > 1e-5 {
		t.Errorf("objective at the true image %v, want ≈ 0", v)
	}
}

// TestConvMatchGradient checks ConvMatch's gradient with respect to the
// image by central finite differences along random directions, at a random
// image away from the truth. The objective jumps where a ReLU or pooling
// pattern changes (δᵢ changes there), so the check holds the δᵢ of the
// point fixed: that function is continuous, and its gradient is
// Objective's wherever no pattern changes (almost everywhere). The
// tolerance allows for float32 evaluation.
func TestConvMatchGradient(t *testing.T) {
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
	for _, l2 := range []bool{false, true} {
		cm.L2 = l2
		var deltas [][]float32
		checkObjectiveGradient(t, func(x, grad []float32) float64 {
			if deltas == nil {
				deltas = cm.deltas(x) // frozen at the first point
			}
			return cm.objectiveWith(x, deltas, grad)
		}, len(b.Images[0]))
	}
}

func checkObjectiveGradient(t *testing.T, f func(x, grad []float32) float64, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, n)
	for i := range x {
		x[i] = 0.2 + 0.6*rng.Float32()
	}
	grad := make([]float32, n)
	f(x, grad)
	scratch := make([]float32, n)
	// Max pooling and ReLU make the function piecewise smooth: a step of
	// 1e-3 crosses enough argmax switches to move the difference by 10%;
	// 1e-4 crosses almost none and is still well above float32 resolution.
	const h = 1e-4
	for trial := range 5 {
		dir := make([]float64, n)
		var want float64
		for i := range dir {
			dir[i] = rng.NormFloat64()
			want += dir[i] * float64(grad[i])
		}
		eval := func(s float64) float64 {
			y := make([]float32, n)
			for i := range y {
				y[i] = float32(float64(x[i]) + s*dir[i])
			}
			return f(y, scratch)
		}
		got := (eval(h) - eval(-h)) / (2 * h)
		if math.Abs(got-want) > 0.02*math.Abs(want)+1e-4 {
			t.Errorf("direction %d: finite difference %v, analytic %v", trial, got, want)
		}
	}
}

// TestFeatureObjectiveGradient checks FeatureObjective's gradient (both
// distances) by central finite differences, as TestConvMatchGradient.
func TestFeatureObjectiveGradient(t *testing.T) {
	t.Parallel()
	m, _ := smokeFusion(t)
	b, _ := smokeBatch(t, 1)
	c := m.Config
	tp := nn.NewTape(nil, nil)
	target := FusionFeatures(m)(tp, tp.Input(nn.Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: b.Images[0]}, false)).Value.Data
	for _, l2 := range []bool{false, true} {
		f := FeatureObjective(FusionFeatures(m), target, c.Channels, c.ImageSize, c.ImageSize, l2)
		checkObjectiveGradient(t, func(x, grad []float32) float64 {
			v, err := f(x, grad)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}, len(b.Images[0]))
	}
}

// TestTotalVariationGradient checks the TV subgradient by finite
// differences at a random image (no two neighbours equal, so TV is
// differentiable there) and TV against a closed form: a vertical step of
// height 1 in a c×h×w image has TV = 1/(h−1).
func TestTotalVariationGradient(t *testing.T) {
	t.Parallel()
	const c, h, w = 2, 6, 5
	checkObjectiveGradient(t, func(x, grad []float32) float64 {
		clear(grad)
		return totalVariation(x, c, h, w, 1, grad)
	}, c*h*w)
	x := make([]float32, c*h*w)
	for ch := range c {
		for i := h / 2; i < h; i++ {
			for j := range w {
				x[(ch*h+i)*w+j] = 1
			}
		}
	}
	got := totalVariation(x, c, h, w, 0, make([]float32, len(x)))
	if want := 1.0 / (h - 1); math.Abs(got-want) > 1e-12 {
		t.Errorf("TV of a step: got %v, want %v", got, want)
	}
}
