// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// This file holds causal attention's forward products on the tiles the
// mask leaves: row i of a causal head reads the first w_i = r_i + 1 keys
// (r_i its position in the sequence), so
//
//   - the scores Q_h·K_hᵀ are computed on the tiles of columns below the
//     widest w_i of each tile's rows only: the softmax reads a row's first
//     w_i scores and overwrites the rest with +0 (softmaxRows), so the
//     scores left out were never read;
//   - the product with the values runs each tile's chains over the first
//     w terms only (w the widest w_i of the tile's rows), and causalFix
//     gives each element the bits of the whole chain: the terms left out
//     are fma(+0, v, s) for the masked probabilities, which leave s as it
//     is unless s is ±0 or v is not finite (see causalFix).
//
// Both give the bits of the products over every column (TestCausalBits).

// causalOff turns the tiles above off: attention computes every score
// and every chain (BenchmarkCausal's comparison in one process; the same
// bits).
var causalOff bool

// gemmLimit is the part of a causal attention product that gemmCausal
// computes: row i of C needs its first w_i = r_i + 1 columns of op(B) or,
// with cutK, the first w_i terms of its chains, where r_i = i, or
// rows[i] − lo when rows is not nil (softmaxRows' widths).
type gemmLimit struct {
	rows []int
	lo   int
	cutK bool
}

// width returns w_i.
func (l *gemmLimit) width(i int) int {
	if l.rows == nil {
		return i + 1
	}
	return l.rows[i] - l.lo + 1
}

// limited computes, tile by tile as block does, the tiles that lim
// keeps: with w the widest w_i of a tile's rows, the panels that hold
// columns below w, on the narrow kernel's columns where those fit in
// them (columns from w on may or may not be written), or, with lim.cutK,
// every column over the first w terms of each chain.
func (p *gemmPlan) limited(lim *gemmLimit) {
	nr := p.kern.nr
	for rb := range p.rowBlocks {
		end := min(p.m, (rb+1)*gemmMC)
		for i0 := rb * gemmMC; i0 < end; {
			rows := gemmTileRows(end-i0, p.kern.short != nil)
			w := 1
			for i := i0; i < i0+rows; i++ {
				w = max(w, lim.width(i))
			}
			k, n := p.k, p.n
			if lim.cutK {
				k = min(k, w)
			} else {
				n = min(n, w)
			}
			for q := 0; q*nr < n; q++ {
				// Whole panels, or the narrowest kernel's that holds
				// the columns needed: stored in place, not through
				// the scratch tile, where the matrix has them.
				cols := nr
				for nk := p.kern.narrow; nk != nil && n-q*nr <= nk.nr && !(thinOff && nk.nr < 16); nk = nk.narrow {
					cols = nk.nr
				}
				p.tileAt(i0, rows, q, min(cols, p.n-q*nr), k, p.tiles)
			}
			i0 += rows
		}
	}
}

// gemmCausal computes the part of C = α·A·op(B) (A not transposed, β = 0)
// that lim keeps, each element it writes with gemm's bits over the terms
// it keeps, with the CPU backend's kernel, on one goroutine. It panics
// if a matrix is too short for its shape.
func gemmCausal(tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, lim *gemmLimit) {
	if m <= 0 || n <= 0 || k <= 0 {
		panic(errShape)
	}
	checkMatrix("A", m, k, a, lda)
	if tB {
		checkMatrix("B", n, k, b, ldb)
	} else {
		checkMatrix("B", k, n, b, ldb)
	}
	checkMatrix("C", m, n, c, ldc)
	gemmRun(gemmUse, false, tB, m, n, k, alpha, a, lda, b, ldb, nil, 0, c, ldc, lim)
}

// causalCut reports whether a causal head's products of nq query rows
// over n keys of width dh run on the mask's tiles (gemmCausal): on the
// CPU backend, below the size at which Gemm runs on several goroutines,
// unless causalOff.
func causalCut(nq, n, dh int) bool {
	_, cpu := kernels.(CPU)
	return cpu && !causalOff && nq*n*dh < gemmParallel
}

// causalHead computes one causal head's attention at nq query rows over n
// keys and values (row stride D, head width dh): the scores α·Q_h·K_hᵀ
// into p (nq×n), their softmax in place, and od = p·V_h, with the bits of
// attendForward's three calls. Row i's position is r_i = i, or rows[i] − lo
// when rows is not nil.
func causalHead(qd, kd, vd, od, p []float32, nq, n, dh, D int, sc float32, rows []int, lo int) {
	scores := gemmLimit{rows: rows, lo: lo}
	gemmCausal(true, nq, n, dh, sc, qd, D, kd, D, p, n, &scores)
	softmaxRows(p, nq, n, true, rows, lo)
	values := gemmLimit{rows: rows, lo: lo, cutK: true}
	gemmCausal(false, nq, dh, n, 1, p, n, vd, D, od, D, &values)
	if !causalFix(vd, od, nq, n, dh, D, &values) {
		kernels.Gemm(false, false, nq, dh, n, 1, p, n, vd, D, 0, od, D)
	}
}

// causalFix gives the product od = p·V_h that gemmCausal computed with
// lim.cutK the bits of the whole product, or reports false where it
// cannot (the caller then computes it whole). Row i's chain in column c
// is s, the chain over its first w_i terms, followed by terms fma(+0, v_j,
// ·) for every masked j ≥ w_i: gemmCausal ran some of them (up to the
// tile's widest row), the whole product runs all. Such a term adds an
// exact ±0 (the sign of v_j) to the chain, which leaves s unchanged when
// s ≠ 0; gives +0 from +0; and from −0 gives −0 only when v_j's sign bit
// is set; and is NaN when v_j is infinite or NaN. So where every v_j is
// finite an element differs only where gemmCausal's result is −0 and
// some v_j, j ≥ w_i, has a clear sign bit: the whole chain gives +0
// there. Every v_j below the widest w of the last row's tile is in that
// row's chain with a factor p ≥ +0, so the row is finite in column c only
// if they are all finite; the values from the last row's w_i on are
// checked one by one. The −0 are looked for eight at a time where the
// CPU has AVX2 (negZeroVec).
func causalFix(vd, od []float32, nq, n, dh, D int, lim *gemmLimit) bool {
	for _, x := range od[(nq-1)*D : (nq-1)*D+dh] {
		if !finite32(x) {
			return false
		}
	}
	for j := lim.width(nq - 1); j < n; j++ {
		for _, x := range vd[j*D : j*D+dh] {
			if !finite32(x) {
				return false
			}
		}
	}
	if found, ok := negZeroVec(od, nq, dh, D); ok && !found {
		return true
	}
	for i := range nq {
		w := lim.width(i)
		if w >= n {
			continue
		}
		row := od[i*D : i*D+dh]
		for c, x := range row {
			if math.Float32bits(x) != 1<<31 {
				continue
			}
			for j := w; j < n; j++ {
				if math.Float32bits(vd[j*D+c])>>31 == 0 {
					row[c] = 0
					break
				}
			}
		}
	}
	return true
}

// finite32 reports whether x is neither infinite nor NaN.
func finite32(x float32) bool {
	return math.Float32bits(x)&0x7f800000 != 0x7f800000
}
