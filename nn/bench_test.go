// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// stepBench builds the small TinyMLLM with LoRA and a batch of 32 VQA-shaped
// examples (one image, 16 visual tokens + [CLS], ~12 text tokens).
func stepBench(b *testing.B) (*TinyMLLM, *Layout, []Sequence) {
	c, err := Preset("small", 600)
	if err != nil {
		b.Fatal(err)
	}
	c.PEFT.Method = "lora"
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	batch := make([]Sequence, 32)
	for i := range batch {
		batch[i] = vqa(rng, c, 8, 2) // <bos> <image> 8 question, 2 answer, <eos>: 12 text tokens
	}
	return m, NewLayout(m.Params()), batch
}

// BenchmarkStep measures one optimizer step (a plain SGD update) of the
// small TinyMLLM with LoRA on 32 VQA examples, without privacy and with
// DP-SGD's exact per-sample clipping and Gaussian noise.
func BenchmarkStep(b *testing.B) {
	m, l, batch := stepBench(b)
	loss := func(t *Tape, i int) (*Node, error) { return m.Loss(t, &batch[i], nil, nil) }
	b.Run("nonprivate", func(b *testing.B) {
		var st Stats
		for b.Loop() {
			g, _, s, err := Gradient(l, len(batch), loss, nil)
			if err != nil {
				b.Fatal(err)
			}
			sgd(l, g, 1e-3/float32(len(batch)))
			st = s
		}
		b.ReportMetric(float64(st.PeakBytes()+ModelBytes(m)), "peak-B/step")
	})
	b.Run("dpsgd", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(2, 2))
		var st Stats
		for b.Loop() {
			r, err := PerSample(l, len(batch), loss, nil)
			if err != nil {
				b.Fatal(err)
			}
			ClipAll(r.Grads, Flat(1))
			g := Sum(nil, r.Grads)
			for j := range g {
				g[j] += float32(rng.NormFloat64() * 1.0)
			}
			sgd(l, g, 1e-3/float32(len(batch)))
			st = r.Stats
			st.GradBytes += int64(4 * len(g))
		}
		b.ReportMetric(float64(st.PeakBytes()+ModelBytes(m)), "peak-B/step")
	})
}

// BenchmarkGemm measures the CPU backend on square products and reports
// GFLOP/s (2n³ floating-point operations per product).
func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{32, 96, 256, 512} {
		a, bb := randTensor(rng, 1, n, n), randTensor(rng, 1, n, n)
		c := make([]float32, n*n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				kernels.Gemm(false, true, n, n, n, 1, a.Data, n, bb.Data, n, 0, c, n)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
