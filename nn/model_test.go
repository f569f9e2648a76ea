// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const testVocab = 24

func smokeConfig(t testing.TB) Config {
	t.Helper()
	c, err := Preset("smoke", testVocab)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randImage(rng *rand.Rand, c Config) []float32 {
	img := make([]float32, 3*28*28)
	for i := range img {
		img[i] = float32(rng.Float64())
	}
	return img
}

// vqa returns a VQA-shaped sequence: <bos> <image> question… answer… <eos>,
// with the answer and <eos> marked for the loss.
func vqa(rng *rand.Rand, c Config, q, a int) Sequence {
	toks := []int{TokenBOS, TokenImage}
	for i := 0; i < q; i++ {
		toks = append(toks, 5+rng.IntN(c.Vocab-5))
	}
	loss := make([]bool, len(toks))
	for i := 0; i < a; i++ {
		toks = append(toks, 5+rng.IntN(c.Vocab-5))
		loss = append(loss, true)
	}
	toks = append(toks, TokenEOS)
	loss = append(loss, true)
	return Sequence{Tokens: toks, Images: [][]float32{randImage(rng, c)}, Loss: loss}
}

// directionalCheck compares, for every trainable tensor p of the layout, the
// analytic directional derivative g_p·v with the Richardson-extrapolated
// central difference (4·D(h/2) − D(h))/3, D(h) = (L(θ + h·v) − L(θ −
// h·v))/(2h), along a random unit direction v supported on p: the
// extrapolation cancels the O(h²) truncation error of D, which at h = 1e-2
// is a few tenths of a percent on these models, so the tolerance can be
// tight. Checking each tensor separately catches a wrong gradient in any
// one of them; h = 1e-2 keeps float32 rounding of the loss (≈1e-6) well
// below the tolerance.
func directionalCheck(t *testing.T, l *Layout, loss func(tp *Tape) *Node, atol, rtol float64) {
	directionalCheckH(t, l, loss, atol, rtol, 1e-2)
}

func directionalCheckH(t *testing.T, l *Layout, loss func(tp *Tape) *Node, atol, rtol, h float64) {
	t.Helper()
	g := make([]float32, l.Size)
	tp := NewTape(l, g)
	tp.Backward(loss(tp))
	eval := func() float64 {
		tp := NewTape(nil, nil)
		return float64(loss(tp).Value.Data[0])
	}
	rng := rand.New(rand.NewPCG(11, 11))
	for i, p := range l.Params {
		v := make([]float32, len(p.Data))
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		scale(float32(1/Norm(v)), v)
		orig := append([]float32(nil), p.Data...)
		diff := func(h float64) float64 {
			for j := range p.Data {
				p.Data[j] = orig[j] + float32(h)*v[j]
			}
			fp := eval()
			for j := range p.Data {
				p.Data[j] = orig[j] - float32(h)*v[j]
			}
			fm := eval()
			copy(p.Data, orig)
			return (fp - fm) / (2 * h)
		}
		num := (4*diff(h/2) - diff(h)) / 3
		got := Dot(l.Block(g, i), v)
		if math.Abs(got-num) > atol+rtol*math.Abs(num) {
			t.Errorf("%s: directional derivative %.6g, finite differences %.6g", p.Name, got, num)
		}
	}
}

func TestTinyMLLMGradient(t *testing.T) {
	t.Parallel()
	for _, peft := range []PEFT{
		{Method: "full"},
		{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.2},
		{Method: "adapter"},
	} {
		c := smokeConfig(t)
		c.PEFT = peft
		c.PEFT.Parts = []string{"vision", "projector", "lm"}
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		if peft.Method == "adapter" {
			// Adapters start as the identity (Up = 0); move them off it so
			// every adapter tensor has a gradient to check.
			rng := rand.New(rand.NewPCG(5, 5))
			for _, p := range m.Params() {
				if p.Kind == KindAdapter {
					p.initNormal(rng, 0.3)
				}
			}
		}
		l := NewLayout(m.Params())
		rng := rand.New(rand.NewPCG(1, 2))
		s := vqa(rng, c, 5, 3)
		directionalCheck(t, l, func(tp *Tape) *Node {
			out, err := m.Loss(tp, &s, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}, 1e-4, 2e-3)
	}
}

// TestForwardEmbeds checks TinyMLLM.ForwardEmbeds: fed lm.tok's rows of
// the tokens it gives the same hidden states as Forward, bit for bit, and
// its gradient with respect to the embeddings (held as a trainable tensor
// of their own) agrees with central differences of the loss, on a LoRA
// model whose lm.tok is frozen; a wrong shape is an error.
func TestForwardEmbeds(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.2}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 4))
	s := vqa(rng, c, 5, 3)
	emb := newParam("emb", KindEmbedding, len(s.Tokens), c.Width)
	for i, id := range s.Tokens {
		if id != TokenImage {
			copy(emb.Data[i*c.Width:(i+1)*c.Width], m.Tok.Data[id*c.Width:(id+1)*c.Width])
		}
	}
	tp := NewTape(nil, nil)
	want, wpos, err := m.Forward(tp, &s, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, gpos, err := m.ForwardEmbeds(tp, &s, tp.Param(emb), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Value.Data, want.Value.Data) || !slices.Equal(gpos, wpos) {
		t.Errorf("ForwardEmbeds with lm.tok's rows differs from Forward")
	}
	// Move the rows off the table, as a relaxed token would be.
	for i := range emb.Data {
		emb.Data[i] += float32(0.02 * rng.NormFloat64())
	}
	var rows, targets []int
	for i, on := range s.Loss {
		if on {
			rows = append(rows, gpos[i]-1)
			targets = append(targets, s.Tokens[i])
		}
	}
	directionalCheck(t, NewLayout([]*Param{emb}), func(tp *Tape) *Node {
		hid, _, err := m.ForwardEmbeds(tp, &s, tp.Param(emb), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tp.CrossEntropy(m.Logits(tp, hid, rows), targets, nil)
	}, 1e-4, 2e-3)
	bad := NewTape(nil, nil).Input(NewTensor(len(s.Tokens)-1, c.Width), false)
	if _, _, err := m.ForwardEmbeds(NewTape(nil, nil), &s, bad, nil, nil, nil); err == nil {
		t.Errorf("ForwardEmbeds took embeddings of %d rows for %d tokens", len(s.Tokens)-1, len(s.Tokens))
	}
}

func TestViTAndFusionGradient(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 5
	c.PEFT = PEFT{Method: "full"}
	v, err := NewViT(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 3))
	img := randImage(rng, c)
	directionalCheck(t, NewLayout(v.Params()), func(tp *Tape) *Node {
		out, err := v.Loss(tp, img, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}, 1e-4, 2e-3)
	for _, mode := range []string{"late", "early", "late/mlp"} {
		c.FusionMode, c.ImageEncoder = mode, ""
		if mode == "late/mlp" {
			c.FusionMode, c.ImageEncoder = "late", "mlp"
		}
		f, err := NewFusion(c)
		if err != nil {
			t.Fatal(err)
		}
		toks := []int{2, 7, 9, 11, 3}
		// ReLU and max pooling have kinks, and a step along a direction
		// that moves a whole filter crosses many of them: the central
		// difference converges only as O(h) there, so the CNN is checked
		// with a smaller step and a looser tolerance (each op is checked
		// tightly in TestOpGradients).
		directionalCheckH(t, NewLayout(f.Params()), func(tp *Tape) *Node {
			out, err := f.Loss(tp, img, toks, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}, 3e-4, 0.1, 1e-3)
		// The gradient with respect to the image (gradient inversion).
		fdCheck(t, "fusion "+mode+" image", []Tensor{{Shape: []int{3, 28, 28}, Data: img}}, func(tp *Tape, in []*Node) *Node {
			return tp.CrossEntropy(f.LogitsFrom(tp, in[0], toks, nil), []int{1}, nil)
		}, 1e-3, 2e-2, 16)
	}
	c.ImageEncoder = "resnet"
	if _, err := NewFusion(c); err == nil || !strings.Contains(err.Error(), `unknown image encoder "resnet"`) {
		t.Errorf("image encoder resnet: got %v, want an error naming it", err)
	}
}

// TestPerSampleSumsToBatch checks that the per-sample gradients add up to
// the gradient of the summed loss computed on one tape.
func TestPerSampleSumsToBatch(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"lora", "full", "bitfit"} {
		c := smokeConfig(t)
		c.PEFT = PEFT{Method: method, BInitStd: 0.1}
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLayout(m.Params())
		rng := rand.New(rand.NewPCG(4, 4))
		batch := make([]Sequence, 5)
		for i := range batch {
			batch[i] = vqa(rng, c, 3+i, 1+i%3)
		}
		r, err := PerSample(l, len(batch), func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := Sum(nil, r.Grads)
		want := make([]float32, l.Size)
		tp := NewTape(l, want)
		var losses []*Node
		for i := range batch {
			out, err := m.Loss(tp, &batch[i], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, out)
			if math.Abs(float64(out.Value.Data[0])-r.Losses[i]) > 1e-6 {
				t.Errorf("%s: loss %d = %v, per-sample %v", method, i, out.Value.Data[0], r.Losses[i])
			}
		}
		tp.Backward(tp.Weighted([]float32{1, 1, 1, 1, 1}, losses...))
		n := Norm(want)
		var diff float64
		for j := range got {
			d := float64(got[j] - want[j])
			diff += d * d
		}
		if math.Sqrt(diff) > 1e-5*n || n == 0 {
			t.Errorf("%s: ‖Σ per-sample − batch‖ = %g, ‖batch‖ = %g", method, math.Sqrt(diff), n)
		}
		g, _, _, err := Gradient(l, len(batch), func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		var gd float64
		for j := range g {
			d := float64(g[j] - got[j])
			gd += d * d
		}
		if math.Sqrt(gd) > 1e-5*n {
			t.Errorf("%s: ‖Gradient − Σ PerSample‖ = %g, ‖batch‖ = %g", method, math.Sqrt(gd), n)
		}
	}
}

func TestLoRAZeroEqualsBase(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	base, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}}
	lora, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	_, tr := Count(lora)
	if tr == 0 {
		t.Fatal("LoRA model has no trainable tensors")
	}
	rng := rand.New(rand.NewPCG(6, 6))
	s := vqa(rng, c, 4, 2)
	a, _, err := base.TokenLosses(&s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := lora.TokenLosses(&s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Errorf("LoRA with B = 0: token losses %v, base model %v", b, a)
	}
	// PEFT.Seed changes the LoRA tensors only.
	c.PEFT.Seed = 99
	lora3, _ := NewTinyMLLM(c)
	for i, p := range lora3.Params() {
		q := lora.Params()[i]
		same := slices.Equal(p.Data, q.Data)
		if p.Kind == KindLoRAA && same || p.Kind != KindLoRAA && !same {
			t.Errorf("PEFT.Seed: %s (%s) equal %v", p.Name, p.Kind, same)
		}
	}
	c.PEFT.Seed = 0
	// With a random B the models must differ (the check can fail).
	c.PEFT.BInitStd = 0.5
	lora2, _ := NewTinyMLLM(c)
	d, _, _ := lora2.TokenLosses(&s, nil, nil)
	if slices.Equal(a, d) {
		t.Error("LoRA with random B equals the base model")
	}
}

func TestBitFitTrainsOnlyBiases(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "bitfit"}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	if len(l.Params) == 0 {
		t.Fatal("no trainable tensors")
	}
	before := map[string][]float32{}
	for _, p := range m.Params() {
		before[p.Name] = append([]float32(nil), p.Data...)
		if p.Trainable && p.Kind != KindBias {
			t.Errorf("%s (%s) is trainable under BitFit", p.Name, p.Kind)
		}
	}
	rng := rand.New(rand.NewPCG(8, 8))
	batch := []Sequence{vqa(rng, c, 3, 2), vqa(rng, c, 4, 1)}
	g, _, _, err := Gradient(l, 2, func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	sgd(l, g, 0.5)
	changed := 0
	for _, p := range m.Params() {
		if !slices.Equal(before[p.Name], p.Data) {
			if p.Kind != KindBias {
				t.Errorf("%s changed under BitFit", p.Name)
			}
			changed++
		}
	}
	if changed == 0 {
		t.Error("no bias changed")
	}
}

// sgd is a plain gradient step θ ← θ − η·g, the tiny local optimizer of the
// tests (nn/optim has the real ones).
func sgd(l *Layout, g []float32, lr float32) {
	v := l.Values()
	axpy(-lr, g, v)
	l.SetValues(v)
}

func TestClip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		desc string
		rule ClipRule
	}{
		{"flat", Flat(1)},
		{"flat small", Flat(1e-3)},
		{"flat zero", Flat(0)},
		{"two parts", ClipRule{Part: []int32{0, 0, 1, 1, 1, -1, 0, 1}, C: []float64{0.5, 2}}},
	} {
		for trial := 0; trial < 200; trial++ {
			g := make([]float32, 8)
			sc := math.Pow(10, rng.Float64()*6-3)
			for i := range g {
				g[i] = float32(rng.NormFloat64() * sc)
			}
			orig := append([]float32(nil), g...)
			pre := Clip(g, tc.rule)
			post := Norms(g, tc.rule)
			for k, n := range post {
				if n > tc.rule.C[k] {
					t.Fatalf("%s: part %d norm %v > C = %v after clipping", tc.desc, k, n, tc.rule.C[k])
				}
				if pre[k] <= tc.rule.C[k] {
					// Unclipped parts are unchanged.
					for j := range g {
						if (tc.rule.Part == nil || tc.rule.Part[j] == int32(k)) && g[j] != orig[j] {
							t.Fatalf("%s: part %d below C changed", tc.desc, k)
						}
					}
				} else if math.Abs(n-tc.rule.C[k]) > 1e-6*tc.rule.C[k] {
					t.Fatalf("%s: clipped part %d has norm %v, want %v", tc.desc, k, n, tc.rule.C[k])
				}
			}
			if tc.rule.Part != nil && g[5] != 0 {
				t.Fatalf("%s: dropped element kept", tc.desc)
			}
		}
	}
}

// TestDeterminism checks that gradients are the same bit for bit whatever
// GOMAXPROCS is.
func TestDeterminism(t *testing.T) {
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "full"}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(10, 10))
	batch := make([]Sequence, 20) // more than gradientChunks
	for i := range batch {
		batch[i] = vqa(rng, c, 2+i%7, 2)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref *Result
	var refGrad []float32
	loss := func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		g, _, _, err := Gradient(l, len(batch), loss, nil)
		if err != nil {
			t.Fatal(err)
		}
		if refGrad == nil {
			refGrad = g
		} else if !slices.Equal(g, refGrad) {
			t.Errorf("GOMAXPROCS %d: batch gradient differs from GOMAXPROCS 1", procs)
		}
		r, err := PerSample(l, len(batch), func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = r
			continue
		}
		for i := range batch {
			if !slices.Equal(r.Grads[i], ref.Grads[i]) || r.Losses[i] != ref.Losses[i] {
				t.Errorf("GOMAXPROCS %d: example %d differs from GOMAXPROCS 1", procs, i)
			}
		}
	}
	// A product large enough for gonum to split it across goroutines.
	a, b := randTensor(rng, 1, 300, 200), randTensor(rng, 1, 200, 300)
	var c1 []float32
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		cc := make([]float32, 300*300)
		kernels.Gemm(false, false, 300, 300, 200, 1, a.Data, 200, b.Data, 300, 0, cc, 300)
		if c1 == nil {
			c1 = cc
		} else if !slices.Equal(cc, c1) {
			t.Errorf("GEMM with GOMAXPROCS %d differs", procs)
		}
	}
}

func TestHooks(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "lora"}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 12))
	s := vqa(rng, c, 4, 2)
	sites := map[string]bool{}
	var heads []Tensor
	h := &Hooks{
		Observe: func(site string, x Tensor) { sites[site] = true },
		Heads: func(stack string, layer int, x Tensor) []HeadPatch {
			if stack == "lm" {
				heads = append(heads, x.Clone())
			}
			return nil
		},
	}
	t0 := NewTape(nil, nil)
	ref, _, err := m.Forward(t0, &s, nil, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lm.blocks.0.in", "lm.blocks.0.attn.q.in", "lm.blocks.0.attn.q.out", "lm.blocks.0.mlp.fc1.out", "vision.blocks.0.attn.o.in", "projector.fc1.out", "lm.blocks.0.attn.probs", "lm.blocks.0.attn.heads", "lm.blocks.0.attn.q.lora"} {
		if !sites[want] {
			t.Errorf("no observation at %s", want)
		}
	}
	if len(heads) != c.Layers {
		t.Fatalf("read %d LM head tensors, want %d", len(heads), c.Layers)
	}
	T, D := heads[0].Shape[0], heads[0].Shape[1]
	dh := D / c.Heads
	// Replacing a head with its own value changes nothing.
	same := &Hooks{Heads: func(stack string, layer int, x Tensor) []HeadPatch {
		if stack != "lm" {
			return nil
		}
		return []HeadPatch{{Pos: -1, Head: 1, Value: append([]float32(nil), heads[layer].Data[(T-1)*D+dh:(T-1)*D+2*dh]...)}}
	}}
	t1 := NewTape(nil, nil)
	out1, _, _ := m.Forward(t1, &s, nil, same, nil)
	if !slices.Equal(out1.Value.Data, ref.Value.Data) {
		t.Error("patching a head with its own output changed the result")
	}
	// Replacing the last position's head changes only the last position
	// (the decoder is causal).
	other := &Hooks{Heads: func(stack string, layer int, x Tensor) []HeadPatch {
		if stack != "lm" {
			return nil
		}
		v := make([]float32, dh)
		for i := range v {
			v[i] = 3
		}
		return []HeadPatch{{Pos: -1, Head: 0, Value: v}}
	}}
	t2 := NewTape(nil, nil)
	out2, _, _ := m.Forward(t2, &s, nil, other, nil)
	W := c.Width
	if !slices.Equal(out2.Value.Data[:(T-1)*W], ref.Value.Data[:(T-1)*W]) {
		t.Error("patching the last position changed earlier positions")
	}
	if slices.Equal(out2.Value.Data[(T-1)*W:], ref.Value.Data[(T-1)*W:]) {
		t.Error("patching the last position changed nothing")
	}
}

func TestVisualTransform(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 13))
	s := vqa(rng, c, 3, 1)
	var gotAttn Tensor
	// Keep [CLS], the most attended patch, and one merged token of the
	// others: a miniature of Dual-Priv's pruning.
	vt := func(index int, tokens, cls Tensor) TokenMix {
		gotAttn = cls.Clone()
		n := tokens.Shape[0]
		best := 1
		for j := 1; j < n; j++ {
			if cls.Data[j] > cls.Data[best] {
				best = j
			}
		}
		var rest []int
		var w []float32
		for j := 1; j < n; j++ {
			if j != best {
				rest = append(rest, j)
				w = append(w, 1/float32(n-2))
			}
		}
		return TokenMix{Rows: []MixRow{{Src: []int{0}, Weight: []float32{1}}, {Src: []int{best}, Weight: []float32{1}}, {Src: rest, Weight: w}}}
	}
	tp := NewTape(nil, nil)
	hid, pos, err := m.Forward(tp, &s, nil, nil, vt)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(s.Tokens) - 1 + 3; hid.Value.Rows() != want {
		t.Errorf("sequence has %d rows, want %d", hid.Value.Rows(), want)
	}
	if pos[2] != 1+3 {
		t.Errorf("first text token after the image at %d, want 4", pos[2])
	}
	heads, n1 := gotAttn.Shape[0], gotAttn.Shape[1]
	if heads != c.VisionHeads || n1 != c.Patches()+1 {
		t.Fatalf("[CLS] attention shape %v", gotAttn.Shape)
	}
	for h := 0; h < heads; h++ {
		var sum float64
		for _, v := range gotAttn.Data[h*n1 : (h+1)*n1] {
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("head %d: [CLS] attention sums to %v, want 1", h, sum)
		}
	}
	// Gradients flow through the transform: the directional check on the
	// projector and language model.
	c.PEFT = PEFT{Method: "full"}
	m2, _ := NewTinyMLLM(c)
	s.Loss = make([]bool, len(s.Tokens))
	s.Loss[len(s.Loss)-1] = true
	directionalCheck(t, NewLayout(m2.Params()), func(tp *Tape) *Node {
		out, err := m2.Loss(tp, &s, nil, vt)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}, 1e-4, 2e-3)
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(14, 14))
	s := vqa(rng, c, 3, 0)
	p := Sequence{Tokens: s.Tokens[:len(s.Tokens)-1], Images: s.Images}
	g1, err := m.Generate(&p, 6, Sampler{}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := m.Generate(&p, 6, Sampler{}, nil, nil, nil)
	if !slices.Equal(g1, g2) || len(g1) == 0 || len(g1) > 6 {
		t.Errorf("greedy generations %v and %v", g1, g2)
	}
	// Greedy decoding picks the arg max of the model's next-token logits.
	tp := NewTape(nil, nil)
	hid, _, _ := m.Forward(tp, &p, nil, nil, nil)
	z := m.Logits(tp, hid, []int{hid.Value.Rows() - 1})
	z.Value.Data[TokenImage] = float32(math.Inf(-1))
	if want := (Sampler{}).Next(z.Value.Data, nil); g1[0] != want {
		t.Errorf("first greedy token %d, want %d", g1[0], want)
	}
	// A prompt longer than the model's maximum is an error, not an
	// empty generation; one that fills it exactly leaves no room.
	long := Sequence{Tokens: append(slices.Clone(p.Tokens), make([]int, c.MaxLen)...), Images: p.Images}
	if g, err := m.Generate(&long, 3, Sampler{}, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "longer than the maximum") {
		t.Errorf("over-long prompt: generated %v, error %v", g, err)
	}
	full := Sequence{Tokens: long.Tokens[:c.MaxLen-c.Patches()], Images: p.Images}
	if g, err := m.Generate(&full, 3, Sampler{}, nil, nil, nil); err != nil || len(g) != 0 {
		t.Errorf("prompt of maximum length: generated %v, error %v", g, err)
	}
	k1, _ := m.Generate(&p, 6, Sampler{TopK: 5}, rand.New(rand.NewPCG(1, 1)), nil, nil)
	k2, _ := m.Generate(&p, 6, Sampler{TopK: 5}, rand.New(rand.NewPCG(1, 1)), nil, nil)
	if !slices.Equal(k1, k2) {
		t.Errorf("top-k with the same seed: %v and %v", k1, k2)
	}
	// Top-k draws only among the k best: with k = 2 over many draws, both
	// and only the two best tokens appear.
	logits := []float32{0, 5, 1, 4.9, -1}
	seen := map[int]int{}
	r := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 1000; i++ {
		seen[Sampler{TopK: 2}.Next(logits, r)]++
	}
	if len(seen) != 2 || seen[1] == 0 || seen[3] == 0 {
		t.Errorf("top-2 draws %v, want tokens 1 and 3 only", seen)
	}
}

func TestConfigRoundTrip(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "lora", BInitStd: 0.01}
	m1, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(m1.Config)
	if err != nil {
		t.Fatal(err)
	}
	var c2 Config
	if err := json.Unmarshal(js, &c2); err != nil {
		t.Fatal(err)
	}
	m2, err := NewTinyMLLM(c2)
	if err != nil {
		t.Fatal(err)
	}
	if !m2.Config.SmearKeys || !m2.Config.CLSLast || !reflect.DeepEqual(m2.Config, m1.Config) {
		t.Errorf("configuration after JSON\n%+v\nwant (with SmearKeys and CLSLast, as every preset)\n%+v", m2.Config, m1.Config)
	}
	p1, p2 := m1.Params(), m2.Params()
	if len(p1) != len(p2) {
		t.Fatalf("rebuilt model has %d tensors, want %d", len(p2), len(p1))
	}
	for i := range p1 {
		if p1[i].Name != p2[i].Name || p1[i].Trainable != p2[i].Trainable || !slices.Equal(p1[i].Data, p2[i].Data) {
			t.Errorf("tensor %s differs after rebuilding from JSON", p1[i].Name)
		}
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	for _, name := range PresetNames {
		c, err := Preset(name, 600)
		if err != nil {
			t.Fatal(err)
		}
		c.PEFT.Method = "lora"
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		total, tr := Count(m)
		t.Logf("%s: %d patches, %d parameters, %d trainable with LoRA", name, c.Patches(), total, tr)
		if name == "full" && testing.Short() {
			continue
		}
		// Every preset starts: one forward pass on a VQA example.
		rng := rand.New(rand.NewPCG(15, 15))
		s := vqa(rng, c, 10, 2)
		if _, err := m.Loss(NewTape(nil, nil), &s, nil, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	c, _ := Preset("small", 600)
	// An 8-demonstration in-context episode with one image per demo plus
	// the query and ~10 text tokens each fits in the small preset.
	if n := 9*(c.Patches()+1) + 9*10; n > c.MaxLen {
		t.Errorf("small: 8-shot episode needs %d positions, max length %d", n, c.MaxLen)
	}
	if _, err := Preset("huge", 10); err == nil {
		t.Error("unknown preset accepted")
	}
}

func TestInputErrors(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(16, 16))
	good := vqa(rng, c, 2, 1)
	long := make([]int, c.MaxLen)
	for i := range long {
		long[i] = 5
	}
	for _, tc := range []struct {
		desc string
		s    Sequence
		want string
	}{
		{"token out of range", Sequence{Tokens: []int{2, testVocab}, Loss: []bool{false, true}}, "outside the vocabulary"},
		{"missing image", Sequence{Tokens: []int{2, TokenImage, 5}, Loss: []bool{false, false, true}}, "placeholders"},
		{"bad image", Sequence{Tokens: []int{TokenImage, 5}, Images: [][]float32{{1}}, Loss: []bool{false, true}}, "image has"},
		{"mask length", Sequence{Tokens: good.Tokens, Images: good.Images, Loss: []bool{true}}, "loss mask"},
		{"no loss", Sequence{Tokens: []int{2, 5}, Loss: []bool{false, false}}, "no loss positions"},
		{"too long", Sequence{Tokens: append([]int{TokenImage}, long...), Images: good.Images, Loss: append([]bool{false}, make([]bool, len(long))...)}, "longer than"},
	} {
		if tc.desc == "too long" {
			tc.s.Loss[1] = true
		}
		_, err := m.Loss(NewTape(nil, nil), &tc.s, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "nn: ") {
			t.Errorf("%s: got error %v, want one containing %q", tc.desc, err, tc.want)
		}
	}
	// Switching away from LoRA would leave modules a rebuild from the
	// configuration lacks.
	c.PEFT = PEFT{Method: "lora"}
	ml, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ml.SetPEFT(PEFT{Method: "bitfit"}); err == nil || !strings.Contains(err.Error(), "already has PEFT modules") {
		t.Errorf("lora → bitfit: got error %v", err)
	}
	if _, err := ml.SetPEFT(PEFT{Method: "lora", Targets: []string{"q", "k", "v"}}); err != nil {
		t.Errorf("adding LoRA targets: %v", err)
	}
	c.PEFT = PEFT{}
	neg := c
	neg.CLSAttnLayer = -1 // would select no block: EncodeImage had no [CLS] map
	if _, err := NewTinyMLLM(neg); err == nil || !strings.Contains(err.Error(), "[CLS] attention layer") {
		t.Errorf("negative CLSAttnLayer: got error %v", err)
	}
	if _, err := NewTinyMLLM(Config{Vocab: 10}); err == nil {
		t.Error("empty config accepted")
	}
	c.PEFT.Method = "prefix"
	if _, err := NewTinyMLLM(c); err == nil {
		t.Error("unknown PEFT method accepted")
	}
}

// TestWithPatch checks the many-patch variant of a preset: the patch count
// (ImageSize/patch)² (28/4 = 7, so 49), MaxLen grown by nine images' extra
// visual tokens (320 + 9·33 = 617, rounded up to 640), every other field
// kept, a model that builds and runs, and the refusals.
func TestWithPatch(t *testing.T) {
	t.Parallel()
	c, _ := Preset("small", 600)
	p, err := c.WithPatch(4)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Patches(); got != 49 {
		t.Errorf("small with patch 4: %d patches, want 49", got)
	}
	if p.MaxLen != 640 {
		t.Errorf("small with patch 4: max length %d, want 640", p.MaxLen)
	}
	if n := 9*(p.Patches()+1) + 9*10; n > p.MaxLen {
		t.Errorf("small with patch 4: 8-shot episode needs %d positions, max length %d", n, p.MaxLen)
	}
	q := p
	q.Patch, q.MaxLen = c.Patch, c.MaxLen
	if !reflect.DeepEqual(q, c) {
		t.Errorf("WithPatch changed more than the patch and the max length:\n%+v\n%+v", q, c)
	}
	for _, same := range []int{0, c.Patch} {
		if got, err := c.WithPatch(same); err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("WithPatch(%d) = %+v, %v; want the preset unchanged", same, got, err)
		}
	}
	for _, bad := range []int{-4, 5, 3} {
		if _, err := c.WithPatch(bad); err == nil {
			t.Errorf("WithPatch(%d): no error", bad)
		}
	}
	p.PEFT.Method = "lora"
	m, err := NewTinyMLLM(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, 15))
	s := vqa(rng, p, 10, 2)
	if _, err := m.Loss(NewTape(nil, nil), &s, nil, nil); err != nil {
		t.Error(err)
	}
	v, _ := m.EncodeImage(NewTape(nil, nil), s.Images[0], 0, false, nil, nil)
	if got := v.Tokens.Value.Shape[0]; got != 50 {
		t.Errorf("visual tokens %d, want 49 patches + [CLS]", got)
	}
}
