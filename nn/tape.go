// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math/rand/v2"

// Node is a value on a Tape together with its gradient. Value is owned by
// the tape (or, for parameters and inputs, by whoever supplied it) and must
// not be modified. Grad is nil until a gradient reaches the node during
// Backward; for trainable parameters it is the parameter's block of the
// tape's flat gradient vector.
type Node struct {
	Value Tensor
	Grad  []float32
	needs bool
	param *Param
	// rows, when not nil, are the rows of param whose gradient Grad holds
	// (a gathered layout, GatherRows): only Affine and Conv2d fill it.
	rows []int
}

// NeedsGrad reports whether gradients flow to n.
func (n *Node) NeedsGrad() bool { return n.needs }

// Tape records the operations of one forward pass so Backward can run them in
// reverse. A Tape is used by one goroutine for one example and then
// discarded.
//
// A Tape created with a layout and a flat gradient vector g (len l.Size)
// accumulates the gradients of the layout's parameters into g: Backward adds
// to g, it does not clear it. Parameters that are not in the layout are
// constants on the tape and get no gradient.
type Tape struct {
	layout *Layout
	grad   []float32
	ops    []func()
	params map[*Param]*Node
	done   bool
	bytes  int64
	arena  *arena // where values and gradients come from; nil: the heap
	// batch, when not nil, makes the tape a batched one with per-example
	// parameter gradients (see batchRows); grad is then unused.
	batch *batchRows
	// infer makes the tape an inference tape (newInferTape): no
	// parameter is trainable, and the layers may fuse maps and overwrite
	// values that nothing else reads (infer.go).
	infer bool
	// packs, on an inference tape or a batched training tape
	// (runBatched), holds the packed frozen weights of the call the tape
	// belongs to (packcache.go).
	packs *packScope
	// share, on an inference tape of MeanLosses with a PassShare, is
	// what the language model's first block keeps or reads there; nil
	// elsewhere.
	share *tapeShare

	// Train turns dropout on. The default, false, is evaluation mode.
	Train bool
	// Rand is the source of dropout masks; it must be set when Train is
	// true and the model uses dropout.
	Rand *rand.Rand
}

// NewTape returns a tape that accumulates the gradients of l's parameters
// into g. A nil l (with a nil g) gives a tape on which every parameter is
// constant, for inference or for gradients with respect to inputs only.
// NewTape panics if g does not match l.
func NewTape(l *Layout, g []float32) *Tape {
	if l == nil && g != nil || l != nil && len(g) != l.Size {
		panic(errLayout)
	}
	return &Tape{layout: l, grad: g, params: make(map[*Param]*Node)}
}

// Bytes returns the number of bytes of activations and activation gradients
// the tape holds: the training state of one example beyond the parameters.
func (t *Tape) Bytes() int64 { return t.bytes }

// Param returns the node of parameter p on t. The node's value shares p.Data.
func (t *Tape) Param(p *Param) *Node {
	if n, ok := t.params[p]; ok {
		return n
	}
	n := t.newNode()
	n.Value, n.param = Tensor{Shape: p.Shape, Data: p.Data}, p
	if t.layout != nil {
		if i := t.layout.Index(p); i >= 0 {
			n.needs = true
			n.rows = t.layout.Rows(i)
			if t.batch == nil {
				n.Grad = t.grad[t.layout.Offsets[i]:t.layout.Offsets[i+1]]
			}
		}
	}
	t.params[p] = n
	return n
}

// Input returns a node holding x. When needGrad is true, Backward computes
// the gradient with respect to x into the node's Grad (for gradient inversion
// and saliency). x is not copied and must not change while t is in use.
func (t *Tape) Input(x Tensor, needGrad bool) *Node {
	n := t.newNode()
	n.Value, n.needs = x, needGrad
	return n
}

// shapeOf returns a copy of shape: on an inference tape in its arena
// (living until Release, as the values do), else on the heap.
func (t *Tape) shapeOf(shape []int) []int {
	if t.infer && t.arena != nil && !slabOff {
		return t.arena.shape(shape)
	}
	return append([]int(nil), shape...)
}

// slabOff turns off the inference tapes' nodes, shapes and parameter map
// kept in their arenas (Tape.newNode, Tape.shapeOf; BenchmarkSlab's
// comparison in one process): each is allocated anew, as before.
var slabOff bool

// newNode returns a new, zeroed node: on an inference tape from its arena
// (the nodes, like the values, live until Release), else from the heap.
func (t *Tape) newNode() *Node {
	if t.infer && t.arena != nil && !slabOff {
		return t.arena.node()
	}
	return new(Node)
}

// node makes a new output node of the given shape; it needs a gradient when
// any input does.
func (t *Tape) node(shape []int, in ...*Node) *Node {
	return t.output(t.tensor(shape...), in)
}

// nodeOver is node for an operation that writes every element of the
// output's value: the value is not cleared first (floatsOver).
func (t *Tape) nodeOver(shape []int, in ...*Node) *Node {
	return t.output(Tensor{Shape: t.shapeOf(shape), Data: t.floatsOver(numel(shape))}, in)
}

// output makes the node of value v, counts its bytes, and marks it as
// needing a gradient when any input does.
func (t *Tape) output(v Tensor, in []*Node) *Node {
	n := t.newNode()
	n.Value = v
	t.bytes += int64(4 * len(v.Data))
	for _, x := range in {
		if x != nil && x.needs {
			n.needs = true
			break
		}
	}
	return n
}

// record adds a backward rule, run only when out receives a gradient.
func (t *Tape) record(out *Node, back func(g []float32)) {
	if !out.needs {
		return
	}
	t.ops = append(t.ops, func() {
		if out.Grad == nil {
			return
		}
		back(out.Grad)
	})
}

// g returns n's gradient buffer, allocating it on first use.
func (t *Tape) g(n *Node) []float32 {
	t.gCheck(n)
	if n.Grad == nil {
		n.Grad = t.floats(len(n.Value.Data))
		t.bytes += int64(4 * len(n.Grad))
	}
	return n.Grad
}

// gCheck panics where n's gradient may not be taken (Tape.g).
func (t *Tape) gCheck(n *Node) {
	if n.param != nil && t.batch != nil {
		// Only Affine routes a trainable parameter's gradient to the
		// examples of a batched tape; any other use would sum them.
		panic(errBatchParam)
	}
	if n.rows != nil {
		panic(errGathered)
	}
}

// gFresh returns n's gradient not yet made, not cleared (floatsOver), for
// a caller that writes every element as +0 plus its contribution: the
// bits of the contribution added into a cleared gradient. nil when n's
// gradient exists already, or without an arena or with gradOff.
func (t *Tape) gFresh(n *Node) []float32 {
	t.gCheck(n)
	if n.Grad != nil || t.arena == nil || gradOff {
		return nil
	}
	n.Grad = t.floatsOver(len(n.Value.Data))
	t.bytes += int64(4 * len(n.Grad))
	return n.Grad
}

// gAxpy adds α·x to n's gradient (axpy into Tape.g), writing a gradient
// not yet made as +0 + α·x[i] without clearing it first (gFresh).
func (t *Tape) gAxpy(n *Node, alpha float32, x []float32) {
	gx := t.gFresh(n)
	if gx == nil {
		axpy(alpha, x, t.g(n))
		return
	}
	if len(x) != len(gx) {
		panic(errLength)
	}
	j := axpyVec(gx, nil, x, alpha)
	clear(gx[j:])
	for ; j < len(gx); j++ {
		gx[j] += float32(alpha * x[j])
	}
}

// gMulAdd adds a·b elementwise to n's gradient (gx[i] += a[i]·b[i]),
// writing a gradient not yet made as +0 + a[i]·b[i] without clearing it
// first (gFresh). a and b must hold as many elements as n's value.
func (t *Tape) gMulAdd(n *Node, a, b []float32) {
	var src []float32
	gx := t.gFresh(n)
	if gx == nil {
		gx = t.g(n)
		src = gx
	}
	a, b = a[:len(gx)], b[:len(gx)]
	j := mulAddVec(gx, src, a, b)
	if src == nil {
		clear(gx[j:])
	}
	for ; j < len(gx); j++ {
		gx[j] += float32(a[j] * b[j])
	}
}

// Backward computes the gradient of the scalar loss with respect to every
// node that needs one, adding parameter gradients to the tape's flat vector.
// It panics if loss is not a scalar or if called twice.
func (t *Tape) Backward(loss *Node) {
	t.BackwardFrom(loss, []float32{1})
}

// BackwardFrom runs the backward pass seeded with the gradient seed of node
// out (a vector-Jacobian product). It panics if called twice or if seed does
// not match out.
func (t *Tape) BackwardFrom(out *Node, seed []float32) {
	if t.done {
		panic(errTapeDone)
	}
	if len(seed) != len(out.Value.Data) {
		panic(errNotScalar)
	}
	t.done = true
	if !out.needs {
		return
	}
	axpy(1, seed, t.g(out))
	for i := len(t.ops) - 1; i >= 0; i-- {
		t.ops[i]()
	}
	t.ops = nil
}
