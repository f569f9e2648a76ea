// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import (
	"fmt"
	"math"
)

// Adam holds the coefficients of one adam_step launch: one parameter
// tensor's Adam (or AdamW) update at step count t, computed on the host
// as nn/optim computes them.
type Adam struct {
	B1, OneMinusB1, B2, OneMinusB2, Eps float64
	// L2 is Adam's coupled weight decay λ (0 for AdamW or none) and Decay
	// AdamW's factor 1 − ηλ (1 for Adam or none).
	L2, Decay float64
	// Step is η/(1 − β₁ᵗ) and BC2 is √(1 − β₂ᵗ).
	Step, BC2 float64
}

// NewAdam returns the coefficients of step t ≥ 1 with learning rate lr
// (the parameter's LRScale applied), β₁, β₂, ε and weight decay wd,
// decoupled for AdamW. It panics for t < 1, where the bias corrections
// divide by zero.
func NewAdam(lr, beta1, beta2, eps, wd float64, decoupled bool, t int64) Adam {
	if t < 1 {
		panic(fmt.Sprintf("ptx: Adam step %d, want ≥ 1", t))
	}
	c := Adam{B1: beta1, OneMinusB1: 1 - beta1, B2: beta2, OneMinusB2: 1 - beta2, Eps: eps, Decay: 1}
	if decoupled {
		c.Decay = 1 - float64(lr*wd)
	} else {
		c.L2 = wd
	}
	c.Step = lr / (1 - math.Pow(beta1, float64(t)))
	c.BC2 = math.Sqrt(1 - math.Pow(beta2, float64(t)))
	return c
}

// Args returns c as the last nine arguments of adam_step.
func (c Adam) Args() []Arg {
	return []Arg{D(c.B1), D(c.OneMinusB1), D(c.B2), D(c.OneMinusB2), D(c.Eps), D(c.L2), D(c.Decay), D(c.Step), D(c.BC2)}
}
