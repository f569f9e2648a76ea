// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// gradOff turns off the kernels of vgrad_amd64.s, ClipAll's and Sum's
// several examples at a time, the backward's gradients written without
// clearing (Tape.gFresh) and the packed frozen weights on batched
// training tapes (runBatched) (BenchmarkFirstOrder's comparison in one
// process): the code before them, with the same bits.
var gradOff bool

// clipAllFlat is ClipAll with a flat rule (no parts, bound c ≥ 0) that
// computes the norms of eight examples at once (sumSquares8), each in
// its own chain, and rechecks only the examples it rescaled: an example
// left as it was keeps the norm it had, at most c, and one zeroed for a
// norm that is not finite, or for a factor c/n that rounds to 0, has
// norm 0. Each example goes through Clip's
// steps in Clip's order, so every example gets Clip's bits and norm.
func clipAllFlat(gs [][]float32, c float64) [][]float64 {
	ns := make([][]float64, len(gs))
	ss := sumSquaresAll(gs, nil)
	var pending []int
	for i, g := range gs {
		n := math.Sqrt(ss[i])
		ns[i] = []float64{n}
		switch {
		case math.IsNaN(n) || math.IsInf(n, 0):
			clear(g)
		case n > c:
			f := float32(c / n)
			if f == 0 { // Clip zeroes the part (c = 0, or c/n underflows)
				clear(g)
				continue
			}
			scale(f, g) // f = 1 leaves g as it is, as Clip does
			pending = append(pending, i)
		}
	}
	// float32 rounding can leave a norm a few ulps above its bound; every
	// nudge strictly shrinks each nonzero element (Clip's loop).
	const f = float32(1 - 1.0/(1<<22))
	for len(pending) > 0 {
		ss = sumSquaresAll(gs, pending)
		next := pending[:0]
		for k, i := range pending {
			if math.Sqrt(ss[k]) > c {
				for j, v := range gs[i] {
					if p := v * f; p != v {
						gs[i][j] = p
					} else {
						gs[i][j] = math.Nextafter32(v, 0)
					}
				}
				next = append(next, i)
			}
		}
		pending = next
	}
	return ns
}

// sumSquaresAll returns sumSquares of gs[i] for every i of idx (nil:
// every example), in idx's order: eight at a time through sumSquares8
// where they have one length, the rest one by one.
func sumSquaresAll(gs [][]float32, idx []int) []float64 {
	n := len(idx)
	if idx == nil {
		n = len(gs)
	}
	at := func(k int) []float32 {
		if idx == nil {
			return gs[k]
		}
		return gs[idx[k]]
	}
	ss := make([]float64, n)
	k := 0
	for ; k+8 <= n; k += 8 {
		var x [8][]float32
		same := true
		for e := range x {
			x[e] = at(k + e)
			same = same && len(x[e]) == len(x[0])
		}
		s, ok := [8]float64{}, false
		if same {
			s, ok = sumSquares8(&x, len(x[0]))
		}
		if !ok {
			break
		}
		copy(ss[k:], s[:])
	}
	for ; k < n; k++ {
		ss[k] = sumSquares(at(k))
	}
	return ss
}
