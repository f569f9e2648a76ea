// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refInitRelevance is the slow, dense reference of the initialisations:
// the whole [rows, V] matrix, each retained probability written in place
// and every other entry zero, with the decoding rules written out on whole
// distributions (top-k: the first k tokens by decreasing probability,
// ties by index; top-p: the shortest such prefix whose sum reaches p;
// beam: the (position, token) pairs on the b best beams of a beam search
// over the positions).
func refInitRelevance(probs [][]float64, o LRP) []float64 {
	V := len(probs[0])
	R := make([]float64, len(probs)*V)
	order := func(p []float64) []int {
		o := make([]int, len(p))
		for i := range o {
			o[i] = i
		}
		slices.SortStableFunc(o, func(a, b int) int { return cmp.Compare(p[b], p[a]) })
		return o
	}
	switch o.Init {
	case "naive":
		for k, p := range probs {
			copy(R[k*V:], p)
		}
	case "topk", "topp":
		for k, p := range probs {
			cum := 0.0
			for n, v := range order(p) {
				if (o.Init == "topk" && n >= o.K) || (o.Init == "topp" && cum >= o.P) {
					break
				}
				R[k*V+v] = p[v]
				cum += p[v]
			}
		}
	case "beam":
		type beam struct {
			score float64
			toks  []int
		}
		cur := []beam{{}}
		for _, p := range probs {
			var next []beam
			for _, bm := range cur {
				for _, v := range order(p)[:min(o.K, V)] {
					next = append(next, beam{bm.score + math.Log(p[v]), append(slices.Clone(bm.toks), v)})
				}
			}
			slices.SortStableFunc(next, func(x, y beam) int { return cmp.Compare(y.score, x.score) })
			cur = next[:min(o.K, len(next))]
		}
		for _, bm := range cur {
			for k, v := range bm.toks {
				R[k*V+v] = probs[k][v]
			}
		}
	}
	return R
}

// sparseInit builds the initial relevance of probs under o as Relevance
// does, one position at a time.
func sparseInit(probs [][]float64, o LRP) *initRel {
	r := newInitRel(o, len(probs), len(probs[0]))
	for k, p := range probs {
		r.add(k, slices.Clone(p))
	}
	r.finish()
	return r
}

// toDense expands r to [rows, vocab].
func (r *initRel) toDense() []float64 {
	out := make([]float64, r.rows*r.vocab)
	for k := range r.rows {
		r.each(k, func(v int, rv float64) { out[k*r.vocab+v] = rv })
	}
	return out
}

// initOptions are the initialisations the comparisons run: Table IV's
// k, p and b, the extremes (k = 1, p = 1) and a vocabulary-wide k.
func initOptions(v int) []LRP {
	opts := []LRP{{Init: "naive"}, {Init: "topk", K: v}}
	for _, k := range []int{1, 2, 5, 10} {
		opts = append(opts, LRP{Init: "topk", K: k}, LRP{Init: "beam", K: k})
	}
	for _, p := range []float64{0.5, 0.85, 0.9, 0.95, 1} {
		opts = append(opts, LRP{Init: "topp", P: p})
	}
	return opts
}

// TestInitRelSparseMatchesDense checks the sparse initial relevance
// against the dense reference refInitRelevance on random distributions
// with ties: every kept entry holds the reference's value bit for bit,
// every entry it drops is zero in the reference, the totals agree, and
// the head's α-β propagation over the kept entries (headAlphaBeta) equals
// lrpAlphaBeta over the whole dense matrix bit for bit.
func TestInitRelSparseMatchesDense(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 37))
	const rows, V, D = 6, 40, 8
	probs := make([][]float64, rows)
	for k := range probs {
		z := make([]float64, V)
		for v := range z {
			// Logits on a coarse grid: many tied probabilities.
			z[v] = math.Round(rng.NormFloat64()*4) / 2
		}
		softmaxInPlace(z)
		probs[k] = z
	}
	x, w := make([]float64, rows*D), make([]float64, V*D)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for _, o := range initOptions(V) {
		o.Alpha = 0.5
		ref := refInitRelevance(probs, o)
		got := sparseInit(probs, o)
		nref := 0
		for _, v := range ref {
			if v != 0 {
				nref++
			}
		}
		if got.kept() != nref {
			t.Errorf("%+v: %d kept, the reference keeps %d", o, got.kept(), nref)
		}
		if o.Init != "naive" && (got.dense != nil || len(got.val) != got.kept()) {
			t.Errorf("%+v: stored densely", o)
		}
		for k := range rows {
			got.each(k, func(v int, rv float64) {
				if rv != ref[k*V+v] {
					t.Errorf("%+v: entry (%d, %d) = %v, reference %v", o, k, v, rv, ref[k*V+v])
				}
			})
		}
		if d := got.toDense(); !slices.Equal(d, ref) {
			t.Errorf("%+v: expanded sparse relevance differs from the reference", o)
		}
		if s := got.sum(); s != sum64(ref) {
			t.Errorf("%+v: total %v, reference %v", o, s, sum64(ref))
		}
		rx := headAlphaBeta(x, D, w, got, o.Alpha)
		if want := lrpAlphaBeta(x, rows, D, w, V, nil, ref, o.Alpha); !slices.Equal(rx, want) {
			t.Errorf("%+v: head relevance %v, dense reference %v", o, rx, want)
		}
	}
}

// TestRelevanceSparseEqualsDense runs the whole propagation through the
// smoke TinyMLLM with top-k at k = vocabulary size, which keeps every
// entry but stores it sparsely, and with naive, stored densely: the
// parameter relevances, totals and split errors are identical bit for
// bit, and the sparse storage of the full distribution costs more bytes
// (12 an entry against 8).
func TestRelevanceSparseEqualsDense(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "v"}, BInitStd: 0.1}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	s := textSeq(rand.New(rand.NewPCG(4, 4)), c, 5, 4)
	dense, err := m.Relevance(l, &s, LRP{Init: "naive", Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := m.Relevance(l, &s, LRP{Init: "topk", K: c.Vocab, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dense.Params, sparse.Params) || dense.Init != sparse.Init || dense.Input != sparse.Input || dense.SplitError != sparse.SplitError {
		t.Errorf("top-k at k = V differs from naive: init %v / %v, input %v / %v", sparse.Init, dense.Init, sparse.Input, dense.Input)
	}
	if dense.Kept != 4*c.Vocab || sparse.Kept != dense.Kept {
		t.Errorf("kept %d (naive) and %d (top-k = V), want %d", dense.Kept, sparse.Kept, 4*c.Vocab)
	}
	if !(sparse.Bytes > dense.Bytes) {
		t.Errorf("full distribution sparse %d bytes, dense %d: want more", sparse.Bytes, dense.Bytes)
	}
}
