// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
)

// Hooks observe and modify a forward pass. A nil *Hooks, or a nil field, does
// nothing. Hooks run on the goroutine of the example's tape; a hook shared by
// examples running in parallel must be safe for concurrent use.
type Hooks struct {
	// Observe is called with named intermediate values: for every linear
	// map "<name>.in" (its input) and "<name>.out" (its pre-activation
	// output, before any nonlinearity; for a LoRA-adapted map also
	// "<name>.lora" = A·x), for every LayerNorm "<name>.in", and for every
	// transformer block "<name>.in" (the residual stream entering it),
	// "<name>.attn.probs" (attention probabilities, [heads, T, T]) and
	// "<name>.attn.heads" (per-head outputs before any Heads patch,
	// [T, heads·dh]). The tensor is owned by the tape; it may be kept but
	// not modified.
	Observe func(site string, x Tensor)

	// Heads is called in every attention layer with the per-head outputs
	// (shape [T, heads·dh], the input of the out-projection) of layer
	// `layer` of the stack named stack ("lm", "vision", "text"), and
	// returns patches that replace some of them before the out-projection
	// (nil for none). Patched values are constants for the backward pass.
	Heads func(stack string, layer int, heads Tensor) []HeadPatch
}

func (h *Hooks) observe(site string, x *Node) {
	if h != nil && h.Observe != nil {
		h.Observe(site, x.Value)
	}
}

// Linear is an affine map y = x·Wᵀ + b with W of shape [out, in], optionally
// adapted by LoRA: y = x·Wᵀ + b + (α/r)·(x·Aᵀ)·Bᵀ with A of shape [r, in] and
// B of shape [out, r].
type Linear struct {
	Name      string
	W, B      *Param
	LoRAA     *Param
	LoRAB     *Param
	LoRAScale float32
}

func newLinear(name string, in, out int, bias bool, kind Kind, rng *rand.Rand, std float64) *Linear {
	l := &Linear{Name: name, W: newParam(name+".weight", kind, out, in)}
	l.W.initNormal(rng, std)
	if bias {
		bk := KindBias
		if kind == KindHead || kind == KindAdapter {
			bk = kind
		}
		l.B = newParam(name+".bias", bk, out)
	}
	return l
}

// In returns the input width of l.
func (l *Linear) In() int { return l.W.Shape[1] }

// Out returns the output width of l.
func (l *Linear) Out() int { return l.W.Shape[0] }

// Params returns W, B and the LoRA tensors that exist.
func (l *Linear) Params() []*Param {
	ps := []*Param{l.W}
	if l.B != nil {
		ps = append(ps, l.B)
	}
	if l.LoRAA != nil {
		ps = append(ps, l.LoRAA, l.LoRAB)
	}
	return ps
}

// AddLoRA attaches LoRA factors of rank r and scale α/r to l. A is drawn
// uniformly from [−1/√in, 1/√in] (the Kaiming-uniform init of PEFT's LoRA);
// B is zero when bStd is 0 and N(0, bStd²) otherwise.
func (l *Linear) AddLoRA(r int, alpha float64, bStd float64, rng *rand.Rand) {
	l.LoRAA = newParam(l.Name+".lora_a", KindLoRAA, r, l.In())
	l.LoRAB = newParam(l.Name+".lora_b", KindLoRAB, l.Out(), r)
	l.LoRAA.initUniform(rng, 1/math.Sqrt(float64(l.In())))
	if bStd > 0 {
		l.LoRAB.initNormal(rng, bStd)
	}
	l.LoRAScale = float32(alpha / float64(r))
}

// Forward applies l to the rows of x.
func (l *Linear) Forward(t *Tape, x *Node, h *Hooks) *Node {
	if h != nil {
		h.observe(l.Name+".in", x)
	}
	return l.addLoRA(t, x, l.frozen(t, x), h)
}

// frozen returns the frozen part of l on the rows of x: x·Wᵀ + b.
func (l *Linear) frozen(t *Tape, x *Node) *Node {
	var b *Node
	if l.B != nil {
		b = t.Param(l.B)
	}
	return t.Affine(x, t.Param(l.W), b)
}

// addLoRA returns l's output on the rows of x given its frozen part y
// (Linear.frozen): y plus the scaled LoRA product, when l has LoRA, in
// place on an inference tape.
func (l *Linear) addLoRA(t *Tape, x, y *Node, h *Hooks) *Node {
	if l.LoRAA != nil {
		u := t.Affine(x, t.Param(l.LoRAA), nil)
		if h != nil {
			h.observe(l.Name+".lora", u)
		}
		bp := t.Param(l.LoRAB)
		if t.fusable(h, y, u, bp) && l.LoRAScale > 0 {
			t.addLoRA(y, u, bp, l.LoRAScale)
		} else {
			y = t.Weighted([]float32{1, l.LoRAScale}, y, t.Affine(u, bp, nil))
		}
	}
	if h != nil {
		h.observe(l.Name+".out", y)
	}
	return y
}

// LayerNorm normalises rows and applies a gain (kind norm) and a bias
// (kind bias).
type LayerNorm struct {
	Name string
	G, B *Param
	Eps  float64
}

func newLayerNorm(name string, d int) *LayerNorm {
	n := &LayerNorm{Name: name, G: newParam(name+".weight", KindNorm, d), B: newParam(name+".bias", KindBias, d), Eps: 1e-5}
	n.G.fill(1)
	return n
}

// Params returns the gain and the bias.
func (n *LayerNorm) Params() []*Param { return []*Param{n.G, n.B} }

// Forward applies n to the rows of x.
func (n *LayerNorm) Forward(t *Tape, x *Node, h *Hooks) *Node {
	if h != nil {
		h.observe(n.Name+".in", x)
	}
	return t.LayerNorm(x, t.Param(n.G), t.Param(n.B), n.Eps)
}

// Adapter is a Houlsby bottleneck adapter x + Up(GELU(Down(x))). Up starts at
// zero, so a new adapter is the identity.
type Adapter struct {
	Name     string
	Down, Up *Linear
}

func newAdapter(name string, d, r int, rng *rand.Rand) *Adapter {
	a := &Adapter{Name: name,
		Down: newLinear(name+".down", d, r, true, KindAdapter, rng, 0.02),
		Up:   newLinear(name+".up", r, d, true, KindAdapter, rng, 0)}
	return a
}

// Params returns the adapter's tensors.
func (a *Adapter) Params() []*Param { return append(a.Down.Params(), a.Up.Params()...) }

// Forward applies the adapter.
func (a *Adapter) Forward(t *Tape, x *Node, h *Hooks) *Node {
	return t.Add(x, a.Up.Forward(t, t.geluOf(a.Down.Forward(t, x, h), h), h))
}

// MLP is FC2(GELU(FC1(x))).
type MLP struct {
	FC1, FC2 *Linear
}

// Params returns the tensors of both layers.
func (m *MLP) Params() []*Param { return append(m.FC1.Params(), m.FC2.Params()...) }

// Forward applies the MLP to the rows of x.
func (m *MLP) Forward(t *Tape, x *Node, h *Hooks) *Node {
	return m.FC2.Forward(t, t.geluOf(m.FC1.Forward(t, x, h), h), h)
}

// Block is a pre-LN transformer block:
//
//	h  = x + A1(O(Attention(Q(LN1 x), K(LN1 x), V(LN1 x))))
//	x' = h + A2(MLP(LN2 h))
//
// where A1 and A2 are Houlsby adapters when present and the identity
// otherwise.
type Block struct {
	Name       string
	Heads      int
	LN1, LN2   *LayerNorm
	Q, K, V, O *Linear
	MLP        *MLP
	Adapter1   *Adapter
	Adapter2   *Adapter
	Dropout    float64
	// Rotary applies rotary position embeddings (Tape.Rotary) to the
	// queries and keys.
	Rotary bool
	// Smear, when not nil, holds one logit per head that mixes every key
	// with the key before it (Tape.SmearKeys), after any rotation.
	Smear *Param
}

func newBlock(name string, d, heads, ratio int, rng *rand.Rand) *Block {
	if d%heads != 0 {
		panic(errHeads)
	}
	return &Block{Name: name, Heads: heads,
		LN1: newLayerNorm(name+".ln1", d),
		Q:   newLinear(name+".attn.q", d, d, true, KindWeight, rng, 0.02),
		K:   newLinear(name+".attn.k", d, d, true, KindWeight, rng, 0.02),
		V:   newLinear(name+".attn.v", d, d, true, KindWeight, rng, 0.02),
		O:   newLinear(name+".attn.o", d, d, true, KindWeight, rng, 0.02),
		LN2: newLayerNorm(name+".ln2", d),
		MLP: &MLP{FC1: newLinear(name+".mlp.fc1", d, ratio*d, true, KindWeight, rng, 0.02),
			FC2: newLinear(name+".mlp.fc2", ratio*d, d, true, KindWeight, rng, 0.02)},
	}
}

// Linears returns the block's linear maps by short name: q, k, v, o, fc1,
// fc2.
func (b *Block) Linears() map[string]*Linear {
	return map[string]*Linear{"q": b.Q, "k": b.K, "v": b.V, "o": b.O, "fc1": b.MLP.FC1, "fc2": b.MLP.FC2}
}

// Params returns the block's tensors in a fixed order.
func (b *Block) Params() []*Param {
	var ps []*Param
	ps = append(ps, b.LN1.Params()...)
	for _, l := range []*Linear{b.Q, b.K, b.V, b.O} {
		ps = append(ps, l.Params()...)
	}
	if b.Smear != nil {
		ps = append(ps, b.Smear)
	}
	if b.Adapter1 != nil {
		ps = append(ps, b.Adapter1.Params()...)
	}
	ps = append(ps, b.LN2.Params()...)
	ps = append(ps, b.MLP.Params()...)
	if b.Adapter2 != nil {
		ps = append(ps, b.Adapter2.Params()...)
	}
	return ps
}

// Forward applies the block to the sequence x (shape [T, d]). It returns the
// new residual stream and the attention probabilities [heads, T, T].
func (b *Block) Forward(t *Tape, x *Node, causal bool, stack string, layer int, h *Hooks) (*Node, Tensor) {
	return b.forward(t, x, nil, nil, causal, stack, layer, h)
}

// rowKeep selects the rows a stack's output is needed at: rows (in
// increasing order) of the stacked sequences, of which those of example e
// are rows[off[e]:off[e+1]].
type rowKeep struct {
	rows, off []int
}

// forward is Forward on the sequences stacked in the rows of x: rows
// [segs[s], segs[s+1]) are sequence s, and every sequence gets the bits
// Forward gives it alone, since attention, rotary positions and smeared
// keys run on each sequence's rows and every other map on each row. A nil
// segs is one sequence. With keep, everything after attention runs on the
// kept rows only, and the output has those rows: the other rows of a last
// block feed nothing.
func (b *Block) forward(t *Tape, x *Node, segs []int, keep *rowKeep, causal bool, stack string, layer int, h *Hooks) (*Node, Tensor) {
	if h != nil {
		h.observe(b.Name+".in", x)
	}
	// The first block of the language model on a tape of MeanLosses with
	// a PassShare keeps or reads its shared values (t.share; passshare.go).
	share := t.share != nil && layer == 0
	var a *Node
	if share {
		a = t.shareNorm1(b, x)
	} else {
		a = b.LN1.Forward(t, x, h)
	}
	if keep != nil && !b.Rotary && t.fusable(h, x) {
		return b.forwardKept(t, x, a, segs, keep, causal, share), Tensor{}
	}
	var q, k *Node
	if share {
		q, k = t.shareLinear(b.Q, a, 0), t.shareLinear(b.K, a, 1)
	} else {
		q, k = b.Q.Forward(t, a, h), b.K.Forward(t, a, h)
	}
	if b.Rotary {
		q, k = t.rotary(q, b.Heads, segs), t.rotary(k, b.Heads, segs)
	}
	if b.Smear != nil {
		k = t.smearKeys(k, t.Param(b.Smear), b.Heads, segs)
	}
	var v *Node
	if share {
		v = t.shareLinear(b.V, a, 2)
	} else {
		v = b.V.Forward(t, a, h)
	}
	heads, probs := t.attention(q, k, v, b.Heads, causal, segs)
	if h != nil && h.Observe != nil {
		h.Observe(b.Name+".attn.probs", probs)
		h.Observe(b.Name+".attn.heads", heads.Value)
	}
	if h != nil && h.Heads != nil {
		if ps := h.Heads(stack, layer, heads.Value); len(ps) > 0 {
			heads = t.Patch(heads, b.Heads, ps)
		}
	}
	if keep != nil {
		heads, x = t.Gather(heads, keep.rows), t.Gather(x, keep.rows)
		t.setRows(keep.off, 0)
	}
	o := t.Dropout(b.O.Forward(t, heads, h), b.Dropout)
	if b.Adapter1 != nil {
		o = b.Adapter1.Forward(t, o, h)
	}
	var n *Node
	if t.fusable(h, x, o) {
		x, n = t.addNorm(x, o, b.LN2)
	} else {
		x = t.Add(x, o)
		n = b.LN2.Forward(t, x, h)
	}
	m := t.Dropout(b.MLP.Forward(t, n, h), b.Dropout)
	if b.Adapter2 != nil {
		m = b.Adapter2.Forward(t, m, h)
	}
	return t.Add(x, m), probs
}

// forwardKept is forward with keep on an inference tape (fusable,
// without hooks) and without rotary positions, given the first
// LayerNorm's output a: the queries, and attention, run on the kept rows
// only (Tape.attentionRows), since nothing reads attention's output at the
// other rows; keys and values still run on every row. With share, the
// keys and values are those of a PassShare (Tape.shareLinear). The bits
// are forward's.
func (b *Block) forwardKept(t *Tape, x, a *Node, segs []int, keep *rowKeep, causal, share bool) *Node {
	var k, v *Node
	if share {
		k, v = t.shareLinear(b.K, a, 1), t.shareLinear(b.V, a, 2)
	} else {
		k, v = b.K.Forward(t, a, nil), b.V.Forward(t, a, nil)
	}
	if b.Smear != nil {
		k = t.smearKeys(k, t.Param(b.Smear), b.Heads, segs)
	}
	q := b.Q.Forward(t, t.Gather(a, keep.rows), nil)
	heads := t.attentionRows(q, k, v, keep.rows, b.Heads, causal, segs)
	x = t.Gather(x, keep.rows)
	t.setRows(keep.off, 0)
	o := t.Dropout(b.O.Forward(t, heads, nil), b.Dropout)
	if b.Adapter1 != nil {
		o = b.Adapter1.Forward(t, o, nil)
	}
	x, n := t.addNorm(x, o, b.LN2)
	m := t.Dropout(b.MLP.Forward(t, n, nil), b.Dropout)
	if b.Adapter2 != nil {
		m = b.Adapter2.Forward(t, m, nil)
	}
	return t.Add(x, m)
}

// Stack is a sequence of transformer blocks followed by a final LayerNorm.
type Stack struct {
	Name   string
	Causal bool
	Blocks []*Block
	LN     *LayerNorm
}

func newStack(name string, d, layers, heads, ratio int, causal bool, dropout float64, rng *rand.Rand) *Stack {
	s := &Stack{Name: name, Causal: causal, LN: nil}
	for i := 0; i < layers; i++ {
		b := newBlock(name+".blocks."+itoa(i), d, heads, ratio, rng)
		b.Dropout = dropout
		s.Blocks = append(s.Blocks, b)
	}
	s.LN = newLayerNorm(name+".ln", d)
	return s
}

// Params returns the tensors of every block and of the final LayerNorm.
func (s *Stack) Params() []*Param {
	var ps []*Param
	for _, b := range s.Blocks {
		ps = append(ps, b.Params()...)
	}
	return append(ps, s.LN.Params()...)
}

// Forward runs the blocks and the final LayerNorm on x. If probsLayer is a
// valid block index, it also returns that block's attention probabilities.
func (s *Stack) Forward(t *Tape, x *Node, probsLayer int, h *Hooks) (*Node, Tensor) {
	return s.forward(t, x, nil, nil, probsLayer, h)
}

// forward is Forward on the sequences stacked in the rows of x (see
// Block.forward), with the output at the rows keep selects (all when
// nil).
func (s *Stack) forward(t *Tape, x *Node, segs []int, keep *rowKeep, probsLayer int, h *Hooks) (*Node, Tensor) {
	var probs Tensor
	for i, b := range s.Blocks {
		var p Tensor
		var k *rowKeep
		if i == len(s.Blocks)-1 {
			k = keep
		}
		x, p = b.forward(t, x, segs, k, s.Causal, s.Name, i, h)
		if i == probsLayer {
			probs = p
		}
	}
	return s.LN.Forward(t, x, h), probs
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
