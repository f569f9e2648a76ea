// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"sync"
)

// This file holds the engine's inference path: forward passes without
// gradients (the losses of zeroth-order training, evaluation, generation
// and the attacks' scores) on an inference tape. Such a tape makes no
// parameter trainable, so no operation records a backward rule, and its
// values come from an arena kept between calls (the pool inferArenas), so that
// a pass allocates almost nothing. On it the layers also fuse where no
// backward pass needs the intermediate values and no hook observes them:
//
//   - a LoRA product is added into the frozen product's output by the
//     matrix product itself (β = 1; Tape.addLoRA says why the bits are
//     those of Tape.Weighted's sum);
//   - GELU overwrites its input (a bias-added product that nothing else
//     reads) instead of writing a new tensor;
//   - the residual addition before a block's second LayerNorm and the
//     LayerNorm run in one call, on one output buffer each (Tape.addNorm);
//   - LayerNorm keeps neither the normalised rows nor their statistics,
//     and computes the statistics of sixteen rows at once (layerNormRows:
//     independent chains of float64 sums in vector lanes, each in its
//     row's order; vrow_amd64.s).
//
// Every value is computed by the same arithmetic, in the same order, as on
// an ordinary tape, so an inference tape gives the same bits
// (TestInferBitwise compares every logit of several shapes with the
// ordinary tape's).

// thinOff turns off the narrow AVX2 kernels (panels of at most 8
// columns, gemmAVX2x8), the bias rows filled by doubling copies
// (fillRows) and the PassShare's values read in place (BenchmarkThin's
// comparison in one process): the code before them, with the same bits.
var thinOff bool

// inferArenas are the arenas of inference tapes, kept between calls; a
// pool of their own, so that the slabs of training's arenas (arenas) keep
// the sizes of training's tapes.
var inferArenas = sync.Pool{New: func() any { return new(arena) }}

// newInferTape returns an inference tape whose values, nodes and map of
// parameter nodes come from an arena of the pool inferArenas; Release
// hands the arena back. Its products take the packed weights of scope
// (packcache.go); nil: each product packs its own.
func newInferTape(scope *packScope) *Tape {
	a := inferArenas.Get().(*arena)
	a.reset()
	if a.params == nil || slabOff {
		a.params = make(map[*Param]*Node)
	}
	clear(a.params)
	return &Tape{params: a.params, arena: a, infer: true, packs: scope}
}

// NewInferenceTape returns a tape for forward passes without gradients:
// every parameter is a constant (NewTape(nil, nil)), and its nodes and
// their values live in memory reused from tape to tape, which the caller
// hands back with Release once it has read them. Its forward passes give the
// bits of an ordinary tape's. Inputs that need a gradient
// (Tape.Input(x, true)) are allowed; the maps that use them are then
// recorded and not fused. Within a PackWeights period of a model, that
// model's Forward and ForwardBatch on the tape take the period's packed
// weights (the same bits).
func NewInferenceTape() *Tape { return newInferTape(nil) }

// Release hands the memory of an inference tape (NewInferenceTape) back
// for reuse: afterwards no node or value of the tape may be read and the
// tape may not be used. It does nothing on other tapes.
func (t *Tape) Release() {
	if t.infer && t.arena != nil {
		inferArenas.Put(t.arena)
		t.arena = nil
	}
}

// fusable reports whether the values of nodes may be overwritten or their
// maps fused: on an inference tape, without hooks (which may keep or patch
// a tensor), when no node needs a gradient.
func (t *Tape) fusable(h *Hooks, nodes ...*Node) bool {
	if !t.infer || h != nil {
		return false
	}
	for _, n := range nodes {
		if n.needs {
			return false
		}
	}
	return true
}

// geluOf returns GELU(x), overwriting x when the caller reads x no more
// and the tape may fuse (fusable).
func (t *Tape) geluOf(x *Node, h *Hooks) *Node {
	if !t.fusable(h, x) {
		return t.GELU(x)
	}
	geluFwd(x.Value.Data, nil, x.Value.Data)
	return x
}

// addLoRA adds s·(u·bᵀ) to y in place, u of shape [n, r] and b [out, r],
// y [n, out], with s > 0: one product whose store adds into y (β = 1),
// each element round(round(s·c) + y) with c the product's chain (gemm.go).
// That is the bits of Tape.Weighted([1, s], y, Affine(u, b)), which
// computes (0 + y) + round(s·c) with c stored first: c is never −0 (a
// chain starts at +0, and an addition that gives ±0 from +0 gives +0), so
// round(s·c) is never −0 for s > 0, and then −0 and +0 in y give the same
// sum.
func (t *Tape) addLoRA(y, u, b *Node, s float32) {
	out, r := b.Value.Shape[0], b.Value.Cols()
	n := u.Value.Rows()
	if u.Value.Cols() != r || len(y.Value.Data) != n*out {
		panic(errShape)
	}
	gemmPanels(n, out, r, s, u.Value.Data, r, b.Value.Data, t.weightPanels(b, out, r), 1, y.Value.Data, out)
}

// addNorm returns x + o and LayerNorm n of it in one call, on an
// inference tape (fusable): the bits of Tape.Add and then
// LayerNorm.Forward.
func (t *Tape) addNorm(x, o *Node, n *LayerNorm) (sum, norm *Node) {
	c := len(n.G.Data)
	if len(x.Value.Data) != len(o.Value.Data) || x.Value.Cols() != c {
		panic(errShape)
	}
	sum = t.nodeOver(x.Value.Shape, x, o)
	norm = t.nodeOver(x.Value.Shape, x, o)
	xd, od, sd, nd := x.Value.Data, o.Value.Data, sum.Value.Data, norm.Value.Data
	od = od[:len(xd)]
	for i := addVec(sd, xd, od); i < len(xd); i++ {
		sd[i] = xd[i] + od[i]
	}
	layerNormRows(nd, sd, c, n.G.Data, n.B.Data, n.Eps)
	return sum, norm
}

// attentionRows is attention's output at the rows of q, k and v that
// rows names (absolute rows of the stacked sequences segs, as
// Tape.attention takes them), on an inference tape: q holds those rows'
// queries only (len(rows) rows, in the order of rows), k and v every row.
// Row r of the output is row rows[r] of attention's output, bit for bit
// (attendRows says why). It returns no probabilities.
func (t *Tape) attentionRows(q, k, v *Node, rows []int, heads int, causal bool, segs []int) *Node {
	T, D := k.Value.Rows(), k.Value.Cols()
	if q.Value.Rows() != len(rows) || q.Value.Cols() != D || v.Value.Rows() != T || v.Value.Cols() != D {
		panic(errShape)
	}
	if heads <= 0 || D%heads != 0 {
		panic(errHeads)
	}
	if segs == nil {
		segs = []int{0, T}
	}
	if segs[len(segs)-1] != T {
		panic(errShape)
	}
	out := t.nodeOver([]int{len(rows), D}, q, k, v)
	long := 0
	for s := range len(segs) - 1 {
		long = max(long, segs[s+1]-segs[s])
	}
	p := t.floatsOver(len(rows) * long)
	qd, kd, vd, od := q.Value.Data, k.Value.Data, v.Value.Data, out.Value.Data
	// Runs of consecutive kept rows in one sequence share the sequence's
	// keys and values.
	s := 0
	for from := 0; from < len(rows); {
		r := rows[from]
		if r < 0 || r >= T {
			panic(errIndex)
		}
		for r < segs[s] || r >= segs[s+1] {
			s = (s + 1) % (len(segs) - 1)
		}
		to := from + 1
		for to < len(rows) && rows[to] >= segs[s] && rows[to] < segs[s+1] {
			to++
		}
		lo, n := segs[s], segs[s+1]-segs[s]
		attendRows(qd[from*D:], kd[lo*D:], vd[lo*D:], od[from*D:], p[:(to-from)*n], rows[from:to], lo, n, D, heads, causal)
		from = to
	}
	return out
}

// attendRows is attendForward at some rows of one sequence of n rows
// (row stride D): qd holds the queries of rows (absolute rows, the
// sequence's first at lo) one after the other, and row i of od gets
// attendForward's output at row rows[i]; p is len(rows)·n scratch.
//
// The bits are attendForward's. Each score is the product's chain over
// the dh columns of one query and one key, which does not depend on the
// other rows of the product; each row's softmax reads its own scores;
// and the product with the values runs over all n rows of the sequence,
// the masked ones zero, as attendForward's does (a causal head on the
// mask's tiles, causalHead, as there).
func attendRows(qd, kd, vd, od, p []float32, rows []int, lo, n, D, heads int, causal bool) {
	nq := len(rows)
	dh := D / heads
	sc := float32(1 / math.Sqrt(float64(dh)))
	cut := causal && causalCut(nq, n, dh)
	for h := 0; h < heads; h++ {
		if cut {
			causalHead(qd[h*dh:], kd[h*dh:], vd[h*dh:], od[h*dh:], p, nq, n, dh, D, sc, rows, lo)
			continue
		}
		kernels.Gemm(false, true, nq, n, dh, sc, qd[h*dh:], D, kd[h*dh:], D, 0, p, n)
		softmaxRows(p, nq, n, causal, rows, lo)
		kernels.Gemm(false, false, nq, dh, n, 1, p, n, vd[h*dh:], D, 0, od[h*dh:], D)
	}
}
