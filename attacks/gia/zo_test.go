// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// TestGradientMatchClip checks the per-group clip of the candidate
// (GradientMatch.Clip) on the LoRA update of a smoke TinyMLLM under a
// two-part rule of Rap-FT's form (a random 70% of the coordinates weak):
// at the true image the distance to the clipped release is zero (to
// float32 rounding) with the clip modelled and not without it, when the
// two parts are clipped to different fractions of their norms; and its
// gradient agrees with central differences of the objective, with both
// parts clipped and with one part below its clip, for both distances.
func TestGradientMatchClip(t *testing.T) {
	t.Parallel()
	m, l, s := smokeMLLMLoRA(t, 0.02)
	f := MLLMGrad(m, l, s, nil)
	g := make([]float32, l.Size)
	if _, err := f(s.Images[0], g, nil); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	mask := make([]float32, l.Size)
	for i := range mask {
		if rng.Float64() < 0.7 {
			mask[i] = 1
		}
	}
	n := nn.Norms(g, nn.MaskParts(mask, 1, 1))
	x := make([]float32, len(s.Images[0]))
	for i := range x {
		x[i] = 0.2 + 0.6*rng.Float32()
	}
	for _, tc := range []struct {
		name string
		c    [2]float64
	}{
		{"both clipped", [2]float64{0.5 * n[0], 0.05 * n[1]}},
		{"strong below its clip", [2]float64{0.2 * n[0], 10 * n[1]}},
	} {
		rule := nn.MaskParts(mask, tc.c[0], tc.c[1])
		want, err := Release(l, [][]float32{g}, Mechanism{Rule: rule})
		if err != nil {
			t.Fatal(err)
		}
		gm, err := NewGradientMatch(l, f, want)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := gm.Distance(s.Images[0])
		if err != nil {
			t.Fatal(err)
		}
		gm.Clip = rule
		clipped, err := gm.Distance(s.Images[0])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: distance at the true image %.3g with the clip modelled, %.3g without", tc.name, clipped, plain)
		if clipped > 1e-6 || plain < 1e-3 {
			t.Errorf("%s: distance at the true image %v with the clip modelled (want ≈ 0), %v without (want > 0)", tc.name, clipped, plain)
		}
		for _, l2 := range []bool{false, true} {
			gm.L2 = l2
			checkObjectiveFD(t, gm, x, rng, fmt.Sprintf("%s, l2 %v", tc.name, l2))
		}
	}
}

// TestZOMatch checks the zeroth-order objective on a batch of two smoke
// fashion-vqa sequences: without noise, at the true images the candidate
// reproduces the release of the method's own step (methods.ZORelease.Step,
// the batched loss engine; the candidate takes the losses on the tape
// engine) to 10⁻³ of the clip, so the objective is about 0; its gradient
// agrees with central differences of the objective (for a release half a
// clip away) at random images and at the truth, for both clip scopes; a clip that every contribution exceeds gives the
// objective no gradient.
func TestZOMatch(t *testing.T) {
	t.Parallel()
	m, l, _ := smokeMLLMLoRA(t, 0.02)
	seqs := smokeSequences(t, 2)
	bt, err := memberBatch([]attacks.Example{{Seq: seqs[0]}, {Seq: seqs[1]}})
	if err != nil {
		t.Fatal(err)
	}
	fs := []GradFunc{MLLMGrad(m, l, seqs[0], nil), MLLMGrad(m, l, seqs[1], nil)}
	truth := append(append([]float32(nil), bt.Images[0]...), bt.Images[1]...)
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, len(truth))
	for i := range x {
		x[i] = 0.2 + 0.6*rng.Float32()
	}
	for _, r := range []*methods.ZORelease{
		// Clips above every contribution here (|l_i|/(2φ) ≈ 0.02–0.04),
		// small enough that the objective is of order 1.
		{Phi: 1e-2, Clip: 0.2, Derivative: true},
		{Phi: 1e-2, Clip: 0.2 * 2e-2},
	} {
		label := fmt.Sprintf("derivative %v", r.Derivative)
		s, z, err := releaseZO(m, l, bt, r, 9)
		if err != nil {
			t.Fatal(err)
		}
		zm, err := NewZOMatch(l, fs, r, z, s)
		if err != nil {
			t.Fatal(err)
		}
		grad := make([]float32, len(truth))
		v, err := zm.Objective(truth, grad)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: release %.6g, objective at the truth %.3g", label, r.Unscale(s), v)
		if math.Sqrt(v) > 1e-3 || r.Unscale(s) == 0 {
			t.Errorf("%s: objective %v at the true images (release %v): the candidate misses the release by %v of the clip", label, v, r.Unscale(s), math.Sqrt(v))
		}
		// A release half a clip away from the truth's.
		zm.S = s + 0.5*r.Clip
		if r.Derivative {
			zm.S = s + 0.5*r.Clip*2*r.Phi
		}
		checkObjectiveFD(t, zm, x, rng, label)
		checkObjectiveFD(t, zm, truth, rng, label+", at the truth")
	}
	r := &methods.ZORelease{Phi: 1e-2, Clip: 1e-9}
	zm, err := NewZOMatch(l, fs, r, make([]float32, l.Size), 0)
	if err != nil {
		t.Fatal(err)
	}
	// z = 0 gives a zero difference: inside any clip; a random z with a tiny clip clips both.
	for i := range zm.Z {
		zm.Z[i] = float32(rng.NormFloat64())
	}
	grad := make([]float32, len(x))
	if _, err := zm.Objective(x, grad); err != nil {
		t.Fatal(err)
	}
	if norm(grad) != 0 {
		t.Errorf("clipped contributions: gradient norm %v, want 0", norm(grad))
	}
	if _, err := NewZOMatch(l, fs, r, z0(l.Size-1), 0); err == nil {
		t.Error("a direction that does not fit the layout is accepted")
	}
}

func z0(n int) []float32 { return make([]float32, n) }
