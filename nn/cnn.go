// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// CNN is a small convolutional image classifier, the stand-in for the
// Wide-ResNet that SPARTA fine-tunes besides the ViT:
//
//   - blocks: for each width of CNNWidths(cfg), a 3×3 Conv2d (padding 1,
//     with bias), a group normalisation of cfg.ConvGroups groups when it
//     is positive, ReLU and 2×2 max pooling;
//   - global average pooling over space, a LayerNorm of the pooled
//     features and a linear head.
//
// Every convolution weight [out, in, 3, 3] is one row per output filter,
// the rows SPARTA scores. Parameter names are cnn.conv<i>.{weight,bias},
// cnn.gn<i>.{weight,bias} (the block norms, when cfg.ConvGroups > 0),
// cnn.norm.{weight,bias} and head.{weight,bias}.
type CNN struct {
	Config Config
	Convs  []*Conv
	// GNs are the blocks' group norms (nil without ConvGroups): each
	// width's gain and bias, a LayerNorm's tensors applied by
	// Tape.GroupNorm.
	GNs  []*LayerNorm
	Norm *LayerNorm
	Head *Linear
}

// CNNWidths returns the output channels of the CNN's convolutions for cfg:
// cfg.ConvChannels followed by twice its last width (three blocks for the
// presets: 4, 8, 16 at smoke, 16, 32, 64 at small, 32, 64, 128 at full).
func CNNWidths(cfg Config) []int {
	cfg = cfg.withDefaults()
	w := append([]int(nil), cfg.ConvChannels...)
	return append(w, 2*w[len(w)-1])
}

// NewCNN returns the CNN of cfg with initial values drawn from cfg.Seed
// and cfg.PEFT applied. It uses ImageSize, Channels, ConvChannels,
// ConvGroups, Classes and Seed.
func NewCNN(cfg Config) (*CNN, error) {
	cfg = cfg.withDefaults()
	if cfg.Classes <= 1 {
		return nil, fmt.Errorf("nn: a classifier needs at least 2 classes, got %d", cfg.Classes)
	}
	if cfg.Channels <= 0 {
		return nil, fmt.Errorf("nn: channels must be positive, got %d", cfg.Channels)
	}
	if cfg.ConvGroups < 0 {
		return nil, fmt.Errorf("nn: conv_groups must not be negative, got %d", cfg.ConvGroups)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	m := &CNN{Config: cfg}
	in, side := cfg.Channels, cfg.ImageSize
	for i, out := range CNNWidths(cfg) {
		if out <= 0 || side < 2 {
			return nil, fmt.Errorf("nn: bad convolution %d: %d channels on a %d×%d map", i, out, side, side)
		}
		name := "cnn.conv" + itoa(i)
		c := &Conv{W: newParam(name+".weight", KindWeight, out, in, 3, 3), B: newParam(name+".bias", KindBias, out), Stride: 1, Pad: 1}
		c.W.initNormal(rng, math.Sqrt(2/float64(in*9))) // He et al. 2015
		m.Convs = append(m.Convs, c)
		if g := cfg.ConvGroups; g > 0 {
			if out%g != 0 {
				return nil, fmt.Errorf("nn: conv_groups %d does not divide the %d channels of convolution %d", g, out, i)
			}
			m.GNs = append(m.GNs, newLayerNorm("cnn.gn"+itoa(i), out))
		}
		in, side = out, side/2
	}
	m.Norm = newLayerNorm("cnn.norm", in)
	m.Head = newLinear("head", in, cfg.Classes, true, KindHead, rng, 0.02)
	if _, err := m.SetPEFT(cfg.PEFT); err != nil {
		return nil, err
	}
	return m, nil
}

// Describe implements Model.
func (m *CNN) Describe() (string, Config) { return "cnn", m.Config }

// encoderParams returns the tensors of the convolutions, the block norms
// and the final norm.
func (m *CNN) encoderParams() []*Param {
	var ps []*Param
	for i, c := range m.Convs {
		ps = append(ps, c.W, c.B)
		if m.GNs != nil {
			ps = append(ps, m.GNs[i].Params()...)
		}
	}
	return append(ps, m.Norm.Params()...)
}

// Params returns every tensor: the convolutions, the norm, the head.
func (m *CNN) Params() []*Param { return append(m.encoderParams(), m.Head.Params()...) }

// SetPEFT marks the trainable tensors, records p in m.Config and returns
// the layout. The only part is "cnn"; the model has no transformer block,
// so LoRA and adapters add nothing; the head is trainable unless p.Method
// is none.
func (m *CNN) SetPEFT(p PEFT) (*Layout, error) {
	parts := []part{{name: "cnn", params: m.encoderParams}}
	def := func(string) []string { return []string{"cnn"} }
	if err := applyPEFT(p, m.Config.PEFT, m.Config.Seed, parts, def, m.Head.Params(), m.Params); err != nil {
		return nil, err
	}
	m.Config.PEFT = p
	return NewLayout(m.Params()), nil
}

// Features returns the normalised pooled features [1, width] of the image
// node x of shape [C, H, W].
func (m *CNN) Features(t *Tape, x *Node) *Node {
	for i, c := range m.Convs {
		x = c.Forward(t, x)
		if m.GNs != nil {
			n := m.GNs[i]
			x = t.GroupNorm(x, t.Param(n.G), t.Param(n.B), m.Config.ConvGroups, n.Eps)
		}
		x = t.MaxPool(t.ReLU(x), 2)
	}
	return m.Norm.Forward(t, t.AvgPool(x), nil)
}

// Logits returns the class logits of one image, shape [1, classes], and the
// image's input node. With needGrad, the image node's Grad receives the
// input gradient after Backward.
func (m *CNN) Logits(t *Tape, img []float32, needGrad bool, h *Hooks) (*Node, *Node, error) {
	c := m.Config
	if want := c.Channels * c.ImageSize * c.ImageSize; len(img) != want {
		return nil, nil, fmt.Errorf("nn: image has %d values, want %d (%d×%d×%d)", len(img), want, c.Channels, c.ImageSize, c.ImageSize)
	}
	in := t.Input(Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: img}, needGrad)
	return m.Head.Forward(t, m.Features(t, in), h), in, nil
}

// Loss returns the cross-entropy of one labelled image.
func (m *CNN) Loss(t *Tape, img []float32, label int, h *Hooks) (*Node, error) {
	return imageLoss(m, m.Config.Classes, t, img, label, h)
}

// Predict returns the class probabilities of one image and the most likely
// class (lowest index on ties), computed without gradients.
func (m *CNN) Predict(img []float32) (int, []float64, error) { return imagePredict(m, img) }
