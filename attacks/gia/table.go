// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// A Defence is a method's release mechanism in the gia table: its name, ε
// and how it releases one update.
type Defence struct {
	Method  string
	Epsilon float64
	Mech    Mechanism
}

// Clip is the clip norm C of the private defences of the gia table, and
// Delta their δ.
const (
	Clip  = 1.0
	Delta = 1e-5
)

// Defences returns the release mechanisms of the methods that release
// updates, at each ε of epsilons (+Inf: no noise): nonprivate (the raw
// mean gradient; FedAvg's update is the same), dpsgd (clipped to Clip and
// noised) and dualpriv (dpsgd's release restricted to the top keep blocks,
// its default update ratio 0.8). The noise multiplier at ε is that of one
// analytic-Gaussian release at (ε, Delta) (privacy.AnalyticGaussianSigma):
// the least noise any Gaussian mechanism that releases this one update at
// ε can add. A method's real σ, calibrated for its whole run of many
// subsampled steps, is at least this large, so the attack sees at most as
// much signal as the table gives it.
func Defences(epsilons []float64, keep float64, seed uint64) ([]Defence, error) {
	out := []Defence{{Method: "nonprivate", Epsilon: math.Inf(1)}}
	for _, eps := range epsilons {
		var sigma float64
		if !math.IsInf(eps, 1) {
			s, err := privacy.AnalyticGaussianSigma(eps, Delta, 1)
			if err != nil {
				return nil, fmt.Errorf("gia: noise at ε = %v: %w", eps, err)
			}
			sigma = s
		}
		m := Mechanism{Rule: nn.Flat(Clip), Sigma: []float64{sigma}, Seed: seed}
		out = append(out, Defence{Method: "dpsgd", Epsilon: eps, Mech: m})
		m.Keep = keep
		out = append(out, Defence{Method: "dualpriv", Epsilon: eps, Mech: m})
	}
	return out, nil
}

// A Row is one line of the gia table: an attack on a model under a
// defence, averaged over Trials batches.
type Row struct {
	Model   string
	Defence Defence
	Batch   int
	Trials  int
	// PSNR (mean over the batches of the mean and of the max over each
	// batch), SSIM, label accuracy and TRR (NaN for the ViT) of the attack,
	// and BaselinePSNR and BaselineSSIM of the data-independent guess (the
	// public mean image) on the same images.
	PSNRMean, PSNRMax, SSIM, LabelAcc, TRR float64
	// PosTRR is the position-wise token recovery rate (batch 1 of the
	// fusion classifier; NaN otherwise).
	PosTRR                     float64
	BaselinePSNR, BaselineSSIM float64
	// FeatDist and BaselineFeat are the FeatureDistance of the attack and
	// of the baseline (NaN without TableOptions.Encoder).
	FeatDist, BaselineFeat float64
	// PerImage is the attack's wall time per image of the batch.
	PerImage time.Duration
	// Grid holds the first trial's originals and reconstructions.
	Grid [2][][]float32
}

// TableOptions configures Table. A nil *TableOptions means the defaults.
type TableOptions struct {
	// Batches are the batch sizes; default 1 and 8.
	Batches []int
	// Trials is the number of disjoint batches per cell; default 3.
	Trials int
	// Invert configures the fusion classifier's image attack.
	Invert *InvertOptions
	// ViT and Fusion are the attacked models, for example the pretrained
	// bases (pretrain.Base); Table makes every tensor trainable (SetPEFT
	// full) and releases all of them. nil: the smoke-preset models at their
	// seeded initialisation.
	ViT    *nn.ViT
	Fusion *nn.Fusion
	// Encoder, when not nil, is the vision encoder of FeatureDistance (the
	// pretrained base's); nil leaves the feature distance out (NaN).
	Encoder *nn.VisionEncoder
}

// Table runs the gia table on data d (fl-mm: images, captions, labels) for
// the ViT (PatchRecovery) and the fusion classifier (ConvMatch and
// BagOfWords) with every tensor trainable and released, at the weights of
// TableOptions (the weights the attacker knows), under every defence. No
// method of package methods fine-tunes these models: the attack on the
// methods' own (TinyMLLM LoRA) updates is the registered attack "gia"
// (Attack, experiment gia). It returns an error if d has too few private
// examples for the batches or an attack fails.
func Table(d *datasets.Dataset, defences []Defence, opt *TableOptions) ([]Row, error) {
	o := TableOptions{Batches: []int{1, 8}, Trials: 3}
	if opt != nil {
		o = *opt
	}
	vit, fus, err := tableModels(d, o)
	if err != nil {
		return nil, err
	}
	var pub [][]float32
	for _, ex := range d.Public {
		pub = append(pub, ex.Images[0])
	}
	mean := MeanImage(pub)
	var rows []Row
	for _, model := range []string{"vit", "fusion"} {
		for _, b := range o.Batches {
			if b*o.Trials > len(d.Private) {
				return nil, fmt.Errorf("gia: %d batches of %d need more than the %d private examples", o.Trials, b, len(d.Private))
			}
			for _, def := range defences {
				r, err := tableRow(d, model, vit, fus, mean, def, b, o)
				if err != nil {
					return nil, fmt.Errorf("gia: %s, %s ε=%v, batch %d: %w", model, def.Method, def.Epsilon, b, err)
				}
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}

// tableModels returns the models of the table with every tensor
// trainable: o's, or new ones of d's scale preset.
func tableModels(d *datasets.Dataset, o TableOptions) (*nn.ViT, *nn.Fusion, error) {
	full := nn.PEFT{Method: "full"}
	if o.ViT != nil && o.Fusion != nil {
		if _, err := o.ViT.SetPEFT(full); err != nil {
			return nil, nil, err
		}
		if _, err := o.Fusion.SetPEFT(full); err != nil {
			return nil, nil, err
		}
		return o.ViT, o.Fusion, nil
	}
	c, err := nn.Preset(string(d.Scale), datasets.Vocab().Len())
	if err != nil {
		return nil, nil, err
	}
	c.Classes, c.PEFT = len(d.Classes), full
	vit, err := nn.NewViT(c)
	if err != nil {
		return nil, nil, err
	}
	fus, err := nn.NewFusion(c)
	return vit, fus, err
}

// tableRow attacks o.Trials disjoint batches of b private examples.
func tableRow(d *datasets.Dataset, model string, vit *nn.ViT, fus *nn.Fusion, mean []float32, def Defence, b int, o TableOptions) (Row, error) {
	r := Row{Model: model, Defence: def, Batch: b, Trials: o.Trials}
	var elapsed time.Duration
	var trr, pos float64
	for k := range o.Trials {
		var bt Batch
		for _, ex := range d.Private[k*b : (k+1)*b] {
			bt.Images = append(bt.Images, ex.Images[0])
			bt.Tokens = append(bt.Tokens, ex.Prompt)
			bt.Labels = append(bt.Labels, ex.Label)
		}
		out, err := attackOnce(model, vit, fus, mean, def, bt, o, uint64(k))
		if err != nil {
			return r, err
		}
		var base Outcome
		c := vit.Config
		if err := base.Score(replicate(mean, b), bt.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
			return r, err
		}
		r.PSNRMean += out.MeanPSNR()
		r.PSNRMax += out.MaxPSNR()
		r.SSIM += out.MeanSSIM()
		r.LabelAcc += out.LabelAcc
		trr += out.TRR
		pos += out.PositionTRR
		r.BaselinePSNR += base.MeanPSNR()
		r.BaselineSSIM += base.MeanSSIM()
		if o.Encoder != nil {
			out.ScoreFeatures(o.Encoder, bt.Images)
			base.ScoreFeatures(o.Encoder, bt.Images)
			r.FeatDist += out.FeatDist
			r.BaselineFeat += base.FeatDist
		} else {
			r.FeatDist, r.BaselineFeat = math.NaN(), math.NaN()
		}
		elapsed += out.Elapsed
		if k == 0 {
			r.Grid = [2][][]float32{bt.Images, out.Images}
		}
	}
	n := float64(o.Trials)
	r.PSNRMean, r.PSNRMax, r.SSIM, r.LabelAcc, r.TRR = r.PSNRMean/n, r.PSNRMax/n, r.SSIM/n, r.LabelAcc/n, trr/n
	r.PosTRR = pos / n
	r.BaselinePSNR, r.BaselineSSIM = r.BaselinePSNR/n, r.BaselineSSIM/n
	r.FeatDist, r.BaselineFeat = r.FeatDist/n, r.BaselineFeat/n
	r.PerImage = elapsed / time.Duration(o.Trials*b)
	return r, nil
}

// attackOnce releases the update of bt under def and attacks it; trial
// varies the noise seed.
func attackOnce(model string, vit *nn.ViT, fus *nn.Fusion, mean []float32, def Defence, bt Batch, o TableOptions, trial uint64) (*Outcome, error) {
	mech := def.Mech
	mech.Seed = mech.Seed*1000003 + trial
	switch model {
	case "vit":
		l := nn.NewLayout(vit.Params())
		r, err := nn.PerSample(l, len(bt.Images), func(t *nn.Tape, i int) (*nn.Node, error) {
			return vit.Loss(t, bt.Images[i], bt.Labels[i], nil)
		}, nil)
		if err != nil {
			return nil, err
		}
		g, err := Release(l, r.Grads, mech)
		if err != nil {
			return nil, err
		}
		return AttackViT(vit, l, g, bt, mean)
	default:
		l := nn.NewLayout(fus.Params())
		r, err := nn.PerSample(l, len(bt.Images), func(t *nn.Tape, i int) (*nn.Node, error) {
			return fus.Loss(t, bt.Images[i], bt.Tokens[i], bt.Labels[i], nil)
		}, nil)
		if err != nil {
			return nil, err
		}
		g, err := Release(l, r.Grads, mech)
		if err != nil {
			return nil, err
		}
		// The attacker takes as many rows as the batch has distinct
		// tokens under noise (an upper bound on its knowledge); without
		// noise every non-zero row.
		n := 0
		if len(mech.Sigma) > 0 && mech.Sigma[0] > 0 {
			n = distinct(bt.Tokens)
		}
		return AttackFusion(fus, l, g, bt, n, mean, o.Invert)
	}
}

func distinct(seqs [][]int) int {
	seen := map[int]bool{}
	for _, s := range seqs {
		for _, id := range s {
			seen[id] = true
		}
	}
	return len(seen)
}

// Markdown returns rows as a Markdown table: PSNR mean and max (dB), SSIM,
// label accuracy, TRR, the mean-image baseline and the time per image.
func Markdown(rows []Row) string {
	s := "| model | method | ε | batch | PSNR mean | PSNR max | SSIM | feat. dist. | label acc | TRR | TRR (pos.) | baseline PSNR | baseline SSIM | baseline feat. | time/image |\n"
	s += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
	for _, r := range rows {
		s += fmt.Sprintf("| %s | %s | %v | %d | %.1f | %.1f | %.3f | %.3f | %s | %s | %s | %.1f | %.3f | %.3f | %v |\n",
			r.Model, r.Defence.Method, r.Defence.Epsilon, r.Batch, r.PSNRMean, r.PSNRMax, r.SSIM, r.FeatDist, dash(r.LabelAcc), dash(r.TRR), dash(r.PosTRR),
			r.BaselinePSNR, r.BaselineSSIM, r.BaselineFeat, r.PerImage.Round(time.Millisecond))
	}
	return s
}

// dash formats a rate with two decimals, or – for NaN (not applicable).
func dash(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}
