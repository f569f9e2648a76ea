// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Param is one trainable tensor as an optimizer sees it.
type Param struct {
	// Name identifies the parameter; it is unique among the parameters of
	// one optimizer and names its state in checkpoints.
	Name string
	// Data holds the values, updated in place by Step.
	Data []float32
	// Grad holds the gradient to apply; it has the length of Data. Step only
	// reads it.
	Grad []float32
	// LRScale multiplies the learning rate for this parameter (a parameter
	// group with its own learning rate, such as a classifier head). If
	// LRScale is 0, it is defaulted to 1.
	LRScale float64
	// NoDecay exempts this parameter from weight decay (biases and norms,
	// by the usual convention).
	NoDecay bool
}

// Mask selects the parameters, or the elements of parameters, that take
// part in one step. A nil *Mask selects everything. Step panics if a
// non-nil Params or Elems[i] has the wrong length.
type Mask struct {
	// Params[i] false leaves params[i] out of the step. If Params is nil,
	// every parameter takes part.
	Params []bool
	// Elems[i], if not nil, has the length of params[i].Data and selects
	// the elements of params[i] that take part, when params[i] does. If
	// Elems or Elems[i] is nil, all elements of a selected parameter take
	// part.
	Elems [][]bool
	// Reset resets the optimizer state of whatever is left out to that of
	// a fresh optimizer (zero moments, zero step count), instead of keeping
	// it. Values left out are never changed.
	Reset bool
}

// param reports whether parameter i takes part.
func (m *Mask) param(i int) bool { return m == nil || m.Params == nil || m.Params[i] }

// elems returns the element mask of parameter i, or nil for all elements.
func (m *Mask) elems(i int) []bool {
	if m == nil || m.Elems == nil {
		return nil
	}
	return m.Elems[i]
}

func (m *Mask) reset() bool { return m != nil && m.Reset }

// RowMask returns an element mask for a row-major tensor whose rows have
// rowLen elements, selecting the elements of the rows i with rows[i] true
// (SPARTA's row groups: an output neuron or output filter). RowMask panics
// if rowLen is not positive.
func RowMask(rows []bool, rowLen int) []bool {
	if rowLen <= 0 {
		panic("optim: non-positive row length")
	}
	m := make([]bool, len(rows)*rowLen)
	for i, keep := range rows {
		if keep {
			for j := i * rowLen; j < (i+1)*rowLen; j++ {
				m[j] = true
			}
		}
	}
	return m
}

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step applies one update with learning rate lr to the parameters and
	// elements that m selects (nil: all). params must be the parameters
	// the optimizer was built with, in the same order, with the same
	// lengths; Step panics if not, if a Grad has another length than its
	// Data, or if lr is negative or not finite.
	Step(params []Param, lr float64, m *Mask)
	// State returns a deep copy of the optimizer's state.
	State() *State
	// SetState replaces the optimizer's state by a deep copy of s. It
	// returns an error, leaving the state unchanged, if s was made by
	// another kind of optimizer or for other parameters.
	SetState(s *State) error
	// Bytes returns the number of bytes of optimizer state now allocated.
	Bytes() int64
}

// Momentumer is an Optimizer whose momentum can change between steps, as a
// one-cycle schedule asks (PyTorch cycles SGD's momentum and Adam's β₁).
type Momentumer interface {
	// SetMomentum sets the momentum used from the next step on: μ for SGD,
	// β₁ for Adam. It panics unless 0 ≤ μ < 1.
	SetMomentum(mu float64)
}

// Settings holds the hyperparameters of an optimizer. A nil *Settings means
// the zero value, whose fields give the defaults.
type Settings struct {
	// Momentum is SGD's momentum μ; 0 (the default) is plain SGD. Adam
	// ignores it. 0 ≤ Momentum < 1.
	Momentum float64
	// Nesterov makes SGD use Nesterov momentum; it needs Momentum > 0.
	Nesterov bool
	// Beta1 and Beta2 are Adam's decay rates for the first and second
	// moment estimates, in (0, 1). If 0, they are defaulted to 0.9 and
	// 0.999 (Kingma & Ba).
	Beta1, Beta2 float64
	// Eps is Adam's ε, added to √v̂. If 0, it is defaulted to 1e-8.
	Eps float64
	// WeightDecay λ ≥ 0; 0 (the default) means none. For sgd and adam it is
	// an L2 penalty added to the gradient, g ← g + λθ; for adamw it is
	// decoupled, θ ← θ(1 − η·λ) with η the step's learning rate, as in
	// PyTorch (whose AdamW default is 0.01: set it explicitly).
	WeightDecay float64
}

func (s *Settings) withDefaults() Settings {
	var v Settings
	if s != nil {
		v = *s
	}
	if v.Beta1 == 0 {
		v.Beta1 = 0.9
	}
	if v.Beta2 == 0 {
		v.Beta2 = 0.999
	}
	if v.Eps == 0 {
		v.Eps = 1e-8
	}
	return v
}

func (s *Settings) check() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !(s.Momentum >= 0 && s.Momentum < 1):
		return fmt.Errorf("optim: momentum is %v, must be in [0, 1)", s.Momentum)
	case s.Nesterov && s.Momentum == 0:
		return fmt.Errorf("optim: Nesterov momentum needs momentum > 0")
	case !(s.Beta1 > 0 && s.Beta1 < 1):
		return fmt.Errorf("optim: beta1 is %v, must be in (0, 1)", s.Beta1)
	case !(s.Beta2 > 0 && s.Beta2 < 1):
		return fmt.Errorf("optim: beta2 is %v, must be in (0, 1)", s.Beta2)
	case !(s.Eps > 0) || !finite(s.Eps):
		return fmt.Errorf("optim: eps is %v, must be positive and finite", s.Eps)
	case !(s.WeightDecay >= 0) || !finite(s.WeightDecay):
		return fmt.Errorf("optim: weight decay is %v, must be non-negative and finite", s.WeightDecay)
	}
	return nil
}

// optimizers is the registry of optimizers by name.
var optimizers = map[string]func(params []Param, s Settings) Optimizer{
	"sgd":   func(params []Param, s Settings) Optimizer { return newSGD(params, s) },
	"adam":  func(params []Param, s Settings) Optimizer { return newAdam("adam", params, s, false) },
	"adamw": func(params []Param, s Settings) Optimizer { return newAdam("adamw", params, s, true) },
}

// Names returns the names of the registered optimizers, sorted.
func Names() []string {
	names := make([]string, 0, len(optimizers))
	for name := range optimizers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// New returns the optimizer called name for params, with settings s (nil
// for the defaults). Only the names and lengths of params are used here. New
// returns an error for an unknown name, bad settings, or parameter names that
// are empty or repeated.
func New(name string, params []Param, s *Settings) (Optimizer, error) {
	ctor, ok := optimizers[name]
	if !ok {
		return nil, fmt.Errorf("optim: unknown optimizer %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	set := s.withDefaults()
	if err := set.check(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(params))
	for i, p := range params {
		if p.Name == "" {
			return nil, fmt.Errorf("optim: parameter %d has no name", i)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("optim: parameter name %q appears twice", p.Name)
		}
		seen[p.Name] = true
		if !(p.LRScale >= 0) || math.IsInf(p.LRScale, 0) {
			return nil, fmt.Errorf("optim: parameter %q: learning-rate scale is %v, must be non-negative and finite", p.Name, p.LRScale)
		}
	}
	return ctor(params, set), nil
}

// slot is the state of one parameter.
type slot struct {
	name string
	n    int
	// step counts the steps the parameter took part in.
	step int64
	// elemStep counts, per element, the steps the element took part in; it
	// is nil while every element has taken part in step steps.
	elemStep []uint32
	// bufs holds the moment buffers, each nil until first used.
	bufs [][]float32
}

func newSlots(params []Param, nbuf int) []slot {
	s := make([]slot, len(params))
	for i, p := range params {
		s[i] = slot{name: p.Name, n: len(p.Data), bufs: make([][]float32, nbuf)}
	}
	return s
}

// checkStep panics if params, lr or m do not fit the slots.
func checkStep(slots []slot, params []Param, lr float64, m *Mask) {
	if len(params) != len(slots) {
		panic("optim: parameter count mismatch")
	}
	for i := range params {
		p := &params[i]
		if p.Name != slots[i].name || len(p.Data) != slots[i].n {
			panic("optim: parameters differ from those the optimizer was built with")
		}
		if len(p.Grad) != len(p.Data) {
			panic("optim: gradient length mismatch")
		}
	}
	if !(lr >= 0) || math.IsInf(lr, 0) {
		panic("optim: learning rate negative or not finite")
	}
	if m == nil {
		return
	}
	if m.Params != nil && len(m.Params) != len(params) {
		panic("optim: mask length mismatch")
	}
	if m.Elems != nil {
		if len(m.Elems) != len(params) {
			panic("optim: mask length mismatch")
		}
		for i, e := range m.Elems {
			if e != nil && len(e) != len(params[i].Data) {
				panic("optim: mask length mismatch")
			}
		}
	}
}

// lrScale returns p's learning-rate multiplier.
func lrScale(p *Param) float64 {
	if p.LRScale == 0 {
		return 1
	}
	return p.LRScale
}

// resetAll resets the whole state of s.
func (s *slot) resetAll() {
	s.step = 0
	s.elemStep = nil
	for _, b := range s.bufs {
		clear(b)
	}
}

// resetElems resets the state of the elements of s that keep excludes.
func (s *slot) resetElems(keep []bool) {
	for _, b := range s.bufs {
		if b == nil {
			continue
		}
		for j, k := range keep {
			if !k {
				b[j] = 0
			}
		}
	}
	if s.elemStep != nil {
		for j, k := range keep {
			if !k {
				s.elemStep[j] = 0
			}
		}
	}
}

// materialize starts per-element step counts for s.
func (s *slot) materialize() {
	if s.elemStep != nil {
		return
	}
	if s.step > math.MaxUint32 {
		panic("optim: step count overflow")
	}
	s.elemStep = make([]uint32, s.n)
	for j := range s.elemStep {
		s.elemStep[j] = uint32(s.step)
	}
}

func slotBytes(slots []slot) int64 {
	var n int64
	for _, s := range slots {
		for _, b := range s.bufs {
			n += 4 * int64(len(b))
		}
		n += 4 * int64(len(s.elemStep))
	}
	return n
}
