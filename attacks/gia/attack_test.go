// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"math"
	"sync"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

var (
	dataOnce sync.Once
	dataSet  *datasets.Dataset
	dataErr  error
)

// smokeData returns the fl-mm task at smoke scale (Fashion-MNIST images
// with captions and labels), built once.
func smokeData(t testing.TB) *datasets.Dataset {
	t.Helper()
	dataOnce.Do(func() { dataSet, dataErr = datasets.Build("fl-mm", &datasets.Options{Scale: datasets.Smoke, Seed: 1}) })
	if dataErr != nil {
		t.Fatal(dataErr)
	}
	return dataSet
}

// smokeBatch returns the first b private examples as a Batch and the mean
// public image (the data-independent baseline).
func smokeBatch(t testing.TB, b int) (Batch, []float32) {
	t.Helper()
	d := smokeData(t)
	var bt Batch
	for _, ex := range d.Private[:b] {
		bt.Images = append(bt.Images, ex.Images[0])
		bt.Tokens = append(bt.Tokens, ex.Prompt)
		bt.Labels = append(bt.Labels, ex.Label)
	}
	var pub [][]float32
	for _, ex := range d.Public {
		pub = append(pub, ex.Images[0])
	}
	return bt, MeanImage(pub)
}

func smokeConfig(t testing.TB) nn.Config {
	t.Helper()
	c, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	c.Classes = len(smokeData(t).Classes)
	c.PEFT = nn.PEFT{Method: "full"}
	return c
}

func smokeViT(t testing.TB) (*nn.ViT, *nn.Layout) {
	t.Helper()
	m, err := nn.NewViT(smokeConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return m, nn.NewLayout(m.Params())
}

func smokeFusion(t testing.TB) (*nn.Fusion, *nn.Layout) {
	t.Helper()
	m, err := nn.NewFusion(smokeConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return m, nn.NewLayout(m.Params())
}

func vitGrads(t testing.TB, m *nn.ViT, l *nn.Layout, b Batch) [][]float32 {
	t.Helper()
	r, err := nn.PerSample(l, len(b.Images), func(tp *nn.Tape, i int) (*nn.Node, error) {
		return m.Loss(tp, b.Images[i], b.Labels[i], nil)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Grads
}

func fusionGrads(t testing.TB, m *nn.Fusion, l *nn.Layout, b Batch) [][]float32 {
	t.Helper()
	r, err := nn.PerSample(l, len(b.Images), func(tp *nn.Tape, i int) (*nn.Node, error) {
		return m.Loss(tp, b.Images[i], b.Tokens[i], b.Labels[i], nil)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Grads
}

// sigmaEps1 is the noise multiplier of one Gaussian release at ε = 1,
// δ = 1e-5 with sensitivity 1 (the analytic Gaussian mechanism): the
// weakest DP-SGD noise that can protect one released batch at ε = 1.
func sigmaEps1(t testing.TB) float64 {
	t.Helper()
	s, err := privacy.AnalyticGaussianSigma(1, 1e-5, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLinearInputExact checks LinearInput against the layer input it
// recovers, computed by a forward pass: the fusion classifier's
// convolutional features of the image, from the raw and from the clipped
// update of a batch of one.
func TestLinearInputExact(t *testing.T) {
	t.Parallel()
	m, l := smokeFusion(t)
	b, _ := smokeBatch(t, 1)
	tp := nn.NewTape(nil, nil)
	c := m.Config
	want := FusionFeatures(m)(tp, tp.Input(nn.Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: b.Images[0]}, false)).Value.Data
	for _, mech := range []Mechanism{{}, {Rule: nn.Flat(1e-3)}} {
		g, err := Release(l, fusionGrads(t, m, l, b), mech)
		if err != nil {
			t.Fatal(err)
		}
		got, err := LinearInput(block(l, g, m.ImgProj.W), block(l, g, m.ImgProj.B))
		if err != nil {
			t.Fatal(err)
		}
		var num, den float64
		for i := range want {
			d := float64(got[i] - want[i])
			num += d * d
			den += float64(want[i]) * float64(want[i])
		}
		if rel := math.Sqrt(num / den); rel > 1e-4 {
			t.Errorf("clip %v: relative error %v of the recovered features, want ≤ 1e-4", mech.Rule.C, rel)
		}
	}
}

// TestControlViTImage is the image control of the issue: on an undefended
// (raw) and on a clipped update of a batch of one the attack reaches
// PSNR ≥ 25 dB at smoke-size images; at ε = 1 (clipping to 1 and the
// noise of one analytic-Gaussian release) it falls to within 3 dB of the
// data-independent baseline, the public mean image.
func TestControlViTImage(t *testing.T) {
	t.Parallel()
	m, l := smokeViT(t)
	b, mean := smokeBatch(t, 1)
	grads := vitGrads(t, m, l, b)
	base := PSNR(mean, b.Images[0], 1)
	for _, tc := range []struct {
		desc     string
		mech     Mechanism
		min, max float64
	}{
		{"raw", Mechanism{}, 25, math.Inf(1)},
		{"clipped", Mechanism{Rule: nn.Flat(1)}, 25, math.Inf(1)},
		{"eps=1", Mechanism{Rule: nn.Flat(1), Sigma: []float64{sigmaEps1(t)}, Seed: 3}, 0, base + 3},
	} {
		g, err := Release(l, grads, tc.mech)
		if err != nil {
			t.Fatal(err)
		}
		o, err := AttackViT(m, l, g, b, mean)
		if err != nil {
			t.Fatal(err)
		}
		if p := o.MeanPSNR(); p < tc.min || p > tc.max {
			t.Errorf("%s: PSNR %.2f dB, want in [%v, %v] (mean-image baseline %.2f dB)", tc.desc, p, tc.min, tc.max, base)
		}
		t.Logf("%s: PSNR %.2f dB, SSIM %.3f, label acc %v (baseline PSNR %.2f dB)", tc.desc, o.MeanPSNR(), o.MeanSSIM(), o.LabelAcc, base)
	}
}

// TestControlFusionText is the text control: the bag of words from the
// raw update of a batch of one recovers TRR ≥ 0.9 (every token: the rows
// are exactly zero for absent tokens), the position-wise rate from the
// position-embedding rows too, and the label; at ε = 1 the noise-dominated
// rows give rates near chance.
func TestControlFusionText(t *testing.T) {
	t.Parallel()
	m, l := smokeFusion(t)
	b, mean := smokeBatch(t, 1)
	grads := fusionGrads(t, m, l, b)
	distinct := map[int]bool{}
	for _, id := range b.Tokens[0] {
		distinct[id] = true
	}
	opt := &InvertOptions{Iterations: 20, Restarts: 1}
	for _, tc := range []struct {
		desc     string
		mech     Mechanism
		min, max float64
	}{
		{"raw", Mechanism{}, 0.9, 1},
		{"eps=1", Mechanism{Rule: nn.Flat(1), Sigma: []float64{sigmaEps1(t)}, Seed: 3}, 0, 0.5},
	} {
		g, err := Release(l, grads, tc.mech)
		if err != nil {
			t.Fatal(err)
		}
		o, err := AttackFusion(m, l, g, b, len(distinct), mean, opt)
		if err != nil {
			t.Fatal(err)
		}
		if o.TRR < tc.min || o.TRR > tc.max {
			t.Errorf("%s: TRR %v, want in [%v, %v]", tc.desc, o.TRR, tc.min, tc.max)
		}
		if o.PositionTRR < tc.min || o.PositionTRR > tc.max {
			t.Errorf("%s: position-wise TRR %v (sequence %v of %v), want in [%v, %v]", tc.desc, o.PositionTRR, o.Sequence, b.Tokens[0], tc.min, tc.max)
		}
		t.Logf("%s: TRR %.3f, position-wise %.3f, label acc %v, PSNR %.2f", tc.desc, o.TRR, o.PositionTRR, o.LabelAcc, o.MeanPSNR())
	}
}

// TestControlMLLM runs the controls on TinyMLLM's vision path and prompts:
// a fully fine-tuned smoke TinyMLLM (vision, projector and language model)
// releases the raw update of one fashion-vqa example; the image comes back
// at PSNR ≥ 25 dB and the tokens at TRR ≥ 0.9 (top rows of lm.tok's
// gradient, as many as the sequence has distinct tokens); at ε = 1 both
// fall to the baselines.
func TestControlMLLM(t *testing.T) {
	t.Parallel()
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = nn.PEFT{Method: "full", Parts: []string{"vision", "projector", "lm"}}
	m, err := nn.NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := nn.NewLayout(m.Params())
	ex := &d.Private[0]
	seq, mask := ex.Sequence()
	s := nn.Sequence{Tokens: seq, Images: ex.Images, Loss: mask}
	r, err := nn.PerSample(l, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) { return m.Loss(tp, &s, nil, nil) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pub [][]float32
	for _, e := range d.Public {
		pub = append(pub, e.Images[0])
	}
	mean := MeanImage(pub)
	b := Batch{Images: [][]float32{ex.Images[0]}, Tokens: [][]int{seq}}
	base := PSNR(mean, ex.Images[0], 1)
	for _, tc := range []struct {
		desc           string
		mech           Mechanism
		minPSNR, maxP  float64
		minTRR, maxTRR float64
	}{
		{"raw", Mechanism{}, 25, math.Inf(1), 0.9, 1},
		{"eps=1", Mechanism{Rule: nn.Flat(1), Sigma: []float64{sigmaEps1(t)}, Seed: 3}, 0, base + 3, 0, 0.5},
	} {
		g, err := Release(l, r.Grads, tc.mech)
		if err != nil {
			t.Fatal(err)
		}
		o, err := AttackMLLM(m, l, g, b, distinct(b.Tokens), mean)
		if err != nil {
			t.Fatal(err)
		}
		if p := o.MeanPSNR(); p < tc.minPSNR || p > tc.maxP {
			t.Errorf("%s: PSNR %.2f dB, want in [%v, %v]", tc.desc, p, tc.minPSNR, tc.maxP)
		}
		if o.TRR < tc.minTRR || o.TRR > tc.maxTRR {
			t.Errorf("%s: TRR %.3f, want in [%v, %v]", tc.desc, o.TRR, tc.minTRR, tc.maxTRR)
		}
		t.Logf("%s: PSNR %.2f dB (baseline %.2f), TRR %.3f", tc.desc, o.MeanPSNR(), base, o.TRR)
	}
}
