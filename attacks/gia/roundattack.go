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
	"slices"
	"strconv"
	"time"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

func init() { attacks.Register(RoundAttack{}) }

// RoundAttack is an optimisation-based inversion with image priors of a
// federated client's whole round, registered as "gia-round" (Sec-MMFL's
// Table C, "See through Gradients" against its uploads): an
// honest-but-curious server receives the round of a client that holds one
// private example, E local steps as the method takes them from the
// trained global model, privatised by the run's own mechanism
// (methods.FedUpload.Round), and inverts it:
//
//  1. the label from the head's bias (LabelIDLG's rule on the round's
//     sum of gradients), the caption's bag of words from the text.tok rows
//     and its token order from the text.pos rows (Sequence), as gia-upload;
//  2. the image by RoundMatch (the attacker simulates the E plain SGD
//     steps of its candidate with the recovered caption and label, cosine
//     distance to the round over every released tensor) minimised by
//     InvertGroup: a group of Group reconstructions from random starts
//     with total variation, the public-statistics prior (for Yin et al.'s
//     BatchNorm prior), when Consistency > 0 group consistency, and when
//     Activity > 0 the activity prior (ActivityPrior: the image.fc units
//     whose rows the round leaves at exactly zero held inactive, the
//     others active); the first member starts at the public mean image,
//     the others at it plus uniform noise of ±0.2; the member that
//     matches the round best (its best iterate, by the matching distance
//     alone: what the attacker can see) is the reconstruction.
//
// It never reads the image's first layer in closed form: that is
// gia-upload's attack (the activity prior reads only which of its rows
// are zero). The attacker knows the weights, the round's local
// steps and learning rate, and the caption's number of distinct tokens.
// It is deterministic: one goroutine, starts seeded by the trial.
//
// Results, means over the trials: gia_round_psnr, gia_round_ssim,
// gia_round_trr, gia_round_label_acc, gia_round_distance (the matching
// distance at the reconstruction), gia_round_baseline_psnr and
// gia_round_baseline_ssim (the public mean image as the guess),
// gia_round_seconds; with Activity > 0, gia_round_pinned (the share of
// trials whose round revealed a pattern: 0 for a noised round) and, over
// those, gia_round_active_units (units shown active),
// gia_round_violations and gia_round_true_violations (units whose
// activity at the reconstruction, and at the true image, differs from the
// pattern). Images: the first trial's original and
// reconstruction, round-b1-orig-0 and round-b1-recon-0 (beside
// gia-upload's b1-orig-0 and b1-recon-0 in the same run).
type RoundAttack struct {
	// Trials is the number of private examples attacked (0: 1),
	// Iterations Adam's iterations (0: 400) and Group the group size
	// (0: 4).
	Trials, Iterations, Group int
	// Consistency is the weight α of the group-consistency prior
	// (GroupOptions.Consistency; 0: none, the default: on the trained
	// smoke models it pulled the members into one poor minimum more often
	// than it helped, docs/secmmfl.md).
	Consistency float64
	// Activity is the weight of the first-layer activity prior
	// (ActivityPrior, GroupOptions.Activity; 0: none, the default): the
	// image encoder's image.fc units that the round shows as inactive (zero
	// rows) are held inactive and the others active. It is on only where
	// the round reveals a pattern (some rows exactly zero): a noised round
	// has none, and the attack on it is the same without it.
	Activity float64
	// PerBlock takes the cosine distance tensor by tensor and averages it
	// (GradientMatch.PerBlock) instead of over the whole round: every
	// tensor weighs the same, so image.fc, whose rows carry the image
	// itself, is not drowned by the larger text tensors.
	PerBlock bool
	// Decay divides Adam's step by 10 after 3/8, 5/8 and 7/8 of the
	// iterations (Geiping et al. 2020's schedule, GroupOptions.Decay;
	// default off).
	Decay bool
	// LR is Adam's step size (0: GroupOptions' default, 0.03).
	LR float64
}

// Name implements attacks.Attack.
func (RoundAttack) Name() string { return "gia-round" }

// Options implements attacks.Optioned.
func (RoundAttack) Options() []attacks.Option {
	return []attacks.Option{
		{Name: "trials", Elem: "trials", Kind: attacks.Numbers, Doc: "private examples whose rounds are attacked, one integer in [1, 64]",
			Check: integerIn(1, 64), Default: []string{"1"}},
		{Name: "iterations", Elem: "iterations", Kind: attacks.Numbers, Doc: "Adam iterations of the inversion, one integer in [1, 10000]",
			Check: integerIn(1, 10000), Default: []string{"400"}},
		{Name: "group", Elem: "group", Kind: attacks.Numbers, Doc: "reconstructions optimised together (See through Gradients' group), one integer in [1, 16]",
			Check: integerIn(1, 16), Default: []string{"4"}},
		{Name: "consistency", Elem: "consistency weight", Kind: attacks.Numbers, Doc: "weight α of the group-consistency prior, one number in [0, 10] (0: none)",
			Check: func(x float64) error {
				if x < 0 || x > 10 {
					return fmt.Errorf("must be in [0, 10]")
				}
				return nil
			}, Default: []string{"0"}},
		{Name: "activity", Elem: "activity weight", Kind: attacks.Numbers, Doc: "weight of the prior that holds image.fc's ReLU pattern to the one the round's zero rows reveal, one number in [0, 100] (0: none)",
			Check: func(x float64) error {
				if x < 0 || x > 100 {
					return fmt.Errorf("must be in [0, 100]")
				}
				return nil
			}, Default: []string{"0"}},
		{Name: "perblock", Elem: "perblock", Kind: attacks.Numbers, Doc: "1: the cosine distance tensor by tensor, averaged over the round's tensors; 0 (default): over the whole round",
			Check: integerIn(0, 1), Default: []string{"0"}},
		{Name: "lr", Elem: "learning rate", Kind: attacks.Numbers, Doc: "Adam's step size, one number in (0, 1] (default 0.03)",
			Check: func(x float64) error {
				if !(x > 0 && x <= 1) {
					return fmt.Errorf("must be in (0, 1]")
				}
				return nil
			}, Default: []string{"0.03"}},
		{Name: "decay", Elem: "decay", Kind: attacks.Numbers, Doc: "1: Adam's step divided by 10 after 3/8, 5/8 and 7/8 of the iterations; 0 (default): constant",
			Check: integerIn(0, 1), Default: []string{"0"}},
	}
}

// WithOptions implements attacks.Optioned.
func (RoundAttack) WithOptions(opts map[string][]string) (attacks.Attack, error) {
	var out RoundAttack
	for name, vals := range opts {
		if len(vals) != 1 {
			return nil, fmt.Errorf("option %s takes one value, got %d", name, len(vals))
		}
		x, err := strconv.ParseFloat(vals[0], 64)
		if name == "consistency" {
			if err != nil || !(x >= 0 && x <= 10) {
				return nil, fmt.Errorf("option consistency: %q is not a number in [0, 10]", vals[0])
			}
			out.Consistency = x
			continue
		}
		if name == "perblock" || name == "decay" {
			if err != nil || (x != 0 && x != 1) {
				return nil, fmt.Errorf("option %s: %q is not 0 or 1", name, vals[0])
			}
			if name == "decay" {
				out.Decay = x == 1
			} else {
				out.PerBlock = x == 1
			}
			continue
		}
		if name == "lr" {
			if err != nil || !(x > 0 && x <= 1) {
				return nil, fmt.Errorf("option lr: %q is not a number in (0, 1]", vals[0])
			}
			out.LR = x
			continue
		}
		if name == "activity" {
			if err != nil || !(x >= 0 && x <= 100) {
				return nil, fmt.Errorf("option activity: %q is not a number in [0, 100]", vals[0])
			}
			out.Activity = x
			continue
		}
		if err != nil || x != math.Trunc(x) {
			return nil, fmt.Errorf("option %s: %q is not an integer", name, vals[0])
		}
		switch name {
		case "trials":
			out.Trials = int(x)
		case "iterations":
			out.Iterations = int(x)
		case "group":
			out.Group = int(x)
		default:
			return nil, fmt.Errorf("no option %q", name)
		}
	}
	return out, nil
}

// Sets implements attacks.Optioned.
func (RoundAttack) Sets() []string { return []string{"gia_round"} }

var roundRE = regexp.MustCompile(`^gia_round_`)

// Owns implements attacks.Optioned.
func (RoundAttack) Owns(metric string) bool { return roundRE.MatchString(metric) }

// Run implements attacks.Attack: the attack needs a federated run's
// rounds (RunUploads), which a TinyMLLM target has not.
func (RoundAttack) Run(context.Context, *attacks.Target) (*attacks.Report, error) {
	return nil, fmt.Errorf("gia: gia-round attacks a federated method's client rounds (a fusion classifier); this run has none")
}

// recoverCaption reads what the round g of trial k gives away in closed
// form: the label from the head's bias, the caption's bag of words from
// the token embedding's rows and their order from the positions'. It
// returns the outcome so far and the caption the inversion assumes.
func recoverCaption(m *nn.Fusion, l *nn.Layout, g []float32, ex *datasets.Example, k int) (*Outcome, []int, error) {
	c := m.Config
	distinct := map[int]bool{}
	for _, id := range ex.Prompt {
		distinct[id] = true
	}
	o := &Outcome{TRR: math.NaN()}
	o.Labels = labels(block(l, g, m.Head.B), 1)
	o.LabelAcc = LabelAccuracy(o.Labels, []int{ex.Label})
	seq := ex.Prompt[:0:0]
	if ge := block(l, g, m.Tok); ge != nil {
		o.Tokens = BagOfWords(ge, c.Width, len(distinct))
		o.TRR = TRR(o.Tokens, [][]int{ex.Prompt})
		if gp := block(l, g, m.Pos); gp != nil {
			offset := 0
			if c.FusionMode == "early" {
				offset = 1
			}
			seq = Sequence(ge, gp, c.Width, o.Tokens, offset, 0)
		}
	}
	// The candidate's caption: the recovered order, cut to the
	// model's length; the bag when no order was recovered.
	seq = seq[:min(len(seq), c.MaxLen)]
	if len(seq) == 0 {
		seq = slices.Clone(o.Tokens[:min(len(o.Tokens), c.MaxLen)])
	}
	if len(seq) == 0 || slices.Contains(seq, -1) {
		return nil, nil, fmt.Errorf("gia: trial %d: no caption recovered", k)
	}
	return o, seq, nil
}

// RunUploads attacks the rounds of up for the first Trials examples of
// private, with the public images' mean as the baseline and their
// pixel-wise statistics as the prior. It returns an error if there are
// fewer private examples than trials, no public image, or the method
// declares no round.
func (a RoundAttack) RunUploads(ctx context.Context, up *methods.FedUpload, private []datasets.Example, public [][]float32) (*attacks.Report, error) {
	trials := cmp.Or(a.Trials, 1)
	if len(private) < trials {
		return nil, fmt.Errorf("gia: %d round trials need at least %d private examples, have %d", trials, trials, len(private))
	}
	if len(public) == 0 {
		return nil, fmt.Errorf("gia: no public image for the baseline")
	}
	if up.Round == nil {
		return nil, fmt.Errorf("gia: the method declares no client round")
	}
	m, l := up.Model, up.Layout
	c := m.Config
	mean := MeanImage(public)
	mu, sd := PixelStats(public)
	rep := &attacks.Report{Results: map[string]float64{}, Images: map[string][]byte{}}
	var psnr, ssim, trr, lab, dist, bpsnr, bssim, sec float64
	var pinned, active, viol, tviol float64 // the activity prior's rounds, active units, violations (reconstruction, truth)
	for k := range trials {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		ex := &private[k]
		g, err := up.Round(ex, k)
		if err != nil {
			return nil, err
		}
		o, seq, err := recoverCaption(m, l, g, ex, k)
		if err != nil {
			return nil, err
		}
		rm, err := NewRoundMatch(l, FusionGrad(m, l, seq, o.Labels[0]), g, up.Steps, up.LR)
		if err != nil {
			return nil, err
		}
		rm.PerBlock = a.PerBlock
		var act *ActivityPrior
		if a.Activity > 0 && m.ImgFC != nil && m.ImgFC.B != nil {
			gw, gb := block(l, g, m.ImgFC.W), block(l, g, m.ImgFC.B)
			if gw != nil && gb != nil {
				if act, err = NewActivityPrior(slices.Clone(m.ImgFC.W.Data), slices.Clone(m.ImgFC.B.Data), gw, gb); err != nil {
					return nil, err
				}
			}
		}
		img, _, d, err := InvertGroup(rm.Objective, c.Channels, c.ImageSize, c.ImageSize, &GroupOptions{
			Iterations: a.Iterations, Group: a.Group, Gray: true, Consistency: cmp.Or(a.Consistency, -1),
			Mean: mu, Std: sd, Init: mean, Spread: 0.2, Seed: uint64(k), Activity: act, ActivityWeight: a.Activity, Decay: a.Decay, LR: a.LR})
		if err != nil {
			return nil, err
		}
		if act != nil {
			pinned++
			active += float64(act.Active())
			viol += float64(act.Violations(img))
			tviol += float64(act.Violations(ex.Images[0]))
		}
		if err := o.Score([][]float32{img}, [][]float32{ex.Images[0]}, c.Channels, c.ImageSize, c.ImageSize); err != nil {
			return nil, err
		}
		psnr += o.MeanPSNR()
		ssim += o.MeanSSIM()
		trr += o.TRR
		lab += o.LabelAcc
		dist += d
		bpsnr += min(PSNR(mean, ex.Images[0], 1), psnrCap)
		bs, err := SSIM(mean, ex.Images[0], c.Channels, c.ImageSize, c.ImageSize, 1)
		if err != nil {
			return nil, err
		}
		bssim += bs
		sec += time.Since(start).Seconds()
		if k == 0 {
			imgs := map[string][]byte{}
			if err := addImages(imgs, 1, c, [][]float32{ex.Images[0]}, [][]float32{img}); err != nil {
				return nil, err
			}
			for name, p := range imgs {
				rep.Images["round-"+name] = p
			}
		}
	}
	n := float64(trials)
	for name, v := range map[string]float64{"psnr": psnr, "ssim": ssim, "trr": trr, "label_acc": lab, "distance": dist,
		"baseline_psnr": bpsnr, "baseline_ssim": bssim, "seconds": sec} {
		rep.Results["gia_round_"+name] = v / n
	}
	if a.Activity > 0 {
		rep.Results["gia_round_pinned"] = pinned / n
		if pinned > 0 {
			rep.Results["gia_round_active_units"] = active / pinned
			rep.Results["gia_round_violations"] = viol / pinned
			rep.Results["gia_round_true_violations"] = tviol / pinned
		}
	}
	return rep, nil
}
