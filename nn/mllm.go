// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Sequence is one multimodal example. Every TokenImage (<image>) in Tokens is
// replaced by the visual tokens of the next image of Images, in order, so
// len(Images) must equal the number of placeholders. Images are
// Channels×ImageSize×ImageSize, channel-major, in [0, 1].
//
// Loss marks the tokens whose prediction is trained (the answer tokens):
// Loss[i] true means token i is predicted from everything before it
// (next-token cross-entropy). It may be nil for inference; when set it has
// len(Tokens) entries, and a marked token cannot be a placeholder or the
// first token.
type Sequence struct {
	Tokens []int
	Images [][]float32
	Loss   []bool
}

// VisualTransform is the visual-token transform slot between the vision
// encoder and the projector. It gets the n+1 encoder tokens of one image
// (row 0 is [CLS]) and the [CLS] row of the attention probabilities of the
// configured vision block, shape [heads, n+1] (column 0 is [CLS] attending
// to itself), and returns the map to the tokens the projector sees (fewer
// for pruning). Index is the image's position in its sequence. Both tensors
// are read-only. PerSample and Gradient call it from several goroutines at
// once, so it must be safe for concurrent use; the returned map is used
// again by the backward pass, so it must not be changed afterwards.
type VisualTransform func(index int, tokens, clsAttn Tensor) TokenMix

// TinyMLLM is the shared LLaVA-shaped model: a ViT vision
// encoder with [CLS], a visual-token transform slot, a 2-layer MLP projector
// from vision to LM width (LLaVA-1.5), and a causal pre-LN decoder language
// model with token and position embeddings, a final LayerNorm and a head tied
// to the token embedding.
type TinyMLLM struct {
	Config Config
	Vision *VisionEncoder
	Proj1  *Linear
	Proj2  *Linear
	// Pos is nil with rotary positions (Config.Positions "rope").
	Tok, Pos *Param
	LM       *Stack
	// Steer, when not nil, is the head intervention every forward pass of
	// the language model applies (see Steering); nil: none.
	Steer      *Steering
	clsLayerIx int
}

// NewTinyMLLM returns the model of cfg with initial values drawn from
// cfg.Seed and cfg.PEFT applied. It returns an error for an invalid
// configuration.
func NewTinyMLLM(cfg Config) (*TinyMLLM, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkVision(); err != nil {
		return nil, err
	}
	if err := cfg.checkText(); err != nil {
		return nil, err
	}
	if cfg.MaxLen <= cfg.Patches()+1 {
		return nil, fmt.Errorf("nn: max length %d cannot hold one image's %d visual tokens", cfg.MaxLen, cfg.Patches()+1)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	m := &TinyMLLM{Config: cfg}
	m.Vision = newVisionEncoder("vision", cfg, rng)
	m.Proj1 = newLinear("projector.fc1", cfg.VisionWidth, cfg.Width, true, KindWeight, rng, 0.02)
	m.Proj2 = newLinear("projector.fc2", cfg.Width, cfg.Width, true, KindWeight, rng, 0.02)
	m.Tok = newParam("lm.tok", KindEmbedding, cfg.Vocab, cfg.Width)
	m.Tok.initNormal(rng, 0.02)
	rope := cfg.Positions == "rope"
	if !rope {
		m.Pos = newParam("lm.pos", KindEmbedding, cfg.MaxLen, cfg.Width)
		m.Pos.initNormal(rng, 0.02)
	}
	m.LM = newStack("lm", cfg.Width, cfg.Layers, cfg.Heads, cfg.MLPRatio, true, cfg.Dropout, rng)
	for _, b := range m.LM.Blocks {
		b.Rotary = rope
		if cfg.SmearKeys {
			// Logit 0: every key starts as the mean of its own and the
			// previous token's.
			b.Smear = newParam(b.Name+".attn.smear", KindSmear, cfg.Heads)
		}
	}
	m.clsLayerIx = max(cfg.VisionLayers-cfg.CLSAttnLayer, 0)
	if _, err := m.SetPEFT(cfg.PEFT); err != nil {
		return nil, err
	}
	if err := checkNames(m.Params()); err != nil {
		return nil, err
	}
	return m, nil
}

// Params returns every tensor of the model in a fixed order: vision,
// projector, language model.
func (m *TinyMLLM) Params() []*Param {
	ps := m.Vision.Params()
	ps = append(ps, m.Proj1.Params()...)
	ps = append(ps, m.Proj2.Params()...)
	return append(ps, m.embeddings()...)
}

// embeddings returns the language model's tensors: the token and (with
// learned positions) position embeddings, then the blocks.
func (m *TinyMLLM) embeddings() []*Param {
	ps := []*Param{m.Tok}
	if m.Pos != nil {
		ps = append(ps, m.Pos)
	}
	return append(ps, m.LM.Params()...)
}

// CLSAttnLayer returns the index of the vision block whose [CLS] attention
// the visual transform receives.
func (m *TinyMLLM) CLSAttnLayer() int { return m.clsLayerIx }

// SetCLSAttnLayer selects the vision block whose [CLS] attention the
// visual transform receives, counted from the end as Config.CLSAttnLayer
// is (1 the last block, 2 the penultimate; clamped to the first block),
// records it in m.Config and returns the block's index.
func (m *TinyMLLM) SetCLSAttnLayer(fromEnd int) (int, error) {
	if fromEnd < 1 {
		return 0, fmt.Errorf("nn: [CLS] attention layer %d counted from the end must be positive", fromEnd)
	}
	m.Config.CLSAttnLayer = fromEnd
	m.clsLayerIx = max(m.Config.VisionLayers-fromEnd, 0)
	return m.clsLayerIx, nil
}

// SetPEFT adds the modules of p, marks the trainable tensors, records p in
// m.Config and returns the layout of the trainable tensors. Parts are
// "vision", "projector" and "lm".
func (m *TinyMLLM) SetPEFT(p PEFT) (*Layout, error) {
	parts := []part{
		{name: "vision", stacks: []*Stack{m.Vision.Stack}, params: m.Vision.Params},
		{name: "projector", params: func() []*Param { return append(m.Proj1.Params(), m.Proj2.Params()...) }},
		{name: "lm", stacks: []*Stack{m.LM}, params: m.embeddings},
	}
	def := func(method string) []string {
		if method == "lora" || method == "adapter" {
			return []string{"lm"}
		}
		return []string{"projector", "lm"}
	}
	if err := applyPEFT(p, m.Config.PEFT, m.Config.Seed, parts, def, nil, m.Params); err != nil {
		return nil, err
	}
	m.Config.PEFT = p
	return NewLayout(m.Params()), nil
}

// Check reports whether s is a valid input for m: token ids in the
// vocabulary, one image of the right size per placeholder, a loss mask of
// the right length that marks no placeholder, and an expanded length (with
// visual tokens) of at most MaxLen when the transform keeps all tokens.
func (m *TinyMLLM) Check(s *Sequence) error {
	if len(s.Tokens) == 0 {
		return fmt.Errorf("nn: empty sequence")
	}
	nimg := 0
	for i, id := range s.Tokens {
		if id < 0 || id >= m.Config.Vocab {
			return fmt.Errorf("nn: token %d at position %d outside the vocabulary [0, %d)", id, i, m.Config.Vocab)
		}
		if id == TokenImage {
			nimg++
		}
	}
	if nimg != len(s.Images) {
		return fmt.Errorf("nn: %d <image> placeholders but %d images", nimg, len(s.Images))
	}
	for _, img := range s.Images {
		if err := m.Vision.checkImage(img); err != nil {
			return err
		}
	}
	if s.Loss != nil {
		if len(s.Loss) != len(s.Tokens) {
			return fmt.Errorf("nn: loss mask has %d entries for %d tokens", len(s.Loss), len(s.Tokens))
		}
		if s.Loss[0] {
			return fmt.Errorf("nn: the first token cannot be a target")
		}
		for i, l := range s.Loss {
			if l && s.Tokens[i] == TokenImage {
				return fmt.Errorf("nn: loss mask marks the <image> placeholder at position %d", i)
			}
		}
	}
	return nil
}

// Visual holds the visual tokens of one image at each stage.
type Visual struct {
	// Encoder is the vision encoder's output, [n+1, vision width].
	Encoder *Node
	// CLSAttn is the [CLS] row of the attention of the configured block,
	// [heads, n+1].
	CLSAttn Tensor
	// Tokens are the projected visual tokens, [k, width], in the encoder's
	// order; the language model reads them in this order, or with the
	// first row last under Config.CLSLast.
	Tokens *Node
}

// EncodeImage runs the vision encoder, the visual transform vt (identity
// when nil) and the projector on one image. index is the image's position in
// its sequence; needGrad asks for the gradient with respect to the image.
func (m *TinyMLLM) EncodeImage(t *Tape, img []float32, index int, needGrad bool, h *Hooks, vt VisualTransform) (Visual, *Node) {
	in := m.Vision.imageNode(t, img, needGrad)
	enc, probs := m.Vision.Forward(t, in, m.clsLayerIx, h)
	cls := clsRows(probs)
	return Visual{Encoder: enc, CLSAttn: cls, Tokens: m.project(t, enc, cls, index, vt, h)}, in
}

// project maps the vision encoder's output enc of the image at position
// index of its sequence, with the [CLS] attention rows cls, to the
// language model's visual tokens: the visual transform vt (none when nil;
// cls is read only by it), then the projector (Proj1, GELU, Proj2), with
// the hooks h (nil: none). enc may hold the rows of several images when vt
// is nil.
func (m *TinyMLLM) project(t *Tape, enc *Node, cls Tensor, index int, vt VisualTransform, h *Hooks) *Node {
	x := enc
	if vt != nil {
		x = t.Mix(enc, vt(index, enc.Value, cls))
	}
	return m.Proj2.Forward(t, t.geluOf(m.Proj1.Forward(t, x, h), h), h)
}

// clsRows returns the [CLS] row of every head of the attention
// probabilities probs, [heads, n+1, n+1]: shape [heads, n+1].
func clsRows(probs Tensor) Tensor {
	heads, n1 := probs.Shape[0], probs.Shape[1]
	cls := NewTensor(heads, n1)
	for hh := 0; hh < heads; hh++ {
		copy(cls.Data[hh*n1:(hh+1)*n1], probs.Data[hh*n1*n1:hh*n1*n1+n1])
	}
	return cls
}

// Forward runs the whole model on s and returns the final hidden states of
// the expanded sequence, shape [T, width] after the final LayerNorm, and
// pos, where pos[i] is the expanded position of token i (for a placeholder,
// the position of its first visual token in the language model's order:
// with Config.CLSLast the first patch, not [CLS]). vis, when not nil, holds
// precomputed visual tokens (one per image; see EncodeImage), so generation
// does not encode the images again. It returns an error if s is invalid or
// the expanded sequence is longer than MaxLen.
func (m *TinyMLLM) Forward(t *Tape, s *Sequence, vis []*Node, h *Hooks, vt VisualTransform) (*Node, []int, error) {
	m.joinPeriod(t)
	return m.forward(t, s, nil, vis, h, vt)
}

// ForwardEmbeds is Forward with the token embeddings given: row i of emb,
// shape [len(s.Tokens), Width], is the language model's input embedding of
// token i in place of lm.tok's row of s.Tokens[i] (the position embedding
// is still added; the rows at <image> placeholders are not read). The
// rows need not be rows of lm.tok: relaxed tokens, whose gradient a
// gradient-inversion attack follows (package attacks/gia). s.Tokens still
// places the images and is checked, but its other ids are not read; the
// tied head (Logits) reads lm.tok as always. It returns Forward's errors,
// or one if emb does not have that shape.
func (m *TinyMLLM) ForwardEmbeds(t *Tape, s *Sequence, emb *Node, vis []*Node, h *Hooks, vt VisualTransform) (*Node, []int, error) {
	if emb == nil || len(emb.Value.Shape) != 2 || emb.Value.Shape[0] != len(s.Tokens) || emb.Value.Shape[1] != m.Config.Width {
		return nil, nil, fmt.Errorf("nn: token embeddings do not have shape [%d, %d]", len(s.Tokens), m.Config.Width)
	}
	return m.forward(t, s, emb, vis, h, vt)
}

// forward is Forward with the token embeddings emb when not nil (see
// ForwardEmbeds).
func (m *TinyMLLM) forward(t *Tape, s *Sequence, emb *Node, vis []*Node, h *Hooks, vt VisualTransform) (*Node, []int, error) {
	if err := m.Check(s); err != nil {
		return nil, nil, err
	}
	if vis == nil {
		vis = make([]*Node, len(s.Images))
		for i, img := range s.Images {
			v, _ := m.EncodeImage(t, img, i, false, h, vt)
			vis[i] = v.Tokens
		}
	}
	x, pos, err := m.embed(t, s, vis, emb)
	if err != nil {
		return nil, nil, err
	}
	from, end := m.steerSpan(s, pos, x.Value.Rows())
	out, _ := m.LM.Forward(t, x, -1, m.steerHooks(h, []int{from}, []int{end}))
	return out, pos, nil
}

// embed returns the language model's input for s, the token embeddings
// with each image's visual tokens vis[i] in place of its placeholder (plus
// the position embeddings), shape [T, width], and pos (see Forward); the
// token embeddings are the rows of emb when not nil (ForwardEmbeds). It
// returns an error if T is longer than MaxLen.
func (m *TinyMLLM) embed(t *Tape, s *Sequence, vis []*Node, emb *Node) (*Node, []int, error) {
	var segs []*Node
	pos := make([]int, len(s.Tokens))
	T, img, start := 0, 0, 0
	flush := func(end int) {
		switch {
		case end <= start:
		case emb != nil:
			segs = append(segs, t.Slice(emb, start, end))
		default:
			segs = append(segs, t.Embed(t.Param(m.Tok), s.Tokens[start:end]))
		}
	}
	for i, id := range s.Tokens {
		pos[i] = T
		if id == TokenImage {
			flush(i)
			start = i + 1
			segs = append(segs, m.lmVisual(t, vis[img]))
			T += vis[img].Value.Rows()
			img++
			continue
		}
		T++
	}
	flush(len(s.Tokens))
	if T > m.Config.MaxLen {
		return nil, nil, fmt.Errorf("nn: sequence of %d tokens (with visual tokens) longer than the maximum %d", T, m.Config.MaxLen)
	}
	x := segs[0]
	if len(segs) > 1 {
		x = t.Concat(segs...)
	}
	if m.Pos != nil {
		x = t.Add(x, t.Slice(t.Param(m.Pos), 0, T))
	}
	return x, pos, nil
}

// lmVisual returns one image's visual tokens in the order the language
// model reads them: as they are, or with the first row moved to the end
// (Config.CLSLast).
func (m *TinyMLLM) lmVisual(t *Tape, v *Node) *Node {
	n := v.Value.Rows()
	if !m.Config.CLSLast || n < 2 {
		return v
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = (i + 1) % n
	}
	return t.Gather(v, idx)
}

// Logits returns the next-token logits, shape [len(rows), vocab], at the
// given rows of the hidden states hid.
func (m *TinyMLLM) Logits(t *Tape, hid *Node, rows []int) *Node {
	return t.Affine(t.Gather(hid, rows), t.Param(m.Tok), nil)
}

// Loss returns the mean next-token cross-entropy over the tokens s.Loss
// marks. It returns an error if s is invalid or marks no token.
func (m *TinyMLLM) Loss(t *Tape, s *Sequence, h *Hooks, vt VisualTransform) (*Node, error) {
	return m.loss(t, s, nil, h, vt)
}

// loss is Loss with the visual tokens vis when not nil (see Forward).
func (m *TinyMLLM) loss(t *Tape, s *Sequence, vis []*Node, h *Hooks, vt VisualTransform) (*Node, error) {
	if s.Loss == nil || !slices.Contains(s.Loss, true) {
		return nil, fmt.Errorf("nn: sequence has no loss positions")
	}
	hid, pos, err := m.Forward(t, s, vis, h, vt)
	if err != nil {
		return nil, err
	}
	var rows, targets []int
	for i, l := range s.Loss {
		if l {
			rows = append(rows, pos[i]-1)
			targets = append(targets, s.Tokens[i])
		}
	}
	return t.CrossEntropy(m.Logits(t, hid, rows), targets, nil), nil
}

// TokenLosses returns the cross-entropy of every token s.Loss marks (in
// token order) and the logits over the whole vocabulary at the positions that
// predict them, shape [marked, vocab], computed without gradients: the
// per-token scores membership-inference attacks use.
func (m *TinyMLLM) TokenLosses(s *Sequence, h *Hooks, vt VisualTransform) (losses []float64, logits Tensor, err error) {
	if h == nil && m.Steer == nil && slices.Contains(s.Loss, true) {
		return m.tokenLosses(s, vt)
	}
	t := NewTape(nil, nil)
	hid, pos, err := m.Forward(t, s, nil, h, vt)
	if err != nil {
		return nil, Tensor{}, err
	}
	var rows, targets []int
	for i, l := range s.Loss {
		if l {
			rows = append(rows, pos[i]-1)
			targets = append(targets, s.Tokens[i])
		}
	}
	z := m.Logits(t, hid, rows)
	return rowLosses(z.Value, targets), z.Value, nil
}

// tokenLosses is TokenLosses without hooks or steering, for a sequence
// that marks a token, on an inference tape (infer.go), the language
// model's last block run on the rows that predict the marked tokens only
// (Block.forward's keep): the same bits.
func (m *TinyMLLM) tokenLosses(s *Sequence, vt VisualTransform) ([]float64, Tensor, error) {
	if err := m.Check(s); err != nil {
		return nil, Tensor{}, err
	}
	t := newInferTape(m.packPeriod())
	defer t.Release()
	vis := make([]*Node, len(s.Images))
	for i, img := range s.Images {
		v, _ := m.EncodeImage(t, img, i, false, nil, vt)
		vis[i] = v.Tokens
	}
	x, pos, err := m.embed(t, s, vis, nil)
	if err != nil {
		return nil, Tensor{}, err
	}
	keep := &rowKeep{}
	var targets []int
	for i, l := range s.Loss {
		if l {
			if pos[i] < 1 {
				return nil, Tensor{}, fmt.Errorf("nn: the first token cannot be a target")
			}
			keep.rows = append(keep.rows, pos[i]-1)
			targets = append(targets, s.Tokens[i])
		}
	}
	keep.off = []int{0, len(keep.rows)}
	hid, _ := m.LM.forward(t, x, nil, keep, -1, nil)
	z := t.Affine(hid, t.Param(m.Tok), nil).Value.Clone()
	return rowLosses(z, targets), z, nil
}

// rowLosses returns the cross-entropy of every row r of the logits z,
// [rows, vocab], against the token targets[r]: log Σ exp z_r − z_r[targets[r]],
// the log-sum-exp that softmaxRow returns (logSumExp), without the
// probabilities.
func rowLosses(z Tensor, targets []int) []float64 {
	V := z.Cols()
	losses := make([]float64, len(targets))
	for r, tg := range targets {
		row := z.Data[r*V : (r+1)*V]
		losses[r] = logSumExp(row) - float64(row[tg])
	}
	return losses
}

// PerSample returns the exact per-sample gradients of the batch's losses with
// respect to the parameters of l (see the package function PerSample). The
// hooks and visual transform, which may be nil, apply to every example.
//
// Without hooks, visual transform or dropout, and when the trainable tensors
// are LoRA factors, adapters or biases (LoRA, adapters or BitFit, in any
// parts), it runs the batched
// engine (batch.go): the sequences of a group of examples stacked as rows,
// so that the frozen weights see the whole group in one product per layer,
// with the same bits as one tape per example.
func (m *TinyMLLM) PerSample(l *Layout, batch []Sequence, h *Hooks, vt VisualTransform, opt *Options) (*Result, error) {
	if m.batchable(l, batch, h, vt, opt) {
		return perSampleBatched(l, len(batch), m.batchLosses(batch, m.VisualCacheFor(l, opt)), opt), nil
	}
	return PerSample(l, len(batch), func(t *Tape, i int) (*Node, error) { return m.Loss(t, &batch[i], h, vt) }, opt)
}

// Gradient returns the batch gradient (the sum of the examples' gradients)
// and the losses (see the package function Gradient).
//
// Like PerSample, it runs the batched engine where it can, with the same
// bits as one tape per example: the examples' gradients are added into
// Gradient's 16 chunks in the same order.
func (m *TinyMLLM) Gradient(l *Layout, batch []Sequence, h *Hooks, vt VisualTransform, opt *Options) ([]float32, []float64, Stats, error) {
	if m.batchable(l, batch, h, vt, opt) {
		g, losses, st := gradientBatched(l, len(batch), m.batchLosses(batch, m.VisualCacheFor(l, opt)), opt)
		return g, losses, st, nil
	}
	return Gradient(l, len(batch), func(t *Tape, i int) (*Node, error) { return m.Loss(t, &batch[i], h, vt) }, opt)
}
