// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestPerSampleIsOwnGradient checks, for every kind of trainable tensor
// (LoRA A and B, adapters, biases, LayerNorm gains, embeddings and the tied
// head under full fine-tuning, convolution filters, classifier heads), that
// PerSample's gradient of example i is bit for bit the gradient of example
// i's loss alone, computed on its own tape; that no kind is left without a
// gradient (the check would be vacuous); and that the examples differ.
func TestPerSampleIsOwnGradient(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 3
	rng := rand.New(rand.NewPCG(70, 70))
	batch := []Sequence{vqa(rng, c, 2, 1), vqa(rng, c, 4, 2), vqa(rng, c, 3, 3)}
	imgs := [][]float32{randImage(rng, c), randImage(rng, c), randImage(rng, c)}
	texts := [][]int{{2, 5, 6, 3}, {2, 9, 3}, {2, 7, 7, 8, 10, 3}}
	type model struct {
		desc  string
		m     Module
		loss  func(tp *Tape, i int) (*Node, error)
		kinds []Kind
	}
	var models []model
	for _, peft := range []PEFT{
		{Method: "full", Parts: []string{"vision", "projector", "lm"}},
		{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: 0.1},
		{Method: "adapter"},
	} {
		c := c
		c.PEFT = peft
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		kinds := []Kind{KindWeight, KindBias, KindNorm, KindEmbedding}
		switch peft.Method {
		case "lora":
			kinds = []Kind{KindLoRAA, KindLoRAB}
		case "adapter":
			kinds = []Kind{KindAdapter}
			perturbAll(m, 71) // adapters start as the identity with Up = 0
		}
		models = append(models, model{"tinymllm " + peft.Method, m, func(tp *Tape, i int) (*Node, error) { return m.Loss(tp, &batch[i], nil, nil) }, kinds})
	}
	for _, mode := range []string{"late", "early"} {
		c := c
		c.FusionMode = mode
		c.PEFT = PEFT{Method: "full"}
		f, err := NewFusion(c)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, model{"fusion " + mode, f, func(tp *Tape, i int) (*Node, error) { return f.Loss(tp, imgs[i], texts[i], i, nil) },
			[]Kind{KindWeight, KindBias, KindNorm, KindEmbedding, KindHead}})
	}
	c.PEFT = PEFT{Method: "bitfit"}
	v, err := NewViT(c)
	if err != nil {
		t.Fatal(err)
	}
	models = append(models, model{"vit bitfit", v, func(tp *Tape, i int) (*Node, error) { return v.Loss(tp, imgs[i], i, nil) }, []Kind{KindBias, KindHead}})

	for _, md := range models {
		l := NewLayout(md.m.Params())
		r, err := PerSample(l, 3, md.loss, &Options{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		nonzero := map[Kind]bool{}
		for i := range 3 {
			own := make([]float32, l.Size)
			tp := NewTape(l, own)
			out, err := md.loss(tp, i)
			if err != nil {
				t.Fatal(err)
			}
			tp.Backward(out)
			if !slices.Equal(r.Grads[i], own) {
				t.Errorf("%s: per-sample gradient %d is not the gradient of its own loss", md.desc, i)
			}
			if r.Losses[i] != float64(out.Value.Data[0]) {
				t.Errorf("%s: loss %d = %v, own %v", md.desc, i, r.Losses[i], out.Value.Data[0])
			}
			for k, p := range l.Params {
				if slices.ContainsFunc(l.Block(own, k), func(x float32) bool { return x != 0 }) {
					nonzero[p.Kind] = true
				}
			}
		}
		for _, k := range md.kinds {
			if !nonzero[k] {
				t.Errorf("%s: no %s tensor has a gradient", md.desc, k)
			}
		}
		if slices.Equal(r.Grads[0], r.Grads[1]) || slices.Equal(r.Grads[1], r.Grads[2]) {
			t.Errorf("%s: examples have equal gradients", md.desc)
		}
	}
}

// TestDeterminismSmall checks on the small preset, whose products are large
// enough for gonum to split them among goroutines, that the forward pass,
// per-sample and batch gradients, and greedy and top-k generation are the
// same bit for bit under GOMAXPROCS 1, 2 and 4.
func TestDeterminismSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("small preset")
	}
	c, err := Preset("small", 100)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "v", "fc1"}, BInitStd: 0.05}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(72, 72))
	batch := make([]Sequence, 5)
	for i := range batch {
		batch[i] = vqa(rng, c, 6+i, 2)
	}
	prompt := Sequence{Tokens: batch[0].Tokens[:8], Images: batch[0].Images}
	type outputs struct {
		losses []float64
		logits []float32
		ps     [][]float32
		g      []float32
		greedy []int
		topk   []int
	}
	run := func() outputs {
		var o outputs
		var z Tensor
		var err error
		o.losses, z, err = m.TokenLosses(&batch[1], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.logits = z.Data
		r, err := m.PerSample(l, batch, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.ps = r.Grads
		if o.g, _, _, err = m.Gradient(l, batch, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if o.greedy, err = m.Generate(&prompt, 5, Sampler{}, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if o.topk, err = m.Generate(&prompt, 5, Sampler{TopK: 10}, rand.New(rand.NewPCG(1, 2)), nil, nil); err != nil {
			t.Fatal(err)
		}
		return o
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	ref := run()
	for _, procs := range []int{2, 4} {
		runtime.GOMAXPROCS(procs)
		o := run()
		if !slices.Equal(o.losses, ref.losses) || !slices.Equal(o.logits, ref.logits) {
			t.Errorf("GOMAXPROCS %d: forward pass differs", procs)
		}
		for i := range o.ps {
			if !slices.Equal(o.ps[i], ref.ps[i]) {
				t.Errorf("GOMAXPROCS %d: per-sample gradient %d differs", procs, i)
			}
		}
		if !slices.Equal(o.g, ref.g) {
			t.Errorf("GOMAXPROCS %d: batch gradient differs", procs)
		}
		if !slices.Equal(o.greedy, ref.greedy) || !slices.Equal(o.topk, ref.topk) {
			t.Errorf("GOMAXPROCS %d: generation %v %v, with 1: %v %v", procs, o.greedy, o.topk, ref.greedy, ref.topk)
		}
	}
}

// TestHooksInPerSample runs read and replace hooks on several goroutines at
// once (run it with -race): the per-sample gradients with patched heads
// equal those of each example on its own tape, and the patch changes them.
func TestHooksInPerSample(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "v", "o"}, BInitStd: 0.1}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(73, 73))
	batch := make([]Sequence, 6)
	for i := range batch {
		batch[i] = vqa(rng, c, 2+i, 2)
	}
	dh := c.Width / c.Heads
	patch := make([]float32, dh)
	for i := range patch {
		patch[i] = 0.5
	}
	h := &Hooks{
		// Pure functions of their arguments: safe for concurrent use.
		Observe: func(site string, x Tensor) { _ = Norm(x.Data) },
		Heads: func(stack string, layer int, x Tensor) []HeadPatch {
			if stack != "lm" {
				return nil
			}
			// Replace head 1 at the position before the last with a
			// constant (a DP-MTV-style steering vector).
			return []HeadPatch{{Pos: -2, Head: 1, Value: patch}}
		},
	}
	r, err := m.PerSample(l, batch, h, nil, &Options{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.PerSample(l, batch, nil, nil, &Options{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range batch {
		own := make([]float32, l.Size)
		tp := NewTape(l, own)
		out, err := m.Loss(tp, &batch[i], h, nil)
		if err != nil {
			t.Fatal(err)
		}
		tp.Backward(out)
		if !slices.Equal(r.Grads[i], own) {
			t.Errorf("example %d: gradient with hooks differs from its own tape's", i)
		}
		if slices.Equal(r.Grads[i], plain.Grads[i]) {
			t.Errorf("example %d: patching a head changed no gradient", i)
		}
	}
}
