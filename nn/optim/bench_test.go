// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchParams returns 1M parameters in 16 tensors of 65536, with
// fixed-seed values and gradients.
func benchParams() []Param {
	rng := rand.New(rand.NewPCG(1, 1))
	ps := make([]Param, 16)
	for i := range ps {
		ps[i] = Param{Name: fmt.Sprintf("w%d", i), Data: make([]float32, 1<<16), Grad: make([]float32, 1<<16)}
		for j := range ps[i].Data {
			ps[i].Data[j] = float32(rng.NormFloat64())
			ps[i].Grad[j] = float32(rng.NormFloat64())
		}
	}
	return ps
}

// BenchmarkStep measures one step over 1M parameters (2²⁰): AdamW, AdamW
// with a top-80% block mask (Dual-Priv), AdamW with an 80% element mask,
// and SGD with momentum; all on GOMAXPROCS goroutines, and AdamW also on
// one.
func BenchmarkStep(b *testing.B) {
	blocks := make([]bool, 16)
	for i := range blocks {
		blocks[i] = i%5 != 0
	}
	elems := make([][]bool, 16)
	for i := range elems {
		elems[i] = make([]bool, 1<<16)
		for j := range elems[i] {
			elems[i][j] = j%5 != 0
		}
	}
	for _, bc := range []struct {
		desc    string
		name    string
		set     *Settings
		mask    *Mask
		workers int // 0: GOMAXPROCS
	}{
		{"adamw", "adamw", &Settings{WeightDecay: 0.01}, nil, 0},
		{"adamw-1goroutine", "adamw", &Settings{WeightDecay: 0.01}, nil, 1},
		{"adamw-blocks80", "adamw", &Settings{WeightDecay: 0.01}, &Mask{Params: blocks}, 0},
		{"adamw-elems80", "adamw", &Settings{WeightDecay: 0.01}, &Mask{Elems: elems}, 0},
		{"sgd-momentum", "sgd", &Settings{Momentum: 0.9}, nil, 0},
	} {
		b.Run(bc.desc, func(b *testing.B) {
			ps := benchParams()
			opt, err := New(bc.name, ps, bc.set)
			if err != nil {
				b.Fatal(err)
			}
			setWorkers(opt, bc.workers)
			opt.Step(ps, 1e-6, bc.mask) // allocate the state outside the loop
			for b.Loop() {
				opt.Step(ps, 1e-6, bc.mask)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(1<<20), "ns/param")
		})
	}
}
