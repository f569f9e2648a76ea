// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"slices"
)

// LRP configures the enhanced layer-wise relevance propagation of Rap-FT
// (N. Wang et al., Balancing differential privacy and utility: a
// relevance-based adaptive private fine-tuning framework for language
// models, IEEE TIFS 2024, §V-B) over a TinyMLLM's language model.
type LRP struct {
	// Init is the relevance initialisation at the logits of the answer
	// positions (§V-B, list 1–3): "naive" (the whole next-token
	// distribution), "topk" (the K largest probabilities of each
	// position), "topp" (the smallest set of most probable tokens whose
	// probabilities reach P) or "beam" (the (position, token) pairs on
	// the K best beams of a beam search over the answer positions'
	// distributions). Retained probabilities are not renormalised; the
	// others are zero.
	Init string
	// K is top-k's k or the beam width; P is top-p's p.
	K int
	P float64
	// Alpha is α of the α-β rule through linear layers (Eq. 4, α + β =
	// 1); the paper uses 0.5.
	Alpha float64
}

// Check returns an error for an unknown initialisation or out-of-range
// parameters.
func (o LRP) Check() error {
	switch o.Init {
	case "naive":
	case "topk", "beam":
		if o.K < 1 {
			return fmt.Errorf("nn: LRP %s initialisation needs k ≥ 1, got %d", o.Init, o.K)
		}
	case "topp":
		if !(o.P > 0 && o.P <= 1) {
			return fmt.Errorf("nn: LRP top-p initialisation needs p in (0, 1], got %v", o.P)
		}
	default:
		return fmt.Errorf("nn: unknown LRP initialisation %q (want naive, topk, topp or beam)", o.Init)
	}
	if !(o.Alpha >= 0 && o.Alpha <= 1) {
		return fmt.Errorf("nn: LRP α = %v not in [0, 1]", o.Alpha)
	}
	return nil
}

// Relevance is the outcome of one relevance propagation.
type Relevance struct {
	// Params holds the relevance of every element of the trainable
	// tensors of the layout (Eq. 13 for weights, Eq. 16 for biases),
	// summed over token positions, in layout order.
	Params []float64
	// Init is the total initial relevance (Σ of the retained
	// probabilities) and Input the total relevance that reaches the
	// language model's input. They are equal when every bias is zero (conservation,
	// Eq. 9); biases absorb the rest.
	Init, Input float64
	// SplitError is the largest |ΣR_X + ΣR_Y − ΣR| of any split of a
	// pairwise operation (residual adds, LoRA branches, attention
	// products), relative to max(1, |ΣR|): Eq. 10's conservation, which
	// Eq. 11's normalisation makes exact up to rounding.
	SplitError float64
	// Kept is the number of (answer position, token) entries of the
	// initial relevance that Init retains: answers × vocab for naive.
	Kept int
	// Bytes counts the memory the propagation holds once the relevance is
	// initialised, while it propagates through the first layer (the tied
	// head), as Rap-FT's Table IV measures it: the forward tape, the
	// forward values it observed (float64), the next-token probabilities
	// of one answer position (vocab; the positions are initialised one at
	// a time), the initial relevance (naive: answers × vocab, dense; the
	// others: 12 bytes a kept entry and 8 a position, sparse) with the
	// buffers that selected it (the sort order, vocab; the beam's
	// candidates, 16 bytes each), the head's input and its relevance
	// (answers × width each) and the hidden states' relevance (positions
	// × width). It is a count of those buffers' lengths (8 bytes a
	// float64 or int, 4 an int32 token), as Stats.PeakBytes counts
	// training state, not a measure of the heap: it leaves out the slack
	// of the slices grown by append (capacity beyond length), the
	// per-position lists of kept entries and the beam's hypotheses built
	// while a position is initialised, and the runtime's overheads, and
	// it adds buffers that need not all be live at once (the probability
	// row, the sort order, the candidates). So it is no bound of the
	// peak heap in either direction; it compares the initialisations by
	// what they store.
	Bytes int64
}

// Relevance propagates relevance from the next-token distributions at the
// answer positions of s (s.Loss) back through m's language model to its
// input embeddings and returns the relevance of the trainable tensors of
// l, following Rap-FT §V-B with these rules:
//
//   - linear maps (attention projections, MLP, adapters, LoRA factors, the
//     tied head): the α-β rule (Eq. 4) to the input, the z-rule with input
//     and weight swapped (Eqs. 13, 16) for the weights and biases;
//   - GELU, LayerNorm and softmax: pass-through (Chefer et al.'s code);
//     a LayerNorm's bias gets Eq. 16's relevance b_i·R_i/y_i;
//   - residual adds, LoRA's base/branch add, the attention products P·V and
//     Q·Kᵀ: gradient × input on both operands (Eq. 8), normalised so the
//     operands share the output's relevance in proportion to their
//     absolute sums (Eq. 11), each attention head on its own;
//   - the key smearing: the α-β rule over its two inputs;
//   - a tensor feeding several branches: the sum of their relevances
//     (Eq. 12).
//
// Relevance stops at the language model's input (token and position
// embeddings, visual tokens): trainable tensors of the vision encoder or
// the projector get none. Everything runs in float64 on the values of one
// forward pass (no dropout). It returns an error for an invalid sequence,
// one without answer tokens, rotary positions, or bad options.
func (m *TinyMLLM) Relevance(l *Layout, s *Sequence, o LRP) (*Relevance, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if m.Config.Positions == "rope" {
		return nil, fmt.Errorf("nn: relevance propagation does not cover rotary positions")
	}
	if s.Loss == nil || !slices.Contains(s.Loss, true) {
		return nil, fmt.Errorf("nn: relevance needs answer positions (Sequence.Loss)")
	}
	r := &lrpRun{m: m, o: o, vals: map[string][]float64{}, rel: map[*Param][]float64{}}
	t := NewTape(nil, nil)
	hooks := &Hooks{Observe: func(site string, x Tensor) { r.vals[site] = to64(x.Data) }}
	hid, pos, err := m.Forward(t, s, nil, hooks, nil)
	if err != nil {
		return nil, err
	}
	r.T, r.D = hid.Value.Rows(), hid.Value.Cols()
	var rows []int
	for i, isAns := range s.Loss {
		if isAns {
			rows = append(rows, pos[i]-1)
		}
	}
	for _, v := range r.vals {
		r.bytes += int64(8 * len(v))
	}
	r.bytes += t.Bytes()
	R, init := r.head(to64(hid.Value.Data), rows)
	out := &Relevance{Init: init.sum(), Kept: init.kept(), Bytes: r.bytes}
	R = r.layerNorm(m.LM.LN, to64(hid.Value.Data), R)
	for i := len(m.LM.Blocks) - 1; i >= 0; i-- {
		R = r.block(m.LM.Blocks[i], R)
	}
	out.Input, out.SplitError = sum64(R), r.splitErr
	out.Params = make([]float64, l.Size)
	for i, p := range l.Params {
		if v, ok := r.rel[p]; ok {
			copy(out.Params[l.Offsets[i]:l.Offsets[i+1]], v)
		}
	}
	return out, nil
}

// lrpRun is one relevance propagation: the forward values by hook site, the
// parameter relevances found so far and the worst split error.
type lrpRun struct {
	m        *TinyMLLM
	o        LRP
	T, D     int
	vals     map[string][]float64
	rel      map[*Param][]float64
	splitErr float64
	bytes    int64 // see Relevance.Bytes
}

// val returns the forward value observed at site; it panics if the
// forward pass did not observe it (a programming error).
func (r *lrpRun) val(site string) []float64 {
	v, ok := r.vals[site]
	if !ok {
		panic("nn: relevance: no forward value at " + site)
	}
	return v
}

// addParam accumulates rel into p's relevance if p is trainable.
func (r *lrpRun) addParam(p *Param, rel []float64) {
	if p == nil || !p.Trainable || rel == nil {
		return
	}
	if r.rel[p] == nil {
		r.rel[p] = make([]float64, len(p.Data))
	}
	add64(r.rel[p], rel)
}

// checkSplit records the conservation error of a split of total into rx
// and ry.
func (r *lrpRun) checkSplit(rx, ry []float64, total float64) {
	e := math.Abs(sum64(rx)+sum64(ry)-total) / max(1, math.Abs(total))
	r.splitErr = max(r.splitErr, e)
}

func (r *lrpRun) splitAdd(x, y, R []float64) (rx, ry []float64) {
	rx, ry = lrpSplitAdd(x, y, R)
	r.checkSplit(rx, ry, sum64(R))
	return rx, ry
}

// head initialises the relevance at the logits of rows (Init) and
// propagates it through the tied head to the final hidden states: it
// returns their relevance [T, D] and the initial relevance. The
// next-token distribution of one answer position at a time is held (in
// one reused buffer); only the initial relevance is kept (see initRel).
func (r *lrpRun) head(hid []float64, rows []int) ([]float64, *initRel) {
	V, D := r.m.Config.Vocab, r.D
	tok := to64(r.m.Tok.Data)
	x := make([]float64, len(rows)*D)
	for k, row := range rows {
		copy(x[k*D:(k+1)*D], hid[row*D:(row+1)*D])
	}
	init := newInitRel(r.o, len(rows), V)
	p := make([]float64, V)
	for k := range rows {
		xk := x[k*D : (k+1)*D]
		for v := range V {
			s := 0.0
			for d, xd := range xk {
				s += float64(xd * tok[v*D+d])
			}
			p[v] = s
		}
		softmaxInPlace(p)
		init.add(k, p)
	}
	init.finish()
	rx := headAlphaBeta(x, D, tok, init, r.o.Alpha)
	R := make([]float64, r.T*D)
	r.bytes += int64(8*(len(p)+len(x)+len(rx)+len(R))) + init.bytes()
	for k, row := range rows {
		add64(R[row*D:(row+1)*D], rx[k*D:(k+1)*D])
	}
	return R, init
}

// headAlphaBeta propagates the initial relevance init of the tied head's
// outputs (the logits) to its inputs x ([init.rows, d]) by the α-β rule,
// visiting the retained entries only: for a dense init it is
// lrpAlphaBeta(x, init.rows, d, tok, vocab, nil, init.dense, alpha),
// which skips the zero entries in the same order.
func headAlphaBeta(x []float64, d int, tok []float64, init *initRel, alpha float64) []float64 {
	rx := make([]float64, init.rows*d)
	for k := range init.rows {
		xk, rt := x[k*d:(k+1)*d], rx[k*d:(k+1)*d]
		init.each(k, func(v int, rv float64) {
			alphaBetaOutput(xk, tok[v*d:(v+1)*d], 0, 0, rv, alpha, rt)
		})
	}
	return rx
}

// layerNorm passes R through the LayerNorm n (output y) unchanged and
// records Eq. 16's relevance of its bias.
func (r *lrpRun) layerNorm(n *LayerNorm, y, R []float64) []float64 {
	if n.B.Trainable {
		b := to64(n.B.Data)
		d := len(b)
		rb := make([]float64, d)
		for t := range len(y) / d {
			for i := range d {
				rb[i] += float64(b[i] * safeDiv(R[t*d+i], y[t*d+i]))
			}
		}
		r.addParam(n.B, rb)
	}
	return R
}

// linear propagates R ([T, out]) through l to its input, recording the
// relevance of l's trainable tensors. A LoRA-adapted map's output
// z = (W·x + b) + s·B·(A·x) is split between the base and the branch first
// (Eqs. 8, 11); the branch follows Eq. 17.
func (r *lrpRun) linear(l *Linear, R []float64) []float64 {
	x, z := r.val(l.Name+".in"), r.val(l.Name+".out")
	T, in, out := r.T, l.In(), l.Out()
	base, Rbase := z, R
	var rxLoRA []float64
	if l.LoRAA != nil {
		u := r.val(l.Name + ".lora")
		rank := l.LoRAA.Shape[0]
		sb := to64(l.LoRAB.Data)
		for i := range sb {
			sb[i] *= float64(l.LoRAScale)
		}
		branch := make([]float64, T*out)
		base = make([]float64, T*out)
		for t := range T {
			for i := range out {
				s := 0.0
				for k := range rank {
					s += float64(u[t*rank+k] * sb[i*rank+k])
				}
				branch[t*out+i] = s
				base[t*out+i] = z[t*out+i] - s
			}
		}
		var Rbranch []float64
		Rbase, Rbranch = r.splitAdd(base, branch, R)
		rwB, _ := lrpParamRelevance(u, T, rank, sb, out, nil, branch, Rbranch)
		r.addParam(l.LoRAB, rwB)
		Ru := lrpAlphaBeta(u, T, rank, sb, out, nil, Rbranch, r.o.Alpha)
		a := to64(l.LoRAA.Data)
		rwA, _ := lrpParamRelevance(x, T, in, a, rank, nil, u, Ru)
		r.addParam(l.LoRAA, rwA)
		rxLoRA = lrpAlphaBeta(x, T, in, a, rank, nil, Ru, r.o.Alpha)
	}
	w := to64(l.W.Data)
	var b []float64
	if l.B != nil {
		b = to64(l.B.Data)
	}
	if l.W.Trainable || (l.B != nil && l.B.Trainable) {
		rw, rb := lrpParamRelevance(x, T, in, w, out, b, base, Rbase)
		r.addParam(l.W, rw)
		if l.B != nil {
			r.addParam(l.B, rb)
		}
	}
	rx := lrpAlphaBeta(x, T, in, w, out, b, Rbase, r.o.Alpha)
	if rxLoRA != nil {
		add64(rx, rxLoRA)
	}
	return rx
}

// adapter propagates R at the output of a (x + Up(GELU(Down(x)))) to its
// input (Eqs. 14a–e, 15a–b): split of the residual add, Up, pass-through
// GELU, Down, merge with the skip.
func (r *lrpRun) adapter(a *Adapter, R []float64) []float64 {
	x, up := r.val(a.Down.Name+".in"), r.val(a.Up.Name+".out")
	Rskip, Rup := r.splitAdd(x, up, R)
	Rx := r.linear(a.Down, r.linear(a.Up, Rup))
	add64(Rx, Rskip)
	return Rx
}

// branchOut returns the output of a block's branch: the adapter's output
// when a is not nil, else the value at site.
func (r *lrpRun) branchOut(a *Adapter, site string) []float64 {
	if a == nil {
		return r.val(site)
	}
	x, up := r.val(a.Down.Name+".in"), r.val(a.Up.Name+".out")
	out := slices.Clone(x)
	add64(out, up)
	return out
}

// block propagates R at the output of b to its input.
func (r *lrpRun) block(b *Block, R []float64) []float64 {
	h := r.val(b.LN2.Name + ".in")
	mb := r.branchOut(b.Adapter2, b.MLP.FC2.Name+".out")
	Rh, Rm := r.splitAdd(h, mb, R)
	if b.Adapter2 != nil {
		Rm = r.adapter(b.Adapter2, Rm)
	}
	Rm = r.linear(b.MLP.FC1, r.linear(b.MLP.FC2, Rm)) // GELU: pass-through
	add64(Rh, r.layerNorm(b.LN2, r.val(b.MLP.FC1.Name+".in"), Rm))

	x := r.val(b.Name + ".in")
	ab := r.branchOut(b.Adapter1, b.O.Name+".out")
	Rx, Ra := r.splitAdd(x, ab, Rh)
	if b.Adapter1 != nil {
		Ra = r.adapter(b.Adapter1, Ra)
	}
	Rq, Rk, Rv := r.attention(b, r.linear(b.O, Ra))
	Rln := r.linear(b.Q, Rq)
	add64(Rln, r.linear(b.K, Rk))
	add64(Rln, r.linear(b.V, Rv))
	add64(Rx, r.layerNorm(b.LN1, r.val(b.Q.Name+".in"), Rln))
	return Rx
}

// attention propagates the relevance R of the per-head outputs
// ([T, heads·dh]) to the queries, keys (before smearing) and values: per
// head, the product P·V (Eqs. 8, 11), pass-through softmax, the product
// s·Q·Kᵀ (Eqs. 8, 11), then the key smearing.
func (r *lrpRun) attention(b *Block, R []float64) (Rq, Rk, Rv []float64) {
	T, D, H := r.T, r.D, b.Heads
	dh := D / H
	q, k, v := r.val(b.Q.Name+".out"), r.val(b.K.Name+".out"), r.val(b.V.Name+".out")
	ks := k
	var mix []float64
	if b.Smear != nil {
		mix = make([]float64, H)
		for h, l := range b.Smear.Data {
			mix[h] = 1 / (1 + math.Exp(-float64(l)))
		}
		ks = smear64(k, T, D, H, mix)
	}
	probs := r.val(b.Name + ".attn.probs")
	Rq, Rv = make([]float64, T*D), make([]float64, T*D)
	Rks := make([]float64, T*D)
	sc := 1 / math.Sqrt(float64(dh))
	for h := range H {
		p := probs[h*T*T : (h+1)*T*T]
		vh, Rh := cols(v, T, D, h*dh, dh), cols(R, T, D, h*dh, dh)
		Rp, Rvh := lrpMatMul(p, T, T, vh, dh, 1, Rh)
		r.checkSplit(Rp, Rvh, sum64(Rh))
		qh, kt := cols(q, T, D, h*dh, dh), transpose(cols(ks, T, D, h*dh, dh), T, dh)
		Rqh, Rkt := lrpMatMul(qh, T, dh, kt, T, sc, Rp) // softmax: pass-through
		r.checkSplit(Rqh, Rkt, sum64(Rp))
		setCols(Rv, Rvh, T, D, h*dh, dh)
		setCols(Rq, Rqh, T, D, h*dh, dh)
		setCols(Rks, transpose(Rkt, dh, T), T, D, h*dh, dh)
	}
	if mix == nil {
		return Rq, Rks, Rv
	}
	return Rq, unsmear64(k, Rks, T, D, H, mix, r.o.Alpha), Rv
}

// smear64 is Tape.SmearKeys in float64: key j of head h becomes
// s_h·k_j + (1−s_h)·k_{j−1}.
func smear64(k []float64, T, D, H int, mix []float64) []float64 {
	dh := D / H
	out := make([]float64, len(k))
	for j := range T {
		for c := range D {
			s := mix[c/dh]
			out[j*D+c] = float64(s * k[j*D+c])
			if j > 0 {
				out[j*D+c] += float64((1 - s) * k[(j-1)*D+c])
			}
		}
	}
	return out
}

// unsmear64 propagates the relevance R of the smeared keys to the keys by
// the α-β rule over each output's two inputs.
func unsmear64(k, R []float64, T, D, H int, mix []float64, alpha float64) []float64 {
	dh := D / H
	Rk := make([]float64, len(k))
	for j := range T {
		for c := range D {
			s := mix[c/dh]
			zs := []float64{s * k[j*D+c], 0}
			if j > 0 {
				zs[1] = (1 - s) * k[(j-1)*D+c]
			}
			zp, zn := 0.0, 0.0
			for _, z := range zs {
				if z > 0 {
					zp += z
				} else {
					zn += z
				}
			}
			ri := R[j*D+c]
			a := alphaFor(alpha, zp, zn)
			for n, z := range zs {
				if n == 1 && j == 0 {
					break
				}
				var share float64
				if z > 0 {
					share = z * safeDiv(a*ri, zp)
				} else {
					share = z * safeDiv((1-a)*ri, zn)
				}
				Rk[(j-n)*D+c] += share
			}
		}
	}
	return Rk
}

// cols returns columns [c0, c0+n) of the [rows, width] matrix x.
func cols(x []float64, rows, width, c0, n int) []float64 {
	out := make([]float64, rows*n)
	for i := range rows {
		copy(out[i*n:(i+1)*n], x[i*width+c0:i*width+c0+n])
	}
	return out
}

// setCols writes the [rows, n] matrix y to columns [c0, c0+n) of x.
func setCols(x, y []float64, rows, width, c0, n int) {
	for i := range rows {
		copy(x[i*width+c0:i*width+c0+n], y[i*n:(i+1)*n])
	}
}

// transpose returns the transpose of the [rows, cols] matrix x.
func transpose(x []float64, rows, cols int) []float64 {
	out := make([]float64, len(x))
	for i := range rows {
		for j := range cols {
			out[j*rows+i] = x[i*cols+j]
		}
	}
	return out
}

// softmaxInPlace replaces z by its softmax.
func softmaxInPlace(z []float64) {
	m := slices.Max(z)
	s := 0.0
	for i, v := range z {
		z[i] = math.Exp(v - m)
		s += z[i]
	}
	for i := range z {
		z[i] /= s
	}
}
