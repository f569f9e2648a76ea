// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/repro-dp/repro/nn"
)

// One DP-SGD step on the smoke TinyMLLM with LoRA: exact per-sample
// gradients, flat clipping to C = 1, the clipped sum plus Gaussian noise,
// and a plain SGD update.
func Example() {
	cfg, err := nn.Preset("smoke", 32)
	if err != nil {
		log.Fatal(err)
	}
	cfg.PEFT.Method = "lora" // rank 4, α 8 from the preset; targets q and v
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		log.Fatal(err)
	}
	layout := nn.NewLayout(m.Params())

	rng := rand.New(rand.NewPCG(1, 1))
	img := make([]float32, 3*28*28)
	for i := range img {
		img[i] = float32(rng.Float64())
	}
	// <bos> <image> what colour ? red <eos>, loss on "red <eos>".
	batch := []nn.Sequence{{
		Tokens: []int{nn.TokenBOS, nn.TokenImage, 10, 11, 12, 20, nn.TokenEOS},
		Images: [][]float32{img},
		Loss:   []bool{false, false, false, false, false, true, true},
	}}
	r, err := nn.PerSample(layout, len(batch), func(t *nn.Tape, i int) (*nn.Node, error) {
		return m.Loss(t, &batch[i], nil, nil)
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	const C, sigma, lr = 1.0, 1.0, 0.1
	nn.ClipAll(r.Grads, nn.Flat(C))
	g := nn.Sum(nil, r.Grads)
	for j := range g {
		g[j] += float32(rng.NormFloat64() * sigma * C)
	}
	v := layout.Values()
	for j := range v {
		v[j] -= lr * g[j] / float32(len(batch))
	}
	layout.SetValues(v)

	fmt.Println("trainable tensors:", len(layout.Params), "elements:", layout.Size)
	fmt.Println("first:", layout.Params[0].Name, layout.Params[0].Kind, layout.Params[0].Shape)
	fmt.Printf("clipped norm ≤ C: %v\n", nn.Norm(r.Grads[0]) <= C)
	// Output:
	// trainable tensors: 4 elements: 512
	// first: lm.blocks.0.attn.q.lora_a lora_a [4 32]
	// clipped norm ≤ C: true
}

// Reading the per-head outputs of the language model at the last position
// and replacing one head there, as DP-MTV does with its mean activations.
func ExampleHooks() {
	cfg, err := nn.Preset("smoke", 32)
	if err != nil {
		log.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		log.Fatal(err)
	}
	prompt := nn.Sequence{Tokens: []int{nn.TokenBOS, 10, 11, 12}}

	dh := cfg.Width / cfg.Heads
	var last [][]float32 // per LM layer: the heads at the last position
	read := &nn.Hooks{Heads: func(stack string, layer int, heads nn.Tensor) []nn.HeadPatch {
		if stack == "lm" {
			last = append(last, append([]float32(nil), heads.Row(heads.Rows()-1)...))
		}
		return nil
	}}
	if _, _, err := m.Forward(nn.NewTape(nil, nil), &prompt, nil, read, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("layers:", len(last), "values per layer:", len(last[0]), "per head:", dh)

	// Patch head 1 of every layer at the last position with zeros while
	// generating greedily.
	patch := &nn.Hooks{Heads: func(stack string, layer int, heads nn.Tensor) []nn.HeadPatch {
		if stack != "lm" {
			return nil
		}
		return []nn.HeadPatch{{Pos: -1, Head: 1, Value: make([]float32, dh)}}
	}}
	out, err := m.Generate(&prompt, 3, nn.Sampler{}, nil, patch, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("generated tokens:", len(out))
	// Output:
	// layers: 1 values per layer: 32 per head: 16
	// generated tokens: 3
}
