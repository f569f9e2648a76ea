// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// TestUploadAttack runs gia-upload on the upload release of a fedavg run
// (two rounds, mlp image encoder, every client's first 4 examples): the
// non-private upload of a batch of one gives every image back exactly
// (LinearInput; PSNR capped at 100 dB, at least 40 here against a
// mean-image baseline near 10 dB), every label and every caption token.
// The registry's Run refuses a TinyMLLM target, and a bad option is an
// error.
func TestUploadAttack(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT, c.ImageEncoder = nn.PEFT{}, "mlp"
	m, err := nn.NewFusion(c)
	if err != nil {
		t.Fatal(err)
	}
	d := *smokeData(t)
	d.Private = nil
	count := map[int]int{}
	for _, e := range smokeData(t).Private {
		if e.Client >= 0 && count[e.Client] < 4 {
			count[e.Client]++
			d.Private = append(d.Private, e)
		}
	}
	h, err := methods.ResolveAt("fedavg", "smoke", math.Inf(1), map[string]any{"rounds": 2, "local_steps": 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := methods.FedAvg{}.FineTune(context.Background(), &methods.Job{Model: m, Data: &d, Hyper: h, Epsilon: math.Inf(1), Delta: 1e-5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	var pub [][]float32
	for _, e := range d.Public {
		pub = append(pub, e.Images[0])
	}
	a, err := attacks.Configure("gia-upload", map[string][]string{"trials": {"3"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.(UploadAttack).RunUploads(context.Background(), res.Upload, d.Private, pub)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results
	if r["gia_upload_psnr"] < 40 || r["gia_upload_ssim"] < 0.99 || r["gia_upload_trr"] != 1 || r["gia_upload_label_acc"] != 1 {
		t.Errorf("fedavg upload control: %v; want PSNR ≥ 40 dB, SSIM ≥ 0.99, TRR 1, label accuracy 1", r)
	}
	if r["gia_upload_baseline_psnr"] > 20 {
		t.Errorf("mean-image baseline %.2f dB, want well below the reconstruction", r["gia_upload_baseline_psnr"])
	}
	if len(rep.Images) != 2 {
		t.Errorf("%d images, want the first trial's original and reconstruction", len(rep.Images))
	}
	if _, err := a.Run(context.Background(), &attacks.Target{}); err == nil || !strings.Contains(err.Error(), "client uploads") {
		t.Errorf("Run on a TinyMLLM target: got %v, want a refusal", err)
	}
	if _, err := attacks.Configure("gia-upload", map[string][]string{"trials": {"0"}}); err == nil {
		t.Errorf("trials 0: no error")
	}
	if _, err := (UploadAttack{Trials: 1000}).RunUploads(context.Background(), res.Upload, d.Private, pub); err == nil {
		t.Errorf("1000 trials on %d examples: no error", len(d.Private))
	}
}
