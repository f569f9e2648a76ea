// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// TokenPruning is visual token pruning and fusion in the VisionZip style,
// Mechanism 1 of Dual-Priv Pruning: the patch tokens of an image are
// ranked by the [CLS] attention of the vision block a VisualTransform is
// given (averaged over heads); [CLS] and the top-ranked dominant patches
// are kept; the other patches are grouped around k centres at a uniform
// stride over them (the centres excluded from the groups), each patch
// joining the centre of highest cosine similarity of hidden states, and
// each group becomes one contextual token, centre + mean of its members
// (a centre alone if none join). Optional Gaussian noise of standard
// deviation NoiseStd per coordinate goes on the contextual tokens.
//
// It is one implementation shared by the Dual-Priv method (package
// methods, which adds fusion noise in training forward passes) and
// pretraining's token-dropping augmentation (package pretrain, which
// trains the base on pruned images so that pruning does not take it out
// of distribution).
//
// References:
//   - Dual-Priv Pruning: Efficient Differential Private Fine-Tuning in
//     Multimodal Large Language Models (anonymous ICLR submission, under
//     review), §4.1, Eqs. 5–8.
//   - S. Yang et al., VisionZip: Longer is better but not necessary in
//     vision language models, 2024, arXiv:2412.04467.
type TokenPruning struct {
	// Retention is the fraction of an image's patch tokens that reach the
	// projector (dominant + contextual), in (0, 1]; at least one patch is
	// kept.
	Retention float64
	// Contextual is the share of the retained patch tokens that are
	// contextual (fused) tokens, in [0, 1).
	Contextual float64
	// KeepRest keeps every non-dominant patch as its own token instead of
	// fusing them (with NoiseStd > 0: fusion noise without pruning, a
	// control of Dual-Priv).
	KeepRest bool
	// NoiseStd is the standard deviation of the noise added to each
	// coordinate of the contextual tokens (the non-dominant ones with
	// KeepRest) when Mix is given a generator.
	NoiseStd float64
	// RandomDominant chooses the dominant patches at random instead of by
	// [CLS] attention (a control): the scores are uniform draws from a
	// generator seeded with a hash of the image's hidden states, so an
	// image gets the same choice wherever and whenever it is mixed.
	RandomDominant bool
}

// Split returns how many of n patches stay dominant and how many
// contextual tokens the others become.
func (p TokenPruning) Split(n int) (dominant, contextual int) {
	kept := min(n, max(1, int(math.Round(p.Retention*float64(n)))))
	if kept == n {
		return n, 0 // nothing is pruned: nothing to fuse
	}
	contextual = int(math.Round(p.Contextual * float64(kept)))
	if contextual == 0 && p.Contextual > 0 && kept >= 2 {
		contextual = 1 // some patches are dropped: fuse them into one token
	}
	return kept - contextual, contextual
}

// Count returns the number of visual tokens per image of n patches that
// Mix returns, [CLS] included.
func (p TokenPruning) Count(n int) int {
	if p.KeepRest {
		return n + 1
	}
	d, c := p.Split(n)
	return 1 + d + c
}

// Transform returns p as a VisualTransform without noise.
func (p TokenPruning) Transform() VisualTransform {
	return func(_ int, tokens, clsAttn Tensor) TokenMix { return p.Mix(tokens, clsAttn, nil) }
}

// Mix returns the token map of one image: tokens are the encoder's n+1
// hidden states (row 0 [CLS]), clsAttn the [CLS] attention rows of every
// head, [heads, n+1]. noise, when not nil and NoiseStd > 0, draws the
// noise, row after row of the output.
func (p TokenPruning) Mix(tokens, clsAttn Tensor, noise *rand.Rand) TokenMix {
	n := tokens.Rows() - 1
	width := tokens.Cols()
	dominant, contextual := p.Split(n)
	// s_j = mean over heads of the attention [CLS] → patch j (Eqs. 5–6).
	heads := clsAttn.Rows()
	score := make([]float64, n)
	if p.RandomDominant {
		r := rand.New(rand.NewPCG(tensorHash(tokens), 0x646f6d696e616e74)) // "dominant"
		for j := range score {
			score[j] = r.Float64()
		}
	} else {
		for h := range heads {
			row := clsAttn.Data[h*(n+1) : (h+1)*(n+1)]
			for j := range n {
				score[j] += float64(row[j+1]) / float64(heads)
			}
		}
	}
	order := make([]int, n) // patch indices, best first; ties by index
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	keep := slices.Clone(order[:dominant])
	slices.Sort(keep)
	rest := slices.Clone(order[dominant:])
	slices.Sort(rest)

	m := TokenMix{Rows: []MixRow{{Src: []int{0}, Weight: []float32{1}}}}
	for _, j := range keep {
		m.Rows = append(m.Rows, MixRow{Src: []int{j + 1}, Weight: []float32{1}})
	}
	add := func() []float32 {
		if noise == nil || p.NoiseStd == 0 {
			return nil
		}
		a := make([]float32, width)
		for i := range a {
			a[i] = float32(p.NoiseStd * noise.NormFloat64())
		}
		return a
	}
	if p.KeepRest {
		// Every token kept; the non-dominant ones are noised as the
		// contextual tokens would be.
		for _, j := range rest {
			m.Rows = append(m.Rows, MixRow{Src: []int{j + 1}, Weight: []float32{1}, Add: add()})
		}
		return m
	}
	if contextual == 0 {
		return m
	}
	// Centres at a uniform stride over the non-dominant patches (in index
	// order), excluded from the groups; each other patch joins the centre
	// of highest cosine similarity (Eq. 8; ties: the first centre).
	stride := len(rest) / contextual
	centres := make([]int, contextual)
	isCentre := map[int]bool{}
	for i := range centres {
		centres[i] = rest[i*stride]
		isCentre[centres[i]] = true
	}
	groups := make([][]int, contextual)
	for _, j := range rest {
		if isCentre[j] {
			continue
		}
		best, bestSim := 0, math.Inf(-1)
		for c, cj := range centres {
			if s := rowCosine(tokens, j+1, cj+1); s > bestSim {
				best, bestSim = c, s
			}
		}
		groups[best] = append(groups[best], j)
	}
	// c_i = centre + mean of its group (Eq. 7), plus noise.
	for c, cj := range centres {
		row := MixRow{Src: []int{cj + 1}, Weight: []float32{1}}
		for _, j := range groups[c] {
			row.Src = append(row.Src, j+1)
			row.Weight = append(row.Weight, 1/float32(len(groups[c])))
		}
		row.Add = add()
		m.Rows = append(m.Rows, row)
	}
	return m
}

// tensorHash returns the 64-bit FNV-1a hash of x's values' bits.
func tensorHash(x Tensor) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, v := range x.Data {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return h.Sum64()
}

// rowCosine returns the cosine similarity of rows a and b of x (0 if
// either is zero).
func rowCosine(x Tensor, a, b int) float64 {
	c := x.Cols()
	ra, rb := x.Data[a*c:(a+1)*c], x.Data[b*c:(b+1)*c]
	var dot, na, nb float64
	for i := range ra {
		dot += float64(float64(ra[i]) * float64(rb[i]))
		na += float64(float64(ra[i]) * float64(ra[i]))
		nb += float64(float64(rb[i]) * float64(rb[i]))
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
