// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package mi

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/repro-dp/repro/nn/optim"
)

// An MLP is a scalar-output perceptron: Linear, ReLU, …, Linear → 1. It is
// the critic of MINE and the classifier of the CMI estimator. Weights are
// float32 (so package optim trains them); the arithmetic is float64.
type MLP struct {
	// Sizes are the widths from the input to the output (the last is 1).
	Sizes []int
	// W[l] is layer l's weight, row-major [Sizes[l+1], Sizes[l]]; B[l] its
	// bias.
	W, B [][]float32

	gw, gb [][]float64 // gradient accumulators
}

// NewMLP returns an MLP with in inputs, the hidden widths and one output,
// weights drawn by He initialisation (N(0, 2/fan-in)) from rng and zero
// biases. It panics if a width is not positive.
func NewMLP(in int, hidden []int, rng *rand.Rand) *MLP {
	m := &MLP{Sizes: append(append([]int{in}, hidden...), 1)}
	for l := range len(m.Sizes) - 1 {
		a, b := m.Sizes[l], m.Sizes[l+1]
		if a <= 0 || b <= 0 {
			panic("mi: non-positive layer width")
		}
		w := make([]float32, a*b)
		std := math.Sqrt(2 / float64(a))
		for i := range w {
			w[i] = float32(std * rng.NormFloat64())
		}
		m.W = append(m.W, w)
		m.B = append(m.B, make([]float32, b))
		m.gw = append(m.gw, make([]float64, a*b))
		m.gb = append(m.gb, make([]float64, b))
	}
	return m
}

// acts holds one example's activations (after ReLU; the input first).
type acts [][]float64

func (m *MLP) newActs() acts {
	a := make(acts, len(m.Sizes))
	for l, n := range m.Sizes {
		a[l] = make([]float64, n)
	}
	return a
}

// forward computes the output for x, keeping the activations in a.
func (m *MLP) forward(x []float64, a acts) float64 {
	copy(a[0], x)
	last := len(m.W) - 1
	for l, w := range m.W {
		in, out := a[l], a[l+1]
		for o := range out {
			s := float64(m.B[l][o])
			row := w[o*len(in) : (o+1)*len(in)]
			for i, v := range in {
				s += float64(float64(row[i]) * v)
			}
			if l < last && s < 0 {
				s = 0
			}
			out[o] = s
		}
	}
	return a[len(a)-1][0]
}

// Eval returns the output for x. It panics if len(x) is not Sizes[0].
func (m *MLP) Eval(x []float64) float64 {
	if len(x) != m.Sizes[0] {
		panic("mi: input width mismatch")
	}
	return m.forward(x, m.newActs())
}

// backward adds d·∂out/∂θ to the gradient accumulators and, when dx is not
// nil, d·∂out/∂x to dx, for the activations a of one forward pass.
func (m *MLP) backward(a acts, d float64, dx []float64) {
	g := []float64{d}
	for l := len(m.W) - 1; l >= 0; l-- {
		in := a[l]
		var gin []float64
		if l > 0 || dx != nil {
			gin = make([]float64, len(in))
		}
		w := m.W[l]
		for o, go_ := range g {
			if go_ == 0 {
				continue
			}
			m.gb[l][o] += go_
			row := w[o*len(in) : (o+1)*len(in)]
			grow := m.gw[l][o*len(in) : (o+1)*len(in)]
			for i, v := range in {
				grow[i] += float64(go_ * v)
				if gin != nil {
					gin[i] += float64(go_ * float64(row[i]))
				}
			}
		}
		if l == 0 {
			for i, v := range gin {
				if dx != nil {
					dx[i] += v
				}
			}
			return
		}
		for i := range gin { // through the ReLU that produced in
			if in[i] <= 0 {
				gin[i] = 0
			}
		}
		g = gin
	}
}

// trainer steps an MLP with Adam from its accumulated gradients.
type trainer struct {
	m      *MLP
	params []optim.Param
	opt    optim.Optimizer
	lr     float64
}

func newTrainer(m *MLP, lr float64) *trainer {
	var ps []optim.Param
	for l := range m.W {
		ps = append(ps,
			optim.Param{Name: "w" + strconv.Itoa(l), Data: m.W[l], Grad: make([]float32, len(m.W[l]))},
			optim.Param{Name: "b" + strconv.Itoa(l), Data: m.B[l], Grad: make([]float32, len(m.B[l]))})
	}
	opt, err := optim.New("adam", ps, nil)
	if err != nil {
		panic(err) // adam is always registered
	}
	return &trainer{m: m, params: ps, opt: opt, lr: lr}
}

// step applies the accumulated gradient (a gradient of a loss to minimise)
// and clears the accumulators.
func (t *trainer) step() {
	for l := range t.m.W {
		for i, v := range t.m.gw[l] {
			t.params[2*l].Grad[i] = float32(v)
		}
		for i, v := range t.m.gb[l] {
			t.params[2*l+1].Grad[i] = float32(v)
		}
		clear(t.m.gw[l])
		clear(t.m.gb[l])
	}
	t.opt.Step(t.params, t.lr, nil)
}
