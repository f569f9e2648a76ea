// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// refPrune is a slow reference of Mechanism 1, written from Dual-Priv
// §4.1 (Eqs. 5–8) and the VisionZip conventions of the method's doc: it
// returns the output token vectors directly. Dominant patches are chosen by
// repeatedly taking the highest remaining mean-over-heads [CLS] attention
// (lowest index on ties) and are output in index order after [CLS]; the
// non-dominant patches, in index order, give centres every ⌊len/k⌋-th one;
// each other patch joins the centre with the largest cosine similarity
// (first on ties); a contextual token is centre + mean of its group.
func refPrune(tokens [][]float64, attn [][]float64, dominant, contextual int) [][]float64 {
	n := len(tokens) - 1
	score := make([]float64, n)
	for _, row := range attn {
		for j := range n {
			score[j] += row[j+1] / float64(len(attn))
		}
	}
	chosen := make([]bool, n)
	for range dominant {
		best := -1
		for j := range n {
			if !chosen[j] && (best < 0 || score[j] > score[best]) {
				best = j
			}
		}
		chosen[best] = true
	}
	out := [][]float64{tokens[0]}
	var rest []int
	for j := range n {
		if chosen[j] {
			out = append(out, tokens[j+1])
		} else {
			rest = append(rest, j)
		}
	}
	if contextual == 0 {
		return out
	}
	cos := func(a, b []float64) float64 {
		var d, na, nb float64
		for i := range a {
			d += a[i] * b[i]
			na += a[i] * a[i]
			nb += b[i] * b[i]
		}
		return d / math.Sqrt(na*nb)
	}
	stride := len(rest) / contextual
	var centres []int
	for i := range contextual {
		centres = append(centres, rest[i*stride])
	}
	sum := make([][]float64, contextual)
	cnt := make([]int, contextual)
	for c := range sum {
		sum[c] = make([]float64, len(tokens[0]))
	}
	for _, j := range rest {
		if slices.Contains(centres, j) {
			continue
		}
		best := 0
		for c := range centres {
			if cos(tokens[j+1], tokens[centres[c]+1]) > cos(tokens[j+1], tokens[centres[best]+1]) {
				best = c
			}
		}
		for i, v := range tokens[j+1] {
			sum[best][i] += v
		}
		cnt[best]++
	}
	for c, cj := range centres {
		v := slices.Clone(tokens[cj+1])
		for i := range v {
			if cnt[c] > 0 {
				v[i] += sum[c][i] / float64(cnt[c])
			}
		}
		out = append(out, v)
	}
	return out
}

// apply returns the tokens m maps x to (float64, without the Add term).
func apply(m nn.TokenMix, x [][]float64) [][]float64 {
	var out [][]float64
	for _, r := range m.Rows {
		v := make([]float64, len(x[0]))
		for k, s := range r.Src {
			for i := range v {
				v[i] += float64(r.Weight[k]) * x[s][i]
			}
		}
		out = append(out, v)
	}
	return out
}

func TestTokenPrunerReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, tc := range []struct {
		n, width, heads      int
		retention, share     float64
		dominant, contextual int
	}{
		{16, 4, 4, 0.4, 30.0 / 221, 5, 1},
		{49, 6, 2, 0.4, 30.0 / 221, 17, 3},
		{49, 6, 2, 0.2, 0.5, 5, 5},
		{16, 3, 1, 1, 0.14, 16, 0},
		{4, 3, 2, 0.4, 30.0 / 221, 1, 1}, // smoke: 2 kept, one fused
	} {
		p := tokenPruner{Mode: tokensPrune, Retention: tc.retention, Contextual: tc.share}
		if d, c := p.split(tc.n); d != tc.dominant || c != tc.contextual {
			t.Errorf("split(%d) at %v, %v = %d, %d; want %d, %d", tc.n, tc.retention, tc.share, d, c, tc.dominant, tc.contextual)
		}
		x := make([][]float64, tc.n+1)
		xt := nn.NewTensor(tc.n+1, tc.width)
		for i := range x {
			x[i] = make([]float64, tc.width)
			for k := range x[i] {
				v := float32(rng.NormFloat64())
				x[i][k] = float64(v)
				xt.Data[i*tc.width+k] = v
			}
		}
		attn := make([][]float64, tc.heads)
		at := nn.NewTensor(tc.heads, tc.n+1)
		for h := range attn {
			attn[h] = make([]float64, tc.n+1)
			for j := range attn[h] {
				v := float32(rng.Float64())
				attn[h][j] = float64(v)
				at.Data[h*(tc.n+1)+j] = v
			}
		}
		got := apply(p.mix(xt, at, nil), x)
		want := refPrune(x, attn, tc.dominant, tc.contextual)
		if len(got) != len(want) || len(got) != p.count(tc.n) {
			t.Fatalf("n=%d: %d tokens, reference %d, count %d", tc.n, len(got), len(want), p.count(tc.n))
		}
		for i := range want {
			for k := range want[i] {
				if math.Abs(got[i][k]-want[i][k]) > 1e-6 {
					t.Fatalf("n=%d: token %d = %v, reference %v", tc.n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestFusionNoise checks that fusion noise goes on the contextual tokens
// only, with the configured standard deviation, reproducibly per (seed,
// step, example, image) and independently across examples.
func TestFusionNoise(t *testing.T) {
	const n, width = 16, 200
	p := tokenPruner{Mode: tokensPruneFuse, Retention: 0.5, Contextual: 0.5, NoiseStd: 0.3}
	x, at := nn.NewTensor(n+1, width), nn.NewTensor(2, n+1)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	for i := range at.Data {
		at.Data[i] = float32(rng.Float64())
	}
	m := p.transform(7, 3, 11)(0, x, at)
	d, c := p.split(n)
	ss, cnt := 0.0, 0
	for i, r := range m.Rows {
		if i <= d {
			if r.Add != nil {
				t.Fatalf("row %d ([CLS] or dominant) is noised", i)
			}
			continue
		}
		for _, v := range r.Add {
			ss += float64(v) * float64(v)
			cnt++
		}
	}
	if cnt != c*width {
		t.Fatalf("%d noised coordinates, want %d", cnt, c*width)
	}
	// 800 draws: the sample sd is within 10% of 0.3 with probability
	// > 0.995 (relative standard error 1/√1600 = 2.5%).
	if sd := math.Sqrt(ss / float64(cnt)); math.Abs(sd-0.3) > 0.03 {
		t.Errorf("fusion noise sd %v, want 0.3", sd)
	}
	again := p.transform(7, 3, 11)(0, x, at)
	other := p.transform(7, 3, 12)(0, x, at)
	if !reflect.DeepEqual(m, again) || reflect.DeepEqual(m.Rows[d+1].Add, other.Rows[d+1].Add) {
		t.Error("fusion noise is not a function of (seed, step, example, image)")
	}
	if p.Mode = tokensNoise; len(p.transform(7, 3, 11)(0, x, at).Rows) != n+1 {
		t.Error("tokens: noise drops tokens")
	}
}

func TestTopBlocks(t *testing.T) {
	for _, tc := range []struct {
		scores []float64
		ratio  float64
		want   []bool
	}{
		{[]float64{3, 1, 2, 5}, 0.5, []bool{true, false, false, true}},
		{[]float64{3, 1, 2, 5}, 0.6, []bool{true, false, true, true}}, // ⌈2.4⌉ = 3
		{[]float64{3, 1, 2, 5}, 1, []bool{true, true, true, true}},
		{[]float64{1, 1, 1}, 0.33, []bool{true, false, false}}, // ties by index
		{[]float64{1, 1, 1}, 0.34, []bool{true, true, false}},  // ⌈1.02⌉ = 2
		{[]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.7, []bool{false, false, false, true, true, true, true, true, true, true}},
		{[]float64{3, 1, 2}, 1e-12, []bool{true, false, false}}, // ⌈P_K·J⌉ ≥ 1

	} {
		if got := topBlocks(tc.scores, tc.ratio); !slices.Equal(got, tc.want) {
			t.Errorf("topBlocks(%v, %v) = %v, want %v", tc.scores, tc.ratio, got, tc.want)
		}
	}
}

// TestDualPrivIsDPSGD checks the two ends: with neither mechanism
// (tokens none, update ratio 1) Dual-Priv is DP-SGD bit for bit, and with
// both its privacy record equals DP-SGD's (both mechanisms are pre- or
// post-processing), while its model differs.
func TestDualPrivIsDPSGD(t *testing.T) {
	run := func(method string, set func(h map[string]any)) (*Result, []float32) {
		job := tinyJob(t, method, 24, 3)
		params := map[string]any{"epochs": 2.0}
		if set != nil {
			set(params)
		}
		h, err := ResolveAt(method, "smoke", job.Epsilon, params)
		if err != nil {
			t.Fatal(err)
		}
		job.Hyper = h
		m, _ := Lookup(method)
		res, err := m.FineTune(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		return res, nn.NewLayout(lmOf(job).Params()).Values()
	}
	ref, refV := run("dpsgd", nil)
	off, offV := run("dualpriv", func(p map[string]any) { p["tokens"], p["update_ratio"] = "none", 1.0 })
	if !slices.Equal(refV, offV) || !reflect.DeepEqual(ref.Metrics, off.Metrics) {
		t.Error("Dual-Priv without its mechanisms differs from DP-SGD")
	}
	both, bothV := run("dualpriv", nil)
	if !reflect.DeepEqual(ref.Privacy, both.Privacy) || ref.EpsilonRDP != both.EpsilonRDP || ref.EpsilonPLD != both.EpsilonPLD {
		t.Errorf("privacy records differ:\n dpsgd    %+v\n dualpriv %+v", ref.Privacy, both.Privacy)
	}
	if slices.Equal(refV, bothV) {
		t.Error("Dual-Priv with both mechanisms trained exactly as DP-SGD")
	}
	// The fusion noise reaches training: pruning and fusion without it
	// (the prune control, everything else equal, the same streams)
	// trains another model.
	prune, pruneV := run("dualpriv", func(p map[string]any) { p["tokens"] = "prune" })
	if slices.Equal(pruneV, bothV) || reflect.DeepEqual(prune.Metrics, both.Metrics) {
		t.Error("Dual-Priv with and without fusion noise trained the same model: the noise does not reach training")
	}
	if prune.VisualTokens != both.VisualTokens {
		t.Errorf("prune control keeps %v tokens per image, the full method %v", prune.VisualTokens, both.VisualTokens)
	}
	if both.Visual == nil || both.VisualTokens != 3 || ref.VisualTokens != 5 {
		t.Errorf("visual transform %v, %v tokens per image (dpsgd %v); want pruning to 3 of 5 at smoke", both.Visual != nil, both.VisualTokens, ref.VisualTokens)
	}
	// The released transform prunes without noise, the same way each time.
	x, at := nn.NewTensor(5, 4), nn.NewTensor(2, 5)
	for i := range x.Data {
		x.Data[i] = float32(i%7) - 3
	}
	for i := range at.Data {
		at.Data[i] = float32(i%5) / 5
	}
	m1, m2 := both.Visual(0, x, at), both.Visual(0, x, at)
	if !reflect.DeepEqual(m1, m2) || slices.ContainsFunc(m1.Rows, func(r nn.MixRow) bool { return r.Add != nil }) {
		t.Error("the released visual transform is noisy")
	}
}

// TestBlockPrunerMask checks that Mechanism 2's hook keeps exactly the
// blocks of largest noisy norm (or norm per √size), and a random choice of
// the same count for the random control.
func TestBlockPrunerMask(t *testing.T) {
	ps := []*nn.Param{{Name: "a", Data: make([]float32, 1), Trainable: true}, {Name: "b", Data: make([]float32, 4), Trainable: true},
		{Name: "c", Data: make([]float32, 2), Trainable: true}}
	l := nn.NewLayout(ps)
	g := []float32{3, 1, 1, 1, 1, 0, 2.5} // norms 3, 2, 2.5; per √size 3, 1, 1.77
	for _, tc := range []struct {
		rank string
		want []bool
	}{
		{rankNorm, []bool{true, false, true}},
		{rankSizeNorm, []bool{true, false, true}},
	} {
		bp := blockPruner{Ratio: 0.5, Rank: tc.rank, layout: l}
		if got := bp.mask(0, g).Params; !slices.Equal(got, tc.want) {
			t.Errorf("%s: mask %v, want %v", tc.rank, got, tc.want)
		}
	}
	bp := blockPruner{Ratio: 0.2, Rank: rankSizeNorm, layout: l}
	// Norms 1, 4, 0: by norm b wins; per √size 1, 2, 0: b still wins; with
	// b = (1, 1, 1, 1) (norm 2 > 1, per √size 1 ≤ 1) a wins on ties by index.
	if got := bp.mask(0, []float32{1, 1, 1, 1, 1, 0, 0}).Params; !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("size-normalised: %v, want block a (1/√1 = 1 ties 2/√4 = 1, lower index first)", got)
	}
	bp.Rank = rankNorm
	if got := bp.mask(0, []float32{1, 1, 1, 1, 1, 0, 0}).Params; !slices.Equal(got, []bool{false, true, false}) {
		t.Errorf("norm: %v, want block b (norm 2 > 1)", got)
	}
	// signal: ‖g‖² − d·s² with s = 1 is 6.25 − 1 = 5.25 for a = (2.5),
	// 9 − 4 = 5 for b = (1.5, 1.5, 1.5, 1.5), −2 for c = 0: a wins, where
	// the raw norm (2.5 against 3) keeps b.
	gs := []float32{2.5, 1.5, 1.5, 1.5, 1.5, 0, 0}
	bp = blockPruner{Ratio: 0.2, Rank: rankSignal, NoiseStd: 1, layout: l}
	if got := bp.mask(0, gs).Params; !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("signal: %v, want block a (5.25 > 5)", got)
	}
	bp.Rank = rankNorm
	if got := bp.mask(0, gs).Params; !slices.Equal(got, []bool{false, true, false}) {
		t.Errorf("norm: %v, want block b (3 > 2.5)", got)
	}
	bp = blockPruner{Ratio: 0.5, Rank: rankRandom, layout: l, rng: rand.New(rand.NewPCG(1, 2))}
	seen := map[string]bool{}
	for range 50 {
		m := bp.mask(0, g).Params
		n := 0
		for _, k := range m {
			if k {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("random: %d blocks kept, want 2", n)
		}
		seen[string(slicesBytes(m))] = true
	}
	if len(seen) < 3 {
		t.Errorf("random: only %d distinct choices in 50 steps", len(seen))
	}
}

func slicesBytes(b []bool) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

// TestDualPrivKnobs checks that each knob of the settling runs changes
// what it claims to and nothing else: the fusion-noise scale multiplies
// the training noise's standard deviation by its factor (exactly, for a
// power of two); eval_tokens all releases no visual transform and trains
// the same model; cls_attn_layer past the first block clamps to it at
// smoke (one vision block: the same model); the random dominant choice
// trains another model; the signal ranking keeps the privacy record.
func TestDualPrivKnobs(t *testing.T) {
	run := func(set func(h map[string]any)) (*Result, []float32) {
		job := tinyJob(t, "dualpriv", 24, 3)
		params := map[string]any{"epochs": 2.0}
		if set != nil {
			set(params)
		}
		h, err := ResolveAt("dualpriv", "smoke", job.Epsilon, params)
		if err != nil {
			t.Fatal(err)
		}
		job.Hyper = h
		res, err := DualPriv{}.FineTune(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		return res, nn.NewLayout(lmOf(job).Params()).Values()
	}
	ref, refV := run(nil)
	x, at := nn.NewTensor(5, 6), nn.NewTensor(2, 5)
	for i := range x.Data {
		x.Data[i] = float32(i%7) - 3
	}
	for i := range at.Data {
		at.Data[i] = float32(i%5) / 5
	}
	noiseOf := func(r *Result) []float32 {
		var out []float32
		for _, row := range r.Release.Train(0)(0, x, at).Rows {
			out = append(out, row.Add...)
		}
		return out
	}
	base := noiseOf(ref)
	if len(base) == 0 {
		t.Fatal("the default run's training transform adds no fusion noise")
	}
	double, doubleV := run(func(p map[string]any) { p["fusion_noise_scale"] = 2.0 })
	for i, v := range noiseOf(double) {
		if v != 2*base[i] {
			t.Fatalf("fusion_noise_scale 2: noise coordinate %d = %v, want 2 × %v", i, v, base[i])
		}
	}
	if slices.Equal(doubleV, refV) {
		t.Error("fusion_noise_scale 2 trained the same model as 1")
	}
	if zero, _ := run(func(p map[string]any) { p["fusion_noise_scale"] = 0.0 }); len(noiseOf(zero)) != 0 {
		t.Error("fusion_noise_scale 0 still adds fusion noise")
	}
	all, allV := run(func(p map[string]any) { p["eval_tokens"] = "all" })
	if all.Visual != nil || ref.Visual == nil || !slices.Equal(allV, refV) || all.VisualTokens != ref.VisualTokens {
		t.Errorf("eval_tokens all: released transform %v (default %v), same model %v; want none, the same training",
			all.Visual != nil, ref.Visual != nil, slices.Equal(allV, refV))
	}
	if _, v := run(func(p map[string]any) { p["cls_attn_layer"] = 3 }); !slices.Equal(v, refV) {
		t.Error("cls_attn_layer 3 on the smoke preset's single vision block trained another model than 2")
	}
	if _, v := run(func(p map[string]any) { p["dominant"] = "random" }); slices.Equal(v, refV) {
		t.Error("dominant random trained the same model as the [CLS]-attention choice")
	}
	sig, _ := run(func(p map[string]any) { p["block_rank"] = "signal" })
	if !reflect.DeepEqual(sig.Privacy, ref.Privacy) {
		t.Error("the signal ranking changed the privacy record")
	}
	for _, bad := range []map[string]any{{"fusion_noise_scale": -1.0}, {"cls_attn_layer": 0}, {"dominant": "top"}, {"eval_tokens": "some"}, {"block_rank": "snr"}} {
		if _, err := ResolveAt("dualpriv", "smoke", 1, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
