// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
)

func init() { attacks.Register(UploadAttack{}) }

// UploadAttack is gradient inversion on a federated client's upload,
// registered as "gia-upload" (the MGIA setting of Sec-MMFL's threat
// model): an honest-but-curious server receives the upload of a client
// that holds one private example and takes one local step from the trained
// global model, privatised by the run's own mechanism
// (methods.FedUpload), and runs AttackFusion on it: the label from the
// head's bias gradient, the bag of caption tokens from the text.tok rows,
// the image in closed form from the mlp encoder's first layer (LinearInput)
// or by gradient matching on the CNN encoder. The attacker knows the
// weights and the caption's number of distinct tokens. It attacks the
// first trials private examples, one upload each.
//
// The pipeline runs it on federated runs (a fusion classifier); its Run,
// the registry's interface, refuses the TinyMLLM target. Results, means
// over the trials: gia_upload_psnr, gia_upload_ssim (peak 1),
// gia_upload_trr (bag-of-words token recovery rate),
// gia_upload_label_acc, gia_upload_baseline_psnr and
// gia_upload_baseline_ssim (the public mean image as the guess),
// gia_upload_seconds (wall time per upload). Images: the first trial's
// original and reconstruction, b1-orig-0 and b1-recon-0.
type UploadAttack struct {
	// Trials is the number of private examples attacked (0: 1).
	Trials int
}

// Name implements attacks.Attack.
func (UploadAttack) Name() string { return "gia-upload" }

// Options implements attacks.Optioned.
func (UploadAttack) Options() []attacks.Option {
	return []attacks.Option{
		{Name: "trials", Elem: "trials", Kind: attacks.Numbers, Doc: "private examples whose batch-1 uploads are attacked, one integer in [1, 64]",
			Check: integerIn(1, 64), Default: []string{"1"}},
	}
}

// WithOptions implements attacks.Optioned.
func (UploadAttack) WithOptions(opts map[string][]string) (attacks.Attack, error) {
	var out UploadAttack
	for name, vals := range opts {
		if name != "trials" {
			return nil, fmt.Errorf("no option %q", name)
		}
		if len(vals) != 1 {
			return nil, fmt.Errorf("option trials takes one value, got %d", len(vals))
		}
		x, err := strconv.ParseFloat(vals[0], 64)
		if err != nil || x != math.Trunc(x) {
			return nil, fmt.Errorf("option trials: %q is not an integer", vals[0])
		}
		out.Trials = int(x)
	}
	return out, nil
}

// Sets implements attacks.Optioned.
func (UploadAttack) Sets() []string { return []string{"gia_upload"} }

var uploadRE = regexp.MustCompile(`^gia_upload_`)

// Owns implements attacks.Optioned.
func (UploadAttack) Owns(metric string) bool { return uploadRE.MatchString(metric) }

// Run implements attacks.Attack: the attack needs a federated run's
// uploads (RunUploads), which a TinyMLLM target has not.
func (UploadAttack) Run(context.Context, *attacks.Target) (*attacks.Report, error) {
	return nil, fmt.Errorf("gia: gia-upload attacks a federated method's client uploads (a fusion classifier); this run has none")
}

// RunUploads attacks the uploads of up for the first Trials examples of
// private, with the mean of the public images as the data-independent
// baseline. It returns an error if there are fewer private examples than
// trials or no public image.
func (a UploadAttack) RunUploads(ctx context.Context, up *methods.FedUpload, private []datasets.Example, public [][]float32) (*attacks.Report, error) {
	trials := cmp.Or(a.Trials, 1)
	if len(private) < trials {
		return nil, fmt.Errorf("gia: %d upload trials need at least %d private examples, have %d", trials, trials, len(private))
	}
	if len(public) == 0 {
		return nil, fmt.Errorf("gia: no public image for the baseline")
	}
	m, l := up.Model, up.Layout
	c := m.Config
	mean := MeanImage(public)
	rep := &attacks.Report{Results: map[string]float64{}, Images: map[string][]byte{}}
	var psnr, ssim, trr, lab, bpsnr, bssim, sec float64
	for k := range trials {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ex := &private[k]
		g, err := up.Upload(ex, k)
		if err != nil {
			return nil, err
		}
		bt := Batch{Images: [][]float32{ex.Images[0]}, Tokens: [][]int{ex.Prompt}, Labels: []int{ex.Label}}
		distinct := map[int]bool{}
		for _, id := range ex.Prompt {
			distinct[id] = true
		}
		o, err := AttackFusion(m, l, g, bt, len(distinct), mean, &InvertOptions{Gray: true, Init: append([]float32(nil), mean...)})
		if err != nil {
			return nil, err
		}
		psnr += o.MeanPSNR()
		ssim += o.MeanSSIM()
		trr += o.TRR
		lab += o.LabelAcc
		bpsnr += min(PSNR(mean, ex.Images[0], 1), psnrCap)
		bs, err := SSIM(mean, ex.Images[0], c.Channels, c.ImageSize, c.ImageSize, 1)
		if err != nil {
			return nil, err
		}
		bssim += bs
		sec += o.Elapsed.Seconds()
		if k == 0 {
			if err := addImages(rep.Images, 1, c, bt.Images, o.Images); err != nil {
				return nil, err
			}
		}
	}
	n := float64(trials)
	for name, v := range map[string]float64{"psnr": psnr, "ssim": ssim, "trr": trr, "label_acc": lab,
		"baseline_psnr": bpsnr, "baseline_ssim": bssim, "seconds": sec} {
		rep.Results["gia_upload_"+name] = v / n
	}
	return rep, nil
}
