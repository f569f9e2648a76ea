// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"sync"
)

// Attention computes multi-head scaled dot-product attention for one sequence.
// q, k and v have shape [T, D] with D = heads·dh; head h uses columns
// [h·dh, (h+1)·dh). With causal set, position i attends to positions ≤ i only.
//
// It returns the per-head outputs, shape [T, D] (head h's output
// softmax(Q_h K_hᵀ/√dh)·V_h in columns [h·dh, (h+1)·dh): the input of the
// out-projection), and the attention probabilities, shape [heads, T, T],
// owned by the tape and read-only. Softmax normalisers are computed in
// float64.
func (t *Tape) Attention(q, k, v *Node, heads int, causal bool) (out *Node, probs Tensor) {
	return t.attention(q, k, v, heads, causal, nil)
}

// attention is Attention on the sequences stacked in the rows of q, k and
// v: rows [segs[s], segs[s+1]) are sequence s, which attends to itself
// only, exactly as Attention would on it alone. A nil segs is one
// sequence. The probabilities are returned for one sequence only (an empty
// tensor otherwise).
func (t *Tape) attention(q, k, v *Node, heads int, causal bool, segs []int) (out *Node, probs Tensor) {
	T, D := q.Value.Rows(), q.Value.Cols()
	if k.Value.Rows() != T || v.Value.Rows() != T || k.Value.Cols() != D || v.Value.Cols() != D {
		panic(errShape)
	}
	if heads <= 0 || D%heads != 0 {
		panic(errHeads)
	}
	if segs == nil {
		segs = []int{0, T}
	}
	if segs[len(segs)-1] != T {
		panic(errShape)
	}
	size, long := 0, 0
	for s := range len(segs) - 1 {
		n := segs[s+1] - segs[s]
		size += heads * n * n
		long = max(long, n)
	}
	out = t.nodeOver([]int{T, D}, q, k, v)
	pd := t.floatsOver(size)
	t.bytes += int64(4 * size)
	if len(segs) == 2 {
		probs = Tensor{Shape: []int{heads, T, T}, Data: pd}
	}
	qd, kd, vd, od := q.Value.Data, k.Value.Data, v.Value.Data, out.Value.Data
	for s, po := 0, 0; s < len(segs)-1; s++ {
		r, n := segs[s]*D, segs[s+1]-segs[s]
		attendForward(qd[r:], kd[r:], vd[r:], od[r:], pd[po:po+heads*n*n], n, D, heads, causal)
		po += heads * n * n
	}
	t.record(out, func(g []float32) {
		dp := t.floats(long * long)
		var gq, gk, gv []float32
		if q.needs {
			gq = t.g(q)
		}
		if k.needs {
			gk = t.g(k)
		}
		if v.needs {
			gv = t.g(v)
		}
		sub := func(x []float32, r int) []float32 {
			if x == nil {
				return nil
			}
			return x[r:]
		}
		for s, po := 0, 0; s < len(segs)-1; s++ {
			r, n := segs[s]*D, segs[s+1]-segs[s]
			attendBackward(g[r:], qd[r:], kd[r:], vd[r:], pd[po:po+heads*n*n], dp[:n*n], sub(gq, r), sub(gk, r), sub(gv, r), n, D, heads)
			po += heads * n * n
		}
	})
	return out, probs
}

// attendForward computes the attention of one sequence of T rows (row
// stride D) into od and its probabilities into probs ([heads, T, T]); a
// causal head on the mask's tiles (causalHead), with the same bits.
func attendForward(qd, kd, vd, od, probs []float32, T, D, heads int, causal bool) {
	if T == 0 {
		return
	}
	dh := D / heads
	sc := float32(1 / math.Sqrt(float64(dh)))
	cut := causal && causalCut(T, T, dh)
	for h := 0; h < heads; h++ {
		p := probs[h*T*T : (h+1)*T*T]
		if cut {
			causalHead(qd[h*dh:], kd[h*dh:], vd[h*dh:], od[h*dh:], p, T, T, dh, D, sc, nil, 0)
			continue
		}
		kernels.Gemm(false, true, T, T, dh, sc, qd[h*dh:], D, kd[h*dh:], D, 0, p, T)
		softmaxRows(p, T, T, causal, nil, 0)
		kernels.Gemm(false, false, T, dh, T, 1, p, T, vd[h*dh:], D, 0, od[h*dh:], D)
	}
}

// softmaxRows replaces each row i of the nq×n matrix p by the softmax of
// its first n values, or, with causal set, of its first r_i + 1 values
// (r_i = i, or rows[i] − lo when rows is not nil: the row's position in
// its sequence), the rest set to zero: softmaxRow32 on each, four rows
// at a time through softmaxRows4 (the same bits).
func softmaxRows(p []float32, nq, n int, causal bool, rows []int, lo int) {
	width := func(i int) int {
		switch {
		case !causal:
			return n
		case rows == nil:
			return i + 1
		}
		return rows[i] - lo + 1
	}
	i := 0
	for ; i+4 <= nq; i += 4 {
		softmaxRows4(p[i*n:], n, [4]int{width(i), width(i + 1), width(i + 2), width(i + 3)})
	}
	for ; i < nq; i++ {
		softmaxRow32(p[i*n : i*n+width(i)])
	}
	for i := range nq {
		clear(p[i*n+width(i) : (i+1)*n])
	}
}

// attendBackward adds the gradients of attendForward's inputs, given the
// output gradient g, to gq, gk and gv (each nil when not wanted); dp is
// T×T scratch.
func attendBackward(g, qd, kd, vd, probs, dp, gq, gk, gv []float32, T, D, heads int) {
	if T == 0 {
		return
	}
	dh := D / heads
	sc := float32(1 / math.Sqrt(float64(dh)))
	for h := 0; h < heads; h++ {
		p := probs[h*T*T : (h+1)*T*T]
		gh := g[h*dh:]
		if gv != nil {
			kernels.Gemm(true, false, T, dh, T, 1, p, T, gh, D, 1, gv[h*dh:], D)
		}
		if gq == nil && gk == nil {
			continue
		}
		kernels.Gemm(false, true, T, T, dh, 1, gh, D, vd[h*dh:], D, 0, dp, T)
		softmaxBack(p, dp, T)
		if gq != nil {
			kernels.Gemm(false, false, T, dh, T, sc, dp, T, kd[h*dh:], D, 1, gq[h*dh:], D)
		}
		if gk != nil {
			kernels.Gemm(true, false, T, dh, T, sc, dp, T, qd[h*dh:], D, 1, gk[h*dh:], D)
		}
	}
}

// attnOff turns off the attention softmax's four-row kernels (softmaxBack's
// and softmaxRows4's; BenchmarkAttnSoftmax's comparison in one process).
var attnOff bool

// softmaxBack replaces each row d_i of the T×T matrix d (the gradient of
// the probabilities p) by the gradient of the softmax's input:
// p_ij·(d_ij − Σ_k p_ik·d_ik), the dot in float64 in column order, the
// difference and the product rounded in float64, then converted. Four
// rows' dots run at once in softDots4, one chain a lane; the last pass
// runs four elements at a time in softBackVec; the Go loops do the rest
// and everything without AVX2, with REPRO_GEMM=go or with attnOff.
func softmaxBack(p, d []float32, T int) {
	for i := 0; i < T; i += 4 {
		var s [4]float64
		ok := false
		if i+4 <= T {
			s, ok = softDots4(p[i*T:], d[i*T:], T, T)
		}
		for r := 0; r < 4 && i+r < T; r++ {
			pr, dr := p[(i+r)*T:(i+r+1)*T], d[(i+r)*T:(i+r+1)*T]
			if !ok {
				for j, x := range pr {
					s[r] += float64(float64(x) * float64(dr[j]))
				}
			}
			for j := softBackVec(pr, dr, s[r]); j < len(dr); j++ {
				dr[j] = float32(float64(pr[j]) * (float64(dr[j]) - s[r]))
			}
		}
	}
}

// HeadPatch replaces the output of one attention head at one position: the
// dh values of head Head at row Pos of the per-head outputs (the input of the
// out-projection). Pos < 0 counts from the end (−1 is the last position).
type HeadPatch struct {
	Pos, Head int
	Value     []float32
}

// Patch returns a copy of the per-head outputs x (shape [T, heads·dh]) with
// the patches applied. Patched entries are constants: no gradient flows
// through them. It panics if a patch is out of range or has the wrong length.
func (t *Tape) Patch(x *Node, heads int, patches []HeadPatch) *Node {
	T, D := x.Value.Rows(), x.Value.Cols()
	dh := D / heads
	y := t.node(x.Value.Shape, x)
	copy(y.Value.Data, x.Value.Data)
	cut := make([]bool, T*heads)
	for _, p := range patches {
		pos := p.Pos
		if pos < 0 {
			pos += T
		}
		if pos < 0 || pos >= T || p.Head < 0 || p.Head >= heads {
			panic(errIndex)
		}
		if len(p.Value) != dh {
			panic(errLength)
		}
		copy(y.Value.Data[pos*D+p.Head*dh:], p.Value)
		cut[pos*heads+p.Head] = true
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for i := 0; i < T; i++ {
			for h := 0; h < heads; h++ {
				if !cut[i*heads+h] {
					o := i*D + h*dh
					axpy(1, g[o:o+dh], gx[o:o+dh])
				}
			}
		}
	})
	return y
}

// TokenMix describes a linear map from n input tokens to len(Rows) output
// tokens: output j = Σ_k Rows[j].Weight[k]·input[Rows[j].Src[k]] +
// Rows[j].Add. Selection, pruning and merging of visual tokens are all such
// maps; the choice of the map may depend on the tokens, but gradients flow
// only through the linear combination (Add is a constant, e.g. noise).
type TokenMix struct {
	Rows []MixRow
}

// MixRow is one output token of a TokenMix. Add may be nil; otherwise it has
// the token width.
type MixRow struct {
	Src    []int
	Weight []float32
	Add    []float32
}

// Identity returns the TokenMix that keeps all n tokens unchanged.
func Identity(n int) TokenMix {
	m := TokenMix{Rows: make([]MixRow, n)}
	for i := range m.Rows {
		m.Rows[i] = MixRow{Src: []int{i}, Weight: []float32{1}}
	}
	return m
}

// Mix applies the token map m to the rows of x.
func (t *Tape) Mix(x *Node, m TokenMix) *Node {
	n, c := x.Value.Rows(), x.Value.Cols()
	y := t.node([]int{len(m.Rows), c}, x)
	for j, r := range m.Rows {
		if len(r.Src) != len(r.Weight) || r.Add != nil && len(r.Add) != c {
			panic(errLength)
		}
		yr := y.Value.Data[j*c : (j+1)*c]
		for k, s := range r.Src {
			if s < 0 || s >= n {
				panic(errIndex)
			}
			axpy(r.Weight[k], x.Value.Data[s*c:(s+1)*c], yr)
		}
		if r.Add != nil {
			axpy(1, r.Add, yr)
		}
	}
	t.record(y, func(g []float32) {
		gx := t.g(x)
		for j, r := range m.Rows {
			for k, s := range r.Src {
				axpy(r.Weight[k], g[j*c:(j+1)*c], gx[s*c:(s+1)*c])
			}
		}
	})
	return y
}

// RotaryBase is the base of the rotary embeddings' frequencies (RoFormer,
// LLaMA).
const RotaryBase = 10000

// Rotary applies rotary position embeddings (Su et al. 2021, "RoFormer",
// eq. 34, in the half-split pairing of GPT-NeoX and LLaMA) to x, shape
// [T, D] with D = heads·dh and dh even: in every head, the pair of columns
// (i, i + dh/2), i < dh/2, of row p is rotated by the angle p·θᵢ with
// θᵢ = RotaryBase^(−2i/dh). Rotations preserve norms, and the dot product of
// a rotated query at row p and a rotated key at row p′ depends on p − p′
// only. The backward pass rotates the gradient back by −p·θᵢ.
func (t *Tape) Rotary(x *Node, heads int) *Node {
	return t.rotary(x, heads, nil)
}

// rotary is Rotary on the sequences stacked in the rows of x (see
// attention): the positions of each start at 0. A nil segs is one
// sequence.
func (t *Tape) rotary(x *Node, heads int, segs []int) *Node {
	T, D := x.Value.Rows(), x.Value.Cols()
	if heads <= 0 || D%heads != 0 {
		panic(errHeads)
	}
	dh := D / heads
	if dh%2 != 0 {
		panic(errShape)
	}
	if segs == nil {
		segs = []int{0, T}
	}
	long := 0
	for s := range len(segs) - 1 {
		long = max(long, segs[s+1]-segs[s])
	}
	cos, sin := rotaryTable(long, dh)
	each := func(dst, src []float32, sign float32) {
		for s := range len(segs) - 1 {
			r := segs[s] * D
			rotate(dst[r:], src[r:], cos, sin, segs[s+1]-segs[s], D, dh, sign)
		}
	}
	y := t.node(x.Value.Shape, x)
	each(y.Value.Data, x.Value.Data, 1)
	t.record(y, func(g []float32) { each(t.g(x), g, -1) })
	return y
}

// rotate adds to dst the rotation of src ([T, D], heads of width dh) by
// p·θᵢ (sign 1) or by −p·θᵢ (sign −1, the transpose) in every head's column
// pairs (i, i + dh/2) at row p.
func rotate(dst, src, cos, sin []float32, T, D, dh int, sign float32) {
	half := dh / 2
	for p := 0; p < T; p++ {
		c, s := cos[p*half:(p+1)*half], sin[p*half:(p+1)*half]
		for o := p * D; o < (p+1)*D; o += dh {
			a, b := src[o:o+half], src[o+half:o+dh]
			da, db := dst[o:o+half], dst[o+half:o+dh]
			for i := range half {
				si := sign * s[i]
				da[i] += float32(a[i]*c[i]) - float32(b[i]*si)
				db[i] += float32(a[i]*si) + float32(b[i]*c[i])
			}
		}
	}
}

// rotaryTables caches, by head width, cos(p·θᵢ) and sin(p·θᵢ) for the
// rows seen so far: a row does not depend on the sequence length, so a
// shorter sequence uses a prefix. Cached slices are never written.
var rotaryTables struct {
	sync.Mutex
	byWidth map[int][2][]float32
}

// rotaryTable returns cos(p·θᵢ) and sin(p·θᵢ) for p < T and i < dh/2,
// computed in float64, row-major by p. The slices are shared: read only.
func rotaryTable(T, dh int) (cos, sin []float32) {
	half := dh / 2
	rt := &rotaryTables
	rt.Lock()
	defer rt.Unlock()
	tab := rt.byWidth[dh]
	if len(tab[0]) < T*half {
		n := max(T, 2*len(tab[0])/max(half, 1))
		tab = [2][]float32{make([]float32, n*half), make([]float32, n*half)}
		for i := range half {
			theta := math.Pow(RotaryBase, -2*float64(i)/float64(dh))
			for p := range n {
				s, c := math.Sincos(float64(p) * theta)
				tab[0][p*half+i], tab[1][p*half+i] = float32(c), float32(s)
			}
		}
		if rt.byWidth == nil {
			rt.byWidth = map[int][2][]float32{}
		}
		rt.byWidth[dh] = tab
	}
	return tab[0][:T*half], tab[1][:T*half]
}

// SmearKeys mixes every row of x (shape [T, D], D = heads·dh) with the row
// before it, per head: in head h's columns, row j becomes
//
//	s_h·x_j + (1 − s_h)·x_{j−1},  s_h = σ(logit_h),  x_{−1} = 0,
//
// where logit has one entry per head. Applied to the keys of a causal
// attention layer this is the "smeared key" of Olsson et al. 2022 ("In-context
// Learning and Induction Heads", §Model analysis, smeared keys): a key also
// describes the token before it, so a single layer can attend to "the token
// after one like mine" — the induction step that otherwise needs a
// previous-token head in an earlier layer to compose with. It is causal: row
// j depends on rows j and j−1 only.
func (t *Tape) SmearKeys(x, logit *Node, heads int) *Node {
	return t.smearKeys(x, logit, heads, nil)
}

// smearKeys is SmearKeys on the sequences stacked in the rows of x (see
// attention): the first row of each has no row before it. A nil segs is
// one sequence.
func (t *Tape) smearKeys(x, logit *Node, heads int, segs []int) *Node {
	T, D := x.Value.Rows(), x.Value.Cols()
	first := make([]bool, T+1)
	if segs == nil {
		segs = []int{0, T}
	}
	for _, r := range segs {
		first[r] = true
	}
	if heads <= 0 || D%heads != 0 {
		panic(errHeads)
	}
	if len(logit.Value.Data) != heads {
		panic(errShape)
	}
	dh := D / heads
	s := make([]float32, heads)
	for h, l := range logit.Value.Data {
		s[h] = float32(1 / (1 + math.Exp(-float64(l))))
	}
	// Every element of y is written below.
	y := t.nodeOver(x.Value.Shape, x, logit)
	xd, yd := x.Value.Data, y.Value.Data
	// sv and tv hold s and 1 − s over each head's columns: a row at once
	// in smearVec (the operations of the loop below, eight lanes at a
	// time) where the CPU has it.
	sv, tv := make([]float32, D), make([]float32, D)
	for c := range sv {
		sv[c] = s[c/dh]
		tv[c] = 1 - s[c/dh]
	}
	for j := 0; j < T; j++ {
		var prev []float32
		if !first[j] {
			prev = xd[(j-1)*D : j*D]
		}
		if smearVec(yd[j*D:(j+1)*D], xd[j*D:(j+1)*D], prev, sv, tv) {
			continue
		}
		for h := 0; h < heads; h++ {
			o := j*D + h*dh
			cur, out := xd[o:o+dh], yd[o:o+dh]
			for c := range out {
				out[c] = s[h] * cur[c]
			}
			if !first[j] {
				axpy(1-s[h], xd[o-D:o-D+dh], out)
			}
		}
	}
	t.record(y, func(g []float32) {
		if x.needs {
			gx := t.g(x)
			for j := 0; j < T; j++ {
				for h := 0; h < heads; h++ {
					o := j*D + h*dh
					axpy(s[h], g[o:o+dh], gx[o:o+dh])
					if !first[j] {
						axpy(1-s[h], g[o:o+dh], gx[o-D:o-D+dh])
					}
				}
			}
		}
		if logit.needs {
			gl := t.g(logit)
			for h := 0; h < heads; h++ {
				// dy_j/ds_h = x_j − x_{j−1}; ds/dlogit = s(1 − s).
				var sum float64
				for j := 0; j < T; j++ {
					o := j*D + h*dh
					for c := 0; c < dh; c++ {
						d := xd[o+c]
						if !first[j] {
							d -= xd[o-D+c]
						}
						sum += float64(float64(g[o+c]) * float64(d))
					}
				}
				gl[h] += float32(sum * float64(s[h]) * float64(1-s[h]))
			}
		}
	})
	return y
}
