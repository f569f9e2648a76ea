// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// KVCache holds the keys and values of every language-model block of one
// sequence at the positions decoded so far, so that decoding a new token
// runs the model on that token only instead of on the whole sequence
// (the key-value cache of autoregressive transformers; Pope et al. 2023,
// "Efficiently Scaling Transformer Inference", MLSys, §2). It belongs to
// the model that made it (TinyMLLM.NewKVCache) and to one goroutine.
//
// The cache stores, per block, the keys after the rotary rotation and
// before smearing (SmearKeys mixes a key with the one before it, so the
// next position needs the previous raw key), the smeared keys and the
// values.
type KVCache struct {
	n         int
	width     int
	maxLen    int
	raw, k, v [][]float32 // per block, n×width, row-major
}

// NewKVCache returns an empty cache for m.
func (m *TinyMLLM) NewKVCache() *KVCache {
	L := len(m.LM.Blocks)
	return &KVCache{width: m.Config.Width, maxLen: m.Config.MaxLen,
		raw: make([][]float32, L), k: make([][]float32, L), v: make([][]float32, L)}
}

// Len returns the number of positions (visual tokens included) the cache
// holds.
func (c *KVCache) Len() int { return c.n }

// Truncate drops every position from n on, so the cache holds the prefix
// of length n; it panics if n is negative or larger than Len.
func (c *KVCache) Truncate(n int) {
	if n < 0 || n > c.n {
		panic(errIndex)
	}
	c.n = n
	for l := range c.k {
		c.raw[l], c.k[l], c.v[l] = c.raw[l][:n*c.width], c.k[l][:n*c.width], c.v[l][:n*c.width]
	}
}

// Clone returns an independent copy of c (branching decoders extend each
// copy with a different continuation).
func (c *KVCache) Clone() *KVCache {
	d := &KVCache{n: c.n, width: c.width, maxLen: c.maxLen,
		raw: make([][]float32, len(c.k)), k: make([][]float32, len(c.k)), v: make([][]float32, len(c.k))}
	for l := range c.k {
		d.raw[l], d.k[l], d.v[l] = slices.Clone(c.raw[l]), slices.Clone(c.k[l]), slices.Clone(c.v[l])
	}
	return d
}

// Extend appends tokens[b] to caches[b] for every b, running the language
// model on the new positions of all caches together (one matrix product
// per projection for the whole batch), and returns for each cache the
// next-token logits at its new positions, shape [len(tokens[b]), vocab].
// Tokens must be text tokens (no TokenImage; Prefill takes images). It
// returns an error for a token outside the vocabulary or a sequence that
// would exceed MaxLen. The logits equal those of Forward on the whole
// sequence up to float32 rounding (the attention sums run in another
// order). Hooks are not supported: they observe whole sequences. A
// steered model (TinyMLLM.Steer) patches every new position, or none
// under Steering.Once (Prefill patched the prompt's last).
func (m *TinyMLLM) Extend(caches []*KVCache, tokens [][]int) ([]Tensor, error) {
	if len(caches) != len(tokens) {
		panic(errLength)
	}
	t := NewTape(nil, nil)
	xs := make([]*Node, len(caches))
	for b, toks := range tokens {
		if len(toks) == 0 {
			return nil, fmt.Errorf("nn: extend: no tokens for sequence %d", b)
		}
		for i, id := range toks {
			if id < 0 || id >= m.Config.Vocab || id == TokenImage {
				return nil, fmt.Errorf("nn: extend: token %d at position %d of sequence %d is not a text token of the vocabulary [0, %d)", id, i, b, m.Config.Vocab)
			}
		}
		xs[b] = t.Embed(t.Param(m.Tok), toks)
	}
	hid, err := m.extend(t, caches, xs, false)
	if err != nil {
		return nil, err
	}
	return m.splitLogits(t, hid, xs, false), nil
}

// Prefill runs the language model on the prompt s (its images encoded with
// the visual transform vt, nil for none) into the empty cache c and returns
// the next-token logits at the prompt's last position, shape [1, vocab]. It
// returns an error if c is not empty or s is invalid or too long.
func (m *TinyMLLM) Prefill(c *KVCache, s *Sequence, vt VisualTransform) (Tensor, error) {
	if c.n != 0 {
		return Tensor{}, fmt.Errorf("nn: prefill into a cache holding %d positions", c.n)
	}
	if err := m.Check(&Sequence{Tokens: s.Tokens, Images: s.Images}); err != nil {
		return Tensor{}, err
	}
	t := NewTape(nil, nil)
	x := m.embedPrompt(t, s, vt)
	hid, err := m.extend(t, []*KVCache{c}, []*Node{x}, true)
	if err != nil {
		return Tensor{}, err
	}
	return m.splitLogits(t, hid, []*Node{x}, true)[0], nil
}

// embedPrompt returns the language model's input rows of s before position
// embeddings: token embeddings, and each image's projected visual tokens
// (in the order lmVisual gives) in place of its placeholder, as Forward
// builds them.
func (m *TinyMLLM) embedPrompt(t *Tape, s *Sequence, vt VisualTransform) *Node {
	var segs []*Node
	img, start := 0, 0
	for i, id := range s.Tokens {
		if id != TokenImage {
			continue
		}
		if i > start {
			segs = append(segs, t.Embed(t.Param(m.Tok), s.Tokens[start:i]))
		}
		v, _ := m.EncodeImage(t, s.Images[img], img, false, nil, vt)
		segs = append(segs, m.lmVisual(t, v.Tokens))
		img++
		start = i + 1
	}
	if len(s.Tokens) > start {
		segs = append(segs, t.Embed(t.Param(m.Tok), s.Tokens[start:]))
	}
	if len(segs) == 1 {
		return segs[0]
	}
	return t.Concat(segs...)
}

// splitLogits returns, per sequence b, the logits at the rows of hid that
// belong to xs[b] (the rows of all sequences are stacked in order), or at
// its last row only.
func (m *TinyMLLM) splitLogits(t *Tape, hid *Node, xs []*Node, last bool) []Tensor {
	var rows []int
	off := 0
	for _, x := range xs {
		n := x.Value.Rows()
		if last {
			rows = append(rows, off+n-1)
		} else {
			for i := range n {
				rows = append(rows, off+i)
			}
		}
		off += n
	}
	z := m.Logits(t, hid, rows).Value
	V := m.Config.Vocab
	out := make([]Tensor, len(xs))
	r := 0
	for b, x := range xs {
		n := 1
		if !last {
			n = x.Value.Rows()
		}
		out[b] = Tensor{Shape: []int{n, V}, Data: z.Data[r*V : (r+n)*V : (r+n)*V]}
		r += n
	}
	return out
}

// extend appends the input rows xs[b] (before position embeddings) to
// caches[b] and returns the final hidden states of all new rows, stacked
// in order, shape [Σ rows, width]. With m.Steer, the steered heads are
// patched at every new row, or at the last new row of each sequence only
// when prompt is true (Prefill).
func (m *TinyMLLM) extend(t *Tape, caches []*KVCache, xs []*Node, prompt bool) (*Node, error) {
	D := m.Config.Width
	offs := make([]int, len(caches)+1) // row offsets of the sequences
	for b, c := range caches {
		n := xs[b].Value.Rows()
		if c.n+n > m.Config.MaxLen {
			return nil, fmt.Errorf("nn: sequence of %d tokens (with visual tokens) longer than the maximum %d", c.n+n, m.Config.MaxLen)
		}
		if c.width != D || len(c.k) != len(m.LM.Blocks) {
			panic(errShape)
		}
		if m.Pos != nil {
			xs[b] = t.Add(xs[b], t.Slice(t.Param(m.Pos), c.n, c.n+n))
		}
		offs[b+1] = offs[b] + n
	}
	x := xs[0]
	if len(xs) > 1 {
		x = t.Concat(xs...)
	}
	from := offs[:len(caches)]
	if !prompt && m.Steer != nil && m.Steer.Once {
		from = offs[1:] // nothing: the prompt's last position is past
	}
	if prompt {
		from = make([]int, len(caches))
		for b := range from {
			from[b] = offs[b+1] - 1
		}
	}
	for l, blk := range m.LM.Blocks {
		a := blk.LN1.Forward(t, x, nil)
		q, k, v := blk.Q.Forward(t, a, nil), blk.K.Forward(t, a, nil), blk.V.Forward(t, a, nil)
		heads := NewTensor(offs[len(caches)], D)
		for b, c := range caches {
			r0, r1 := offs[b], offs[b+1]
			c.append(l, blk, k.Value.Data[r0*D:r1*D], v.Value.Data[r0*D:r1*D])
			c.attend(l, blk.Heads, q.Value.Data[r0*D:r1*D], heads.Data[r0*D:r1*D], blk.Rotary)
		}
		m.steerRows(l, heads, from, offs[1:])
		o := blk.O.Forward(t, t.Input(heads, false), nil)
		if blk.Adapter1 != nil {
			o = blk.Adapter1.Forward(t, o, nil)
		}
		x = t.Add(x, o)
		mm := blk.MLP.Forward(t, blk.LN2.Forward(t, x, nil), nil)
		if blk.Adapter2 != nil {
			mm = blk.Adapter2.Forward(t, mm, nil)
		}
		x = t.Add(x, mm)
	}
	for b, c := range caches {
		c.n += offs[b+1] - offs[b]
	}
	return m.LM.LN.Forward(t, x, nil), nil
}

// append adds the new keys k and values v (rows × width, before rotation)
// of block l at positions c.n, c.n+1, …: rotated (when the block is
// rotary), kept raw, smeared (when the block smears keys) and stored.
func (c *KVCache) append(l int, blk *Block, k, v []float32) {
	D := c.width
	n := len(k) / D
	dh := D / blk.Heads
	raw := k
	if blk.Rotary {
		cos, sin := rotaryTable(c.n+n, dh)
		half := dh / 2
		raw = make([]float32, len(k))
		rotate(raw, k, cos[c.n*half:], sin[c.n*half:], n, D, dh, 1)
	}
	c.raw[l] = append(c.raw[l], raw...)
	c.v[l] = append(c.v[l], v...)
	if blk.Smear == nil {
		c.k[l] = append(c.k[l], raw...)
		return
	}
	s := make([]float32, blk.Heads)
	for h, lg := range blk.Smear.Data {
		s[h] = float32(1 / (1 + math.Exp(-float64(lg))))
	}
	all := c.raw[l]
	for j := c.n; j < c.n+n; j++ {
		for h := range blk.Heads {
			o := j*D + h*dh
			out := make([]float32, dh)
			for i := range out {
				out[i] = s[h] * all[o+i]
			}
			if j > 0 {
				axpy(1-s[h], all[o-D:o-D+dh], out)
			}
			c.k[l] = append(c.k[l], out...)
		}
	}
}

// attend writes to out (rows × width) the per-head attention outputs of
// the queries q (rows × width, before rotation) of the newest rows of
// block l, each attending causally to the cached keys and values up to
// and including its own position. append must have stored the rows.
func (c *KVCache) attend(l, heads int, q, out []float32, rotary bool) {
	D := c.width
	n := len(q) / D
	dh := D / heads
	first := len(c.k[l])/D - n // position of the first new row
	if rotary {
		cos, sin := rotaryTable(first+n, dh)
		half := dh / 2
		rq := make([]float32, len(q))
		rotate(rq, q, cos[first*half:], sin[first*half:], n, D, dh, 1)
		q = rq
	}
	sc := float32(1 / math.Sqrt(float64(dh)))
	kd, vd := c.k[l], c.v[l]
	p := make([]float32, first+n)
	for j := range n {
		T := first + j + 1
		for h := range heads {
			qh := q[j*D+h*dh : j*D+(h+1)*dh]
			for i := range T {
				var s float32
				for e, x := range kd[i*D+h*dh : i*D+(h+1)*dh] {
					s += float32(qh[e] * x)
				}
				p[i] = sc * s
			}
			softmaxRow(p[:T], p[:T])
			oh := out[j*D+h*dh : j*D+(h+1)*dh]
			for i := range T {
				axpy(p[i], vd[i*D+h*dh:i*D+(h+1)*dh], oh)
			}
		}
	}
}

// GenerateBatch continues every prompt as Generate does (same stopping
// rules, same sampler, TokenImage never generated), decoding all prompts
// together with one KVCache each: after the prompts, every step runs the
// model once on one new token per unfinished sequence. rngs[i] drives the
// sampling of prompt i (it may be nil, or rngs nil, for greedy decoding),
// so a sequence's output does not depend on the other prompts of the
// batch. Hooks are not supported (use Generate). With greedy decoding the
// outputs equal Generate's unless two logits tie within float32 rounding.
func (m *TinyMLLM) GenerateBatch(prompts []Sequence, maxNew int, s Sampler, rngs []*rand.Rand, vt VisualTransform) ([][]int, error) {
	caches := make([]*KVCache, len(prompts))
	logits := make([]Tensor, len(prompts))
	for i := range prompts {
		caches[i] = m.NewKVCache()
		var err error
		if logits[i], err = m.Prefill(caches[i], &prompts[i], vt); err != nil {
			return nil, fmt.Errorf("nn: generate: prompt %d: %w", i, err)
		}
	}
	out := make([][]int, len(prompts))
	active := make([]int, 0, len(prompts))
	for i := range prompts {
		if maxNew > 0 && caches[i].n < m.Config.MaxLen {
			active = append(active, i)
		}
	}
	for len(active) > 0 {
		var next []int
		var cs []*KVCache
		var toks [][]int
		for _, i := range active {
			z := logits[i].Data
			z[TokenImage] = float32(math.Inf(-1))
			var rng *rand.Rand
			if rngs != nil {
				rng = rngs[i]
			}
			tok := s.Next(z, rng)
			out[i] = append(out[i], tok)
			if tok != TokenEOS && len(out[i]) < maxNew && caches[i].n+1 < m.Config.MaxLen {
				next = append(next, i)
				cs = append(cs, caches[i])
				toks = append(toks, []int{tok})
			}
		}
		if len(next) == 0 {
			break
		}
		z, err := m.Extend(cs, toks)
		if err != nil {
			return nil, err
		}
		for j, i := range next {
			logits[i] = z[j]
		}
		active = next
	}
	return out, nil
}
