// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"cmp"
	"math"
	"slices"
)

// initRel is the initial relevance R^(N) at the logits of the answer
// positions (Rap-FT §V-B, list 1–3), built one position at a time from
// that position's next-token distribution (initRel.add), so the whole
// [answers, V] distribution is never held:
//
//   - naive keeps every probability and is stored densely ([rows, V]: the
//     probabilities are the relevance, one copy);
//   - top-k, top-p and beam keep a few tokens per position and store only
//     those, as (token, value) pairs in token order, row after row
//     (compressed rows: start, tok, val). This is the paper's reason for
//     the decoding initialisations ("curse of dimensionality") and the
//     saving of its Table IV.
//
// A retained value is the token's probability (not renormalised); every
// other entry is zero.
type initRel struct {
	o           LRP
	rows, vocab int
	dense       []float64 // naive: [rows, vocab]
	start       []int     // sparse: row k is tok[start[k]:start[k+1]]
	tok         []int32
	val         []float64
	order       []int    // topk, topp, beam: one row's tokens by decreasing probability (reused)
	cands       [][]cand // beam: the b most probable tokens of every row
}

// cand is a token of a position and its probability (16 bytes).
type cand struct {
	tok int
	p   float64
}

// candBytes is the size of a cand: an int and a float64.
const candBytes = 16

// newInitRel returns an empty initial relevance of rows positions over a
// vocabulary of v tokens under o.Init (o must be checked).
func newInitRel(o LRP, rows, v int) *initRel {
	r := &initRel{o: o, rows: rows, vocab: v}
	switch o.Init {
	case "naive":
		r.dense = make([]float64, rows*v)
		return r
	case "beam":
		r.cands = make([][]cand, rows)
	}
	r.order = make([]int, v)
	r.start = []int{0}
	return r
}

// add records position k's next-token distribution p (len vocab); the
// positions are added in order 0, 1, …. p is not retained.
func (r *initRel) add(k int, p []float64) {
	switch r.o.Init {
	case "naive":
		copy(r.dense[k*r.vocab:(k+1)*r.vocab], p)
		return
	}
	descendingInto(r.order, p)
	if r.o.Init == "beam" {
		top := r.order[:min(r.o.K, len(p))]
		r.cands[k] = make([]cand, len(top))
		for i, v := range top {
			r.cands[k][i] = cand{v, p[v]}
		}
		return
	}
	var kept []cand
	cum := 0.0
	for n, v := range r.order {
		if (r.o.Init == "topk" && n >= r.o.K) || (r.o.Init == "topp" && cum >= r.o.P) {
			break
		}
		kept = append(kept, cand{v, p[v]})
		cum += p[v]
	}
	r.appendRow(kept)
}

// appendRow stores the kept tokens of the next row in token order.
func (r *initRel) appendRow(kept []cand) {
	slices.SortFunc(kept, func(a, b cand) int { return cmp.Compare(a.tok, b.tok) })
	for _, c := range kept {
		r.tok = append(r.tok, int32(c.tok))
		r.val = append(r.val, c.p)
	}
	r.start = append(r.start, len(r.tok))
}

// finish completes the initial relevance once every position is added:
// the beam initialisation keeps the (position, token) pairs on the final
// beams.
func (r *initRel) finish() {
	if r.o.Init != "beam" {
		return
	}
	for k, toks := range beams(r.cands, r.o.K) {
		var kept []cand
		for _, c := range r.cands[k] {
			if slices.Contains(toks, c.tok) {
				kept = append(kept, c)
			}
		}
		r.appendRow(kept)
	}
}

// each calls f with every non-zero retained entry of row k, tokens
// ascending.
func (r *initRel) each(k int, f func(v int, rv float64)) {
	if r.dense != nil {
		for v, rv := range r.dense[k*r.vocab : (k+1)*r.vocab] {
			if rv != 0 {
				f(v, rv)
			}
		}
		return
	}
	for i := r.start[k]; i < r.start[k+1]; i++ {
		if r.val[i] != 0 {
			f(int(r.tok[i]), r.val[i])
		}
	}
}

// sum returns the total initial relevance, summed row by row, tokens
// ascending.
func (r *initRel) sum() float64 {
	s := 0.0
	for k := range r.rows {
		r.each(k, func(_ int, rv float64) { s += rv })
	}
	return s
}

// kept returns the number of stored entries: rows·vocab for naive.
func (r *initRel) kept() int {
	if r.dense != nil {
		return len(r.dense)
	}
	return len(r.val)
}

// bytes returns the memory of the initial relevance and of the buffers
// that built it (the sort order and the beam's candidates), from their
// lengths: 8 bytes a float64 or int, 4 an int32 token.
func (r *initRel) bytes() int64 {
	n := int64(8*(len(r.dense)+len(r.start)+len(r.val)+len(r.order)) + 4*len(r.tok))
	for _, c := range r.cands {
		n += int64(candBytes * len(c))
	}
	return n
}

// descendingInto fills order (len(p)) with the indices of p by decreasing
// value, ties by index.
func descendingInto(order []int, p []float64) {
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[b], p[a]) })
}

// beams runs a beam search of width b over independent per-position
// distributions, each given by its b most probable tokens in decreasing
// order (cands): each beam is extended by those tokens of the next
// position, and the b beams of largest log-probability survive. It
// returns, per position, the distinct tokens on the final beams.
func beams(cands [][]cand, b int) [][]int {
	type beam struct {
		score float64
		toks  []int
	}
	cur := []beam{{}}
	for _, top := range cands {
		var next []beam
		for _, bm := range cur {
			for _, c := range top {
				next = append(next, beam{bm.score + math.Log(c.p), append(slices.Clone(bm.toks), c.tok)})
			}
		}
		slices.SortStableFunc(next, func(x, y beam) int { return cmp.Compare(y.score, x.score) })
		cur = next[:min(b, len(next))]
	}
	out := make([][]int, len(cands))
	for _, bm := range cur {
		for k, v := range bm.toks {
			if !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	return out
}
