// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/repro-dp/repro/nn"
)

// SpanText recovers the prompt tokens of one sequence s at the positions
// at from the released LoRA update g (over layout l) of TinyMLLM m, by the
// span test of DAGER (Petrov et al., "DAGER: Exact Gradient Inversion for
// Large Language Models", NeurIPS 2024, §4), applied to the LoRA factors.
//
// The first language-model block's query, key and value maps read the
// same input, x_t = LN1(tok[s_t] + pos[t]) at every position t, and the
// gradient of a LoRA factor A (shape [r, width]) of such a map is
// (α/r)·Bᵀ·Σ_t δ_t x_tᵀ: its rows lie in the span of the x_t. Stacked,
// the three factors' gradients M (3r rows) span the inputs of every
// position. The attacker computes the inputs of the positions it knows
// (the image's visual tokens, the answer, the fillers; a forward pass)
// and projects them out, M' = M(I − Π_K); what is left spans the inputs
// of the unknown positions, {(I − Π_K) x_t : t ∈ at}, as long as there are
// at most 3r of them. The true token v at position t is then the one whose input
// LN1(tok[v] + pos[t]) lies in that span: SpanText takes, at each
// position, the candidate of vocab with the least relative residual
// ‖(I − P)(I − Π_K)c‖/‖(I − Π_K)c‖ (P the projection on the span), fixes
// the position whose choice is the most certain (least residual), moves it
// to the known inputs and repeats, so that each round's span has one
// dimension fewer to explain (with more unknown positions than 3r the
// first rounds' span is part of theirs, and the least residual still
// picks true tokens: measured in TestSpanText). Learned position embeddings make every
// position's input distinct, so a repeated token needs no special case;
// with rotary positions (no position embedding at the input) the test
// could give the bag of words only, and SpanText returns an error.
//
// Under a partitioned clip (the release's rule has two parts, Rap-FT's
// weak and strong relevance partitions, which the attacker knows) each
// part of one example's gradient is scaled by its own clip factor, which
// breaks the rank structure; SpanText undoes it by the one unknown ratio
// ρ of the two factors, chosen where M_0 + ρ·M_1 is closest to the rank
// the span needs (the least (k+1)-th singular value relative to the
// first, over a log grid of ρ refined by golden section; k is the span's
// rank). A joint clip (one part) scales every row alike and changes
// nothing. Noise (DP-SGD's) fills every direction of M: the span test
// then picks tokens at chance, which is the defence working.
//
// vt, when not nil, is the visual-token transform the attacker runs to
// compute the visual tokens' inputs (without Dual-Priv's fusion noise,
// whose draw is secret: under it the known inputs are off by the noise,
// which, like DP-SGD's, hides the span; at ε = ∞ there is none). opt may
// be nil. It returns an error if m has rotary positions, if no query, key or
// value map of the first block has a released LoRA A, if a position in at
// is invalid (TextGrad's rules), if the clip rule has more than two parts
// or parts that do not cover l, or if more known positions than the width
// leave nothing to test.
func SpanText(m *nn.TinyMLLM, l *nn.Layout, g []float32, s nn.Sequence, at, vocab []int, vt nn.VisualTransform, opt *SpanOptions) (*SpanOutcome, error) {
	start := time.Now()
	var o SpanOptions
	if opt != nil {
		o = *opt
	}
	if m.Pos == nil {
		return nil, fmt.Errorf("gia: the span test needs learned position embeddings (the model has rotary positions): %w", ErrSpanRank)
	}
	if err := checkTextPositions(m, s, at); err != nil {
		return nil, err
	}
	if err := checkVocab(m, vocab); err != nil {
		return nil, err
	}
	w := m.Config.Width
	rows0, rows1, nrows, err := releasedRows(m, l, g, o.Rule)
	if err != nil {
		return nil, err
	}
	if len(at) == 0 {
		return &SpanOutcome{Ratio: 1, Elapsed: time.Since(start)}, nil
	}
	// The first block's input at every position, the unknown ones filled
	// with the first candidate.
	filled := nn.Sequence{Tokens: slices.Clone(s.Tokens), Images: s.Images, Loss: s.Loss}
	for _, p := range at {
		filled.Tokens[p] = vocab[0]
	}
	inputs, pos, err := blockInputs(m, filled, vt)
	if err != nil {
		return nil, err
	}
	T := inputs.Shape[0]
	unknown := make(map[int]int, len(at)) // expanded position → index in at
	for k, p := range at {
		unknown[pos[p]] = k
	}
	var known [][]float64
	for t := range T {
		if _, ok := unknown[t]; !ok {
			known = append(known, f64(inputs.Data[t*w:(t+1)*w]))
		}
	}

	cand := candidateInputs(m, at, pos, vocab)

	out := &SpanOutcome{Rows: nrows, Tokens: make([]int, len(at)), Residual: make([]float64, len(at)), Ratio: 1}
	if len(o.Rule.C) == 2 {
		qk, err := orthBasis(known, w)
		if err != nil {
			return nil, err
		}
		out.Ratio = partRatio(rows0, rows1, nrows, w, qk, min(len(at), nrows), cand)
	}
	mr := make([]float64, len(rows0))
	for i := range mr {
		mr[i] = rows0[i] + float64(out.Ratio*rows1[i])
	}
	M := mat.NewDense(nrows, w, mr)

	left := make([]int, len(at)) // the positions not fixed yet
	for k := range left {
		left[k] = k
	}
	for len(left) > 0 {
		qk, err := orthBasis(known, w)
		if err != nil {
			return nil, err
		}
		rank := min(len(left), nrows)
		span, sv := spanBasis(M, qk, rank)
		if span == nil {
			return nil, errors.New("gia: SVD of the released rows failed")
		}
		if out.Singular == nil {
			out.Singular = sv
			out.Rank = rank
		}
		bestK, bestJ, bestR := -1, -1, math.Inf(1)
		for _, k := range left {
			j, r := nearestInSpan(cand[k], qk, span)
			out.Tokens[k], out.Residual[k] = vocab[j], r
			if r < bestR {
				bestK, bestJ, bestR = k, j, r
			}
		}
		known = append(known, cand[bestK][bestJ])
		left = slices.DeleteFunc(left, func(k int) bool { return k == bestK })
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// candidateInputs returns the first block's input of every candidate of
// vocab at every position of at (expanded position pos[at[k]]):
// LN1(tok[v] + pos), cand[k][j] for vocab[j] at at[k].
func candidateInputs(m *nn.TinyMLLM, at, pos, vocab []int) [][][]float64 {
	w := m.Config.Width
	ln := m.LM.Blocks[0].LN1
	cand := make([][][]float64, len(at))
	tp := nn.NewTape(nil, nil)
	x := make([]float32, len(vocab)*w)
	for k, p := range at {
		pe := m.Pos.Data[pos[p]*w : (pos[p]+1)*w]
		for j, v := range vocab {
			row := x[j*w : (j+1)*w]
			copy(row, m.Tok.Data[v*w:(v+1)*w])
			for c := range row {
				row[c] += pe[c]
			}
		}
		y := ln.Forward(tp, tp.Input(nn.Tensor{Shape: []int{len(vocab), w}, Data: x}, false), nil).Value.Data
		cand[k] = make([][]float64, len(vocab))
		for j := range vocab {
			cand[k][j] = f64(y[j*w : (j+1)*w])
		}
	}
	return cand
}

// releasedRows returns the rows of the first language-model block's
// released LoRA A gradients (query, key and value maps; a tensor that is
// all zero was not released), split by the two parts of rule when it has
// two (M_0 and M_1, each nrows×width; M_1 all zero otherwise).
func releasedRows(m *nn.TinyMLLM, l *nn.Layout, g []float32, rule nn.ClipRule) (m0, m1 []float64, nrows int, err error) {
	twoParts := len(rule.C) == 2
	switch {
	case len(g) != l.Size:
		return nil, nil, 0, fmt.Errorf("gia: update of %d values, layout of %d", len(g), l.Size)
	case len(rule.C) > 2:
		return nil, nil, 0, fmt.Errorf("gia: the span test undoes a clip of at most two parts, the rule has %d", len(rule.C))
	case twoParts && len(rule.Part) != l.Size:
		return nil, nil, 0, fmt.Errorf("gia: the clip rule's parts cover %d values, the layout %d", len(rule.Part), l.Size)
	}
	b0 := m.LM.Blocks[0]
	for _, lin := range []*nn.Linear{b0.Q, b0.K, b0.V} {
		if lin.LoRAA == nil {
			continue
		}
		i := l.Index(lin.LoRAA)
		if i < 0 {
			continue
		}
		blk := l.Block(g, i)
		if norm(blk) == 0 {
			continue // not released (Dual-Priv's pruned blocks)
		}
		off := l.Offsets[i]
		for j, v := range blk {
			if twoParts && rule.Part[off+j] == 1 {
				m0, m1 = append(m0, 0), append(m1, float64(v))
			} else {
				m0, m1 = append(m0, float64(v)), append(m1, 0)
			}
		}
		nrows += lin.LoRAA.Shape[0]
	}
	if nrows == 0 {
		return nil, nil, 0, fmt.Errorf("gia: the update releases no LoRA A of the first block's query, key or value map: %w", ErrSpanRank)
	}
	return m0, m1, nrows, nil
}

// blockInputs returns the first language-model block's input (its first
// LayerNorm's output) at every position of s's expanded sequence, [T,
// width], and the expanded positions pos of s's tokens (nn's Forward).
func blockInputs(m *nn.TinyMLLM, s nn.Sequence, vt nn.VisualTransform) (nn.Tensor, []int, error) {
	var inputs nn.Tensor
	site := m.LM.Blocks[0].Q.Name + ".in"
	hooks := &nn.Hooks{Observe: func(name string, x nn.Tensor) {
		if name == site {
			inputs = nn.Tensor{Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
		}
	}}
	_, pos, err := m.Forward(nn.NewTape(nil, nil), &s, nil, hooks, vt)
	if err != nil {
		return nn.Tensor{}, nil, fmt.Errorf("gia: %w", err)
	}
	return inputs, pos, nil
}

// SpanOptions configures SpanText. The zero value is a release with one
// clip part or none.
type SpanOptions struct {
	// Rule is the release's clip rule (methods.Release.Rule); a rule of
	// two parts is undone by their ratio (SpanText).
	Rule nn.ClipRule
}

// SpanOutcome is the result of SpanText.
type SpanOutcome struct {
	// Tokens are the recovered tokens at the positions at.
	Tokens []int
	// Residual is, per position, the chosen token's relative distance to
	// the span when it was fixed: near 0 (float32 rounding) for an exact
	// recovery, about 1 for a guess.
	Residual []float64
	// Rows is the number of stacked LoRA A rows (3r when all three maps
	// are released), Rank the span's rank in the first round (len(at), at
	// most Rows), Singular the singular values of the projected
	// rows in that round, largest first.
	Rows, Rank int
	Singular   []float64
	// Ratio is the ρ that SpanText undid: the first part's clip factor
	// over the second's, the weight that brings the second part back to
	// the first's scale; 1 for a rule of one part.
	Ratio   float64
	Elapsed time.Duration
}

// checkTextPositions applies TextGrad's rules to the positions at of s.
func checkTextPositions(m *nn.TinyMLLM, s nn.Sequence, at []int) error {
	if err := m.Check(&s); err != nil {
		return fmt.Errorf("gia: %w", err)
	}
	seen := map[int]bool{}
	for _, p := range at {
		switch {
		case p < 0 || p >= len(s.Tokens):
			return fmt.Errorf("gia: position %d outside the sequence of %d tokens", p, len(s.Tokens))
		case seen[p]:
			return fmt.Errorf("gia: position %d repeated", p)
		case s.Tokens[p] == nn.TokenImage:
			return fmt.Errorf("gia: position %d is the <image> placeholder", p)
		case s.Loss != nil && s.Loss[p]:
			return fmt.Errorf("gia: position %d is a loss target", p)
		}
		seen[p] = true
	}
	return nil
}

// checkVocab checks that vocab is a non-empty list of m's token ids
// without the <image> placeholder.
func checkVocab(m *nn.TinyMLLM, vocab []int) error {
	if len(vocab) == 0 {
		return errors.New("gia: no candidate tokens")
	}
	for _, v := range vocab {
		if v < 0 || v >= m.Config.Vocab || v == nn.TokenImage {
			return fmt.Errorf("gia: candidate token %d is not a text token of the %d-token vocabulary", v, m.Config.Vocab)
		}
	}
	return nil
}

func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// orthBasis returns an orthonormal basis of the span of rows (each of w
// values) as the columns of a w×k matrix (nil for no rows), the rank read
// with a relative tolerance of 1e-9. It returns an error when the rows
// span the whole space.
func orthBasis(rows [][]float64, w int) (*mat.Dense, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	a := mat.NewDense(len(rows), w, nil)
	for i, r := range rows {
		a.SetRow(i, r)
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("gia: SVD of the known inputs failed")
	}
	sv := svd.Values(nil)
	k := 0
	for k < len(sv) && sv[k] > 1e-9*sv[0] {
		k++
	}
	if k >= w {
		return nil, fmt.Errorf("gia: the %d known inputs span all %d dimensions; nothing is left to test: %w", len(rows), w, ErrSpanRank)
	}
	var v mat.Dense
	svd.VTo(&v)
	return mat.DenseCopyOf(v.Slice(0, w, 0, k)), nil
}

// project returns x − Q Qᵀ x (x itself when q is nil).
func project(q *mat.Dense, x []float64) []float64 {
	y := slices.Clone(x)
	if q == nil {
		return y
	}
	_, k := q.Dims()
	raw := q.RawMatrix()
	d := make([]float64, k) // Qᵀx, then subtracted row by row
	for i, v := range x {
		row := raw.Data[i*raw.Stride : i*raw.Stride+k]
		for c, qc := range row {
			d[c] += float64(qc * v)
		}
	}
	for i := range y {
		row := raw.Data[i*raw.Stride : i*raw.Stride+k]
		for c, qc := range row {
			y[i] -= float64(qc * d[c])
		}
	}
	return y
}

// spanBasis returns the orthonormal basis (w×rank) of the top rank right
// singular vectors of M with the span of qk projected out of its rows,
// and those rows' singular values; nil, nil if the SVD fails. The rank is
// capped at the number of singular vectors and at the dimensions qk
// leaves (beyond them a singular vector is arbitrary and may lie in qk's
// span).
func spanBasis(M *mat.Dense, qk *mat.Dense, rank int) (*mat.Dense, []float64) {
	r, w := M.Dims()
	mp := mat.NewDense(r, w, nil)
	for i := range r {
		mp.SetRow(i, project(qk, mat.Row(nil, i, M)))
	}
	var svd mat.SVD
	if !svd.Factorize(mp, mat.SVDThin) {
		return nil, nil
	}
	sv := svd.Values(nil)
	kq := 0
	if qk != nil {
		_, kq = qk.Dims()
	}
	rank = min(rank, len(sv), w-kq)
	if rank <= 0 {
		return mat.NewDense(w, 1, nil), sv // the zero vector: nothing lies in it
	}
	var v mat.Dense
	svd.VTo(&v)
	return mat.DenseCopyOf(v.Slice(0, w, 0, rank)), sv
}

// nearestInSpan returns the index of the candidate whose component
// outside qk's span lies nearest, relatively, to the span of basis, and
// that relative residual.
func nearestInSpan(cands [][]float64, qk, basis *mat.Dense) (int, float64) {
	best, bestR := 0, math.Inf(1)
	for j, c := range cands {
		y := project(qk, c)
		n := math.Sqrt(dot(y, y))
		if n == 0 {
			continue
		}
		res := project(basis, y)
		r := math.Sqrt(dot(res, res)) / n
		if r < bestR {
			best, bestR = j, r
		}
	}
	return best, bestR
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}

// partRatio returns the ratio ρ at which M_0 + ρ·M_1 (rows of w values,
// the known inputs' span qk projected out) fits a span of rank k best,
// over log₁₀ ρ ∈ [−4, 4] (a grid of 321 points refined by golden
// section). When k is below the number of rows the fit is
// σ_{k+1}/min(‖M_0‖, ρ‖M_1‖) (Frobenius norms): near zero at the true ρ
// and bounded away from it where one part dominates (σ_{k+1}/σ_1 would
// vanish there whenever a part alone has rank k or less). Otherwise no
// direction is left over to measure it by, and the fit is the mean over
// the unknown positions of the least relative residual of their
// candidates (cand[k][j]: candidate j at position k) to the top-k span,
// the first choices SpanText would make; without candidates (nil) it
// returns 1.
func partRatio(m0, m1 []float64, rows, w int, qk *mat.Dense, k int, cand [][][]float64) float64 {
	if k >= rows && cand == nil {
		return 1
	}
	mr := make([]float64, len(m0))
	n0, n1 := math.Sqrt(dot(m0, m0)), math.Sqrt(dot(m1, m1))
	if n0 == 0 || n1 == 0 {
		return 1 // one part holds nothing of these rows: ρ changes no span
	}
	f := func(lr float64) float64 {
		rho := math.Pow(10, lr)
		for i := range mr {
			mr[i] = m0[i] + float64(rho*m1[i])
		}
		rank := 0
		if k >= rows {
			rank = k
		}
		span, sv := spanBasis(mat.NewDense(rows, w, mr), qk, rank)
		if len(sv) == 0 || sv[0] == 0 {
			return math.Inf(1)
		}
		if k < rows {
			return sv[k] / min(n0, rho*n1)
		}
		mean := 0.0
		for _, c := range cand {
			_, r := nearestInSpan(c, qk, span)
			mean += r / float64(len(cand))
		}
		return mean
	}
	best, bestF := 0.0, math.Inf(1)
	const lo, hi, n = -4.0, 4.0, 321
	step := (hi - lo) / (n - 1)
	for i := range n {
		lr := lo + float64(float64(i)*step)
		if v := f(lr); v < bestF {
			best, bestF = lr, v
		}
	}
	a, b := best-step, best+step
	// Golden section: each step keeps one interior point and its value.
	phi := (math.Sqrt(5) - 1) / 2
	c, d := b-float64(phi*(b-a)), a+float64(phi*(b-a))
	fc, fd := f(c), f(d)
	for range 60 {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - float64(phi*(b-a))
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + float64(phi*(b-a))
			fd = f(d)
		}
	}
	return math.Pow(10, (a+b)/2)
}
