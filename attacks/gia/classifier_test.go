// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// smokeClassifier returns a smoke ViT for fashion-cls's classes and the task.
func smokeClassifier(t testing.TB) (*nn.ViT, *datasets.Dataset) {
	t.Helper()
	d, err := datasets.Build("fashion-cls", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewViT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, d
}

// TestClassifierGradMasked checks the candidate gradient of the
// classifier attack against the reference, nn.PerSample's gradient of
// nn.ViT.Loss multiplied by the release's mask: ClassifierGrad's loss and
// parameter gradient, and maskedGrad's zeros on the masked coordinates.
func TestClassifierGradMasked(t *testing.T) {
	t.Parallel()
	m, d := smokeClassifier(t)
	l := nn.SetTrainable(m, func(p *nn.Param) bool { return p.Kind != nn.KindEmbedding })
	mask := l.RowMask(func(p *nn.Param, row int) bool { return p.Kind != nn.KindWeight || row%3 == 0 })
	ex := d.Private[0]
	ref, err := nn.PerSample(l, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) { return m.Loss(tp, ex.Images[0], ex.Label, nil) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(ref.Grads[0])
	nn.ApplyMask(want, mask)
	got := make([]float32, l.Size)
	loss, err := maskedGrad(ClassifierGrad(m, l, ex.Label), mask)(ex.Images[0], got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if loss != ref.Losses[0] || !slices.Equal(got, want) {
		t.Errorf("masked candidate gradient (loss %v) differs from the masked per-sample gradient (loss %v)", loss, ref.Losses[0])
	}
}

// TestRunClassifier runs the attack on a classifier target whose method
// releases the raw gradient of the rows kept by a mask (a SPARTA-like
// release, no noise): the results and images of gia_b1 are there, the
// baseline is the public mean image's PSNR (computed here), and the
// labels come back from the head bias's gradient (iDLG, exact for a
// batch of one).
func TestRunClassifier(t *testing.T) {
	t.Parallel()
	m, d := smokeClassifier(t)
	nn.SetTrainable(m, func(p *nn.Param) bool { return p.Kind != nn.KindEmbedding })
	var members, public []attacks.Example
	for i, ex := range d.Private[:2] {
		members = append(members, attacks.Example{ID: int64(i), Seq: nn.Sequence{Images: ex.Images}, Label: ex.Label})
	}
	for i, ex := range d.Public[:16] {
		public = append(public, attacks.Example{ID: int64(i), Seq: nn.Sequence{Images: ex.Images}, Label: ex.Label})
	}
	mask := func(l *nn.Layout) []float32 {
		return l.RowMask(func(p *nn.Param, row int) bool { return p.Kind != nn.KindWeight || row%2 == 0 })
	}
	a := Attack{Batches: []int{1}, Trials: 2, Iterations: 5}
	tg := &attacks.Target{Classifier: m, Members: members, Public: public,
		Release: &methods.Release{Mask: mask}}
	rep, err := a.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"psnr_mean", "psnr_max", "ssim", "baseline_psnr", "baseline_ssim", "match", "seconds_per_image"} {
		if v, ok := rep.Results["gia_b1_"+k]; !ok || math.IsNaN(v) {
			t.Errorf("gia_b1_%s = %v, %v", k, v, ok)
		}
	}
	if _, ok := rep.Images["b1-recon-0"]; !ok {
		t.Error("no reconstruction image")
	}
	// The baseline is the public mean's PSNR against the attacked images.
	var o Outcome
	var pub [][]float32
	for _, e := range public {
		pub = append(pub, e.Seq.Images[0])
	}
	base := 0.0
	for _, e := range members {
		_, c := m.Describe()
		if err := o.Score([][]float32{MeanImage(pub)}, [][]float32{e.Seq.Images[0]}, c.Channels, c.ImageSize, c.ImageSize); err != nil {
			t.Fatal(err)
		}
		base += o.MeanPSNR() / 2
	}
	if got := rep.Results["gia_b1_baseline_psnr"]; math.Abs(got-base) > 1e-9 {
		t.Errorf("baseline PSNR %v, want the public mean's %v", got, base)
	}
	// Labels: the attack's own (iDLG) on the first member.
	l := nn.NewLayout(m.Params())
	ex := members[0]
	r, err := nn.PerSample(l, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) { return m.Loss(tp, ex.Seq.Images[0], ex.Label, nil) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := AttackClassifier(m, l, r.Grads[0], mask(l), Batch{Images: [][]float32{ex.Seq.Images[0]}, Labels: []int{ex.Label}}, nil, &InvertOptions{Iterations: 3, Restarts: 1, LR: DefaultLR, TV: DefaultTV})
	if err != nil {
		t.Fatal(err)
	}
	if out.LabelAcc != 1 {
		t.Errorf("label accuracy %v from the head bias's gradient of a batch of one, want 1 (iDLG)", out.LabelAcc)
	}
}

// TestFiniteObjective checks that a non-finite objective value or
// gradient becomes the largest cosine distance, 2, with a zero gradient,
// and that a finite one passes unchanged.
func TestFiniteObjective(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v     float64
		g     float32
		wantV float64
		wantG float32
	}{
		{0.5, 1, 0.5, 1},
		{math.NaN(), 1, 2, 0},
		{0.5, float32(math.Inf(1)), 2, 0},
	} {
		obj := finiteObjective(func(x, grad []float32) (float64, error) {
			for i := range grad {
				grad[i] = tc.g
			}
			return tc.v, nil
		})
		g := make([]float32, 3)
		v, err := obj(make([]float32, 3), g)
		if err != nil || v != tc.wantV || g[0] != tc.wantG || g[2] != tc.wantG {
			t.Errorf("objective (%v, %v): got (%v, %v, %v), want (%v, %v)", tc.v, tc.g, v, g, err, tc.wantV, tc.wantG)
		}
	}
}

// TestRunClassifierCNN runs the attack on a smoke CNN (a classifier
// without a patch-embedding prior: the image is inverted over the
// pixels, batches of 1 only): the results of gia_b1 are there, the
// label comes back from the head bias (iDLG), and a batch of 2 is
// refused for want of a prior.
func TestRunClassifierCNN(t *testing.T) {
	t.Parallel()
	_, d := smokeClassifier(t)
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewCNN(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nn.SetTrainable(m, func(*nn.Param) bool { return true })
	var members, public []attacks.Example
	for i, ex := range d.Private[:2] {
		members = append(members, attacks.Example{ID: int64(i), Seq: nn.Sequence{Images: ex.Images}, Label: ex.Label})
	}
	for i, ex := range d.Public[:4] {
		public = append(public, attacks.Example{ID: int64(i), Seq: nn.Sequence{Images: ex.Images}, Label: ex.Label})
	}
	tg := &attacks.Target{Classifier: m, Members: members, Public: public, Release: &methods.Release{}}
	rep, err := Attack{Batches: []int{1}, Iterations: 3}.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"psnr_mean", "ssim", "baseline_psnr", "match"} {
		if v, ok := rep.Results["gia_b1_"+k]; !ok || math.IsNaN(v) {
			t.Errorf("gia_b1_%s = %v, %v", k, v, ok)
		}
	}
	if _, err := (Attack{Batches: []int{2}, Iterations: 3}).Run(context.Background(), tg); err == nil {
		t.Error("a batch of 2 on a CNN: no error")
	}
	l := nn.NewLayout(m.Params())
	ex := members[0]
	r, err := nn.PerSample(l, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) { return m.Loss(tp, ex.Seq.Images[0], ex.Label, nil) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := AttackClassifier(m, l, r.Grads[0], nil, Batch{Images: [][]float32{ex.Seq.Images[0]}, Labels: []int{ex.Label}}, nil, &InvertOptions{Iterations: 2, Restarts: 1, LR: DefaultLR, TV: DefaultTV})
	if err != nil {
		t.Fatal(err)
	}
	if out.LabelAcc != 1 {
		t.Errorf("label accuracy %v, want 1 (iDLG)", out.LabelAcc)
	}
}
