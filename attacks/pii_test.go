// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"slices"
	"testing"
)

// Toy name vocabulary for hand-labelled generations: first names 10, 11,
// 12 and surnames 20, 21, 22; other ids are words.
var (
	toyFirst = map[int]bool{10: true, 11: true, 12: true}
	toySur   = map[int]bool{20: true, 21: true, 22: true}
)

// TestTagNames checks the name tagger on hand-labelled token strings: a
// first name followed by a surname is a mention; a lone first name or
// surname, or a surname first, is not.
func TestTagNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		toks []int
		want []Name
	}{
		{[]int{1, 10, 20, 5}, []Name{{10, 20}}},
		{[]int{10, 20, 11, 21}, []Name{{10, 20}, {11, 21}}},
		{[]int{20, 10, 5, 11}, nil},
		{[]int{10, 11, 22}, []Name{{11, 22}}},
		{[]int{12}, nil},
	} {
		if got := TagNames(tc.toks, toyFirst, toySur); !slices.Equal(got, tc.want) {
			t.Errorf("TagNames(%v) = %v, want %v", tc.toks, got, tc.want)
		}
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
// filled with the candidate, other names are kept, the prefix ends before
// the first mention, and the candidate list holds the truth once among
// distinct private names.
func TestReconTargets(t *testing.T) {
	t.Parallel()
	d := &PIIData{
		Records:      []Record{{ID: 3, Tokens: []int{1, 5, 10, 20, 6, 11, 21, 7, 10, 20, 2}, Names: []int{2, 5, 8}}},
		PrivateFirst: []int{10, 11, 12}, PrivateSurnames: []int{20, 21, 22},
	}
	ts, err := PIIReconstruction{Distractors: 4}.targets(d)
	if err != nil {
		t.Fatal(err)
	}
	r := ts[0]
	if r.truth != (Name{10, 20}) || !slices.Equal(r.at, []int{2, 8}) || !slices.Equal(r.prefix.Tokens, []int{1, 5}) {
		t.Errorf("target %+v", r)
	}
	if got, want := r.fill(Name{12, 22}), []int{12, 22, 6, 11, 21, 7, 12, 22, 2}; !slices.Equal(got, want) {
		t.Errorf("fill: got %v, want %v", got, want)
	}
	seen := map[Name]bool{}
	for _, c := range r.cands {
		seen[c] = true
	}
	if len(r.cands) != 5 || len(seen) != 5 || !seen[r.truth] {
		t.Errorf("candidates %v: want 5 distinct with the truth", r.cands)
	}
}
