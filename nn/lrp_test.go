// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// toyNet is a two-layer network y = W2·relu(W1·x + b1) + b2 in float64.
type toyNet struct {
	in, hid, out   int
	w1, b1, w2, b2 []float64
}

// refAlphaBeta is a slow, neuron-level reference of LRP's α-β rule
// (Bach et al. 2015, Eqs. 2–4 of Rap-FT with α + β = 1): for every output
// neuron j it computes the messages R_{h←j} from each input neuron h with
// Z^±_j = Σ_h z^±_hj + b^±_j, then aggregates R_h = Σ_j R_{h←j}. A neuron
// whose contributions all have one sign sends all of R_j through that
// side (nn's documented choice that keeps conservation).
func refAlphaBeta(x []float64, w [][]float64, b []float64, r []float64, alpha float64) []float64 {
	msgs := make([][]float64, len(r)) // msgs[j][h] = R_{h←j}
	for j := range r {
		zp, zn := max(b[j], 0), min(b[j], 0)
		for h := range x {
			z := x[h] * w[j][h]
			zp += max(z, 0)
			zn += min(z, 0)
		}
		a := alpha
		if zn == 0 {
			a = 1
		} else if zp == 0 {
			a = 0
		}
		msgs[j] = make([]float64, len(x))
		for h := range x {
			z := x[h] * w[j][h]
			var m float64
			if z > 0 && zp != 0 {
				m = a * z / zp
			}
			if z < 0 && zn != 0 {
				m = (1 - a) * z / zn
			}
			msgs[j][h] = r[j] * m
		}
	}
	out := make([]float64, len(x))
	for h := range x {
		for j := range r {
			out[h] += msgs[j][h]
		}
	}
	return out
}

func rows2(w []float64, out, in int) [][]float64 {
	m := make([][]float64, out)
	for i := range m {
		m[i] = w[i*in : (i+1)*in]
	}
	return m
}

// TestLRPToyNetwork checks the α-β rule and the parameter relevance on a
// two-layer network against the slow reference refAlphaBeta, conservation
// with zero biases, the signs, and the split of a single neuron worked by
// hand.
func TestLRPToyNetwork(t *testing.T) {
	// One neuron worked by hand: x = (1, 2), w = (3, −1), b = 0, R = 1:
	// z = (3, −2), Z⁺ = 3, Z⁻ = −2, so α = 0.5 gives (0.5, 0.5) and α = 1
	// gives (1, 0).
	for _, tc := range []struct {
		alpha float64
		want  []float64
	}{{0.5, []float64{0.5, 0.5}}, {1, []float64{1, 0}}, {0.25, []float64{0.25, 0.75}}} {
		got := lrpAlphaBeta([]float64{1, 2}, 1, 2, []float64{3, -1}, 1, nil, []float64{1}, tc.alpha)
		if !close64(got, tc.want, 1e-15) {
			t.Errorf("α = %v: one neuron: %v, want %v", tc.alpha, got, tc.want)
		}
	}

	rng := rand.New(rand.NewPCG(3, 4))
	for _, zeroBias := range []bool{true, false} {
		n := toyNet{in: 5, hid: 4, out: 3}
		randn := func(k int) []float64 {
			v := make([]float64, k)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			return v
		}
		n.w1, n.b1, n.w2, n.b2 = randn(n.hid*n.in), randn(n.hid), randn(n.out*n.hid), randn(n.out)
		if zeroBias {
			clear(n.b1)
			clear(n.b2)
		}
		x := randn(n.in)
		h, y := make([]float64, n.hid), make([]float64, n.out)
		for j := range h {
			h[j] = n.b1[j]
			for i := range x {
				h[j] += n.w1[j*n.in+i] * x[i]
			}
		}
		z1 := slices.Clone(h)
		for j := range h {
			h[j] = max(h[j], 0)
		}
		for k := range y {
			y[k] = n.b2[k]
			for j := range h {
				y[k] += n.w2[k*n.hid+j] * h[j]
			}
		}
		for _, alpha := range []float64{0.5, 1, 0.3} {
			r2 := lrpAlphaBeta(h, 1, n.hid, n.w2, n.out, n.b2, y, alpha)
			r1 := lrpAlphaBeta(x, 1, n.in, n.w1, n.hid, n.b1, r2, alpha) // ReLU: pass-through
			ref2 := refAlphaBeta(h, rows2(n.w2, n.out, n.hid), n.b2, y, alpha)
			ref1 := refAlphaBeta(x, rows2(n.w1, n.hid, n.in), n.b1, ref2, alpha)
			if !close64(r2, ref2, 1e-12) || !close64(r1, ref1, 1e-12) {
				t.Errorf("bias %v α %v: relevance %v %v, reference %v %v", !zeroBias, alpha, r2, r1, ref2, ref1)
			}
			if zeroBias {
				// Conservation (Eq. 5): f(x) = Σ R at every layer.
				if s := sum64(y); math.Abs(sum64(r2)-s) > 1e-12 || math.Abs(sum64(r1)-s) > 1e-12 {
					t.Errorf("α %v: Σ R = %v, %v, %v: not conserved", alpha, s, sum64(r2), sum64(r1))
				}
			}
		}
		// Parameter relevance (Eqs. 13, 16): for every output unit,
		// Σ_j R[W_ij] + R[b_i] = R_i, since Σ_j W_ij x_j + b_i = z_i.
		r := randn(n.hid)
		rw, rb := lrpParamRelevance(x, 1, n.in, n.w1, n.hid, n.b1, z1, r)
		for i := range n.hid {
			s := rb[i]
			for j := range n.in {
				want := n.w1[i*n.in+j] * x[j] * r[i] / z1[i]
				if math.Abs(rw[i*n.in+j]-want) > 1e-12*max(1, math.Abs(want)) {
					t.Errorf("R[W_%d%d] = %v, want %v", i, j, rw[i*n.in+j], want)
				}
				s += rw[i*n.in+j]
			}
			if math.Abs(s-r[i]) > 1e-9*max(1, math.Abs(r[i])) {
				t.Errorf("unit %d: parameter relevances sum to %v, want R_i = %v", i, s, r[i])
			}
		}
	}

	// Signs: positive inputs and weights give positive relevance.
	x, w := []float64{1, 2, 3}, []float64{0.5, 0.1, 0.2, 0.3, 0.4, 0.6}
	for _, v := range lrpAlphaBeta(x, 1, 3, w, 2, nil, []float64{1, 2}, 0.5) {
		if !(v > 0) {
			t.Errorf("positive network: relevance %v ≤ 0", v)
		}
	}
}

// TestLRPSplits checks the pairwise splits against their closed forms:
// the add split shares the total in proportion to x and y when both are
// positive, and a product's operands each get half of the total (both raw
// shares equal the total, Eq. 11 halves them).
func TestLRPSplits(t *testing.T) {
	x, y, r := []float64{1, 3}, []float64{1, 1}, []float64{2, 4}
	rx, ry := lrpSplitAdd(x, y, r)
	// Raw: rx = (1, 3), ry = (1, 1); sums 4 and 2 of total 6: unchanged.
	if !close64(rx, []float64{1, 3}, 1e-15) || !close64(ry, []float64{1, 1}, 1e-15) {
		t.Errorf("add split: %v %v, want [1 3] [1 1]", rx, ry)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	a, b, rr := make([]float64, 6), make([]float64, 8), make([]float64, 12)
	for i := range a {
		a[i] = 0.1 + rng.Float64()
	}
	for i := range b {
		b[i] = 0.1 + rng.Float64()
	}
	for i := range rr {
		rr[i] = rng.Float64()
	}
	ra, rb := lrpMatMul(a, 3, 2, b, 4, 0.5, rr)
	if h := sum64(rr) / 2; math.Abs(sum64(ra)-h) > 1e-12 || math.Abs(sum64(rb)-h) > 1e-12 {
		t.Errorf("product split: Σ R_a = %v, Σ R_b = %v, want %v each", sum64(ra), sum64(rb), h)
	}
	// Mixed signs: the shares keep Eq. 11's total exactly.
	x, y = []float64{1, -2, 0.5}, []float64{-0.3, 0.7, 2}
	r = []float64{0.4, -1, 2}
	rx, ry = lrpSplitAdd(x, y, r)
	if math.Abs(sum64(rx)+sum64(ry)-sum64(r)) > 1e-12 {
		t.Errorf("add split with mixed signs: %v + %v ≠ %v", sum64(rx), sum64(ry), sum64(r))
	}
}

// TestRelevanceInit checks the initialisations: naive keeps every
// probability (Σ = 1 per position), top-k keeps k per position, top-p the
// smallest prefix reaching p, and a beam of width 1 is the argmax of each
// position (independent distributions).
func TestRelevanceInit(t *testing.T) {
	probs := [][]float64{{0.5, 0.3, 0.15, 0.05}, {0.1, 0.2, 0.6, 0.1}}
	initDense := func(probs [][]float64, o LRP) []float64 { return sparseInit(probs, o).toDense() }
	count := func(R []float64, k int) (n int, s float64) {
		for _, v := range R[k*4 : (k+1)*4] {
			if v != 0 {
				n++
				s += v
			}
		}
		return n, s
	}
	if n, s := count(initDense(probs, LRP{Init: "naive"}), 0); n != 4 || math.Abs(s-1) > 1e-15 {
		t.Errorf("naive: %d kept, Σ %v", n, s)
	}
	R := initDense(probs, LRP{Init: "topk", K: 2})
	if !close64(R, []float64{0.5, 0.3, 0, 0, 0, 0.2, 0.6, 0}, 0) {
		t.Errorf("top-2: %v", R)
	}
	R = initDense(probs, LRP{Init: "topp", P: 0.8})
	if !close64(R, []float64{0.5, 0.3, 0, 0, 0, 0.2, 0.6, 0}, 0) {
		t.Errorf("top-p 0.8: %v", R)
	}
	R = initDense(probs, LRP{Init: "topp", P: 0.9})
	if !close64(R, []float64{0.5, 0.3, 0.15, 0, 0.1, 0.2, 0.6, 0}, 0) {
		t.Errorf("top-p 0.9: %v", R)
	}
	R = initDense(probs, LRP{Init: "beam", K: 1})
	if !close64(R, []float64{0.5, 0, 0, 0, 0, 0, 0.6, 0}, 0) {
		t.Errorf("beam 1: %v", R)
	}
	// Beam 2: the best two of {0.5·0.6, 0.3·0.6, 0.5·0.2, 0.3·0.2} are
	// (0, 2) and (1, 2).
	R = initDense(probs, LRP{Init: "beam", K: 2})
	if !close64(R, []float64{0.5, 0.3, 0, 0, 0, 0, 0.6, 0}, 0) {
		t.Errorf("beam 2: %v", R)
	}
}

// textSeq returns a random text-only sequence with a answer tokens.
func textSeq(rng *rand.Rand, c Config, q, a int) Sequence {
	toks := []int{TokenBOS}
	loss := []bool{false}
	for i := range q + a {
		toks = append(toks, 5+rng.IntN(c.Vocab-5))
		loss = append(loss, i >= q)
	}
	return Sequence{Tokens: toks, Loss: loss}
}

// TestRelevanceConservation runs the whole propagation through TinyMLLM
// with every PEFT family: with all biases zero the relevance reaching the
// input equals the initial relevance (Eq. 9), every split conserves (Eq.
// 10) to float tolerance, and the trainable tensors get finite, non-zero
// relevance; with biases the input gets less than the initialisation.
func TestRelevanceConservation(t *testing.T) {
	t.Parallel()
	for _, peft := range []PEFT{
		{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.1},
		{Method: "adapter"},
		{Method: "bitfit"},
	} {
		for _, zero := range []bool{true, false} {
			c := smokeConfig(t)
			c.PEFT = peft
			m, err := NewTinyMLLM(c)
			if err != nil {
				t.Fatal(err)
			}
			perturbAll(m, 9) // adapters and biases off zero
			for _, p := range m.Params() {
				if zero && p.Kind == KindBias || zero && p.Kind == KindAdapter && len(p.Shape) == 1 {
					clear(p.Data)
				}
			}
			l := NewLayout(m.Params())
			s := textSeq(rand.New(rand.NewPCG(2, 2)), c, 4, 3)
			rel, err := m.Relevance(l, &s, LRP{Init: "topp", P: 0.9, Alpha: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			name := peft.Method
			if rel.SplitError > 1e-9 {
				t.Errorf("%s: split error %g", name, rel.SplitError)
			}
			if zero && math.Abs(rel.Input-rel.Init) > 1e-9*math.Abs(rel.Init) {
				t.Errorf("%s without biases: input relevance %v, initial %v", name, rel.Input, rel.Init)
			}
			nonzero := 0
			for _, v := range rel.Params {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: non-finite parameter relevance", name)
				}
				if v != 0 {
					nonzero++
				}
			}
			if !zero && nonzero < len(rel.Params)/2 {
				t.Errorf("%s: %d of %d parameter relevances non-zero", name, nonzero, len(rel.Params))
			}
		}
	}
}

func close64(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// BenchmarkRelevance measures one relevance propagation through the smoke
// TinyMLLM with LoRA on q and v (top-p 0.9 initialisation).
func BenchmarkRelevance(b *testing.B) {
	c := smokeConfig(b)
	c.PEFT = PEFT{Method: "lora", BInitStd: 0.02}
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	l := NewLayout(m.Params())
	s := textSeq(rand.New(rand.NewPCG(2, 2)), c, 12, 12)
	for b.Loop() {
		if _, err := m.Relevance(l, &s, LRP{Init: "topp", P: 0.9, Alpha: 0.5}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRelevanceBytes checks Relevance.Bytes against the head's buffers
// counted by hand: with the naive initialisation, two sequences of the
// same length that differ by one answer position differ by 8·(V + 2·D)
// bytes (one more dense row of initial relevance, of head input and of
// its relevance, in float64), everything else (tape, observed values,
// the hidden states' relevance, the one probability row) depending on the
// length alone. On one sequence with a answer positions a sparse
// initialisation saves 8·a·V − 8·V (its sort order) − 8·(a + 1) (its row
// starts) − 12·kept (token and value) − 16·a·b (a beam's candidates)
// against naive.
func TestRelevanceBytes(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "v"}, BInitStd: 0.1}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rel := func(q, a int, o LRP) *Relevance {
		s := textSeq(rand.New(rand.NewPCG(3, 3)), c, q, a)
		rel, err := m.Relevance(l, &s, o)
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}
	naive := LRP{Init: "naive", Alpha: 0.5}
	three, four := rel(5, 3, naive), rel(4, 4, naive)
	if want := int64(8 * (c.Vocab + 2*c.Width)); four.Bytes-three.Bytes != want {
		t.Errorf("one more answer position: %d more bytes, want 8·(%d + 2·%d) = %d", four.Bytes-three.Bytes, c.Vocab, c.Width, want)
	}
	// At least the hidden states' relevance and the answers' rows.
	if min := int64(8 * (9*c.Width + 3*(c.Vocab+2*c.Width))); three.Bytes <= min {
		t.Errorf("bytes %d, want more than the head's buffers, %d", three.Bytes, min)
	}
	if three.Kept != 3*c.Vocab {
		t.Errorf("naive kept %d, want 3·%d", three.Kept, c.Vocab)
	}
	const a = 3
	V := int64(c.Vocab)
	for _, tc := range []struct {
		o          LRP
		cands      int64
		minK, maxK int
	}{
		{LRP{Init: "topk", K: 2, Alpha: 0.5}, 0, 2 * a, 2 * a},
		{LRP{Init: "topp", P: 0.9, Alpha: 0.5}, 0, a, a * c.Vocab},
		{LRP{Init: "beam", K: 2, Alpha: 0.5}, 2 * a, a, 2 * a},
	} {
		got := rel(5, a, tc.o)
		if got.Kept < tc.minK || got.Kept > tc.maxK {
			t.Errorf("%s: kept %d, want in [%d, %d]", tc.o.Init, got.Kept, tc.minK, tc.maxK)
		}
		want := 8*a*V - 8*V - 8*(a+1) - 12*int64(got.Kept) - 16*tc.cands
		if save := three.Bytes - got.Bytes; save != want {
			t.Errorf("%s: saves %d bytes against naive, want %d", tc.o.Init, save, want)
		}
	}
}
