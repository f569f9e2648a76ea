// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// cpuMeter reports the process CPU time (user and system, all goroutines)
// per operation as the metric cpu-ns/op when stopped, where the platform
// provides it.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

// startCPU starts the meter of benchmark b, after benchProcs has set
// GOMAXPROCS to the value b's row will be labelled with.
func startCPU(b *testing.B) cpuMeter {
	benchProcs(b)
	t, ok := processCPU()
	return cpuMeter{t, ok}
}

func (c cpuMeter) stop(b *testing.B) {
	if t, ok := processCPU(); ok && c.ok && b.N > 0 {
		b.ReportMetric(float64(t-c.start)/float64(b.N), "cpu-ns/op")
	}
}

// stopFlops is stop for a benchmark of flops floating-point operations
// per iteration: besides cpu-ns/op it reports GFLOP/s of wall time and
// GFLOP/cpu-s, the rate per second of process CPU time, which a machine
// shared with other work does not dilute (on one goroutine it is the
// rate of the core while it ran the benchmark).
func (c cpuMeter) stopFlops(b *testing.B, flops float64) {
	c.stop(b)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if t, ok := processCPU(); ok && c.ok && t > c.start {
		b.ReportMetric(flops*float64(b.N)/(t-c.start).Seconds()/1e9, "GFLOP/cpu-s")
	}
}

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
// DP-SGD's exact per-sample clipping and Gaussian noise. Besides wall time
// it reports the process CPU time per step (cpu-ns/op), the better measure
// on a shared machine.
func BenchmarkStep(b *testing.B) {
	m, l, batch := stepBench(b)
	loss := func(t *Tape, i int) (*Node, error) { return m.Loss(t, &batch[i], nil, nil) }
	b.Run("nonprivate", func(b *testing.B) {
		var st Stats
		cpu := startCPU(b)
		for b.Loop() {
			g, _, s, err := Gradient(l, len(batch), loss, nil)
			if err != nil {
				b.Fatal(err)
			}
			sgd(l, g, 1e-3/float32(len(batch)))
			st = s
		}
		cpu.stop(b)
		b.ReportMetric(float64(st.PeakBytes()+ModelBytes(m)), "peak-B/step")
	})
	b.Run("dpsgd", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(2, 2))
		var st Stats
		cpu := startCPU(b)
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
		cpu.stop(b)
		b.ReportMetric(float64(st.PeakBytes()+ModelBytes(m)), "peak-B/step")
	})
}

// BenchmarkGemm measures the CPU backend on square products C = A·Bᵀ (the
// form of a linear layer's forward pass) at 64, 256 and 1024 and reports
// GFLOP/s (2n³ floating-point operations per product). Products of 1024³
// run their output blocks on GOMAXPROCS goroutines; the smaller ones run
// on one.
func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{64, 256, 1024} {
		a, bb := randTensor(rng, 1, n, n), randTensor(rng, 1, n, n)
		c := make([]float32, n*n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cpu := startCPU(b)
			for b.Loop() {
				kernels.Gemm(false, true, n, n, n, 1, a.Data, n, bb.Data, n, 0, c, n)
			}
			cpu.stopFlops(b, 2*float64(n*n*n))
		})
	}
}

// BenchmarkGemmModel measures the CPU backend on the products of the
// anchor model (BenchmarkAnchor) for one example of 32 positions: the
// attention projections and the MLP of a language-model block, forward
// (C = X·Wᵀ) and the input and weight gradients of the MLP's first layer,
// and reports GFLOP/s. These are the sizes the "50% of peak"
// target is about; compare with BenchmarkPeak.
func BenchmarkGemmModel(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []struct {
		name    string
		tA, tB  bool
		m, n, k int
	}{
		{"qkv-32x64x64", false, true, 32, 64, 64},
		{"fc1-32x256x64", false, true, 32, 256, 64},
		{"fc2-32x64x256", false, true, 32, 64, 256},
		{"dx-32x64x256", false, false, 32, 64, 256},
		{"dw-256x64x32", true, false, 256, 64, 32},
	} {
		a := randTensor(rng, 1, s.m*s.k).Data
		bb := randTensor(rng, 1, s.n*s.k).Data
		c := make([]float32, s.m*s.n)
		lda, ldb := s.k, s.k
		if s.tA {
			lda = s.m
		}
		if !s.tB {
			ldb = s.n
		}
		b.Run(s.name, func(b *testing.B) {
			cpu := startCPU(b)
			for b.Loop() {
				kernels.Gemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
			}
			cpu.stopFlops(b, 2*float64(s.m*s.n*s.k))
		})
	}
}

// BenchmarkEpisode measures the forward and backward pass (full
// fine-tuning) of one 8-shot in-context episode on the small preset: nine
// images, each followed by four text tokens, 189 positions in all.
func BenchmarkEpisode(b *testing.B) {
	c, err := Preset("small", 600)
	if err != nil {
		b.Fatal(err)
	}
	c.PEFT.Method = "full"
	m, err := NewTinyMLLM(c)
	if err != nil {
		b.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(4, 4))
	var s Sequence
	for d := 0; d < 9; d++ {
		s.Tokens = append(s.Tokens, TokenImage, 5+rng.IntN(50), 5+rng.IntN(50), 5+rng.IntN(50), TokenEOS)
		s.Loss = append(s.Loss, false, false, false, true, true)
		s.Images = append(s.Images, randImage(rng, c))
	}
	g := make([]float32, l.Size)
	for b.Loop() {
		t := NewTape(l, g)
		out, err := m.Loss(t, &s, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		t.Backward(out)
	}
}
