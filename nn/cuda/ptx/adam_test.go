// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn/optim"
)

// adamRow is the Go twin of kernels.cu's adam_step: its arithmetic, step
// by step in float64 with the same roundings.
func adamRow(theta, g, m, v []float32, c Adam) {
	for j := range theta {
		th := float64(theta[j])
		gg := float64(g[j])
		if c.L2 != 0 {
			gg += c.L2 * th
		}
		th *= c.Decay
		mj := float32(c.B1*float64(m[j]) + c.OneMinusB1*gg)
		vj := float32(c.B2*float64(v[j]) + c.OneMinusB2*gg*gg)
		m[j], v[j] = mj, vj
		denom := math.Sqrt(float64(vj))/c.BC2 + c.Eps
		theta[j] = float32(th - c.Step*float64(mj)/denom)
	}
}

// TestAdamMatchesCPU checks the host half of the device's Adam (NewAdam)
// with the kernel's arithmetic against nn/optim's Adam and AdamW, the
// reference: the same bits over five steps, with and without weight
// decay, at a learning-rate scale.
func TestAdamMatchesCPU(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, name := range []string{"adam", "adamw"} {
		for _, wd := range []float64{0, 0.01} {
			const n, lr, scale = 300, 1e-3, 2.0
			theta := make([]float32, n)
			for j := range theta {
				theta[j] = float32(rng.NormFloat64())
			}
			p := []optim.Param{{Name: "w", Data: slices.Clone(theta), Grad: make([]float32, n), LRScale: scale}}
			o, err := optim.New(name, p, &optim.Settings{WeightDecay: wd})
			if err != nil {
				t.Fatal(err)
			}
			m, v := make([]float32, n), make([]float32, n)
			for step := int64(1); step <= 5; step++ {
				for j := range p[0].Grad {
					p[0].Grad[j] = float32(rng.NormFloat64())
				}
				g := slices.Clone(p[0].Grad)
				o.Step(p, lr, nil)
				adamRow(theta, g, m, v, NewAdam(lr*scale, 0.9, 0.999, 1e-8, wd, name == "adamw", step))
				for j := range theta {
					if math.Float32bits(theta[j]) != math.Float32bits(p[0].Data[j]) {
						t.Fatalf("%s, λ = %v, step %d: element %d is %v, nn/optim gives %v", name, wd, step, j, theta[j], p[0].Data[j])
					}
				}
			}
		}
	}
}

// TestNewAdamStepZero: step 0 would make the bias correction 1/(1 − β₁⁰)
// infinite, so NewAdam refuses it.
func TestNewAdamStepZero(t *testing.T) {
	for _, step := range []int64{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewAdam(step %d) did not panic", step)
				}
			}()
			NewAdam(0.01, 0.9, 0.999, 1e-8, 0, false, step)
		}()
	}
}
