// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Fusion is a two-encoder multimodal classifier (Sec-MMFL's model, and the
// target of gradient inversion):
//
//   - image encoder ("cnn"): for each of ConvChannels, a 3×3 Conv2d
//     (padding 1), ReLU and 2×2 max pooling; then a Linear from the
//     flattened feature map to Width; or ("mlp") a Linear image.fc from the
//     flattened image to Width, ReLU, and the Linear image.proj to Width;
//   - text encoder: token and position embeddings, bidirectional pre-LN
//     transformer blocks, a final LayerNorm and a mean over positions;
//   - late fusion (default): the head sees [image feature, text feature];
//     early fusion: the image feature is the first token of the text
//     encoder's input and the head sees the pooled text encoder output.
//
// Parameter names start with "image." and "text." (per-modality clipping
// splits on them) and "head.".
type Fusion struct {
	Config Config
	Convs  []*Conv
	// ImgFC is the first layer of the "mlp" image encoder (nil for "cnn").
	ImgFC   *Linear
	ImgProj *Linear
	Tok     *Param
	Pos     *Param
	Text    *Stack
	Head    *Linear
}

// Conv is a Conv2d layer with weight [out, in, k, k] (one row per output
// filter) and bias [out].
type Conv struct {
	W, B        *Param
	Stride, Pad int
}

// Forward applies the convolution to x of shape [C, H, W].
func (c *Conv) Forward(t *Tape, x *Node) *Node {
	return t.Conv2d(x, t.Param(c.W), t.Param(c.B), c.Stride, c.Pad)
}

// NewFusion returns the classifier of cfg with initial values drawn from
// cfg.Seed and cfg.PEFT applied.
func NewFusion(cfg Config) (*Fusion, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkText(); err != nil {
		return nil, err
	}
	if cfg.Classes <= 1 {
		return nil, fmt.Errorf("nn: a classifier needs at least 2 classes, got %d", cfg.Classes)
	}
	if cfg.FusionMode != "late" && cfg.FusionMode != "early" {
		return nil, fmt.Errorf("nn: unknown fusion mode %q (want late or early)", cfg.FusionMode)
	}
	if cfg.ImageEncoder != "" && cfg.ImageEncoder != "cnn" && cfg.ImageEncoder != "mlp" {
		return nil, fmt.Errorf("nn: unknown image encoder %q (want cnn or mlp)", cfg.ImageEncoder)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	m := &Fusion{Config: cfg}
	in, side := cfg.Channels, cfg.ImageSize
	convs := cfg.ConvChannels
	if cfg.ImageEncoder == "mlp" {
		convs = nil
		n := in * side * side
		m.ImgFC = newLinear("image.fc", n, cfg.Width, true, KindWeight, rng, math.Sqrt(2/float64(n))) // He et al. 2015
		in, side = cfg.Width, 1
	}
	for i, out := range convs {
		if out <= 0 || side < 2 {
			return nil, fmt.Errorf("nn: bad convolution %d: %d channels on a %d×%d map", i, out, side, side)
		}
		name := "image.conv" + itoa(i)
		c := &Conv{W: newParam(name+".weight", KindWeight, out, in, 3, 3), B: newParam(name+".bias", KindBias, out), Stride: 1, Pad: 1}
		c.W.initNormal(rng, math.Sqrt(2/float64(in*9))) // He et al. 2015
		m.Convs = append(m.Convs, c)
		in, side = out, side/2
	}
	m.ImgProj = newLinear("image.proj", in*side*side, cfg.Width, true, KindWeight, rng, 1/math.Sqrt(float64(in*side*side)))
	m.Tok = newParam("text.tok", KindEmbedding, cfg.Vocab, cfg.Width)
	m.Tok.initNormal(rng, 0.02)
	m.Pos = newParam("text.pos", KindEmbedding, cfg.MaxLen+1, cfg.Width)
	m.Pos.initNormal(rng, 0.02)
	m.Text = newStack("text", cfg.Width, cfg.Layers, cfg.Heads, cfg.MLPRatio, false, cfg.Dropout, rng)
	hin := cfg.Width
	if cfg.FusionMode == "late" {
		hin = 2 * cfg.Width
	}
	m.Head = newLinear("head", hin, cfg.Classes, true, KindHead, rng, 0.02)
	if _, err := m.SetPEFT(cfg.PEFT); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Fusion) imageParams() []*Param {
	var ps []*Param
	for _, c := range m.Convs {
		ps = append(ps, c.W, c.B)
	}
	if m.ImgFC != nil {
		ps = append(ps, m.ImgFC.Params()...)
	}
	return append(ps, m.ImgProj.Params()...)
}

func (m *Fusion) textParams() []*Param {
	return append([]*Param{m.Tok, m.Pos}, m.Text.Params()...)
}

// Params returns every tensor: image encoder, text encoder, head.
func (m *Fusion) Params() []*Param {
	ps := append(m.imageParams(), m.textParams()...)
	return append(ps, m.Head.Params()...)
}

// SetPEFT adds the modules of p, marks the trainable tensors, records p in
// m.Config and returns the layout. Parts are "image" and "text"; LoRA and
// adapters apply to the text encoder's blocks only (the CNN has none).
func (m *Fusion) SetPEFT(p PEFT) (*Layout, error) {
	parts := []part{
		{name: "image", params: m.imageParams},
		{name: "text", stacks: []*Stack{m.Text}, params: m.textParams},
	}
	def := func(string) []string { return []string{"image", "text"} }
	if err := applyPEFT(p, m.Config.PEFT, m.Config.Seed, parts, def, m.Head.Params(), m.Params); err != nil {
		return nil, err
	}
	m.Config.PEFT = p
	return NewLayout(m.Params()), nil
}

// Logits returns the class logits [1, classes] of an image and a token
// sequence, and the image's input node. With needGrad, the image node's Grad
// holds the gradient with respect to the image after Backward (gradient
// inversion); the gradient of the text.tok rows is the usual parameter
// gradient.
func (m *Fusion) Logits(t *Tape, img []float32, tokens []int, needGrad bool, h *Hooks) (z, imgNode *Node, err error) {
	c := m.Config
	if want := c.Channels * c.ImageSize * c.ImageSize; len(img) != want {
		return nil, nil, fmt.Errorf("nn: image has %d values, want %d", len(img), want)
	}
	if len(tokens) == 0 || len(tokens) > c.MaxLen {
		return nil, nil, fmt.Errorf("nn: text of %d tokens, want 1 to %d", len(tokens), c.MaxLen)
	}
	for i, id := range tokens {
		if id < 0 || id >= c.Vocab {
			return nil, nil, fmt.Errorf("nn: token %d at position %d outside the vocabulary [0, %d)", id, i, c.Vocab)
		}
	}
	imgNode = t.Input(Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: img}, needGrad)
	return m.LogitsFrom(t, imgNode, tokens, h), imgNode, nil
}

// LogitsFrom is Logits for an image given as a node of shape [C, H, W] (for
// example the output of an attacker's own differentiable pipeline). The
// tokens must be valid; it panics otherwise.
func (m *Fusion) LogitsFrom(t *Tape, imgNode *Node, tokens []int, h *Hooks) *Node {
	f, pooled := m.FeaturesFrom(t, imgNode, tokens, h)
	return m.HeadFrom(t, f, pooled, h)
}

// HeadFrom returns the class logits [1, classes] of the two features
// FeaturesFrom returns: the head of [img, text] under late fusion, of
// text under early fusion.
func (m *Fusion) HeadFrom(t *Tape, img, text *Node, h *Hooks) *Node {
	if m.Config.FusionMode == "late" {
		text = t.ConcatCols(img, text)
	}
	return m.Head.Forward(t, text, h)
}

// FeaturesFrom returns the two features LogitsFrom computes before the
// head, each of shape [1, Width]: the image feature (the image.proj
// output) and the text encoder's output mean-pooled over positions (under
// early fusion the image feature is its first input token). The tokens
// must be valid; it panics otherwise.
func (m *Fusion) FeaturesFrom(t *Tape, imgNode *Node, tokens []int, h *Hooks) (img, text *Node) {
	x := imgNode
	for _, cv := range m.Convs {
		x = t.MaxPool(t.ReLU(cv.Forward(t, x)), 2)
	}
	x = t.Reshape(x, 1, len(x.Value.Data))
	if m.ImgFC != nil {
		x = t.ReLU(m.ImgFC.Forward(t, x, h))
	}
	f := m.ImgProj.Forward(t, x, h)
	e := t.Embed(t.Param(m.Tok), tokens)
	if m.Config.FusionMode == "early" {
		e = t.Concat(f, e)
	}
	e = t.Add(e, t.Slice(t.Param(m.Pos), 0, e.Value.Rows()))
	enc, _ := m.Text.Forward(t, e, -1, h)
	return f, t.MeanRows(enc)
}

// Loss returns the cross-entropy of one labelled (image, text) pair.
func (m *Fusion) Loss(t *Tape, img []float32, tokens []int, label int, h *Hooks) (*Node, error) {
	if label < 0 || label >= m.Config.Classes {
		return nil, fmt.Errorf("nn: label %d out of range [0, %d)", label, m.Config.Classes)
	}
	z, _, err := m.Logits(t, img, tokens, false, h)
	if err != nil {
		return nil, err
	}
	return t.CrossEntropy(z, []int{label}, nil), nil
}

// Predict returns the class probabilities of one (image, text) pair and the
// most likely class (lowest index on ties), computed without gradients.
func (m *Fusion) Predict(img []float32, tokens []int) (int, []float64, error) {
	t := NewTape(nil, nil)
	z, _, err := m.Logits(t, img, tokens, false, nil)
	if err != nil {
		return 0, nil, err
	}
	return argmaxProbs(z.Value.Data)
}
