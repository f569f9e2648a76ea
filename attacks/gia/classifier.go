// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/nn"
)

// ClassifierGrad returns the GradFunc of the cross-entropy of the image
// classifier m on one image of class label, over layout l.
func ClassifierGrad(m attacks.Classifier, l *nn.Layout, label int) GradFunc {
	return func(x, gtheta, gx []float32) (float64, error) {
		t := gradTape(l, gtheta)
		z, in, err := m.Logits(t, x, gx != nil, nil)
		if err != nil {
			return 0, err
		}
		loss := t.CrossEntropy(z, []int{label}, nil)
		t.Backward(loss)
		if gx != nil {
			clear(gx)
			if in.Grad != nil {
				copy(gx, in.Grad)
			}
		}
		return float64(loss.Value.Data[0]), nil
	}
}

// maskedGrad returns f with its parameter gradient multiplied by the
// element mask (nil: f itself): the candidate gradient of a release that
// leaves the masked-out coordinates out (methods.Release.Mask). The
// gradient-matching distance's derivative in a coordinate that is zero in
// both the candidate and the release is zero, so the masked objective's
// Hessian-vector product needs no mask of its own.
func maskedGrad(f GradFunc, mask []float32) GradFunc {
	if mask == nil {
		return f
	}
	return func(x, gtheta, gx []float32) (float64, error) {
		loss, err := f(x, gtheta, gx)
		if err == nil && gtheta != nil {
			nn.ApplyMask(gtheta, mask)
		}
		return loss, err
	}
}

// pieceLinearStep is GradientMatch's step on a piecewise-linear model
// (the fusion classifier's encoder is checked at it,
// TestGradientMatchConvMatch).
const pieceLinearStep = 1e-5

// headBias returns the classifier head's bias among l's tensors (a
// one-dimensional tensor of kind head), or nil.
func headBias(l *nn.Layout) *nn.Param {
	for _, p := range l.Params {
		if p.Kind == nn.KindHead && len(p.Shape) == 1 {
			return p
		}
	}
	return nil
}

// AttackClassifier attacks the update g (over layout l, masked to mask
// when not nil) that a method released for batch on the image
// classifier m. Threat model: the attacker knows the weights and the
// release mechanism, not the labels: it reads them from the head bias's
// gradient when the release carries it (iDLG for a batch of one, the
// sign rule beyond; label 0 otherwise). It recovers the images by
// Inverting Gradients (Geiping et al. 2020): GradientMatch's cosine
// distance between the candidate batch's summed gradient (masked as the
// release is; per-example clipping modelled for B = 1, opt.Clip) and the
// release over the released tensors, minimised over the coordinates of
// prior when there is one (a ViT's EmbeddingPrior: the part of the image
// its patch embedding sees), else, for B = 1, over the pixels (Invert,
// from opt.Init when set; the finite-difference step of a model other
// than a ViT is pieceLinearStep, for ReLU networks). The reconstructions are scored after
// Hungarian matching. The model's parameters are perturbed and restored
// during the attack, so m must not be used concurrently.
func AttackClassifier(m attacks.Classifier, l *nn.Layout, g, mask []float32, batch Batch, prior *EmbeddingPrior, opt *InvertOptions) (*Outcome, error) {
	start := time.Now()
	b := len(batch.Images)
	_, c := m.Describe()
	if b == 0 {
		return nil, fmt.Errorf("gia: the classifier attack on an empty batch")
	}
	if b > 1 && prior == nil {
		return nil, fmt.Errorf("gia: the classifier attack on a batch of %d needs a prior", b)
	}
	o := &Outcome{TRR: math.NaN(), PositionTRR: math.NaN(), LabelAcc: math.NaN(), FeatDist: math.NaN()}
	o.Labels = labels(block(l, g, headBias(l)), b)
	if o.Labels == nil {
		o.Labels = make([]int, b)
	}
	if batch.Labels != nil {
		o.LabelAcc = LabelAccuracy(o.Labels, batch.Labels)
	}
	fs := make([]GradFunc, b)
	for i := range fs {
		fs[i] = ClassifierGrad(m, l, o.Labels[i])
	}
	f := fs[0]
	if b > 1 {
		f = SumGrad(fs, len(batch.Images[0]))
	}
	gm, err := NewGradientMatch(l, maskedGrad(f, mask), g)
	if err != nil {
		return nil, err
	}
	if arch, _ := m.Describe(); arch != "vit" {
		// A convolutional classifier is piecewise linear (ReLU, max
		// pooling): the Hessian-vector product's step must cross no
		// activation switch (GradientMatch.Step).
		gm.Step = pieceLinearStep
	}
	if opt != nil {
		gm.L2 = opt.L2
		if b == 1 {
			gm.Clip = opt.Clip
		}
	}
	obj := finiteObjective(gm.Objective)
	var imgs [][]float32
	if prior != nil {
		imgs, o.Match, err = InvertPriorBatch(obj, prior, b, opt)
	} else {
		var img []float32
		img, o.Match, err = Invert(obj, c.Channels, c.ImageSize, c.ImageSize, opt)
		imgs = [][]float32{img}
	}
	if err != nil {
		return nil, err
	}
	if err := o.Score(imgs, batch.Images, c.Channels, c.ImageSize, c.ImageSize); err != nil {
		return nil, err
	}
	o.Elapsed = time.Since(start)
	return o, nil
}

// finiteObjective returns obj with a non-finite value replaced by 2,
// the largest cosine distance, and its gradient by zero: a candidate
// whose gradient vanishes (a model so sure of the recovered label that
// its cross-entropy's gradient underflows, as noisy training can leave
// it) matches nothing, and the inversion stays where it is instead of
// turning the image into NaNs.
func finiteObjective(obj Objective) Objective {
	return func(x, grad []float32) (float64, error) {
		v, err := obj(x, grad)
		if err != nil {
			return v, err
		}
		bad := math.IsNaN(v) || math.IsInf(v, 0)
		for _, g := range grad {
			if bad {
				break
			}
			bad = math.IsNaN(float64(g)) || math.IsInf(float64(g), 0)
		}
		if bad {
			clear(grad)
			return 2, nil
		}
		return v, nil
	}
}

// runClassifier is Run on a classifier target: for each batch size and
// trial, the update the target's method releases for a batch of its
// private examples at the trained weights (Release with the method's
// clip, noise and mask), attacked by AttackClassifier over the
// EmbeddingPrior of a ViT's vision encoder fitted to the public images
// (over the pixels for another classifier, batches of 1 only), with the
// public mean image as the data-independent baseline.
func (a Attack) runClassifier(ctx context.Context, t *attacks.Target) (*attacks.Report, error) {
	m := t.Classifier
	_, cf := m.Describe()
	var pub [][]float32
	for _, e := range t.Public {
		if len(e.Seq.Images) > 0 {
			pub = append(pub, e.Seq.Images[0])
		}
	}
	if len(pub) < 2 {
		return nil, fmt.Errorf("gia: the classifier attack needs at least 2 public images, got %d", len(pub))
	}
	var vision *nn.VisionEncoder
	var prior *EmbeddingPrior
	if v, ok := m.(*nn.ViT); ok {
		vision = v.Vision
		var err error
		if prior, err = NewEmbeddingPrior(v.Vision, pub); err != nil {
			return nil, err
		}
	}
	mean := MeanImage(pub)
	l := nn.NewLayout(m.Params())
	var mask []float32
	if t.Release.Mask != nil {
		mask = t.Release.Mask(l)
	}
	trials := cmp.Or(a.Trials, 1)
	rep := &attacks.Report{Results: map[string]float64{}, Images: map[string][]byte{}}
	for _, b := range a.batches() {
		if b*trials > len(t.Members) {
			return nil, fmt.Errorf("gia: %d batches of %d need more than the %d private examples", trials, b, len(t.Members))
		}
		if b > 1 && prior == nil {
			arch, _ := m.Describe()
			return nil, fmt.Errorf("gia: a batch of %d on a %s needs a prior, which only a ViT has", b, arch)
		}
		c := cell{prefix: "gia_b" + strconv.Itoa(b) + "_", mean: mean}
		for k := range trials {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var bt Batch
			for _, e := range t.Members[k*b : (k+1)*b] {
				if len(e.Seq.Images) != 1 {
					return nil, fmt.Errorf("gia: example %d has %d images, the attack takes one", e.ID, len(e.Seq.Images))
				}
				bt.Images = append(bt.Images, e.Seq.Images[0])
				bt.Labels = append(bt.Labels, e.Label)
			}
			seed := uint64(0x676961)<<20 ^ uint64(b)<<10 ^ uint64(k)
			res, err := nn.PerSample(l, b, func(tp *nn.Tape, i int) (*nn.Node, error) {
				z, _, err := m.Logits(tp, bt.Images[i], false, nil)
				if err != nil {
					return nil, err
				}
				return tp.CrossEntropy(z, []int{bt.Labels[i]}, nil), nil
			}, nil)
			if err != nil {
				return nil, err
			}
			mech := MechanismOf(t.Release, seed)
			mech.Mask = mask
			g, err := Release(l, res.Grads, mech)
			if err != nil {
				return nil, err
			}
			opt := a.invertOptions(seed)
			opt.Clip = t.Release.Rule
			out, err := AttackClassifier(m, l, g, mask, bt, prior, opt)
			if err != nil {
				return nil, err
			}
			if err := c.score(vision, cf, bt, out); err != nil {
				return nil, err
			}
			if k == 0 {
				if err := addImages(rep.Images, b, cf, bt.Images, out.Images); err != nil {
					return nil, err
				}
			}
		}
		c.record(rep.Results, trials, b)
	}
	return rep, nil
}
