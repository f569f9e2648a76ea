// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"time"
)

// This file holds the batched engine: several examples on one tape, their
// sequences stacked as rows, so that every frozen weight sees the rows of
// all of them in one matrix product per layer (instead of one product per
// example and tape), while the gradients of the trainable tensors are still
// formed per example where a method needs them.
//
// Every map of the model but attention, rotary positions, smeared keys,
// the assembly of a sequence and the loss acts on each row alone, and the
// matrix product computes every element of C as one chain over k whatever
// the number of rows (gemm.go), so an example's rows get the same bits on
// a batched tape as on its own. Attention, rotary positions and smeared
// keys run on each sequence's block of rows (Block.forward), the loss of
// each example is its own mean (crossEntropies), and on a per-example tape
// (batchRows) Affine forms the gradient of a trainable weight as Gᵢᵀ·Xᵢ
// over example i's rows, and Affine and LayerNorm the gradient of a
// trainable bias as the sum of Gᵢ's rows, in the order the example's own
// tape adds them: its rows in order and, in the vision encoder and the
// projector (where an example's rows are its images' blocks), its images
// last first (rowMap). So PerSample's per-example gradients and losses are
// bit for bit those of one tape per example, and so is Gradient's sum,
// which adds the examples' products into its 16 chunks in example order as
// their tapes did. In the language model's last block, everything after
// attention runs on the rows the loss reads only (the others feed
// nothing); each kept row gets the same bits, and the rows dropped would
// only have passed exact zeros back, to the weights and to the biases.
//
// Only the trainable tensors whose gradients Affine and LayerNorm form per
// example are supported: LoRA factors, adapters and biases, in the vision
// encoder, the projector and the language model (LoRA, adapters and BitFit
// in any parts). Any other set (full fine-tuning's weights, LayerNorm
// gains and embeddings), hooks, a visual transform and dropout in training
// go to one tape per example, which stays the reference the tests hold the
// batched engine to.
//
// The per-sample gradients of LoRA factors and adapters are formed from the
// per-example inputs Xᵢ and output gradients Gᵢ of the trainable products,
// the "per-sample hooks" of Opacus and of Li et al. 2022 ("Large Language
// Models Can Be Strong Differentially Private Learners", ICLR 2022), which
// materialise each gradient; ghost norms (ibid.; Bu et al. 2023,
// "Differentially Private Optimization on Large Model at Small Cost", ICML
// 2023) would skip that, but the gradients of rank-8 factors are small.

// batchGroup is the largest number of examples one batched tape holds.
// On the anchor shape (33 rows an example) the step's CPU time was the
// same, within the noise of a shared machine, for groups of 4, 8, 16 and
// 32, while a tape's memory grows with the group; 4 also leaves a batch
// of 32 eight groups to share among the workers. Groups depend on the
// batch size alone, and a group's examples are added in example order,
// so no result depends on the number of workers.
const batchGroup = 4

// batchGroups splits n examples into ⌈n/batchGroup⌉ contiguous groups of
// nearly equal size.
func batchGroups(n int) [][2]int {
	k := (n + batchGroup - 1) / batchGroup
	g := make([][2]int, k)
	for c := range g {
		g[c] = [2]int{c * n / k, (c + 1) * n / k}
	}
	return g
}

// batchRows makes a tape a per-example batched one: the gradient of
// example e (a flat vector in the tape's layout) is grads[e], and the rows
// of the products recorded while rows is current (Tape.setRows) belong to
// the examples as rows says. On such a tape only Affine (its weight and
// bias) and LayerNorm (its bias) may use a trainable parameter (Tape.g
// panics otherwise).
type batchRows struct {
	rows  rowMap
	grads [][]float32
}

// rowMap maps the rows of a batched tape's products to its examples:
// example e's rows are [off[e], off[e+1]), in blocks of unit rows, one
// block per image in the vision encoder and the projector (unit 0: one
// block, a sequence in the language model). One tape per example runs an
// example's images one after the other, so its backward pass adds the
// gradient of a tensor of the vision encoder image by image, the last
// image first; spans visits the blocks in that order, so that every sum
// keeps its order.
type rowMap struct {
	off  []int
	unit int
}

// spans calls f(e, r0, r1) for every block [r0, r1) of rows of every
// example e, in the order one tape per example adds their gradients:
// examples in order and, within an example, its blocks last first. It
// panics if the map does not cover n rows.
func (rm rowMap) spans(n int, f func(e, r0, r1 int)) {
	if len(rm.off) == 0 || rm.off[len(rm.off)-1] != n {
		panic(errBatchParam) // a trainable product outside the examples' rows
	}
	for e := range len(rm.off) - 1 {
		r0, r1 := rm.off[e], rm.off[e+1]
		if rm.unit == 0 {
			if r1 > r0 {
				f(e, r0, r1)
			}
			continue
		}
		if (r1-r0)%rm.unit != 0 {
			panic(errShape)
		}
		for b := r1; b > r0; b -= rm.unit {
			f(e, b-rm.unit, b)
		}
	}
}

// setRows makes the rows of the products that follow belong to the
// examples as off and unit say (see rowMap), on a per-example batched
// tape (and does nothing on others).
func (t *Tape) setRows(off []int, unit int) {
	if t.batch != nil {
		t.batch.rows = rowMap{off: off, unit: unit}
	}
}

// offset returns the offset in the tape's layout of the trainable
// parameter of node p, or panics if p is not a parameter.
func (br *batchRows) offset(t *Tape, p *Node) int {
	if p.param == nil {
		panic(errBatchParam)
	}
	return t.layout.Offsets[t.layout.Index(p.param)]
}

// affine adds the gradients of Affine's weight w and bias b (b may be nil)
// given the output gradient g, the input x ([n, in]) and the examples'
// rows: per example for trainable parameters, into the node's own
// gradient otherwise.
func (br *batchRows) affine(t *Tape, rows rowMap, w, b *Node, g, x []float32, n, out, in int) {
	if w.needs && w.param == nil {
		kernels.Gemm(true, false, out, in, n, 1, g, out, x, in, 1, t.g(w), in)
	}
	pw, pb := w.needs && w.param != nil, b != nil && b.needs
	if !pw && !pb {
		return
	}
	if len(rows.off) != len(br.grads)+1 {
		panic(errBatchParam) // a trainable product outside the examples' rows
	}
	var ow, ob int
	if pw {
		ow = br.offset(t, w)
	}
	if pb {
		ob = br.offset(t, b)
	}
	rows.spans(n, func(e, r0, r1 int) {
		ge := br.grads[e]
		if pw {
			kernels.Gemm(true, false, out, in, r1-r0, 1, g[r0*out:], out, x[r0*in:], in, 1, ge[ow:ow+out*in], in)
		}
		if pb {
			rowSums(g, r0, r1, ge[ob:ob+out])
		}
	})
}

// bias adds the gradient of a bias b added to every row of a product (a
// LayerNorm's), given the output gradient g of its n rows: per example,
// the sum of the output gradient over the example's rows, row by row in
// the order of one tape per example.
func (br *batchRows) bias(t *Tape, rows rowMap, b *Node, g []float32, n int) {
	if len(rows.off) != len(br.grads)+1 {
		panic(errBatchParam)
	}
	ob, c := br.offset(t, b), len(b.Value.Data)
	rows.spans(n, func(e, r0, r1 int) { rowSums(g, r0, r1, br.grads[e][ob:ob+c]) })
}

// rowSums adds rows [r0, r1) of g (rows of len(dst) values) to dst, one
// row at a time in order.
func rowSums(g []float32, r0, r1 int, dst []float32) {
	c := len(dst)
	for i := r0; i < r1; i++ {
		axpy(1, g[i*c:(i+1)*c], dst)
	}
}

// batchLoss builds the losses of examples [from, to) on the batched tape
// t, as a vector node of to−from entries, setting the examples' rows of
// its products (Tape.setRows).
type batchLoss func(t *Tape, from, to int) *Node

// runBatched evaluates the losses of n examples, one batched tape per
// group of examples, on opt's workers, and adds the gradient of example i
// to grads[i]. Examples may share a vector (Gradient's chunks), but only
// within a group: a group's examples are added in example order, one
// product at a time, as their own tapes would add them. After a group,
// done(u) runs (to apply a mask). It writes the losses and returns the
// statistics Stats describes, where a tape now holds a group.
func runBatched(l *Layout, groups [][2]int, build batchLoss, opt *Options, grads [][]float32, losses []float64, done func(u int)) Stats {
	tapeBytes := make([]int64, len(groups))
	var live liveBytes
	// The groups' forward products x·Wᵀ with a frozen weight W take its
	// cached panels (packcache.go), checked once a call, as MeanLosses'
	// do; the tensors of l (trained) are never cached. The same bits.
	var scope *packScope
	if !gradOff {
		scope = newPackScope(l)
	}
	workers(opt.Workers, len(groups), opt.Reuse, func(a *arena, u int) {
		from, to := groups[u][0], groups[u][1]
		if a != nil {
			a.reset()
		}
		t := &Tape{layout: l, params: make(map[*Param]*Node), arena: a, batch: &batchRows{grads: grads[from:to]}, packs: scope}
		out := build(t, from, to)
		b := t.Bytes()
		live.add(b)
		for i, v := range out.Value.Data {
			losses[from+i] = float64(v)
		}
		seed := make([]float32, to-from)
		for i := range seed {
			seed[i] = 1
		}
		t.BackwardFrom(out, seed)
		tapeBytes[u] = t.Bytes()
		live.add(t.Bytes() - b)
		live.add(-t.Bytes())
		done(u)
	})
	return Stats{Examples: len(losses), PeakTapeBytes: live.peak.Load(), TapeBytes: slices.Max(tapeBytes)}
}

// batchOptions returns opt, or the defaults for nil, after checking its
// mask against l.
func batchOptions(l *Layout, opt *Options) *Options {
	if opt == nil {
		opt = &Options{}
	}
	if opt.Mask != nil && len(opt.Mask) != l.Size {
		panic(errLayout)
	}
	return opt
}

// perSampleBatched is PerSample on batched tapes: the same gradients and
// losses, bit for bit.
func perSampleBatched(l *Layout, n int, build batchLoss, opt *Options) *Result {
	start := time.Now()
	opt = batchOptions(l, opt)
	r := &Result{Grads: make([][]float32, n), Losses: make([]float64, n)}
	for i := range r.Grads {
		r.Grads[i] = make([]float32, l.Size)
	}
	groups := batchGroups(n)
	r.Stats = runBatched(l, groups, build, opt, r.Grads, r.Losses, func(u int) {
		if opt.Mask != nil {
			for _, g := range r.Grads[groups[u][0]:groups[u][1]] {
				ApplyMask(g, opt.Mask)
			}
		}
	})
	r.Stats.GradBytes = int64(4 * n * l.Size)
	r.Stats.Elapsed = time.Since(start)
	return r
}

// gradientBatched is Gradient on batched tapes, with the same bits: the
// examples are accumulated in Gradient's 16 chunks, in example order, and
// the chunks are added in order; a group is one or more whole chunks of
// at most batchGroup examples in all (or one larger chunk).
func gradientBatched(l *Layout, n int, build batchLoss, opt *Options) ([]float32, []float64, Stats) {
	start := time.Now()
	opt = batchOptions(l, opt)
	k := min(n, gradientChunks)
	bufs := make([][]float32, k)
	grads := make([][]float32, n)
	var groups [][2]int
	for c := range bufs {
		from, to := c*n/k, (c+1)*n/k
		bufs[c] = make([]float32, l.Size)
		for i := from; i < to; i++ {
			grads[i] = bufs[c]
		}
		if g := len(groups) - 1; g >= 0 && to-groups[g][0] <= batchGroup {
			groups[g][1] = to
		} else {
			groups = append(groups, [2]int{from, to})
		}
	}
	losses := make([]float64, n)
	st := runBatched(l, groups, build, opt, grads, losses, func(u int) {
		if opt.Mask == nil {
			return
		}
		for c := range bufs {
			if from := c * n / k; from >= groups[u][0] && from < groups[u][1] {
				ApplyMask(bufs[c], opt.Mask)
			}
		}
	})
	g := Sum(nil, bufs)
	st.GradBytes = int64(4 * (k + 1) * l.Size)
	st.Elapsed = time.Since(start)
	return g, losses, st
}

// batchable reports whether the batched engine computes m's losses and
// gradients on batch exactly as one tape per example would: no hooks, no
// visual transform, no steering, no dropout in training mode, every example valid (an
// invalid one goes to the per-example path, which returns its error), and
// trainable tensors among the LoRA factors, adapters and biases only
// (perExampleParams: those whose gradients batchRows routes per example).
func (m *TinyMLLM) batchable(l *Layout, batch []Sequence, h *Hooks, vt VisualTransform, opt *Options) bool {
	if h != nil || vt != nil || m.Steer != nil || len(batch) == 0 || opt != nil && opt.Train && m.Config.Dropout > 0 {
		return false
	}
	ok := m.perExampleParams()
	for _, p := range l.Params {
		if !ok[p] {
			return false
		}
	}
	visual := m.Config.Patches() + 1
	for i := range batch {
		s := &batch[i]
		if s.Loss == nil || !slices.Contains(s.Loss, true) || m.Check(s) != nil {
			return false
		}
		if len(s.Tokens)+len(s.Images)*(visual-1) > m.Config.MaxLen {
			return false
		}
	}
	return true
}

// perExampleParams returns the tensors whose per-example gradients a
// batched tape forms: the LoRA factors, adapters and biases of the blocks
// of the vision encoder and of the language model, the biases of their
// final LayerNorms, of the patch embedding and of the projector (BitFit's
// tensors), all used by Affine or as a LayerNorm's bias only.
func (m *TinyMLLM) perExampleParams() map[*Param]bool {
	ok := map[*Param]bool{}
	linear := func(lin *Linear) {
		for _, p := range []*Param{lin.B, lin.LoRAA, lin.LoRAB} {
			if p != nil {
				ok[p] = true
			}
		}
	}
	for _, s := range []*Stack{m.Vision.Stack, m.LM} {
		for _, b := range s.Blocks {
			for _, lin := range b.Linears() {
				linear(lin)
			}
			for _, a := range []*Adapter{b.Adapter1, b.Adapter2} {
				if a != nil {
					for _, p := range a.Params() {
						ok[p] = true
					}
				}
			}
			ok[b.LN1.B], ok[b.LN2.B] = true, true
		}
		ok[s.LN.B] = true
	}
	for _, lin := range []*Linear{m.Vision.PatchEmbed, m.Proj1, m.Proj2} {
		linear(lin)
	}
	return ok
}

// lossBatch builds the losses of batch on the batched tape t: the images
// of all examples through the vision encoder and the projector as one
// stack of rows, then the sequences of all examples through the language
// model as another, and each example's mean cross-entropy over the
// tokens its Loss marks. The language model's last block runs everything
// after attention on the rows that predict those tokens only (the rows
// the loss reads; the others feed nothing). The examples must be valid
// (batchable). vc, when not nil, holds the visual tokens of images seen
// before (visualCache checked it).
func (m *TinyMLLM) lossBatch(t *Tape, batch []Sequence, vc *VisualCache) *Node {
	vis := m.encodeBatch(t, batch, vc)
	xs := make([]*Node, len(batch))
	off := make([]int, len(batch)+1)
	keep := &rowKeep{off: []int{0}}
	var targets []int
	for e := range batch {
		s := &batch[e]
		x, pos, err := m.embed(t, s, vis[:len(s.Images)], nil)
		if err != nil {
			panic(err) // batchable checked the length
		}
		vis = vis[len(s.Images):]
		xs[e] = x
		off[e+1] = off[e] + x.Value.Rows()
		for i, l := range s.Loss {
			if l {
				keep.rows = append(keep.rows, off[e]+pos[i]-1)
				targets = append(targets, s.Tokens[i])
			}
		}
		keep.off = append(keep.off, len(keep.rows))
	}
	t.setRows(off, 0)
	hid, _ := m.LM.forward(t, t.Concat(xs...), off, keep, -1, nil)
	z := t.Affine(hid, t.Param(m.Tok), nil)
	return t.crossEntropies(z, targets, nil, keep.off, []int{len(batch)})
}

// batchLosses returns the batched losses of the examples of batch, with
// the visual tokens of vc where it has them (nil: none).
func (m *TinyMLLM) batchLosses(batch []Sequence, vc *VisualCache) batchLoss {
	return func(t *Tape, from, to int) *Node { return m.lossBatch(t, batch[from:to], vc) }
}

// encodeBatch runs the vision encoder and the projector on the images of
// all examples of batch at once, each image a block of rows, and returns
// each image's projected visual tokens, in order (EncodeImage with no
// hooks and no visual transform). With a cache vc (whose use means that
// nothing in the vision encoder and the projector is trainable), the
// tokens of the images it holds are constants from it, and only the
// others are encoded, then added to it.
func (m *TinyMLLM) encodeBatch(t *Tape, batch []Sequence, vc *VisualCache) []*Node {
	var imgs [][]float32
	// Example e's images, and so its rows, follow those of the examples
	// before it.
	first := make([]int, len(batch)+1)
	for e := range batch {
		imgs = append(imgs, batch[e].Images...)
		first[e+1] = first[e] + len(batch[e].Images)
	}
	if len(imgs) == 0 {
		return nil
	}
	if vc == nil {
		return m.encodeImages(t, imgs, first)
	}
	out := make([]*Node, len(imgs))
	keys := make([][sha256.Size]byte, len(imgs))
	var miss []int
	var todo [][]float32
	for j, img := range imgs {
		keys[j] = imageKey(img)
		if v, ok := vc.get(keys[j]); ok {
			out[j] = t.Input(v, false)
		} else {
			miss, todo = append(miss, j), append(todo, img)
		}
	}
	if len(todo) > 0 {
		// No tensor here is trainable: the rows need no examples.
		for i, v := range m.encodeImages(t, todo, nil) {
			vc.put(keys[miss[i]], v.Value)
			out[miss[i]] = v
		}
	}
	return out
}

// encodeImages runs the vision encoder and the projector on imgs, each
// image a block of rows, those of example e being images [first[e],
// first[e+1]) (nil when nothing is trainable), and returns each image's
// projected visual tokens.
func (m *TinyMLLM) encodeImages(t *Tape, imgs [][]float32, first []int) []*Node {
	v := m.Vision
	patches := make([]*Node, len(imgs))
	for j, img := range imgs {
		patches[j] = t.Patchify(v.imageNode(t, img, false), v.Patch)
	}
	n := m.Config.Patches()
	blocks := func(k int) []int {
		off := make([]int, len(first))
		for e, f := range first {
			off[e] = k * f
		}
		return off
	}
	t.setRows(blocks(n), n)
	pe := v.PatchEmbed.Forward(t, t.Concat(patches...), nil)
	t.setRows(blocks(n+1), n+1)
	xs := make([]*Node, len(imgs))
	segs := make([]int, len(imgs)+1)
	for j := range imgs {
		xs[j] = t.Add(t.Concat(t.Param(v.CLS), t.Slice(pe, j*n, (j+1)*n)), t.Param(v.Pos))
		segs[j+1] = (j + 1) * (n + 1)
	}
	enc, _ := v.Stack.forward(t, t.Concat(xs...), segs, nil, -1, nil)
	p := m.project(t, enc, Tensor{}, 0, nil, nil)
	out := make([]*Node, len(imgs))
	for j := range out {
		out[j] = t.Slice(p, segs[j], segs[j+1])
	}
	return out
}

// ForwardBatch is Forward on several sequences at once, without hooks or a
// visual transform: the images of all of them through the vision encoder
// and the projector as one stack of rows, then all the sequences through
// the language model as another. It returns the final hidden states of
// every sequence stacked, with sequence e in rows off[e] to off[e+1], and
// pos[e], the expanded positions of its tokens (Forward's pos). Each
// sequence's rows hold the bits Forward gives it on a tape of its own (see
// the top of this file), so callers may batch inference freely without
// changing a result. It returns the error of the first invalid sequence.
func (m *TinyMLLM) ForwardBatch(t *Tape, batch []Sequence) (hid *Node, off []int, pos [][]int, err error) {
	m.joinPeriod(t)
	return m.forwardBatch(t, batch, nil)
}

// forwardBatch is ForwardBatch with the visual tokens of the images the
// cache vc holds taken from it (nil: none; see encodeBatch).
func (m *TinyMLLM) forwardBatch(t *Tape, batch []Sequence, vc *VisualCache) (hid *Node, off []int, pos [][]int, err error) {
	hid, off, pos, _, _, err = m.forwardRows(t, batch, vc, false)
	return hid, off, pos, err
}

// forwardRows is forwardBatch, and with loss (for a model without
// steering) the output is at the rows that predict the tokens each
// sequence's Loss marks only, the rows of sequence e being
// keep.rows[keep.off[e]:keep.off[e+1]] of the stacked sequences and hid's
// rows keep.off[e] to keep.off[e+1]; targets are the marked tokens, in
// the same order. The language model's last block then runs everything
// after attention on those rows only, as lossBatch does. With loss, a
// sequence that marks its first token is an error.
func (m *TinyMLLM) forwardRows(t *Tape, batch []Sequence, vc *VisualCache, loss bool) (hid *Node, off []int, pos [][]int, keep *rowKeep, targets []int, err error) {
	// On a tape of MeanLosses with a PassShare (passshare.go), only the
	// language model's first block may read t.share: it is set during
	// m.LM.forward alone (not while the vision encoder runs).
	sh := t.share
	t.share = nil
	if sh != nil && !sh.fill {
		g := sh.g
		rows := g.off[len(g.off)-1]
		x := t.shareRead(g.x, []int{rows, len(g.x) / rows})
		t.setRows(g.off, 0)
		t.share = sh
		hid, _ = m.LM.forward(t, x, g.off, &g.keep, -1, nil)
		t.share = nil
		return hid, g.off, g.pos, &g.keep, g.targets, nil
	}
	for i := range batch {
		if err := m.Check(&batch[i]); err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("sequence %d: %w", i, err)
		}
	}
	vis := m.encodeBatch(t, batch, vc)
	xs := make([]*Node, len(batch))
	off = make([]int, len(batch)+1)
	pos = make([][]int, len(batch))
	if loss {
		if m.Steer != nil {
			panic("nn: forwardRows: loss rows of a steered model")
		}
		keep = &rowKeep{off: []int{0}}
	}
	for e := range batch {
		s := &batch[e]
		x, p, err := m.embed(t, s, vis[:len(s.Images)], nil)
		if err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("sequence %d: %w", e, err)
		}
		vis = vis[len(s.Images):]
		xs[e], pos[e] = x, p
		off[e+1] = off[e] + x.Value.Rows()
		if keep == nil {
			continue
		}
		for i, l := range s.Loss {
			if !l {
				continue
			}
			if p[i] < 1 {
				return nil, nil, nil, nil, nil, fmt.Errorf("nn: sequence %d marks its first token", e)
			}
			keep.rows = append(keep.rows, off[e]+p[i]-1)
			targets = append(targets, s.Tokens[i])
		}
		keep.off = append(keep.off, len(keep.rows))
	}
	t.setRows(off, 0)
	var h *Hooks
	if m.Steer != nil {
		from, end := make([]int, len(batch)), make([]int, len(batch))
		for e := range batch {
			f, n := m.steerSpan(&batch[e], pos[e], off[e+1]-off[e])
			from[e], end[e] = off[e]+f, off[e]+n
		}
		h = m.steerHooks(nil, from, end)
	}
	x := t.Concat(xs...)
	if sh != nil && keep != nil {
		g := sh.g
		keepOrCopy(true, &g.x, x.Value.Data)
		g.off, g.pos, g.targets = append(g.off[:0], off...), append(g.pos[:0], pos...), append(g.targets[:0], targets...)
		g.keep.rows, g.keep.off = append(g.keep.rows[:0], keep.rows...), append(g.keep.off[:0], keep.off...)
		t.share = sh
	}
	hid, _ = m.LM.forward(t, x, off, keep, -1, h)
	t.share = nil
	return hid, off, pos, keep, targets, nil
}
