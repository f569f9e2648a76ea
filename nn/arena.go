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
}

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

// reset frees everything alloc handed out.
func (a *arena) reset() { a.cur, a.off = 0, 0 }

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
	return Tensor{Shape: append([]int(nil), shape...), Data: t.floats(numel(shape))}
}
