// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "sync"

// arena hands out zeroed float32 slices carved from slabs it keeps, so
// that the tapes of one worker reuse the same memory example after example
// instead of allocating (and the garbage collector reclaiming) every
// activation anew. reset makes all of it free again; whoever calls it
// must hold no slice of the arena any more.
type arena struct {
	slabs    [][]float32
	cur, off int
	// nodes hold the nodes of an inference tape (Tape.newNode), in
	// chunks that never move, handed out as the slabs are (nodeCur,
	// nodeOff); params is its map of parameter nodes, cleared for each
	// tape. Only inference tapes use them.
	nodes            [][]Node
	nodeCur, nodeOff int
	params           map[*Param]*Node
	// ints hold the shapes of an inference tape's values (Tape.shapeOf),
	// handed out as the slabs are.
	ints           [][]int
	intCur, intOff int
}

// arenaNodes is the length of an arena's first chunk of nodes; each
// further chunk doubles it, up to 64 times as long.
const arenaNodes = 256

// arenaSlab is the smallest slab an arena allocates, in elements.
const arenaSlab = 1 << 16

// arenas are the arenas of PerSample's and Gradient's workers, kept
// between calls.
var arenas = sync.Pool{New: func() any { return new(arena) }}

// alloc returns n zeroed elements.
func (a *arena) alloc(n int) []float32 {
	r := a.allocDirty(n)
	clear(r)
	return r
}

// allocDirty returns n elements holding whatever they held before, for a
// caller that writes every one of them before reading it.
func (a *arena) allocDirty(n int) []float32 {
	for a.cur < len(a.slabs) {
		s := a.slabs[a.cur]
		if a.off+n <= len(s) {
			r := s[a.off : a.off+n : a.off+n]
			a.off += n
			return r
		}
		a.cur++
		a.off = 0
	}
	a.slabs = append(a.slabs, make([]float32, max(n, arenaSlab)))
	a.cur, a.off = len(a.slabs)-1, n
	return a.slabs[a.cur][:n:n]
}

// reset frees everything alloc, node and shape handed out.
func (a *arena) reset() {
	a.cur, a.off, a.nodeCur, a.nodeOff, a.intCur, a.intOff = 0, 0, 0, 0, 0, 0
}

// shape returns a copy of s in the arena, valid until the next reset.
func (a *arena) shape(s []int) []int {
	n := len(s)
	for a.intCur < len(a.ints) {
		c := a.ints[a.intCur]
		if a.intOff+n <= len(c) {
			r := c[a.intOff : a.intOff+n : a.intOff+n]
			a.intOff += n
			copy(r, s)
			return r
		}
		a.intCur++
		a.intOff = 0
	}
	a.ints = append(a.ints, make([]int, max(n, arenaNodes<<min(len(a.ints), 6))))
	a.intCur, a.intOff = len(a.ints)-1, n
	r := a.ints[a.intCur][:n:n]
	copy(r, s)
	return r
}

// node returns a zeroed node of the arena, valid until the next reset.
func (a *arena) node() *Node {
	for a.nodeCur < len(a.nodes) {
		c := a.nodes[a.nodeCur]
		if a.nodeOff < len(c) {
			n := &c[a.nodeOff]
			a.nodeOff++
			*n = Node{}
			return n
		}
		a.nodeCur++
		a.nodeOff = 0
	}
	a.nodes = append(a.nodes, make([]Node, arenaNodes<<min(len(a.nodes), 6)))
	a.nodeCur, a.nodeOff = len(a.nodes)-1, 1
	return &a.nodes[a.nodeCur][0]
}

// floats returns n zeroed elements for the tape's own use: from the
// tape's arena when it has one, else newly allocated.
func (t *Tape) floats(n int) []float32 {
	if t.arena != nil {
		return t.arena.alloc(n)
	}
	return make([]float32, n)
}

// floatsOver returns n elements for the tape's own use that the caller
// overwrites entirely before reading: from the tape's arena without
// clearing them (which costs a seventh of a batched step, whose tapes
// outgrow the caches), else newly allocated.
func (t *Tape) floatsOver(n int) []float32 {
	if t.arena != nil {
		return t.arena.allocDirty(n)
	}
	return make([]float32, n)
}

// tensor returns a zeroed tensor of the given shape from t.floats.
func (t *Tape) tensor(shape ...int) Tensor {
	return Tensor{Shape: t.shapeOf(shape), Data: t.floats(numel(shape))}
}
