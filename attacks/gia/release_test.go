// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"math"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// TestRelease checks each mechanism against its definition on the per-
// example gradients of a batch of 4 on the smoke ViT: the raw release is
// their mean (the slow reference: a plain float64 loop), the clipped one
// has norm ≤ C (the mean of vectors of norm ≤ C), the noised one differs
// from the clipped one by noise of standard deviation σC/B per coordinate
// (checked at 6 standard errors of the sample variance over the
// coordinates, a false-reject rate below 1e-8), and the pruned one keeps
// exactly ⌈P_K·J⌉ blocks, those of largest norm.
func TestRelease(t *testing.T) {
	t.Parallel()
	m, l := smokeViT(t)
	b, _ := smokeBatch(t, 4)
	grads := vitGrads(t, m, l, b)
	raw, err := Release(l, grads, Mechanism{})
	if err != nil {
		t.Fatal(err)
	}
	for j := range raw {
		var s float64
		for _, g := range grads {
			s += float64(g[j])
		}
		if want := s / 4; math.Abs(float64(raw[j])-want) > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("raw[%d] = %v, want the mean %v", j, raw[j], want)
		}
	}
	const c, sigma = 0.05, 2.0
	clipped, _ := Release(l, grads, Mechanism{Rule: nn.Flat(c)})
	if n := norm(clipped); n > c*(1+1e-6) {
		t.Errorf("clipped release has norm %v > C = %v", n, c)
	}
	noised, _ := Release(l, grads, Mechanism{Rule: nn.Flat(c), Sigma: []float64{sigma}, Seed: 9})
	var ss float64
	for j := range noised {
		d := float64(noised[j] - clipped[j])
		ss += d * d
	}
	n := float64(len(noised))
	want := sigma * c / 4
	if got := math.Sqrt(ss / n); math.Abs(got/want-1) > 6*math.Sqrt(1/(2*n)) {
		t.Errorf("noise std %v, want σC/B = %v", got, want)
	}
	pruned, _ := Release(l, grads, Mechanism{Rule: nn.Flat(c), Sigma: []float64{sigma}, Seed: 9, Keep: 0.3})
	kept := 0
	var keptNorms, allNorms []float64
	for i := range l.Params {
		allNorms = append(allNorms, norm(l.Block(noised, i)))
		if norm(l.Block(pruned, i)) > 0 {
			kept++
			keptNorms = append(keptNorms, norm(l.Block(noised, i)))
			if !slices.Equal(l.Block(pruned, i), l.Block(noised, i)) {
				t.Errorf("kept block %d differs from the noised release", i)
			}
		}
	}
	if want := int(math.Ceil(0.3 * float64(len(l.Params)))); kept != want {
		t.Errorf("kept %d blocks of %d, want ⌈0.3·J⌉ = %d", kept, len(l.Params), want)
	}
	slices.Sort(allNorms)
	if slices.Min(keptNorms) < allNorms[len(allNorms)-kept] {
		t.Errorf("a kept block has norm %v below the %d-th largest %v", slices.Min(keptNorms), kept, allNorms[len(allNorms)-kept])
	}
	if _, err := Release(l, nil, Mechanism{}); err == nil {
		t.Error("empty batch: got no error")
	}
}

// TestLabels checks iDLG and the sign rule on the released updates of the
// smoke fusion classifier: exact for a batch of one, and for raw batches
// of 4 and 8 the multiset of labels (the bias gradient is (1/B)Σ(p − y),
// whose negative entries are the classes present when predictions are
// near uniform, as at initialisation).
func TestLabels(t *testing.T) {
	t.Parallel()
	m, l := smokeFusion(t)
	for _, bs := range []int{1, 4, 8} {
		b, _ := smokeBatch(t, bs)
		g, err := Release(l, fusionGrads(t, m, l, b), Mechanism{})
		if err != nil {
			t.Fatal(err)
		}
		got := labels(block(l, g, m.Head.B), bs)
		if acc := LabelAccuracy(got, b.Labels); acc != 1 {
			t.Errorf("batch %d: labels %v, want %v (accuracy %v)", bs, got, b.Labels, acc)
		}
	}
	if got := LabelAccuracy([]int{1, 1, 2}, []int{1, 2, 2}); math.Abs(got-2.0/3) > 1e-15 {
		t.Errorf("LabelAccuracy multiset: got %v, want 2/3", got)
	}
}

// TestBagOfWords checks the rows rule on a hand-built gradient.
func TestBagOfWords(t *testing.T) {
	t.Parallel()
	ge := []float32{0, 0, 3, 4, 0, 0, 1, 0} // rows: 0, 5, 0, 1
	if got := BagOfWords(ge, 2, 0); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("got %v, want [1 3]", got)
	}
	if got := BagOfWords(ge, 2, 1); !slices.Equal(got, []int{1}) {
		t.Errorf("n=1: got %v, want [1]", got)
	}
	if got := TRR([]int{1, 3}, [][]int{{1, 1, 2}, {3}}); got != 0.75 {
		t.Errorf("TRR: got %v, want 3/4", got)
	}
}

// TestReleasePerModality checks the per-modality release of a batch of 4
// on the smoke fusion classifier without noise: each modality's part of
// the release has norm at most its own clip norm (the mean of vectors of
// norm ≤ C_g), and with noise only the image group noised (σ_text = 0)
// the text part is unchanged.
func TestReleasePerModality(t *testing.T) {
	t.Parallel()
	m, l := smokeFusion(t)
	b, _ := smokeBatch(t, 4)
	grads := fusionGrads(t, m, l, b)
	rule := PerModality(l, 0.01, 0.02)
	clipped, err := Release(l, grads, Mechanism{Rule: rule})
	if err != nil {
		t.Fatal(err)
	}
	for g, n := range nn.Norms(clipped, rule) {
		if n > rule.C[g]*(1+1e-6) {
			t.Errorf("group %d: norm %v > C = %v", g, n, rule.C[g])
		}
	}
	noised, err := Release(l, grads, Mechanism{Rule: rule, Sigma: []float64{1, 0}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for j, part := range rule.Part {
		if part == 1 && noised[j] != clipped[j] {
			t.Fatalf("text coordinate %d changed: %v, want %v", j, noised[j], clipped[j])
		}
	}
}

// TestSequence checks the position rule on hand-built gradients of the
// sequence [2 0 2 1] (token 2 repeated), width 2, with a zero row past
// the end: tok rows are the sums of their positions' rows.
func TestSequence(t *testing.T) {
	t.Parallel()
	pos := [][2]float32{{1, 0.1}, {0, 1}, {0.9, -0.2}, {-1, 0.3}, {0, 0}}
	seq := []int{2, 0, 2, 1}
	ge := make([]float32, 3*2)
	gp := make([]float32, len(pos)*2)
	for i, p := range pos {
		copy(gp[2*i:], p[:])
		if i < len(seq) {
			ge[2*seq[i]] += p[0]
			ge[2*seq[i]+1] += p[1]
		}
	}
	bag := BagOfWords(ge, 2, 0)
	got := Sequence(ge, gp, 2, bag, 0, 0)
	if !slices.Equal(got, seq) {
		t.Errorf("got %v, want %v", got, seq)
	}
	if r := PositionTRR([]int{2, 0, 1}, seq); r != 0.5 {
		t.Errorf("PositionTRR: got %v, want 2/4", r)
	}
}

// TestReleaseRowMask checks SPARTA's masked release on the smoke ViT: with
// a row mask keeping the even rows of every tensor, the odd rows of the
// noised release are exactly zero and the even rows equal those of the
// release of the masked gradients.
func TestReleaseRowMask(t *testing.T) {
	t.Parallel()
	m, l := smokeViT(t)
	b, _ := smokeBatch(t, 2)
	grads := vitGrads(t, m, l, b)
	mask := l.RowMask(func(_ *nn.Param, row int) bool { return row%2 == 0 })
	mech := Mechanism{Rule: nn.Flat(1), Sigma: []float64{1}, Seed: 5, Mask: mask}
	got, err := Release(l, grads, mech)
	if err != nil {
		t.Fatal(err)
	}
	masked := make([][]float32, len(grads))
	for i, g := range grads {
		masked[i] = slices.Clone(g)
		nn.ApplyMask(masked[i], mask)
	}
	mech.Mask = nil
	ref, err := Release(l, masked, mech)
	if err != nil {
		t.Fatal(err)
	}
	for j, k := range mask {
		switch {
		case k == 0 && got[j] != 0:
			t.Fatalf("masked coordinate %d released %v", j, got[j])
		case k != 0 && got[j] != ref[j]:
			t.Fatalf("kept coordinate %d: %v, want %v", j, got[j], ref[j])
		}
	}
}
