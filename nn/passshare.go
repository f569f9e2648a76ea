// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "slices"

// A PassShare carries, from one TinyMLLM.MeanLosses call to the next on
// the same batch, the part of the batch's forward pass that does not
// depend on the call's layout: the two passes of a zeroth-order step
// (DPZO's losses at θ + φz and θ − φz) differ only in the layout's
// tensors, so what comes before the first of them is the same in both.
// Which part that is depends on the layout, and is decided at each call:
//
//   - the language model's input rows (visual tokens and embeddings),
//     when every tensor of the layout belongs to the language model's
//     blocks (not the embeddings, the vision encoder or the projector);
//   - then the first block's first LayerNorm, when its gain and bias are
//     not in the layout;
//   - then the first block's frozen query, key and value products x·Wᵀ +
//     b (each when its W and b are not in the layout; a LoRA product on
//     top is recomputed every call, since its factors may be).
//
// The first MeanLosses after Reset computes these values and keeps them;
// the calls after it read them instead of computing them again, with the
// same bits. The caller promises that between two Resets the batch (the
// same slice) and every tensor outside the layout stay unchanged;
// MeanLosses panics when it is called with a different batch, model or
// layout. The zero value is ready to use (and empty). A PassShare must
// not be used by two calls at once.
type PassShare struct {
	filled bool
	m      *TinyMLLM
	l      *Layout
	first  *Sequence
	n      int
	groups []groupShare
}

// Reset empties s: the next MeanLosses that takes it computes the shared
// values again.
func (s *PassShare) Reset() {
	s.filled, s.m, s.l, s.first, s.n = false, nil, nil, nil, 0
}

// groupShare holds the shared values of one group of sequences (one
// inference tape of MeanLosses).
type groupShare struct {
	// x are the language model's input rows, a the first LayerNorm's
	// output, proj the frozen products of the query, key and value maps
	// (nil where not shared).
	x, a []float32
	proj [3][]float32
	// what forwardRows returns beside the hidden rows
	off     []int
	pos     [][]int
	keep    rowKeep
	targets []int
}

// shareLevels says which of a PassShare's values a layout leaves shared.
type shareLevels struct {
	embed, ln1 bool
	proj       [3]bool // query, key, value
}

// shareLevels returns the values of m's forward pass that do not depend
// on l's tensors (PassShare).
func (m *TinyMLLM) shareLevels(l *Layout) shareLevels {
	var lv shareLevels
	if m.Steer != nil || len(m.LM.Blocks) == 0 {
		return lv
	}
	blocks := map[*Param]bool{}
	for _, b := range m.LM.Blocks {
		for _, p := range b.Params() {
			blocks[p] = true
		}
	}
	for _, p := range l.Params {
		if !blocks[p] {
			return lv
		}
	}
	lv.embed = true
	in := func(ps ...*Param) bool {
		for _, p := range ps {
			if p != nil && l.Index(p) >= 0 {
				return true
			}
		}
		return false
	}
	b := m.LM.Blocks[0]
	if in(b.LN1.G, b.LN1.B) {
		return lv
	}
	lv.ln1 = true
	for i, lin := range []*Linear{b.Q, b.K, b.V} {
		lv.proj[i] = !in(lin.W, lin.B)
	}
	return lv
}

// begin checks that a MeanLosses call on batch may use s and returns
// whether the call fills it (the first since Reset), after sizing its
// groups.
func (s *PassShare) begin(m *TinyMLLM, l *Layout, batch []Sequence, groups int) (fill bool) {
	if len(batch) == 0 {
		return false
	}
	if s.filled {
		if s.m != m || s.l != l || s.first != &batch[0] || s.n != len(batch) {
			panic("nn: PassShare: a different batch, model or layout since Reset")
		}
		return false
	}
	s.m, s.l, s.first, s.n = m, l, &batch[0], len(batch)
	if cap(s.groups) < groups {
		s.groups = slices.Grow(s.groups[:0], groups)
	}
	s.groups = s.groups[:groups]
	return true
}

// tapeShare is what an inference tape of MeanLosses reads or fills of a
// PassShare: its group's values and the levels of the call.
type tapeShare struct {
	g    *groupShare
	lv   shareLevels
	fill bool
}

// keepOrCopy fills dst with src (fill) or src with dst's values (not
// fill): it returns the kept slice.
func keepOrCopy(fill bool, dst *[]float32, src []float32) {
	if fill {
		*dst = append((*dst)[:0], src...)
		return
	}
	copy(src, *dst)
}

// shareNorm1 is b.LN1.Forward(t, x, nil) for the first block of the
// language model on a tape with a PassShare (t.share), the LayerNorm kept
// or read there when it is shared.
func (t *Tape) shareNorm1(b *Block, x *Node) *Node {
	sh := t.share
	if sh == nil || !sh.lv.ln1 {
		return b.LN1.Forward(t, x, nil)
	}
	if sh.fill {
		a := b.LN1.Forward(t, x, nil)
		keepOrCopy(true, &sh.g.a, a.Value.Data)
		return a
	}
	return t.shareRead(sh.g.a, x.Value.Shape)
}

// shareRead returns a node of the given shape holding a value v kept in a
// PassShare: v itself, which the tape's operations only read (the input
// rows of the language model and its first LayerNorm's output feed
// products, residual sums and row gathers, none of which writes its
// input), or a copy of v (thinOff).
func (t *Tape) shareRead(v []float32, shape []int) *Node {
	shape = append([]int(nil), shape...)
	if thinOff {
		n := t.nodeOver(shape)
		keepOrCopy(false, &v, n.Value.Data)
		return n
	}
	return t.Input(Tensor{Shape: shape, Data: v[:numel(shape)]}, false)
}

// shareLinear is l.Forward(t, x, nil) for map i (query, key, value) of
// the first block of the language model on a tape with a PassShare, its
// frozen product x·Wᵀ + b kept or read there when it is shared; a LoRA
// product is added on top either way (Linear.addLoRA).
func (t *Tape) shareLinear(l *Linear, x *Node, i int) *Node {
	sh := t.share
	if sh == nil || !sh.lv.proj[i] {
		return l.Forward(t, x, nil)
	}
	var y *Node
	if sh.fill {
		y = l.frozen(t, x)
		keepOrCopy(true, &sh.g.proj[i], y.Value.Data)
	} else {
		y = t.nodeOver([]int{x.Value.Rows(), l.W.Shape[0]}, x)
		keepOrCopy(false, &sh.g.proj[i], y.Value.Data)
	}
	return l.addLoRA(t, x, y, nil)
}
