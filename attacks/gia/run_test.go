// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// pruneFuse is a visual-token transform of Dual-Priv's form for the
// tests: [CLS], the keep patches with the most [CLS] attention (mean over
// heads), and one token, the mean of the others.
func pruneFuse(keep int) nn.VisualTransform {
	return func(_ int, tokens, clsAttn nn.Tensor) nn.TokenMix {
		n := tokens.Rows() - 1
		score := make([]float64, n)
		for h := range clsAttn.Rows() {
			for j := range n {
				score[j] += float64(clsAttn.Data[h*(n+1)+j+1])
			}
		}
		order := make([]int, n)
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
		m := nn.TokenMix{Rows: []nn.MixRow{{Src: []int{0}, Weight: []float32{1}}}}
		for _, j := range order[:keep] {
			m.Rows = append(m.Rows, nn.MixRow{Src: []int{j + 1}, Weight: []float32{1}})
		}
		fused := nn.MixRow{}
		for _, j := range order[keep:] {
			fused.Src = append(fused.Src, j+1)
			fused.Weight = append(fused.Weight, 1/float32(n-keep))
		}
		return nn.TokenMix{Rows: append(m.Rows, fused)}
	}
}

// smokeSequences returns the first b private fashion-vqa sequences at
// smoke.
func smokeSequences(t testing.TB, b int) []nn.Sequence {
	t.Helper()
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var out []nn.Sequence
	for i := range b {
		ex := &d.Private[i]
		seq, mask := ex.Sequence()
		out = append(out, nn.Sequence{Tokens: seq, Images: ex.Images, Loss: mask})
	}
	return out
}

// TestSumGradBatch checks the batch objective of the mllm-lora attack at
// B = 2 through a pruning and fusing visual transform: SumGrad's
// parameter gradient against nn's batch gradient (TinyMLLM.Gradient, the
// methods' engine), and GradientMatch's gradient in the two images
// against a brute-force central difference of the whole objective.
func TestSumGradBatch(t *testing.T) {
	t.Parallel()
	m, l, _ := smokeMLLMLoRA(t, 0.02)
	seqs := smokeSequences(t, 2)
	vt := pruneFuse(2)
	dim := len(seqs[0].Images[0])
	f := SumGrad([]GradFunc{MLLMGrad(m, l, seqs[0], vt), MLLMGrad(m, l, seqs[1], vt)}, dim)
	x := slices.Concat(seqs[0].Images[0], seqs[1].Images[0])
	got := make([]float32, l.Size)
	if _, err := f(x, got, nil); err != nil {
		t.Fatal(err)
	}
	want, _, _, err := m.Gradient(l, seqs, nil, vt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got, want); e > 1e-5 {
		t.Errorf("SumGrad's parameter gradient: relative error %.3g against TinyMLLM.Gradient", e)
	}
	gm, err := NewGradientMatch(l, f, want)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	y := make([]float32, len(x))
	for i := range y {
		y[i] = 0.2 + 0.6*rng.Float32()
	}
	checkObjectiveFD(t, gm, y, rng, "sum of two")
}

// TestReleaseUpdate checks the update the gia attack releases: the raw
// release is the mean of nn's per-example gradients under the transform;
// a release with a training transform uses it for each example (its
// index), clips, noises and keeps ⌈Keep·J⌉ tensors.
func TestReleaseUpdate(t *testing.T) {
	t.Parallel()
	m, l, _ := smokeMLLMLoRA(t, 0.02)
	seqs := smokeSequences(t, 3)
	bt, err := memberBatch([]attacks.Example{{Seq: seqs[0]}, {Seq: seqs[1]}, {Seq: seqs[2]}})
	if err != nil {
		t.Fatal(err)
	}
	vt := pruneFuse(2)
	got, err := releaseUpdate(m, l, bt, &methods.Release{}, vt, 1)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, _, err := m.Gradient(l, seqs, nil, vt, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sum {
		sum[i] /= 3
	}
	if e := relErr(got, sum); e > 1e-5 {
		t.Errorf("raw release: relative error %.3g against the mean of TinyMLLM.Gradient", e)
	}
	var mu sync.Mutex
	var seen []int
	r := &methods.Release{Rule: nn.Flat(1), Sigmas: []float64{0.5}, Keep: 0.5, Train: func(i int) nn.VisualTransform {
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
		return pruneFuse(1)
	}}
	g, err := releaseUpdate(m, l, bt, r, vt, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{0, 1, 2}) {
		t.Errorf("training transforms of examples %v, want [0 1 2]", seen)
	}
	nonzero := 0
	for i := range l.Params {
		if norm(l.Block(g, i)) > 0 {
			nonzero++
		}
	}
	if want := int(math.Ceil(0.5 * float64(len(l.Params)))); nonzero != want {
		t.Errorf("%d released tensors, want %d", nonzero, want)
	}
}

// TestInvertPriorBatch minimises a separable quadratic over two images,
// each target a conditional mean x(w*) of the prior, and checks that each
// comes back in its place.
func TestInvertPriorBatch(t *testing.T) {
	t.Parallel()
	m, _, _ := smokeMLLMLoRA(t, 0)
	pub, p := smokePrior(t, m.Vision, 256)
	n := len(pub[0])
	targets := [][]float32{p.Image(make([]float32, n), p.Coords(pub[0])), p.Image(make([]float32, n), p.Coords(pub[1]))}
	obj := func(x, grad []float32) (float64, error) {
		var v float64
		for i, tg := range targets {
			for j, y := range tg {
				d := float64(x[i*n+j] - y)
				v += d * d / float64(n)
				grad[i*n+j] = float32(2 * d / float64(n))
			}
		}
		return v, nil
	}
	imgs, _, err := InvertPriorBatch(obj, p, 2, &InvertOptions{Iterations: 1000, Restarts: 1, LR: 0.05, TV: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	for i, tg := range targets {
		own, other := PSNR(imgs[i], clamp01(tg), 1), PSNR(imgs[i], clamp01(targets[1-i]), 1)
		t.Logf("image %d: PSNR %.1f dB to its target, %.1f dB to the other", i, own, other)
		if own < 30 || own < other+10 {
			t.Errorf("image %d: PSNR %.1f dB to its target (want ≥ 30), %.1f dB to the other", i, own, other)
		}
	}
}

// TestAttackOptions checks the gia attack's options, score sets and
// refusal of a target whose method declares no release.
func TestAttackOptions(t *testing.T) {
	t.Parallel()
	a, err := attacks.Configure("gia", map[string][]string{"batch": {"2", "4"}, "iterations": {"5"}})
	if err != nil {
		t.Fatal(err)
	}
	g := a.(Attack)
	if !slices.Equal(g.Sets(), []string{"gia_b2", "gia_b4"}) || g.Iterations != 5 || g.Trials != 0 {
		t.Errorf("configured %+v, sets %v", g, g.Sets())
	}
	if !slices.Equal(Attack{}.Sets(), []string{"gia_b1", "gia_b8"}) {
		t.Errorf("default sets %v", Attack{}.Sets())
	}
	a, err = attacks.Configure("gia", map[string][]string{"lr": {"0.2"}, "tv": {"0.01"}, "gauss": {"0"}, "restarts": {"3"}, "scout": {"17"}})
	if err != nil {
		t.Fatal(err)
	}
	o := a.(Attack).invertOptions(7)
	if want := (InvertOptions{Iterations: 300, Restarts: 3, LR: 0.2, TV: 0.01, Gauss: 0, Decay: DefaultDecay, Scout: 17, Seed: 7}); !reflect.DeepEqual(*o, want) {
		t.Errorf("configured options %+v, want %+v", *o, want)
	}
	if o, want := (Attack{}).invertOptions(1), (InvertOptions{Iterations: 300, Restarts: DefaultRestarts, LR: DefaultLR, TV: DefaultTV, Gauss: DefaultGauss, Decay: DefaultDecay, Scout: DefaultScout, Seed: 1}); !reflect.DeepEqual(*o, want) {
		t.Errorf("default options %+v, want %+v", *o, want)
	}
	if a, err := attacks.Configure("gia", map[string][]string{"span": {"1"}}); err != nil || !a.(Attack).Span {
		t.Errorf("span: 1 configured %+v, %v", a, err)
	}
	for _, k := range []int{TextSpan, TextMatch} {
		if a, err := attacks.Configure("gia", map[string][]string{"text": {strconv.Itoa(k)}}); err != nil || a.(Attack).Text != k {
			t.Errorf("text: %d configured %+v, %v", k, a, err)
		}
	}
	for _, bad := range []map[string][]string{{"text": {"3"}}, {"text": {"0.5"}}, {"span": {"2"}}, {"lr": {"0"}}, {"tv": {"-1"}}, {"gauss": {"-0.5"}}, {"restarts": {"1.5"}}, {"scout": {"-1"}}, {"lr": {"0.1", "0.2"}}} {
		if _, err := attacks.Configure("gia", bad); err == nil {
			t.Errorf("options %v configured without error", bad)
		}
	}
	for metric, owns := range map[string]bool{"gia_b8_ssim": true, "gia_b16_psnr_mean": true, "gia_ssim": false, "mia_auc": false} {
		if g.Owns(metric) != owns {
			t.Errorf("Owns(%q) = %v", metric, !owns)
		}
	}
	m, _, _ := smokeMLLMLoRA(t, 0)
	if _, err := g.Run(context.Background(), &attacks.Target{Model: m}); err == nil || !strings.Contains(err.Error(), "declares no update release") {
		t.Errorf("target without a release: got %v", err)
	}
}

// TestInvertPriorGauss checks the Gaussian term of the prior search
// against its closed form: for the quadratic ‖x(w) − x(w*)‖²/n (n values
// of the C×H×W image, channels tied) plus γ‖w‖²/(2r), the minimiser solves
// (2C/n·BᵀB + γ/r·I) w = 2C/n·BᵀB w*. Adam with the step decay must land on
// it (PSNR ≥ 40 dB; without the term it would return the target, 20.7 dB
// from the closed form at this γ) and the term must matter (the closed
// form at most 35 dB from the target x(w*)).
func TestInvertPriorGauss(t *testing.T) {
	t.Parallel()
	m, _, _ := smokeMLLMLoRA(t, 0)
	pub, p := smokePrior(t, m.Vision, 256)
	n, r, c := len(pub[0]), p.Dim(), float64(p.c)
	ws := p.Coords(smokeData(t).Private[0].Images[0])
	target := p.Image(make([]float32, n), ws)
	obj := func(x, grad []float32) (float64, error) {
		var v float64
		for j, y := range target {
			d := float64(x[j] - y)
			v += d * d / float64(n)
			grad[j] = float32(2 * d / float64(n))
		}
		return v, nil
	}
	const gamma = 0.05
	btb := make([][]float64, r) // BᵀB over one channel
	for i := range r {
		btb[i] = make([]float64, r)
		for _, row := range p.b {
			for k := range r {
				btb[i][k] += row[i] * row[k]
			}
		}
	}
	a, rhs := make([][]float64, r), make([]float64, r)
	for i := range r {
		a[i] = make([]float64, r)
		for k := range r {
			a[i][k] = 2 * c / float64(n) * btb[i][k]
			rhs[i] += 2 * c / float64(n) * btb[i][k] * ws[k]
		}
		a[i][i] += gamma / float64(r)
	}
	want := clamp01(p.Image(make([]float32, n), solveSPD(a, rhs)))
	imgs, _, err := InvertPriorBatch(obj, p, 1, &InvertOptions{Iterations: 2000, Restarts: 1, LR: 0.05, TV: 1e-12, Gauss: gamma, Decay: true})
	if err != nil {
		t.Fatal(err)
	}
	got, off := PSNR(imgs[0], want, 1), PSNR(want, clamp01(target), 1)
	t.Logf("PSNR %.1f dB to the closed form, which is %.1f dB from the target", got, off)
	if got < 40 || off > 35 {
		t.Errorf("PSNR %.1f dB to the closed form (want ≥ 40), the closed form %.1f dB from the target (want ≤ 35)", got, off)
	}
}

// TestInvertPriorScout checks the scouted starts: for a quadratic whose
// minimum is the conditional mean of public image 5, scouting the first 8
// public images must start (and, with a negligible step, end) there,
// where the unscouted search stays at the mean image; and scout ranks the
// images by the objective.
func TestInvertPriorScout(t *testing.T) {
	t.Parallel()
	m, _, _ := smokeMLLMLoRA(t, 0)
	pub, p := smokePrior(t, m.Vision, 64)
	n := len(pub[0])
	target := clamp01(p.Image(make([]float32, n), p.Coords(pub[5])))
	obj := func(x, grad []float32) (float64, error) {
		var v float64
		for j, y := range target {
			d := float64(x[j] - y)
			v += d * d / float64(n)
			grad[j] = float32(2 * d / float64(n))
		}
		return v, nil
	}
	for _, tc := range []struct {
		scout    int
		min, max float64
	}{{8, 60, math.Inf(1)}, {0, 0, 30}} {
		imgs, _, err := InvertPriorBatch(obj, p, 1, &InvertOptions{Iterations: 1, Restarts: 1, LR: 1e-9, TV: 1e-12, Scout: tc.scout})
		if err != nil {
			t.Fatal(err)
		}
		if got := PSNR(imgs[0], target, 1); got < tc.min || got > tc.max {
			t.Errorf("scout %d: PSNR %.1f dB to public image 5's conditional mean, want in [%v, %v]", tc.scout, got, tc.min, tc.max)
		}
	}
	starts, err := p.scout(obj, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	x, g := make([]float32, n), make([]float32, n)
	prev := -1.0
	for i, w := range starts {
		v, _ := obj(p.Image(x, w), g)
		if v < prev {
			t.Errorf("start %d has objective %v, below the previous %v", i, v, prev)
		}
		prev = v
	}
	if len(starts) != 8 {
		t.Errorf("%d starts, want 8", len(starts))
	}
}

// smokePrior returns the first n public smoke images (all of them if n is
// 0) and the embedding prior enc builds from them.
func smokePrior(t *testing.T, enc *nn.VisionEncoder, n int) ([][]float32, *EmbeddingPrior) {
	t.Helper()
	d := smokeData(t)
	public := d.Public
	if n > 0 {
		public = public[:n]
	}
	var pub [][]float32
	for _, ex := range public {
		pub = append(pub, ex.Images[0])
	}
	p, err := NewEmbeddingPrior(enc, pub)
	if err != nil {
		t.Fatal(err)
	}
	return pub, p
}

// TestTextCell checks the run path's text attacks (textCell.add) against
// the same attacks assembled by hand from the dataset's fields: the update
// released as Release's clipped and noised mechanism with the image
// attack's seed, the prompt positions from the example's Prompt, the prior
// from the public examples' Prompts; the position TRR, bag TRR and
// baseline must be those of RecoverText and PriorGuess on them (a few
// iterations: this checks the plumbing, the attack's control is
// TestControlText), and for the span test, on a release clipped in two
// parts, those of SpanText told the rule (TestSpanText is its control).
func TestTextCell(t *testing.T) {
	t.Parallel()
	m, l, _ := smokeMLLMLoRA(t, 0.02)
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var pubEx []attacks.Example
	var pub [][]int
	for i, ex := range d.Public {
		seq, mask := ex.Sequence()
		pubEx = append(pubEx, attacks.Example{ID: int64(i), Seq: nn.Sequence{Tokens: seq, Images: ex.Images, Loss: mask}})
		pub = append(pub, ex.Prompt)
	}
	ex := &d.Private[1]
	seq, mask := ex.Sequence()
	s := nn.Sequence{Tokens: seq, Images: ex.Images, Loss: mask}
	tgt := &attacks.Target{Model: m, Release: &methods.Release{Rule: nn.Flat(1), Sigmas: []float64{0.5}}, Public: pubEx}
	opt := TextOptions{Iterations: 3, Restarts: 1, Sweeps: 1, TopK: 2, Reorder: 1, PerBlock: true}
	var tc textCell
	const seed = 99
	if err := tc.add(tgt, s, pub, seed, TextMatch, &opt); err != nil {
		t.Fatal(err)
	}
	var at, want []int
	for i, id := range ex.Prompt {
		if id != nn.TokenImage {
			at, want = append(at, i), append(want, id)
		}
	}
	gx := make([]float32, l.Size)
	if _, err := MLLMGrad(m, l, s, nil)(s.Images[0], gx, nil); err != nil {
		t.Fatal(err)
	}
	g, err := Release(l, [][]float32{gx}, Mechanism{Rule: nn.Flat(1), Sigma: []float64{0.5}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	vocab := TextVocab(m)
	ref := opt
	ref.Init, ref.Seed = PositionPrior(pub, at, vocab, DefaultTextPriorMix), seed
	o, err := RecoverText(m, l, g, s, at, vocab, nil, &ref)
	if err != nil {
		t.Fatal(err)
	}
	base := PositionTRR(PriorGuess(PositionPrior(pub, at, vocab, 0), vocab), want)
	if tc.trr != PositionTRR(o.Tokens, want) || tc.bag != TRR(o.Tokens, [][]int{want}) || tc.base != base {
		t.Errorf("run path TRR %v, bag %v, baseline %v; by hand %v, %v, %v", tc.trr, tc.bag, tc.base, PositionTRR(o.Tokens, want), TRR(o.Tokens, [][]int{want}), base)
	}
	if base == 0 {
		t.Errorf("baseline 0: the check would not see a wrong prior")
	}
	res := map[string]float64{}
	tc.record(res, 2)
	if res["gia_b1_trr"] != tc.trr/2 || res["gia_b1_trr_baseline"] != base/2 || len(res) != 4 {
		t.Errorf("recorded %v", res)
	}

	// The span test, told the release's rule: two parts (Rap-FT's form),
	// no noise, so the prompt comes back whole.
	rule := randomParts(l.Size, 4)
	tgt.Release = &methods.Release{Rule: rule, Sigmas: []float64{0, 0}}
	var ts textCell
	if err := ts.add(tgt, s, pub, seed, TextSpan, nil); err != nil {
		t.Fatal(err)
	}
	g, err = Release(l, [][]float32{gx}, Mechanism{Rule: rule, Sigma: []float64{0, 0}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	so, err := SpanText(m, l, g, s, at, vocab, nil, &SpanOptions{Rule: rule})
	if err != nil {
		t.Fatal(err)
	}
	if ts.trr != PositionTRR(so.Tokens, want) || ts.trr != 1 || ts.bag != 1 || ts.base != base {
		t.Errorf("span: run path TRR %v, bag %v, baseline %v; by hand %v (want 1), baseline %v", ts.trr, ts.bag, ts.base, PositionTRR(so.Tokens, want), base)
	}
	if err := ts.add(tgt, s, pub, seed, 3, nil); err == nil {
		t.Error("text attack 3: no error")
	}
	// A model whose first block's q, k and v have no LoRA: the span test
	// does not apply, and the run path's text attack is the relaxed
	// matching's.
	c := m.Config
	c.PEFT.Targets = []string{"o", "fc1"}
	mo, err := nn.NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	var fell, match textCell
	to := &attacks.Target{Model: mo, Release: &methods.Release{Rule: nn.Flat(1), Sigmas: []float64{0.5}}, Public: pubEx}
	if err := fell.add(to, s, pub, seed, TextSpan, &opt); err != nil {
		t.Fatal(err)
	}
	if err := match.add(to, s, pub, seed, TextMatch, &opt); err != nil {
		t.Fatal(err)
	}
	if fell.trr != match.trr || fell.bag != match.bag {
		t.Errorf("span test on a release without first-block q, k, v LoRA: TRR %v, bag %v; relaxed matching %v, %v", fell.trr, fell.bag, match.trr, match.bag)
	}
	tgt.Release = &methods.Release{ZO: &methods.ZORelease{}}
	if err := ts.add(tgt, s, pub, seed, TextSpan, nil); err == nil {
		t.Error("text attack on a zeroth-order release: no error")
	}
}
