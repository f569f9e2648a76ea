// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import "math"

// Adam is Adam (Kingma & Ba 2015, Algorithm 1) with optional L2 weight decay,
// or AdamW (Loshchilov & Hutter 2019) with decoupled weight decay, both in
// PyTorch's form. For each element at its t-th step, with learning rate η,
// decay rates β₁, β₂, ε and weight decay λ:
//
//	g ← g + λθ                 (adam)
//	θ ← θ(1 − ηλ)              (adamw)
//	m ← β₁m + (1 − β₁)g
//	v ← β₂v + (1 − β₂)g²
//	θ ← θ − (η / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)
//
// m and v start at 0 and are stored as float32.
type Adam struct {
	name                  string
	beta1, beta2, eps, wd float64
	decoupled             bool
	slots                 []slot

	// Bias-correction tables for per-element step counts:
	// bc1[t] = 1 − β₁ᵗ and bc2[t] = √(1 − β₂ᵗ), for the β₁ in tabBeta1.
	tabBeta1 float64
	bc1, bc2 []float64

	jobs  []adamJob
	sched scheduler
}

var (
	_ Optimizer  = (*Adam)(nil)
	_ Momentumer = (*Adam)(nil)
)

var adamBuffers = []string{"exp_avg", "exp_avg_sq"}

func newAdam(name string, params []Param, s Settings, decoupled bool) *Adam {
	return &Adam{
		name: name, beta1: s.Beta1, beta2: s.Beta2, eps: s.Eps, wd: s.WeightDecay, decoupled: decoupled,
		slots: newSlots(params, len(adamBuffers)),
	}
}

// SetMomentum sets β₁ for the following steps. It panics unless 0 < β₁ < 1.
func (o *Adam) SetMomentum(beta1 float64) {
	if !(beta1 > 0 && beta1 < 1) {
		panic("optim: invalid momentum")
	}
	o.beta1 = beta1
}

// correction returns 1 − β₁ᵗ and √(1 − β₂ᵗ). The whole-tensor path, the
// tables and the per-element path beyond the tables all use it, so that they
// agree bit for bit.
func correction(beta1, beta2 float64, t int64) (float64, float64) {
	return 1 - math.Pow(beta1, float64(t)), math.Sqrt(1 - math.Pow(beta2, float64(t)))
}

// maxTable is the largest step count with a tabulated bias correction; the
// per-element path computes larger ones on the fly.
const maxTable = 1 << 20

// tables returns the bias-correction tables, valid for t ≤ min(maxT,
// maxTable).
func (o *Adam) tables(maxT int64) ([]float64, []float64) {
	if o.tabBeta1 != o.beta1 {
		o.tabBeta1, o.bc1, o.bc2 = o.beta1, o.bc1[:0], o.bc2[:0]
	}
	for t := int64(len(o.bc1)); t <= min(maxT, maxTable); t++ {
		c1, c2 := correction(o.beta1, o.beta2, t)
		o.bc1 = append(o.bc1, c1)
		o.bc2 = append(o.bc2, c2)
	}
	return o.bc1, o.bc2
}

// Step implements Optimizer.
func (o *Adam) Step(params []Param, lr float64, m *Mask) {
	checkStep(o.slots, params, lr, m)
	// First the bookkeeping, parameter by parameter; then the element
	// updates, which may run in parallel.
	o.jobs = o.jobs[:0]
	var maxT int64
	for i := range params {
		p, s := &params[i], &o.slots[i]
		if !m.param(i) {
			if m.reset() {
				s.resetAll()
			}
			continue
		}
		keep := m.elems(i)
		if keep != nil {
			s.materialize()
			if m.reset() {
				s.resetElems(keep)
			}
		}
		if s.bufs[0] == nil {
			s.bufs[0] = make([]float32, s.n)
			s.bufs[1] = make([]float32, s.n)
		}
		s.step++
		job := adamJob{p: p, s: s, keep: keep, k: adamCoef{lr: lr * lrScale(p), b1: o.beta1, b2: o.beta2, eps: o.eps, decay: 1}}
		if !p.NoDecay {
			if o.decoupled {
				job.k.decay = 1 - float64(job.k.lr*o.wd)
			} else {
				job.k.l2 = o.wd
			}
		}
		if s.elemStep == nil {
			job.bc1, job.bc2 = correction(o.beta1, o.beta2, s.step)
		} else {
			maxT = max(maxT, s.step)
		}
		o.jobs = append(o.jobs, job)
		o.sched.add(len(o.jobs)-1, s.n)
	}
	bc1, bc2 := o.tables(maxT)
	defer clear(o.jobs) // do not retain the caller's slices
	o.sched.run(func(sp span) {
		j := &o.jobs[sp.j]
		lo, hi := sp.lo, sp.hi
		data, grad, mb, vb := j.p.Data[lo:hi], j.p.Grad[lo:hi], j.s.bufs[0][lo:hi], j.s.bufs[1][lo:hi]
		if j.s.elemStep == nil {
			adamUniform(data, grad, mb, vb, &j.k, j.bc1, j.bc2)
			return
		}
		var keep []bool
		if j.keep != nil {
			keep = j.keep[lo:hi]
		}
		adamElems(data, grad, mb, vb, keep, j.s.elemStep[lo:hi], &j.k, bc1, bc2)
	})
}

// adamJob is the update of one parameter in one step.
type adamJob struct {
	p        *Param
	s        *slot
	keep     []bool
	k        adamCoef
	bc1, bc2 float64 // bias corrections when s has no per-element counts
}

// adamCoef holds the coefficients of one Adam step of one parameter.
type adamCoef struct {
	lr, b1, b2, eps float64
	l2              float64 // coupled weight decay λ (adam), or 0
	decay           float64 // decoupled decay factor 1 − ηλ (adamw), or 1
}

// adamUniform updates every element, all at the same step count.
func adamUniform(data, grad, m, v []float32, k *adamCoef, bc1, bc2 float64) {
	// Locals, so that the stores into the slices do not force reloads.
	b1, b2, eps, l2, decay := k.b1, k.b2, k.eps, k.l2, k.decay
	step := k.lr / bc1
	data, m, v = data[:len(grad)], m[:len(grad)], v[:len(grad)]
	for j, g32 := range grad {
		θ := float64(data[j])
		g := float64(g32)
		if l2 != 0 {
			g += float64(l2 * θ)
		}
		θ = float64(θ * decay)
		mj := float32(float64(b1*float64(m[j])) + float64((1-b1)*g))
		vj := float32(float64(b2*float64(v[j])) + float64((1-b2)*g*g))
		m[j], v[j] = mj, vj
		denom := math.Sqrt(float64(vj))/bc2 + eps
		data[j] = float32(θ - step*float64(mj)/denom)
	}
}

// adamElems updates the elements that keep selects (all if keep is nil),
// each at its own step count, incremented here.
func adamElems(data, grad, m, v []float32, keep []bool, count []uint32, k *adamCoef, bc1, bc2 []float64) {
	lr, b1, b2, eps, l2, decay := k.lr, k.b1, k.b2, k.eps, k.l2, k.decay
	data, m, v, count = data[:len(grad)], m[:len(grad)], v[:len(grad)], count[:len(grad)]
	for j, g32 := range grad {
		if keep != nil && !keep[j] {
			continue
		}
		count[j]++
		t := count[j]
		c1, c2 := 0.0, 0.0
		if int(t) < len(bc1) {
			c1, c2 = bc1[t], bc2[t]
		} else {
			c1, c2 = correction(b1, b2, int64(t))
		}
		step := lr / c1
		θ := float64(data[j])
		g := float64(g32)
		if l2 != 0 {
			g += float64(l2 * θ)
		}
		θ = float64(θ * decay)
		mj := float32(float64(b1*float64(m[j])) + float64((1-b1)*g))
		vj := float32(float64(b2*float64(v[j])) + float64((1-b2)*g*g))
		m[j], v[j] = mj, vj
		denom := math.Sqrt(float64(vj))/c2 + eps
		data[j] = float32(θ - step*float64(mj)/denom)
	}
}

// State implements Optimizer.
func (o *Adam) State() *State { return exportState(o.name, o.slots, adamBuffers) }

// SetState implements Optimizer.
func (o *Adam) SetState(s *State) error { return importState(o.name, o.slots, adamBuffers, s) }

// Bytes implements Optimizer.
func (o *Adam) Bytes() int64 { return slotBytes(o.slots) }
