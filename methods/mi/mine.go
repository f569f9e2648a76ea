// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package mi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// MINEOptions configures TrainMINE. A nil *MINEOptions means the defaults,
// Sec-MMFL's critic: hidden widths [32, 64, 32] with ReLU, Adam at learning
// rate 1e-3, 2000 steps on the whole sample (Batch 0).
type MINEOptions struct {
	// Hidden are the critic's hidden widths; nil means [32, 64, 32].
	Hidden []int
	// Steps is the number of Adam steps, each on Batch samples drawn
	// without replacement (0: all of them), with learning rate LR; 0
	// means 2000 and 1e-3.
	Steps, Batch int
	LR           float64
	// Seed seeds the initialisation, the minibatches and the
	// permutations.
	Seed uint64
}

func (o *MINEOptions) withDefaults() (MINEOptions, error) {
	var v MINEOptions
	if o != nil {
		v = *o
		v.Hidden = slices.Clone(o.Hidden)
	}
	if v.Hidden == nil {
		v.Hidden = []int{32, 64, 32}
	}
	if v.Steps == 0 {
		v.Steps = 2000
	}
	if v.LR == 0 {
		v.LR = 1e-3
	}
	switch {
	case v.Steps < 1 || v.Batch < 0:
		return v, fmt.Errorf("mi: %d steps, batch %d: want steps ≥ 1 and batch ≥ 0", v.Steps, v.Batch)
	case !(v.LR > 0) || math.IsInf(v.LR, 1):
		return v, fmt.Errorf("mi: learning rate %v, want a finite value > 0", v.LR)
	}
	for _, h := range v.Hidden {
		if h < 1 {
			return v, fmt.Errorf("mi: hidden width %d, want ≥ 1", h)
		}
	}
	return v, nil
}

// MINE is a trained Donsker–Varadhan critic T_φ(x, y) for the mutual
// information I(X; Y):
//
//	I(X; Y) ≥ E_p(x,y)[T_φ] − log E_p(x)p(y)[e^{T_φ}],
//
// estimated on n pairs by (1/n) Σ_i T(x_i, y_i) − log (1/n) Σ_i T(x_i,
// y_π(i)) with π a permutation (the product of the marginals). The critic
// sees (x, y) standardised by the statistics of its training sample.
//
// References:
//   - M. I. Belghazi et al., Mutual information neural estimation, ICML
//     2018 (Algorithm 1, without the moving-average gradient correction).
type MINE struct {
	Critic *MLP
	sx, sy standardizer
	dx     int
}

// TrainMINE trains a critic on the pairs (x[i], y[i]) by gradient ascent
// on the Donsker–Varadhan bound, with a fresh random permutation for the
// marginal pairs each step. It returns an error for fewer than 2 pairs,
// ragged or non-finite rows, or invalid options.
func TrainMINE(x, y [][]float64, opts *MINEOptions) (*MINE, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkPairs(x, y); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6d696e65)) // "mine"
	m := &MINE{sx: fitStandardizer(x), sy: fitStandardizer(y), dx: len(x[0])}
	m.Critic = NewMLP(len(x[0])+len(y[0]), o.Hidden, rng)
	xs, ys := m.standardize(x, y)
	t := newTrainer(m.Critic, o.LR)
	b := o.Batch
	if b == 0 || b > len(x) {
		b = len(x)
	}
	for range o.Steps {
		idx := rng.Perm(len(x))[:b]
		bx, by := make([][]float64, b), make([][]float64, b)
		for i, j := range idx {
			bx[i], by[i] = xs[j], ys[j]
		}
		m.bound(bx, by, rng.Perm(b), -1, nil, nil) // minimise −bound
		t.step()
	}
	return m, nil
}

func (m *MINE) standardize(x, y [][]float64) (xs, ys [][]float64) {
	xs, ys = make([][]float64, len(x)), make([][]float64, len(y))
	for i := range x {
		xs[i], ys[i] = m.sx.apply(x[i]), m.sy.apply(y[i])
	}
	return xs, ys
}

// Estimate returns the Donsker–Varadhan estimate of I(X; Y) in nats on the
// pairs (x[i], y[i]) with the marginal pairs (x[i], y[perm[i]]). It
// returns an error for mismatched shapes or a perm that is not a
// permutation of the pairs.
func (m *MINE) Estimate(x, y [][]float64, perm []int) (float64, error) {
	i, _, _, err := m.Gradient(x, y, perm, false)
	return i, err
}

// Gradient is Estimate with, when grad is set, the gradients of the
// estimate with respect to every x[i] and y[i] (the critic held fixed),
// for a penalty λ·Î on features that a model computes.
func (m *MINE) Gradient(x, y [][]float64, perm []int, grad bool) (est float64, gx, gy [][]float64, err error) {
	if err := checkPairs(x, y); err != nil {
		return 0, nil, nil, err
	}
	if len(x[0]) != m.dx || len(x[0])+len(y[0]) != m.Critic.Sizes[0] {
		return 0, nil, nil, fmt.Errorf("mi: pairs of %d+%d values for a critic of %d+%d", len(x[0]), len(y[0]), m.dx, m.Critic.Sizes[0]-m.dx)
	}
	if !isPerm(perm, len(x)) {
		return 0, nil, nil, fmt.Errorf("mi: not a permutation of %d pairs", len(x))
	}
	xs, ys := m.standardize(x, y)
	if !grad {
		return m.bound(xs, ys, perm, 0, nil, nil), nil, nil, nil
	}
	gx, gy = make([][]float64, len(x)), make([][]float64, len(y))
	for i := range gx {
		gx[i], gy[i] = make([]float64, len(x[0])), make([]float64, len(y[0]))
	}
	est = m.bound(xs, ys, perm, 0, gx, gy)
	for i := range gx { // through the standardisation
		for j := range gx[i] {
			gx[i][j] *= m.sx.scale[j]
		}
		for j := range gy[i] {
			gy[i][j] *= m.sy.scale[j]
		}
	}
	m.Critic.zeroGrad()
	return est, gx, gy, nil
}

// bound returns the DV bound on standardised pairs. With scale ≠ 0 it adds
// scale·∂bound/∂φ to the critic's accumulators; with gx and gy not nil it
// adds ∂bound/∂x_i and ∂bound/∂y_i (standardised coordinates) to them.
func (m *MINE) bound(xs, ys [][]float64, perm []int, scale float64, gx, gy [][]float64) float64 {
	n := len(xs)
	c := m.Critic
	need := scale != 0 || gx != nil
	joint, marg := make([]float64, n), make([]float64, n)
	var aj, am []acts
	if need {
		aj, am = make([]acts, n), make([]acts, n)
	}
	a := c.newActs()
	for i := range n {
		if need {
			aj[i], am[i] = c.newActs(), c.newActs()
			joint[i] = c.forward(concat(xs[i], ys[i]), aj[i])
			marg[i] = c.forward(concat(xs[i], ys[perm[i]]), am[i])
			continue
		}
		joint[i] = c.forward(concat(xs[i], ys[i]), a)
		marg[i] = c.forward(concat(xs[i], ys[perm[i]]), a)
	}
	lme := logMeanExp(marg)
	if !need {
		return mean(joint) - lme
	}
	var dxy []float64
	if gx != nil {
		dxy = make([]float64, c.Sizes[0])
	}
	back := func(a acts, d float64, gxi, gyi []float64) {
		if gxi == nil {
			c.backward(a, d, nil)
			return
		}
		clear(dxy)
		c.backward(a, d, dxy)
		for j := range gxi {
			gxi[j] += dxy[j]
		}
		for j := range gyi {
			gyi[j] += dxy[len(gxi)+j]
		}
	}
	w, s := 1/float64(n), nonZero(scale)
	for i := range n {
		// ∂/∂T_joint(i) = 1/n; ∂/∂T_marg(i) = −softmax(marg)_i.
		sm := math.Exp(marg[i]-lme) * w
		var gxi, gyi, gyp []float64
		if gx != nil {
			gxi, gyi, gyp = gx[i], gy[i], gy[perm[i]]
		}
		back(aj[i], w*s, gxi, gyi)
		back(am[i], -sm*s, gxi, gyp)
	}
	return mean(joint) - lme
}

// nonZero returns s, or 1 for s = 0 (input gradients only).
func nonZero(s float64) float64 {
	if s == 0 {
		return 1
	}
	return s
}

// zeroGrad clears the parameter-gradient accumulators.
func (m *MLP) zeroGrad() {
	for l := range m.gw {
		clear(m.gw[l])
		clear(m.gb[l])
	}
}

func checkPairs(x, y [][]float64) error {
	if len(x) != len(y) {
		return fmt.Errorf("mi: %d samples of x and %d of y, want as many", len(x), len(y))
	}
	if len(x) < 2 {
		return fmt.Errorf("mi: %d pairs, want at least 2", len(x))
	}
	if err := checkRows(x); err != nil {
		return err
	}
	return checkRows(y)
}

func isPerm(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, v := range p {
		if v < 0 || v >= n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}
