// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestTokenPruningMix checks the structure of TokenPruning's map against
// its definition, computed independently here: every patch reaches the
// output exactly once (as itself, a centre or a group member); the
// dominant rows are the patches of highest mean [CLS] attention; each
// contextual row is centre + the mean of its group, and every member is
// at least as close (cosine) to its centre as to any other centre; Count
// is the number of rows. (The methods package checks Mix against a slow
// reference of Dual-Priv's Mechanism 1 as well.)
func TestTokenPruningMix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, tc := range []struct {
		n, width, heads   int
		retention, share  float64
		wantDom, wantCtx  int
		keepRest, noising bool
	}{
		{n: 16, width: 5, heads: 2, retention: 0.4, share: 30.0 / 221, wantDom: 5, wantCtx: 1},
		{n: 49, width: 4, heads: 3, retention: 0.1, share: 30.0 / 221, wantDom: 4, wantCtx: 1},
		{n: 49, width: 4, heads: 3, retention: 0.7, share: 0.3, wantDom: 24, wantCtx: 10},
		{n: 4, width: 3, heads: 1, retention: 0.1, share: 30.0 / 221, wantDom: 1, wantCtx: 0},
		{n: 16, width: 3, heads: 2, retention: 1, share: 0.5, wantDom: 16, wantCtx: 0},
		{n: 16, width: 6, heads: 2, retention: 0.25, share: 0.5, wantDom: 2, wantCtx: 2, keepRest: true, noising: true},
	} {
		p := TokenPruning{Retention: tc.retention, Contextual: tc.share, KeepRest: tc.keepRest}
		if d, c := p.Split(tc.n); d != tc.wantDom || c != tc.wantCtx {
			t.Errorf("Split(%d) at %v, %v = %d, %d; want %d, %d", tc.n, tc.retention, tc.share, d, c, tc.wantDom, tc.wantCtx)
			continue
		}
		x := NewTensor(tc.n+1, tc.width)
		for i := range x.Data {
			x.Data[i] = float32(rng.NormFloat64())
		}
		at := NewTensor(tc.heads, tc.n+1)
		for i := range at.Data {
			at.Data[i] = float32(rng.Float64())
		}
		var noise *rand.Rand
		if tc.noising {
			p.NoiseStd = 0.5
			noise = rand.New(rand.NewPCG(1, 2))
		}
		m := p.Mix(x, at, noise)
		if len(m.Rows) != p.Count(tc.n) {
			t.Fatalf("n=%d: %d rows, Count %d", tc.n, len(m.Rows), p.Count(tc.n))
		}
		// Every input row ([CLS] and patches) is used exactly once, except
		// the patches dropped when none is fused (no contextual token).
		seen := make([]int, tc.n+1)
		for _, r := range m.Rows {
			for _, s := range r.Src {
				seen[s]++
			}
		}
		dropping := !tc.keepRest && tc.wantCtx == 0
		for j, c := range seen {
			if c > 1 || c == 0 && !(dropping && j > 0) {
				t.Fatalf("n=%d: input row %d used %d times", tc.n, j, c)
			}
		}
		if r := m.Rows[0]; !slices.Equal(r.Src, []int{0}) || r.Weight[0] != 1 || r.Add != nil {
			t.Fatalf("n=%d: row 0 is not [CLS] alone: %+v", tc.n, r)
		}
		// Dominant rows: the wantDom highest scores, in index order.
		score := make([]float64, tc.n)
		for h := range tc.heads {
			for j := range tc.n {
				score[j] += float64(at.Data[h*(tc.n+1)+j+1])
			}
		}
		var dom []int
		for _, r := range m.Rows[1 : 1+tc.wantDom] {
			if len(r.Src) != 1 || r.Weight[0] != 1 || r.Add != nil {
				t.Fatalf("n=%d: dominant row %+v", tc.n, r)
			}
			dom = append(dom, r.Src[0]-1)
		}
		if !slices.IsSorted(dom) {
			t.Errorf("n=%d: dominant patches %v not in index order", tc.n, dom)
		}
		minDom := math.Inf(1)
		for _, j := range dom {
			minDom = min(minDom, score[j])
		}
		for j := range tc.n {
			if !slices.Contains(dom, j) && score[j] > minDom {
				t.Errorf("n=%d: patch %d (score %.3f) left out of the dominant ones (lowest %.3f)", tc.n, j, score[j], minDom)
			}
		}
		rest := m.Rows[1+tc.wantDom:]
		if tc.keepRest {
			if len(rest) != tc.n-tc.wantDom {
				t.Fatalf("n=%d: keepRest gives %d other rows, want %d", tc.n, len(rest), tc.n-tc.wantDom)
			}
			for _, r := range rest {
				if len(r.Src) != 1 || len(r.Add) != tc.width {
					t.Fatalf("n=%d: keepRest row %+v: want one source and noise", tc.n, r)
				}
			}
			continue
		}
		var centres []int
		for _, r := range rest {
			centres = append(centres, r.Src[0])
		}
		for _, r := range rest {
			if r.Weight[0] != 1 || r.Add != nil {
				t.Fatalf("n=%d: contextual row %+v: want the centre at weight 1, no noise", tc.n, r)
			}
			k := len(r.Src) - 1
			for i, s := range r.Src[1:] {
				if math.Abs(float64(r.Weight[i+1])-1/float64(k)) > 1e-7 {
					t.Fatalf("n=%d: member weight %v, want 1/%d", tc.n, r.Weight[i+1], k)
				}
				own := rowCosine(x, s, r.Src[0])
				for _, c := range centres {
					if rowCosine(x, s, c) > own {
						t.Fatalf("n=%d: patch %d joined centre %d, but centre %d is closer", tc.n, s, r.Src[0], c)
					}
				}
			}
		}
	}
}

// TestTokenPruningTransform checks that Transform is Mix without noise,
// whatever NoiseStd says.
func TestTokenPruningTransform(t *testing.T) {
	x, at := NewTensor(17, 4), NewTensor(2, 17)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	for i := range at.Data {
		at.Data[i] = float32(rng.Float64())
	}
	p := TokenPruning{Retention: 0.4, Contextual: 0.5, NoiseStd: 1}
	got := p.Transform()(0, x, at)
	want := p.Mix(x, at, nil)
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(want.Rows))
	}
	for i := range got.Rows {
		g, w := got.Rows[i], want.Rows[i]
		if !slices.Equal(g.Src, w.Src) || !slices.Equal(g.Weight, w.Weight) || g.Add != nil {
			t.Fatalf("row %d = %+v, want %+v without noise", i, g, w)
		}
	}
	if noisy := p.Mix(x, at, rand.New(rand.NewPCG(1, 1))); noisy.Rows[len(noisy.Rows)-1].Add == nil {
		t.Error("Mix with a generator and NoiseStd 1 adds no noise")
	}
}

// TestRandomDominant checks the random control of Mechanism 1: the
// dominant patches do not depend on the [CLS] attention, an image gets the
// same choice each time, and over many images every patch is chosen about
// equally often (dominant/n of the time).
func TestRandomDominant(t *testing.T) {
	const n, images = 16, 4000
	p := TokenPruning{Retention: 0.25, Contextual: 0, RandomDominant: true}
	d, _ := p.Split(n)
	rng := rand.New(rand.NewPCG(3, 4))
	x, at, at2 := NewTensor(n+1, 3), NewTensor(2, n+1), NewTensor(2, n+1)
	counts := make([]int, n)
	for range images {
		for i := range x.Data {
			x.Data[i] = float32(rng.NormFloat64())
		}
		for i := range at.Data {
			at.Data[i], at2.Data[i] = float32(rng.Float64()), float32(rng.Float64())
		}
		m := p.Mix(x, at, nil)
		if !reflect.DeepEqual(m, p.Mix(x, at2, nil)) {
			t.Fatal("the random dominant patches depend on the [CLS] attention")
		}
		if !reflect.DeepEqual(m, p.Mix(x, at, nil)) {
			t.Fatal("the same image got two different choices")
		}
		if len(m.Rows) != 1+d {
			t.Fatalf("%d rows, want [CLS] + %d dominant", len(m.Rows), d)
		}
		for _, r := range m.Rows[1:] {
			counts[r.Src[0]-1]++
		}
	}
	// Each count is Binomial(4000, 1/4): sd √750 ≈ 27.4; 5 sd = 137.
	want := float64(images*d) / n
	for j, c := range counts {
		if math.Abs(float64(c)-want) > 5*math.Sqrt(want*(1-float64(d)/n)) {
			t.Errorf("patch %d chosen %d times in %d images, want about %.0f", j, c, images, want)
		}
	}
}

// TestSetCLSAttnLayer checks that the setter gives the visual transform
// the [CLS] attention of the same block as a model built with that
// Config.CLSAttnLayer, that another block's attention differs, and that
// counts past the first block clamp to it.
func TestSetCLSAttnLayer(t *testing.T) {
	c := smokeConfig(t)
	c.VisionLayers = 2
	rng := rand.New(rand.NewPCG(13, 14))
	s := vqa(rng, c, 3, 1)
	attn := func(m *TinyMLLM) Tensor {
		var got Tensor
		vt := func(_ int, tokens, cls Tensor) TokenMix {
			got = cls.Clone()
			return TokenMix{Rows: []MixRow{{Src: []int{0}, Weight: []float32{1}}}}
		}
		if _, _, err := m.Forward(NewTape(nil, nil), &s, nil, nil, vt); err != nil {
			t.Fatal(err)
		}
		return got
	}
	c.CLSAttnLayer = 1
	last, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	c.CLSAttnLayer = 2
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	first := attn(m)
	if ix, err := m.SetCLSAttnLayer(1); err != nil || ix != 1 || m.Config.CLSAttnLayer != 1 {
		t.Fatalf("SetCLSAttnLayer(1) = %d, %v (config %d); want block 1", ix, err, m.Config.CLSAttnLayer)
	}
	if got, want := attn(m), attn(last); !slices.Equal(got.Data, want.Data) {
		t.Error("after SetCLSAttnLayer(1) the [CLS] attention is not the last block's")
	} else if slices.Equal(got.Data, first.Data) {
		t.Error("the two blocks' [CLS] attention is the same: the test shows nothing")
	}
	if ix, err := m.SetCLSAttnLayer(5); err != nil || ix != 0 || !slices.Equal(attn(m).Data, first.Data) {
		t.Errorf("SetCLSAttnLayer(5) on 2 blocks = %d, %v; want the first block", ix, err)
	}
	if _, err := m.SetCLSAttnLayer(0); err == nil {
		t.Error("SetCLSAttnLayer(0) accepted")
	}
}
