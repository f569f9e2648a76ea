// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"math"
	"slices"
)

// BagOfWords returns the tokens of a batch from the released gradient ge
// of a token-embedding table [vocab, width]: the embedding lookup sends
// gradient only to the rows of tokens that occur, so without noise the
// non-zero rows are exactly the batch's distinct tokens (Melis et al.
// 2019, §4.1; Zhu et al. 2019, DLG, on language models). When n > 0 the
// attacker keeps only the n rows of largest norm (under noise every row is
// non-zero; n is then the attacker's guess of the number of distinct
// tokens); when n is 0 it keeps every non-zero row. Tokens come in
// decreasing order of row norm, ties by id. It panics if width < 1 or
// len(ge) is not a multiple of it.
func BagOfWords(ge []float32, width, n int) []int {
	if width < 1 || len(ge)%width != 0 {
		panic("gia: embedding gradient does not fit the width")
	}
	type row struct {
		id   int
		norm float64
	}
	var rows []row
	for id := range len(ge) / width {
		if s := norm(ge[id*width : (id+1)*width]); s > 0 {
			rows = append(rows, row{id, s})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(b.norm, a.norm) })
	if n > 0 && len(rows) > n {
		rows = rows[:n]
	}
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.id
	}
	return out
}

// TRR returns the token recovery rate of a bag of recovered tokens against
// the original token sequences: the fraction of original token positions
// whose token is in the bag. A bag carries no order or counts, so this is
// the bag-of-words reading of Sec-MMFL's "text recovery rate"; the
// position-wise rate needs the order, which the embedding rows do not
// give. It returns 0 for no original tokens.
func TRR(bag []int, orig [][]int) float64 {
	in := map[int]bool{}
	for _, id := range bag {
		in[id] = true
	}
	hit, all := 0, 0
	for _, s := range orig {
		for _, id := range s {
			all++
			if in[id] {
				hit++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(hit) / float64(all)
}

// Sequence returns the token at each position of a batch of one from the
// released gradients of a token-embedding table ge [vocab, width] and of a
// learned position-embedding table gpos [positions, width], given the bag
// of words bag (BagOfWords). The encoder's input row i is tok[xᵢ] +
// pos[i + offset], so the gradient of pos row i + offset equals position
// i's contribution to the gradient of tok row xᵢ: rows of positions past
// the end are exactly zero (the length leaks), and a token that occurs once
// has a tok row equal to its position's row. Sequence assigns to each
// position the token of the bag whose tok row has the largest cosine
// similarity with the position's row; a token repeated at k positions has
// the sum of k rows, which still points towards each of them. The
// sequence ends at the last non-zero position row (at most n positions
// when n > 0). It panics if the tables do not fit width.
func Sequence(ge, gpos []float32, width int, bag []int, offset, n int) []int {
	if width < 1 || len(ge)%width != 0 || len(gpos)%width != 0 {
		panic("gia: embedding gradients do not fit the width")
	}
	rows := len(gpos)/width - offset
	end := 0
	for i := range rows {
		if norm(gpos[(i+offset)*width:(i+offset+1)*width]) > 0 {
			end = i + 1
		}
	}
	if n > 0 {
		end = min(end, n)
	}
	out := make([]int, end)
	dz := make([]float32, width)
	for i := range end {
		p := gpos[(i+offset)*width : (i+offset+1)*width]
		best, bestCos := -1, math.Inf(-1)
		for _, id := range bag {
			if c := cosineGrad(p, ge[id*width:(id+1)*width], dz); c > bestCos {
				best, bestCos = id, c
			}
		}
		out[i] = best
	}
	return out
}

// PositionTRR returns the fraction of the positions of orig whose token got
// has at the same position (Sec-MMFL's text recovery rate read position by
// position); positions missing from got count as wrong. It returns 0 for
// an empty orig.
func PositionTRR(got, orig []int) float64 {
	if len(orig) == 0 {
		return 0
	}
	hit := 0
	for i, id := range orig {
		if i < len(got) && got[i] == id {
			hit++
		}
	}
	return float64(hit) / float64(len(orig))
}
