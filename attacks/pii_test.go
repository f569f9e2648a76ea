// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// Toy name lists for hand-labelled generations, spelled with pieces as
// the records' names are: first names [10 30] (index 0), [10 31] (1),
// [11 30] (2) and [12] (3); surnames [20 40] (0), [21 40] (1), [22] (2)
// and [22 41] (3); other ids are words.
var (
	toyFirst = [][]int{{10, 30}, {10, 31}, {11, 30}, {12}}
	toySur   = [][]int{{20, 40}, {21, 40}, {22}, {22, 41}}
)

// TestTagNames checks the name tagger on hand-labelled token strings: a
// first name followed by a surname is a mention; a lone first name or
// surname, a surname first, or a piece alone is not; the longest surname
// that matches wins.
func TestTagNames(t *testing.T) {
	t.Parallel()
	tg := NewTagger(toyFirst, toySur)
	for _, tc := range []struct {
		toks []int
		want []Name
	}{
		{[]int{1, 10, 30, 20, 40, 5}, []Name{{0, 0}}},
		{[]int{10, 30, 20, 40, 11, 30, 21, 40}, []Name{{0, 0}, {2, 1}}},
		{[]int{20, 40, 10, 30, 5, 11, 30}, nil},
		{[]int{10, 31, 10, 30, 22, 5}, []Name{{0, 2}}},
		{[]int{12, 22, 41, 7}, []Name{{3, 3}}},
		{[]int{12, 22, 40}, []Name{{3, 2}}},
		{[]int{10, 20, 40}, nil},
		{[]int{12}, nil},
		{nil, nil},
	} {
		if got := tg.Tag(tc.toks); !slices.Equal(got, tc.want) {
			t.Errorf("Tag(%v) = %v, want %v", tc.toks, got, tc.want)
		}
	}
	if n, l, ok := tg.At([]int{5, 10, 31, 21, 40}, 1); !ok || n != (Name{1, 1}) || l != 4 {
		t.Errorf("At: got %v, %d, %v, want {1 1}, 4, true", n, l, ok)
	}
}

// TestExtractionMetrics checks the extraction metrics on hand-labelled
// toy generations. Training mentions: A twice, B, C (distinct: A, B, C;
// 4 mentions). Target generations tag A, A, B, D, E; the base model's tag
// D and B.
//   - ExtractionPR: distinct generated {A, B, D, E}, 2 private: precision
//     2/4, recall 2/3.
//   - RapFTEA: Leaked = {A, B, D, E} \ {D, B} = {A, E}; A is real:
//     precision 1/2, recall 1/4 (over the 4 mentions).
//   - RapFTRA: truths A, B, C, A; target predicts A, B, D, E; base
//     predicts A, D, C, D. All targets: 2/4. Skipping those the base
//     reconstructs (0 and 2): targets 1 and 3, one right: 1/2 of 2.
func TestExtractionMetrics(t *testing.T) {
	t.Parallel()
	A, B, C, D, E := Name{10, 20}, Name{10, 21}, Name{11, 20}, Name{12, 22}, Name{11, 22}
	train := []Name{A, B, A, C}
	gen := []Name{A, A, B, D, E}
	base := []Name{D, B}
	p, r := ExtractionPR(gen, set(train))
	if math.Abs(p-0.5) > 1e-15 || math.Abs(r-2.0/3) > 1e-15 {
		t.Errorf("ExtractionPR: got %v, %v, want 1/2, 2/3", p, r)
	}
	p, r = RapFTEA(gen, base, train)
	if p != 0.5 || r != 0.25 {
		t.Errorf("RapFTEA: got %v, %v, want 1/2, 1/4", p, r)
	}
	if p, r := RapFTEA(nil, base, train); p != 0 || r != 0 {
		t.Errorf("RapFTEA with nothing generated: got %v, %v, want 0, 0", p, r)
	}
	truth := []Name{A, B, C, A}
	pred := []Name{A, B, D, E}
	bp := []Name{A, D, C, D}
	if acc, n := RapFTRA(pred, bp, truth, false); acc != 0.5 || n != 4 {
		t.Errorf("RapFTRA: got %v of %d, want 1/2 of 4", acc, n)
	}
	if acc, n := RapFTRA(pred, bp, truth, true); acc != 0.5 || n != 2 {
		t.Errorf("RapFTRA skipping the base's hits: got %v of %d, want 1/2 of 2", acc, n)
	}
}

// TestReconTargets checks the masking: every mention of the target name is
// filled with the candidate's tokens (of another length too), other names
// are kept, the prefix ends before the first mention, and the candidate
// list holds the truth once among distinct private names.
func TestReconTargets(t *testing.T) {
	t.Parallel()
	d := &PIIData{
		Records: []Record{{ID: 3, Tokens: []int{1, 5, 10, 30, 20, 40, 6, 11, 30, 21, 40, 7, 10, 30, 20, 40, 2},
			Names: []int{2, 7, 12}}},
		First: toyFirst, Surnames: toySur,
		PrivateFirst: []int{0, 2, 3}, PrivateSurnames: []int{0, 1, 2},
	}
	ts, err := PIIReconstruction{Distractors: 4}.targets(d)
	if err != nil {
		t.Fatal(err)
	}
	r := ts[0]
	if r.truth != (Name{0, 0}) || r.width != 4 || !slices.Equal(r.at, []int{2, 12}) || !slices.Equal(r.prefix.Tokens, []int{1, 5}) {
		t.Errorf("target %+v", r)
	}
	if got, want := r.fill(d.tokens(Name{3, 2})), []int{12, 22, 6, 11, 30, 21, 40, 7, 12, 22, 2}; !slices.Equal(got, want) {
		t.Errorf("fill: got %v, want %v", got, want)
	}
	seen := map[Name]bool{}
	for _, c := range r.cands {
		seen[c] = true
	}
	if len(r.cands) != 5 || len(seen) != 5 || !seen[r.truth] {
		t.Errorf("candidates %v: want 5 distinct with the truth", r.cands)
	}
	d.Records[0].Names = []int{3}
	if _, err := (PIIReconstruction{}).targets(d); err == nil {
		t.Error("a mention start with no name: got no error")
	}
}

// TestReconBest checks best, the least-perplexity candidate, against a
// slow reference: the mean of the full-forward token losses of each filled
// record after its first token, on a perturbed smoke model, with
// candidates of 2, 3 and 4 tokens (so the lengths matter).
func TestReconBest(t *testing.T) {
	t.Parallel()
	m := perturbedModel(t)
	first := [][]int{{10, 30}, {11}, {12, 31}, {13}}
	sur := [][]int{{20, 40}, {21}, {22, 41}}
	d := &PIIData{First: first, Surnames: sur}
	r := &reconTarget{toks: []int{2, 5, 7, 10, 30, 20, 40, 8, 9, 10, 30, 20, 40, 3}, at: []int{3, 9}, width: 4,
		prefix: nn.Sequence{Tokens: []int{2, 5, 7}}}
	var cands []Name
	ref := make([]float64, 0, len(first)*len(sur))
	for i := range first {
		for j := range sur {
			n := Name{i, j}
			cands = append(cands, n)
			rest := r.fill(d.tokens(n))
			// Perplexity order: mean loss of every token after <bos>.
			s := slowScore(t, m, r.prefix.Tokens[:1], slices.Concat(r.prefix.Tokens[1:], rest))
			ref = append(ref, s/float64(len(r.prefix.Tokens)-1+len(rest)))
		}
	}
	got, err := best(m, nil, r, cands, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := cands[argmin(ref)]; got != want {
		t.Errorf("best: got %v, want %v (reference mean losses %v)", got, want, ref)
	}
	// Each candidate alone and against the truth's rival: best picks the
	// lower reference score of every pair.
	for a := range cands {
		b := (a + 5) % len(cands)
		got, err := best(m, nil, r, []Name{cands[a], cands[b]}, d)
		if err != nil {
			t.Fatal(err)
		}
		want := cands[a]
		if ref[b] < ref[a] {
			want = cands[b]
		}
		if got != want && math.Abs(ref[a]-ref[b]) > 1e-9 {
			t.Errorf("best of %v (%v) and %v (%v): got %v", cands[a], ref[a], cands[b], ref[b], got)
		}
	}
}
