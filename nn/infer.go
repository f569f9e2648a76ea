// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

// This file holds the engine's inference path: forward passes without
// gradients (the losses of zeroth-order training, evaluation, generation
// and the attacks' scores) on an inference tape. Such a tape makes no
// parameter trainable, so no operation records a backward rule, and its
// values come from an arena kept between calls (the pool arenas), so that
// a pass allocates almost nothing. On it the layers also fuse where no
// backward pass needs the intermediate values and no hook observes them:
//
//   - a LoRA product is added into the frozen product's output in place,
//     y ← (y + 0) + s·z, which is what Tape.Weighted computes from a
//     zeroed output (0 + 1·y = y + 0, the same bits, −0 included);
//   - GELU overwrites its input (a bias-added product that nothing else
//     reads) instead of writing a new tensor;
//   - the residual addition before a block's second LayerNorm and the
//     LayerNorm run in one pass over the rows (Tape.addNorm);
//   - LayerNorm keeps neither the normalised rows nor their statistics.
//
// Every value is computed by the same arithmetic, in the same order, as on
// an ordinary tape, so an inference tape gives the same bits
// (TestInferBitwise compares every logit of several shapes with the
// ordinary tape's).

// newInferTape returns an inference tape whose values come from an arena
// of the pool arenas; Release hands the arena back.
func newInferTape() *Tape {
	a := arenas.Get().(*arena)
	a.reset()
	return &Tape{params: make(map[*Param]*Node), arena: a, infer: true}
}

// NewInferenceTape returns a tape for forward passes without gradients:
// every parameter is a constant (NewTape(nil, nil)), and the values of its
// nodes live in memory reused from tape to tape, which the caller hands
// back with Release once it has read them. Its forward passes give the
// bits of an ordinary tape's. Inputs that need a gradient
// (Tape.Input(x, true)) are allowed; the maps that use them are then
// recorded and not fused.
func NewInferenceTape() *Tape { return newInferTape() }

// Release hands the memory of an inference tape (NewInferenceTape) back
// for reuse: afterwards no value of the tape may be read and the tape may
// not be used. It does nothing on other tapes.
func (t *Tape) Release() {
	if t.infer && t.arena != nil {
		arenas.Put(t.arena)
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

// addScaled sets y[i] = (y[i] + 0) + s·z[i]: Tape.Weighted's Σ w_i·x_i
// with weights 1 and s from a zeroed output, in place.
func addScaled(y []float32, s float32, z []float32) {
	z = z[:len(y)]
	for i, v := range z {
		y[i] = (y[i] + 0) + s*v
	}
}

// addNorm returns x + o and LayerNorm n of it, in one pass over the rows,
// on an inference tape (fusable): the bits of Tape.Add and then
// LayerNorm.Forward.
func (t *Tape) addNorm(x, o *Node, n *LayerNorm) (sum, norm *Node) {
	c := len(n.G.Data)
	if len(x.Value.Data) != len(o.Value.Data) || x.Value.Cols() != c {
		panic(errShape)
	}
	sum = t.nodeOver(x.Value.Shape, x, o)
	norm = t.nodeOver(x.Value.Shape, x, o)
	xd, od, sd, nd := x.Value.Data, o.Value.Data, sum.Value.Data, norm.Value.Data
	for i := 0; i < len(xd)/c; i++ {
		sr := sd[i*c : (i+1)*c]
		for j, v := range xd[i*c : (i+1)*c] {
			sr[j] = v + od[i*c+j]
		}
		layerNormRow(nd[i*c:(i+1)*c], nil, sr, n.G.Data, n.B.Data, n.Eps)
	}
	return sum, norm
}
