// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math/rand/v2"
)

// VisionEncoder is a ViT: patchify, a linear patch embedding (a Linear whose
// weight [width, C·p·p] is the Conv2d weight [width, C, p, p] with stride p),
// a learned [CLS] token and position embeddings, then pre-LN bidirectional
// transformer blocks and a final LayerNorm.
type VisionEncoder struct {
	Channels, ImageSize, Patch int
	PatchEmbed                 *Linear
	CLS, Pos                   *Param
	Stack                      *Stack
}

func newVisionEncoder(name string, c Config, rng *rand.Rand) *VisionEncoder {
	n := c.Patches()
	v := &VisionEncoder{Channels: c.Channels, ImageSize: c.ImageSize, Patch: c.Patch,
		PatchEmbed: newLinear(name+".patch", c.Channels*c.Patch*c.Patch, c.VisionWidth, true, KindWeight, rng, 0.02),
		CLS:        newParam(name+".cls", KindEmbedding, 1, c.VisionWidth),
		Pos:        newParam(name+".pos", KindEmbedding, n+1, c.VisionWidth),
	}
	v.CLS.initNormal(rng, 0.02)
	v.Pos.initNormal(rng, 0.02)
	v.Stack = newStack(name, c.VisionWidth, c.VisionLayers, c.VisionHeads, c.MLPRatio, false, c.Dropout, rng)
	return v
}

// Params returns the encoder's tensors.
func (v *VisionEncoder) Params() []*Param {
	ps := append(v.PatchEmbed.Params(), v.CLS, v.Pos)
	return append(ps, v.Stack.Params()...)
}

// checkImage reports whether img has the encoder's input size.
func (v *VisionEncoder) checkImage(img []float32) error {
	if want := v.Channels * v.ImageSize * v.ImageSize; len(img) != want {
		return fmt.Errorf("nn: image has %d values, want %d (%d×%d×%d)", len(img), want, v.Channels, v.ImageSize, v.ImageSize)
	}
	return nil
}

// Forward encodes the image node img (shape [C, H, W]) into n+1 tokens
// ([CLS] first), shape [n+1, width], after the final LayerNorm. It also
// returns the attention probabilities [heads, n+1, n+1] of block probsLayer
// (an empty tensor when probsLayer is out of range).
func (v *VisionEncoder) Forward(t *Tape, img *Node, probsLayer int, h *Hooks) (*Node, Tensor) {
	x := v.PatchEmbed.Forward(t, t.Patchify(img, v.Patch), h)
	x = t.Concat(t.Param(v.CLS), x)
	x = t.Add(x, t.Param(v.Pos))
	return v.Stack.Forward(t, x, probsLayer, h)
}

// imageNode wraps an image in CHW order as a tape input.
func (v *VisionEncoder) imageNode(t *Tape, img []float32, needGrad bool) *Node {
	return t.Input(Tensor{Shape: []int{v.Channels, v.ImageSize, v.ImageSize}, Data: img}, needGrad)
}

// ViT is an image classifier: a VisionEncoder and a linear head on the
// [CLS] token (SPARTA's model).
type ViT struct {
	Config Config
	Vision *VisionEncoder
	Head   *Linear
}

// NewViT returns a ViT with initial values drawn from cfg.Seed and the
// fine-tuning of cfg.PEFT applied. It uses the vision fields and Classes.
func NewViT(cfg Config) (*ViT, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkVision(); err != nil {
		return nil, err
	}
	if cfg.Classes <= 1 {
		return nil, fmt.Errorf("nn: a classifier needs at least 2 classes, got %d", cfg.Classes)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	m := &ViT{Config: cfg, Vision: newVisionEncoder("vision", cfg, rng)}
	m.Head = newLinear("head", cfg.VisionWidth, cfg.Classes, true, KindHead, rng, 0.02)
	if _, err := m.SetPEFT(cfg.PEFT); err != nil {
		return nil, err
	}
	return m, nil
}

// Params returns every tensor of the model.
func (m *ViT) Params() []*Param { return append(m.Vision.Params(), m.Head.Params()...) }

// SetPEFT adds the modules of p, marks the trainable tensors, records p in
// m.Config and returns the layout of the trainable tensors. The only part is
// "vision"; the head is trainable unless p.Method is none.
func (m *ViT) SetPEFT(p PEFT) (*Layout, error) {
	parts := []part{{name: "vision", stacks: []*Stack{m.Vision.Stack}, params: m.Vision.Params}}
	err := applyPEFT(p, m.Config.PEFT, m.Config.Seed, parts, func(string) []string { return []string{"vision"} }, m.Head.Params(), m.Params)
	if err != nil {
		return nil, err
	}
	m.Config.PEFT = p
	return NewLayout(m.Params()), nil
}

// Logits returns the class logits of one image, shape [1, classes]. With
// needGrad, the image node's Grad receives the input gradient after Backward.
func (m *ViT) Logits(t *Tape, img []float32, needGrad bool, h *Hooks) (*Node, *Node, error) {
	if err := m.Vision.checkImage(img); err != nil {
		return nil, nil, err
	}
	in := m.Vision.imageNode(t, img, needGrad)
	x, _ := m.Vision.Forward(t, in, -1, h)
	return m.Head.Forward(t, t.Slice(x, 0, 1), h), in, nil
}

// Loss returns the cross-entropy of one labelled image.
func (m *ViT) Loss(t *Tape, img []float32, label int, h *Hooks) (*Node, error) {
	return imageLoss(m, m.Config.Classes, t, img, label, h)
}

// Predict returns the class probabilities of one image and the most likely
// class (lowest index on ties), computed without gradients.
func (m *ViT) Predict(img []float32) (int, []float64, error) { return imagePredict(m, img) }

func argmaxProbs(z []float32) (int, []float64, error) {
	p := make([]float32, len(z))
	softmaxRow(z, p)
	out := make([]float64, len(z))
	best := 0
	for i, v := range p {
		out[i] = float64(v)
		if z[i] > z[best] {
			best = i
		}
	}
	return best, out, nil
}

// An imageClassifier maps one image to its class logits (ViT, CNN).
type imageClassifier interface {
	Logits(t *Tape, img []float32, needGrad bool, h *Hooks) (*Node, *Node, error)
}

// imageLoss returns the cross-entropy of one image of m, labelled label
// among classes; a label out of range is an error before any work.
func imageLoss(m imageClassifier, classes int, t *Tape, img []float32, label int, h *Hooks) (*Node, error) {
	if label < 0 || label >= classes {
		return nil, fmt.Errorf("nn: label %d out of range [0, %d)", label, classes)
	}
	z, _, err := m.Logits(t, img, false, h)
	if err != nil {
		return nil, err
	}
	return t.CrossEntropy(z, []int{label}, nil), nil
}

// imagePredict returns the class probabilities of one image of m and the
// most likely class (lowest index on ties), computed without gradients.
func imagePredict(m imageClassifier, img []float32) (int, []float64, error) {
	z, _, err := m.Logits(NewTape(nil, nil), img, false, nil)
	if err != nil {
		return 0, nil, err
	}
	return argmaxProbs(z.Value.Data)
}
