// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// fedUpload runs one round of method (fedavg or secmmfl) on a fresh smoke
// fusion classifier, with one client holding one example (batch 1, one
// local SGD step at lr, server step 1), and returns the global model the
// upload was made at (every tensor trainable, layout l) and the update the
// server received as a gradient: (θ₀ − θ₁)/lr, θ₁ being the client's
// upload (the mean of one upload).
func fedUpload(t *testing.T, ex datasets.Example, enc, method string, eps, lr float64, extra map[string]any) (*nn.Fusion, *nn.Layout, []float32) {
	t.Helper()
	c := smokeConfig(t)
	c.ImageEncoder = enc
	c.PEFT = nn.PEFT{} // the federated methods train every tensor of a fresh base
	m, err := nn.NewFusion(c)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = nn.PEFT{Method: "full"}
	m0, err := nn.NewFusion(c)
	if err != nil {
		t.Fatal(err)
	}
	l := nn.NewLayout(m0.Params())
	d := *smokeData(t)
	ex.Client = 0
	d.Private, d.Clients, d.Canaries = []datasets.Example{ex}, 1, nil
	p := map[string]any{"rounds": 1, "local_steps": 1, "local_batch": 1, "local_lr": lr, "server_step": 1.0}
	for k, v := range extra {
		p[k] = v
	}
	h, err := methods.ResolveAt(method, "smoke", eps, p)
	if err != nil {
		t.Fatal(err)
	}
	meth, ok := methods.Lookup(method)
	if !ok {
		t.Fatalf("no method %s", method)
	}
	job := &methods.Job{Model: m, Data: &d, Hyper: h, Epsilon: eps, Delta: 1e-5, Seed: 5}
	if _, err := meth.FineTune(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	before, after := l.Values(), nn.NewLayout(m.Params()).Values()
	if len(after) != len(before) {
		t.Fatalf("trained model has %d trainable values, want %d", len(after), len(before))
	}
	g := make([]float32, len(before))
	for j := range g {
		g[j] = float32((float64(before[j]) - float64(after[j])) / lr)
	}
	return m0, l, g
}

// TestControlFedAvgUpload is the gradient-inversion control of the
// federated methods, through their own training code: one client at batch
// 1 uploads after one local step, and the server reads the update as a
// gradient. fedavg's upload is the raw gradient (relative squared error ≤
// 1e-9): the label and every caption token come back (TRR ≥ 0.9) and the
// image at least 2 dB above the public mean image; Sec-MMFL's upload at
// ε = 8 (uniform split, noise σ_i·C on the clipped delta) leaves the image
// within 3 dB of the mean image and the tokens below TRR 0.5.
//
// Under the "mlp" image encoder (the fusion base's), fedavg's image comes
// back exactly (LinearInput on image.fc: at least 40 dB; the control that
// must leak needs 20). Under the "cnn" encoder it stays far below the 20
// dB of a leaking control (14 dB at smoke here, 15 dB from the exact
// gradient): the image attack (ConvMatch on the pooled CNN's gradients;
// LinearInput's exact features inverted through the CNN gives 13 dB)
// cannot invert the smoke encoder, whatever the upload path.
func TestControlFedAvgUpload(t *testing.T) {
	t.Parallel()
	b, mean := smokeBatch(t, 1)
	ex := smokeData(t).Private[0]
	base := PSNR(mean, b.Images[0], 1)
	distinct := map[int]bool{}
	for _, id := range b.Tokens[0] {
		distinct[id] = true
	}
	for _, tc := range []struct {
		enc, method      string
		eps              float64
		extra            map[string]any
		minPSNR, maxPSNR float64
		minTRR, maxTRR   float64
	}{
		{"cnn", "fedavg", math.Inf(1), nil, base + 2, math.Inf(1), 0.9, 1},
		{"cnn", "secmmfl", 8, map[string]any{"risk": "uniform", "lambda": 0.0}, 0, base + 3, 0, 0.5},
		{"mlp", "fedavg", math.Inf(1), nil, 40, math.Inf(1), 0.9, 1},
		{"mlp", "secmmfl", 8, map[string]any{"risk": "uniform", "lambda": 0.0}, 0, base + 3, 0, 0.5},
	} {
		m0, l, g := fedUpload(t, ex, tc.enc, tc.method, tc.eps, 0.05, tc.extra)
		if tc.method == "fedavg" {
			raw, err := Release(l, fusionGrads(t, m0, l, b), Mechanism{})
			if err != nil {
				t.Fatal(err)
			}
			var num, den float64
			for j := range raw {
				d := float64(raw[j] - g[j])
				num, den = num+d*d, den+float64(raw[j])*float64(raw[j])
			}
			if num > 1e-9*den || den == 0 {
				t.Errorf("fedavg upload differs from the raw gradient: relative squared error %v", num/den)
			}
		}
		o, err := AttackFusion(m0, l, g, b, len(distinct), mean, &InvertOptions{Gray: true, Init: slices.Clone(mean)})
		if err != nil {
			t.Fatal(err)
		}
		if p := o.MeanPSNR(); p < tc.minPSNR || p > tc.maxPSNR {
			t.Errorf("%s/%s at ε = %v: PSNR %.2f dB, want in [%.2f, %v] (mean-image baseline %.2f dB)", tc.enc, tc.method, tc.eps, p, tc.minPSNR, tc.maxPSNR, base)
		}
		if o.TRR < tc.minTRR || o.TRR > tc.maxTRR {
			t.Errorf("%s/%s at ε = %v: TRR %v, want in [%v, %v]", tc.enc, tc.method, tc.eps, o.TRR, tc.minTRR, tc.maxTRR)
		}
		t.Logf("%s/%s at ε = %v: PSNR %.2f dB, SSIM %.3f, label acc %v, TRR %.3f (baseline PSNR %.2f dB)", tc.enc, tc.method, tc.eps, o.MeanPSNR(), o.MeanSSIM(), o.LabelAcc, o.TRR, base)
	}
}
