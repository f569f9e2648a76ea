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
