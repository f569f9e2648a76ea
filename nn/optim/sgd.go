// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

// SGD is stochastic gradient descent with optional momentum, Nesterov
// momentum and L2 weight decay, in PyTorch's form (dampening 0). For each
// element, with learning rate η, momentum μ and weight decay λ:
//
//	g ← g + λθ
//	b ← μb + g                 (b starts at 0, so the first b is g)
//	g ← g + μb if Nesterov, else g ← b
//	θ ← θ − ηg
//
// With μ = 0 there is no buffer and the step is θ ← θ − η(g + λθ).
type SGD struct {
	mu, wd   float64
	nesterov bool
	slots    []slot

	jobs  []sgdJob
	sched scheduler
}

var (
	_ Optimizer  = (*SGD)(nil)
	_ Momentumer = (*SGD)(nil)
)

var sgdBuffers = []string{"momentum_buffer"}

func newSGD(params []Param, s Settings) *SGD {
	return &SGD{mu: s.Momentum, wd: s.WeightDecay, nesterov: s.Nesterov, slots: newSlots(params, len(sgdBuffers))}
}

// SetMomentum sets μ for the following steps. It panics unless 0 ≤ μ < 1,
// or if μ = 0 with Nesterov momentum.
func (o *SGD) SetMomentum(mu float64) {
	if !(mu >= 0 && mu < 1) || (o.nesterov && mu == 0) {
		panic("optim: invalid momentum")
	}
	o.mu = mu
}

// Step implements Optimizer.
func (o *SGD) Step(params []Param, lr float64, m *Mask) {
	checkStep(o.slots, params, lr, m)
	o.jobs = o.jobs[:0]
	for i := range params {
		p, s := &params[i], &o.slots[i]
		if !m.param(i) {
			if m.reset() {
				s.resetAll()
			}
			continue
		}
		keep := m.elems(i)
		if keep != nil && m.reset() {
			s.resetElems(keep)
		}
		s.step++ // SGD has no bias correction, so no per-element counts.
		job := sgdJob{p: p, keep: keep, eta: lr * lrScale(p), wd: o.wd}
		if p.NoDecay {
			job.wd = 0
		}
		if o.mu != 0 {
			if s.bufs[0] == nil {
				s.bufs[0] = make([]float32, s.n)
			}
			job.buf = s.bufs[0]
		}
		o.jobs = append(o.jobs, job)
		o.sched.add(len(o.jobs)-1, s.n)
	}
	defer clear(o.jobs) // do not retain the caller's slices
	o.sched.run(func(sp span) {
		j := &o.jobs[sp.j]
		lo, hi := sp.lo, sp.hi
		var keep []bool
		if j.keep != nil {
			keep = j.keep[lo:hi]
		}
		if j.buf == nil {
			sgdPlain(j.p.Data[lo:hi], j.p.Grad[lo:hi], keep, j.eta, j.wd)
			return
		}
		sgdMomentum(j.p.Data[lo:hi], j.p.Grad[lo:hi], j.buf[lo:hi], keep, j.eta, j.wd, o.mu, o.nesterov)
	})
}

// sgdJob is the update of one parameter in one step.
type sgdJob struct {
	p       *Param
	keep    []bool
	buf     []float32 // momentum buffer, nil without momentum
	eta, wd float64
}

func sgdPlain(data, grad []float32, keep []bool, eta, wd float64) {
	for j, g32 := range grad {
		if keep != nil && !keep[j] {
			continue
		}
		θ := float64(data[j])
		data[j] = float32(θ - float64(eta*(float64(g32)+float64(wd*θ))))
	}
}

func sgdMomentum(data, grad, buf []float32, keep []bool, eta, wd, mu float64, nesterov bool) {
	for j, g32 := range grad {
		if keep != nil && !keep[j] {
			continue
		}
		θ := float64(data[j])
		g := float64(g32) + float64(wd*θ)
		b := float64(float32(float64(mu*float64(buf[j])) + g))
		buf[j] = float32(b)
		if nesterov {
			g += float64(mu * b)
		} else {
			g = b
		}
		data[j] = float32(θ - float64(eta*g))
	}
}

// State implements Optimizer.
func (o *SGD) State() *State { return exportState("sgd", o.slots, sgdBuffers) }

// SetState implements Optimizer.
func (o *SGD) SetState(s *State) error { return importState("sgd", o.slots, sgdBuffers, s) }

// Bytes implements Optimizer.
func (o *SGD) Bytes() int64 { return slotBytes(o.slots) }
