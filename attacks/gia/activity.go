// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
)

// An ActivityPrior pins the ReLU pattern of a fully connected first layer
// z = W·x + b, ReLU, to the one a round's update reveals. For one example,
// the gradient of row i of W is δᵢ·xᵀ and that of bᵢ is δᵢ, with δᵢ = 0
// whenever unit i is inactive (zᵢ ≤ 0): a unit whose weight and bias rows
// are zero over the whole round was inactive on every local step, one
// whose rows are not was active on at least one. Each is a linear
// constraint on the input that the attacker reads off the update, as in
// the analyses of R-GAP ("R-GAP: Recursive Gradient Attack on Privacy",
// Zhu and Blaschko, ICLR 2021) and "See through Gradients" (Yin et al.,
// CVPR 2021, which reads the active units of a batch from the same rows).
// The prior is the squared hinge of the violations at the round's starting
// parameters,
//
//	R(x) = (1/U)·(Σ_{i inactive} max(0, zᵢ(x))² + Σ_{i active} max(0, −zᵢ(x))²),
//
// U the number of units: zero at every input with the revealed pattern, so
// it moves no minimum of the matching term among them, and a gradient that
// carries a candidate into the pattern, where the matching term gets a
// gradient through the units it should. It reads only which rows are
// zero: not the rows' values (that would be the closed form of
// LinearInput).
type ActivityPrior struct {
	w, b   []float32 // W (units × in, row-major) and b at the round's start
	active []bool
	in     int
}

// NewActivityPrior returns the prior of the layer with weights w (units ×
// in, row-major) and bias b at the round's start, given the round's update
// of the same tensors, gw and gb. A row counts as zero when every value of
// it and its bias is exactly 0 (a ReLU unit that never fired leaves its
// parameters untouched, bit for bit). It returns nil when the update
// reveals no pattern: no row zero (a noised update: every row carries
// noise) or every row zero. It returns an error for sizes that do not fit.
func NewActivityPrior(w, b, gw, gb []float32) (*ActivityPrior, error) {
	units := len(b)
	if units == 0 || len(w)%units != 0 || len(gw) != len(w) || len(gb) != units {
		return nil, fmt.Errorf("gia: activity prior: weights %d, bias %d, their updates %d and %d values", len(w), units, len(gw), len(gb))
	}
	in := len(w) / units
	p := &ActivityPrior{w: w, b: b, active: make([]bool, units), in: in}
	var zero int
	for i := range units {
		nz := gb[i] != 0
		for _, v := range gw[i*in : (i+1)*in] {
			nz = nz || v != 0
		}
		p.active[i] = nz
		if !nz {
			zero++
		}
	}
	if zero == 0 || zero == units {
		return nil, nil
	}
	return p, nil
}

// Active returns the number of units the update shows as active.
func (p *ActivityPrior) Active() int {
	var n int
	for _, a := range p.active {
		if a {
			n++
		}
	}
	return n
}

// Violations returns the number of units whose activity at x differs from
// the revealed pattern (zᵢ > 0 for an inactive unit, zᵢ ≤ 0 for an active
// one).
func (p *ActivityPrior) Violations(x []float32) int {
	var n int
	for i, a := range p.active {
		if z := p.pre(i, x); (z > 0) != a {
			n++
		}
	}
	return n
}

// pre returns zᵢ(x) = W_i·x + bᵢ.
func (p *ActivityPrior) pre(i int, x []float32) float64 {
	z := float64(p.b[i])
	for j, v := range p.w[i*p.in : (i+1)*p.in] {
		z += float64(float64(v) * float64(x[j]))
	}
	return z
}

// add returns R(x) and adds weight·∇R(x) to grad (both of the layer's
// input size).
func (p *ActivityPrior) add(x []float32, weight float64, grad []float32) float64 {
	units := float64(len(p.active))
	var r float64
	for i, a := range p.active {
		z := p.pre(i, x)
		viol := math.Max(0, z) // an inactive unit must have z ≤ 0
		if a {
			viol = math.Min(0, z) // an active one z ≥ 0
		}
		if viol == 0 {
			continue
		}
		r += viol * viol / units
		c := weight * 2 * viol / units
		for j, v := range p.w[i*p.in : (i+1)*p.in] {
			grad[j] += float32(c * float64(v))
		}
	}
	return r
}
