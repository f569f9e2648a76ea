// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/nn"
)

// DefaultRoundStep is RoundMatch's default relative step of the central
// differences (GradientMatch.Step): the fusion classifier's image encoder
// is piecewise linear (ReLU), so the step is kept small enough to cross
// few activation switches and large enough that float32 rounding stays
// below the truncation error (TestRoundMatchFD).
const DefaultRoundStep = 1e-4

// FusionGrad returns the GradFunc of the fusion classifier m's
// cross-entropy on one example whose caption tokens and label are fixed
// and whose image is the candidate x: what a client's local step
// differentiates (methods' fedClient.gradient without the MINE penalty).
// gtheta is over layout l. It returns an error for a label out of range
// or tokens the model does not take.
func FusionGrad(m *nn.Fusion, l *nn.Layout, tokens []int, label int) GradFunc {
	return func(x, gtheta, gx []float32) (float64, error) {
		if label < 0 || label >= m.Config.Classes {
			return 0, fmt.Errorf("gia: label %d out of range [0, %d)", label, m.Config.Classes)
		}
		t := gradTape(l, gtheta)
		z, in, err := m.Logits(t, x, tokens, gx != nil, nil)
		if err != nil {
			return 0, err
		}
		loss := t.CrossEntropy(z, []int{label}, nil)
		t.Backward(loss)
		if gx != nil {
			clear(gx)
			if in.Grad != nil {
				copy(gx, in.Grad)
			}
		}
		return float64(loss.Value.Data[0]), nil
	}
}

// RoundMatch is the gradient-matching objective for a FedAvg client's
// whole round (Geiping et al. 2020, §6, "inverting multi-step updates":
// the attacker simulates the client's local steps): the candidate's round
// update is
//
//	Δ(x) = Σ_{s<E} g_s,  g_s = ∇_θ L(x; θ_s),  θ_{s+1} = θ_s − η·g_s,
//
// the pseudo-gradient (θ_0 − θ_E)/η of E plain SGD steps at rate η from
// the model's current parameters θ_0, and the objective is the distance
// D(Δ(x), Δ*) of GradientMatch (cosine, or relative ℓ₂ with L2) over the
// released blocks. E = 1 is GradientMatch.
//
// Its gradient with respect to x is taken by reverse accumulation through
// the unrolled steps (the adjoint of the recursion): with v = ∂D/∂Δ,
// p_E = 0 and, for s = E−1 down to 0,
//
//	u_s = v − η·p_{s+1},
//	∇_x D += J_sᵀ u_s = ∇_x ⟨u_s, ∇_θ L(x; θ_s)⟩,
//	p_s = p_{s+1} + H_s u_s,
//
// where p_s = ∂⟨v, Δ⟩/∂θ_s and H_s the loss's Hessian in θ at θ_s. Both
// products come from one central difference of the first-order gradients
// (in θ and in x) at θ_s ± h·u_s (Pearlmutter 1994, as GradientMatch): E
// passes along the trajectory and 2E for the products, 3E in all.
//
// The simulated steps are unclipped and noiseless: what the attacker
// models of a private round is its signal (the clip of a batch-1 step
// only rescales each modality block, which the noise swamps; see
// docs/secmmfl.md). Objective perturbs the parameters of Layout in place
// and restores their exact values before it returns.
type RoundMatch struct {
	*GradientMatch
	// Steps is the round's local steps E (≥ 1) and LR their rate η.
	Steps int
	LR    float64

	traj       [][]float32
	g, dp, dm  []float32
	gxp, gxm   []float32
	delta, vdv []float32
}

// NewRoundMatch returns the objective for the round update want (the
// pseudo-gradient (θ − θ′)/η) over layout l of the model whose loss f
// evaluates, E = steps local steps at rate lr, with the central
// differences at DefaultRoundStep. It returns an error for steps < 1, a
// rate that is not positive and finite, or a want that does not fit l or
// releases nothing.
func NewRoundMatch(l *nn.Layout, f GradFunc, want []float32, steps int, lr float64) (*RoundMatch, error) {
	if steps < 1 {
		return nil, fmt.Errorf("gia: round of %d local steps, want ≥ 1", steps)
	}
	if !(lr > 0) || math.IsInf(lr, 1) {
		return nil, fmt.Errorf("gia: local learning rate %v, want positive and finite", lr)
	}
	gm, err := NewGradientMatch(l, f, want)
	if err != nil {
		return nil, err
	}
	gm.Step = DefaultRoundStep
	n := l.Size
	rm := &RoundMatch{GradientMatch: gm, Steps: steps, LR: lr, traj: make([][]float32, steps),
		g: make([]float32, n), dp: make([]float32, n), dm: make([]float32, n),
		delta: make([]float32, n), vdv: make([]float32, n)}
	for s := range rm.traj {
		rm.traj[s] = make([]float32, n)
	}
	return rm, nil
}

// Simulate writes the candidate's round update Δ(x) to delta (over the
// layout) and returns the mean loss of its steps. The parameters are
// restored before it returns.
func (rm *RoundMatch) Simulate(x, delta []float32) (float64, error) {
	rm.save()
	defer rm.restore()
	return rm.simulate(x, delta)
}

// simulate runs the E steps from the saved θ_0, keeping θ_s in traj.
func (rm *RoundMatch) simulate(x, delta []float32) (float64, error) {
	l := rm.Layout
	for i := range l.Params {
		copy(l.Block(rm.traj[0], i), rm.theta[i])
	}
	clear(delta)
	lr := float32(rm.LR)
	var loss float64
	for s := range rm.Steps {
		rm.set(rm.traj[s], nil, 0)
		v, err := rm.Grad(x, rm.g, nil)
		if err != nil {
			return 0, err
		}
		loss += v / float64(rm.Steps)
		for j, gj := range rm.g {
			delta[j] += gj
		}
		if s+1 < rm.Steps {
			next := rm.traj[s+1]
			for j, t := range rm.traj[s] {
				next[j] = t - float32(lr*rm.g[j])
			}
		}
	}
	return loss, nil
}

// set writes θ + h·u to the layout's parameters (θ alone when u is nil).
func (rm *RoundMatch) set(theta, u []float32, h float64) {
	l := rm.Layout
	for i, p := range l.Params {
		tb := l.Block(theta, i)
		if u == nil {
			copy(p.Data, tb)
			continue
		}
		ub := l.Block(u, i)
		for j, t := range tb {
			p.Data[j] = float32(float64(t) + float64(h*float64(ub[j])))
		}
	}
}

// Distance returns D(Δ(x), Δ*) alone (E first-order passes).
func (rm *RoundMatch) Distance(x []float32) (float64, error) {
	rm.save()
	defer rm.restore()
	if _, err := rm.simulate(x, rm.delta); err != nil {
		return 0, err
	}
	return rm.distance(rm.delta, nil), nil
}

// Objective returns D(Δ(x), Δ*) and writes ∇_x D (the adjoint recursion
// of RoundMatch's doc comment) to grad (len(x), overwritten). It returns
// the GradFunc's first error.
func (rm *RoundMatch) Objective(x, grad []float32) (float64, error) {
	rm.save()
	defer rm.restore()
	if _, err := rm.simulate(x, rm.delta); err != nil {
		return 0, err
	}
	v := rm.vdv
	dist := rm.distance(rm.delta, v)
	eta := rm.Step
	if eta == 0 {
		eta = DefaultRoundStep
	}
	clear(grad)
	if rm.gxp == nil {
		rm.gxp, rm.gxm = make([]float32, len(x)), make([]float32, len(x))
	}
	n := rm.Layout.Size
	p := make([]float64, n)
	u := make([]float32, n)
	for s := rm.Steps - 1; s >= 0; s-- {
		for j := range u {
			u[j] = float32(float64(v[j]) - float64(rm.LR*p[j]))
		}
		nu := norm(u)
		if nu == 0 {
			continue
		}
		nt := norm(rm.traj[s])
		if nt == 0 {
			nt = 1
		}
		h := eta * nt / nu
		var gp, gm []float32
		if s > 0 {
			gp, gm = rm.dp, rm.dm
		}
		rm.set(rm.traj[s], u, h)
		_, errP := rm.Grad(x, gp, rm.gxp)
		rm.set(rm.traj[s], u, -h)
		_, errM := rm.Grad(x, gm, rm.gxm)
		if err := cmpErr(errP, errM); err != nil {
			return 0, err
		}
		for i := range grad {
			grad[i] += float32((float64(rm.gxp[i]) - float64(rm.gxm[i])) / (2 * h))
		}
		if s > 0 {
			for j := range p {
				p[j] += (float64(gp[j]) - float64(gm[j])) / (2 * h)
			}
		}
	}
	return dist, nil
}

// GroupOptions configures InvertGroup: the image priors of "See through
// Gradients" (Yin et al., CVPR 2021, Eq. 2–3, 9–10) as they fit a model
// without BatchNorm and a batch of one.
type GroupOptions struct {
	// Iterations of Adam (default 400; Sec-MMFL runs 3000), LR its step
	// size (default 0.03; Sec-MMFL's 0.1 left more members in poor minima
	// on the fusion classifier), Decay its step schedule
	// (InvertOptions.Decay).
	Iterations int
	LR         float64
	Decay      bool
	// TV is the weight of the total-variation prior R_TV (default 0.02;
	// Sec-MMFL's λ_TV = 0.2 is for another distance's scale: here it
	// flattened the control's reconstructions); negative: none.
	TV float64
	// Group is the number of reconstructions optimised together from
	// different random starts (default 4, Yin et al.'s group size).
	Group int
	// Consistency is the weight α of the group-consistency prior
	// α·‖x_g − E‖²/n, E the group's pixel-wise mean at the iteration
	// (Yin et al. Eq. 9; no registration: a batch-1 update fixes the
	// image's position). Default 0.1; negative: none.
	Consistency float64
	// Stats is the weight β of the public-statistics prior, which stands
	// in for Yin et al.'s BatchNorm prior R_BN (the model has no
	// BatchNorm, and a batch of one has no batch statistics):
	// β·(1/n)·Σᵢ (xᵢ − μᵢ)²/(sᵢ² + 0.01), μ and s the pixel-wise mean and
	// standard deviation of the public images (Mean, Std). Default 0.01;
	// negative, or no Mean: none.
	Stats     float64
	Mean, Std []float32
	// Activity, when not nil, adds ActivityWeight·R(x), the squared hinge
	// of the first layer's revealed ReLU pattern (ActivityPrior; x the
	// whole C×H×W image, the layer's input).
	Activity       *ActivityPrior
	ActivityWeight float64
	// Gray ties the channels to one value per pixel (InvertOptions.Gray).
	Gray bool
	// Init, when not nil, is the start of the first member (C×H×W, with
	// Gray its first channel: the public mean image, the attacker's
	// data-independent guess); member g > 0 starts at Init plus uniform
	// noise on [−Spread, Spread], clamped to the box. nil: every member
	// starts uniform on [0, 1].
	Init   []float32
	Spread float64
	// Seed seeds the random starts (uniform on [0, 1]).
	Seed uint64
}

func (o *GroupOptions) withDefaults() GroupOptions {
	var r GroupOptions
	if o != nil {
		r = *o
	}
	if r.Iterations == 0 {
		r.Iterations = 400
	}
	if r.LR == 0 {
		r.LR = 0.03
	}
	if r.TV == 0 {
		r.TV = 0.02
	}
	if r.Group == 0 {
		r.Group = 4
	}
	if r.Consistency == 0 {
		r.Consistency = 0.1
	}
	if r.Stats == 0 {
		r.Stats = 0.01
	}
	return r
}

// InvertGroup minimises, for each of G reconstructions x_g ∈ [0, 1]^{C×H×W}
// from its own random start,
//
//	obj(x_g) + TV·R_TV(x_g) + β·R_stats(x_g) + α·‖x_g − E‖²/n (+ the activity prior)
//
// by Adam with projection onto the box (adamBox's rule, the G members in
// lockstep, E the members' mean before each step, held fixed in it). Each
// member's result is its iterate with the lowest obj (the matching term
// alone: a constant step can carry Adam out of a minimum it found), and
// InvertGroup returns the member with the lowest of these (the restart
// rule of Geiping et al. 2020, §5: where the members fall into different
// minima their pixel-wise consensus is a blur of them), every member's
// result, and that objective. Everything runs in one goroutine, in member order: the
// result depends on the options alone. It returns obj's first error, or
// an error for statistics that do not fit the image.
func InvertGroup(obj Objective, c, h, w int, opt *GroupOptions) ([]float32, [][]float32, float64, error) {
	o := opt.withDefaults()
	n := c * h * w
	nu := n
	if o.Gray {
		nu = h * w
	}
	if o.Stats > 0 && o.Mean != nil && (len(o.Mean) != n || len(o.Std) != n) {
		return nil, nil, 0, fmt.Errorf("gia: public statistics of %d and %d values, want %d", len(o.Mean), len(o.Std), n)
	}
	if o.Init != nil && len(o.Init) != n {
		return nil, nil, 0, fmt.Errorf("gia: initial image of %d values, want %d", len(o.Init), n)
	}
	if o.Activity != nil && o.Activity.in != n {
		return nil, nil, 0, fmt.Errorf("gia: activity prior of a layer on %d inputs, want %d", o.Activity.in, n)
	}
	members := groupStarts(&o, nu)
	const b1, b2, eps = 0.9, 0.999, 1e-8
	m1, m2 := make([][]float64, o.Group), make([][]float64, o.Group)
	for g := range m1 {
		m1[g], m2[g] = make([]float64, nu), make([]float64, nu)
	}
	x, gx, gu := make([]float32, n), make([]float32, n), make([]float32, nu)
	cons := make([]float32, nu)
	bestV, bestU := make([]float64, o.Group), make([][]float32, o.Group)
	for g := range bestV {
		bestV[g], bestU[g] = math.Inf(1), make([]float32, nu)
	}
	io := InvertOptions{LR: o.LR, Decay: o.Decay}
	for it := 1; it <= o.Iterations; it++ {
		clear(cons)
		for _, u := range members {
			for i, v := range u {
				cons[i] += v / float32(o.Group)
			}
		}
		c1, c2 := 1-math.Pow(b1, float64(it)), 1-math.Pow(b2, float64(it))
		lr := io.lr(it, o.Iterations)
		for g, u := range members {
			expand(x, u)
			v, err := obj(x, gx)
			if err != nil {
				return nil, nil, 0, err
			}
			if v < bestV[g] {
				bestV[g] = v
				copy(bestU[g], u)
			}
			if o.TV > 0 {
				totalVariation(x, c, h, w, o.TV, gx)
			}
			if o.Stats > 0 && o.Mean != nil {
				statsPrior(x, o.Mean, o.Std, o.Stats, gx)
			}
			if o.Activity != nil && o.ActivityWeight > 0 {
				o.Activity.add(x, o.ActivityWeight, gx)
			}
			reduce(gu, gx)
			if o.Consistency > 0 && o.Group > 1 {
				for i := range gu {
					gu[i] += float32(2 * o.Consistency * float64(u[i]-cons[i]) / float64(nu))
				}
			}
			for i, gi := range gu {
				d := float64(gi)
				m1[g][i] = float64(b1*m1[g][i]) + float64((1-b1)*d)
				m2[g][i] = float64(b2*m2[g][i]) + float64((1-b2)*d*d)
				step := lr * (m1[g][i] / c1) / (math.Sqrt(m2[g][i]/c2) + eps)
				u[i] = float32(min(1, max(0, float64(u[i])-step)))
			}
		}
	}
	full := make([][]float32, o.Group)
	best, bestObj := 0, math.Inf(1)
	for g, u := range members {
		expand(x, u)
		v, err := obj(x, gx)
		if err != nil {
			return nil, nil, 0, err
		}
		if v < bestV[g] {
			bestV[g] = v
			copy(bestU[g], u)
		}
		full[g] = make([]float32, n)
		expand(full[g], bestU[g])
		if bestV[g] < bestObj {
			best, bestObj = g, bestV[g]
		}
	}
	return slices.Clone(full[best]), full, bestObj, nil
}

// groupStarts returns the G members' starting points of nu values each:
// uniform on [0, 1] without an initial image; with one, the first member
// starts at it and the others at it plus uniform noise of ±Spread,
// clipped to the box. One stream seeded by o.Seed draws every value, in
// member order.
func groupStarts(o *GroupOptions, nu int) [][]float32 {
	rng := rand.New(rand.NewPCG(o.Seed, 0x67726f7570))
	members := make([][]float32, o.Group)
	for g := range members {
		members[g] = make([]float32, nu)
		for i := range members[g] {
			r := float64(rng.Float64()) // rounded: 2·r is compiled as r + r, fusable with rand's product
			switch {
			case o.Init == nil:
				members[g][i] = float32(r)
			case g == 0:
				members[g][i] = o.Init[i]
			default:
				members[g][i] = float32(min(1, max(0, float64(o.Init[i])+float64(o.Spread*(2*r-1)))))
			}
		}
	}
	return members
}

// statsPrior returns (1/n)·Σᵢ (xᵢ − μᵢ)²/(sᵢ² + 0.01) and adds weight
// times its gradient to grad.
func statsPrior(x, mean, std []float32, weight float64, grad []float32) float64 {
	n := float64(len(x))
	var s float64
	for i, v := range x {
		d := float64(v - mean[i])
		q := float64(float64(std[i])*float64(std[i])) + 0.01
		s += d * d / q
		grad[i] += float32(weight * 2 * d / (q * n))
	}
	return s / n
}

// PixelStats returns the pixel-wise mean and standard deviation of imgs
// (all of one size; at least one).
func PixelStats(imgs [][]float32) (mean, std []float32) {
	n := len(imgs[0])
	sum, sq := make([]float64, n), make([]float64, n)
	for _, im := range imgs {
		for i, v := range im {
			sum[i] += float64(v)
			sq[i] += float64(float64(v) * float64(v))
		}
	}
	k := float64(len(imgs))
	mean, std = make([]float32, n), make([]float32, n)
	for i := range sum {
		mu := sum[i] / k
		mean[i] = float32(mu)
		std[i] = float32(math.Sqrt(max(0, sq[i]/k-float64(mu*mu))))
	}
	return mean, std
}
