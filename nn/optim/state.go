// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"math"
	"slices"
)

// State is a snapshot of an optimizer's state, for checkpoints.
type State struct {
	// Optimizer is the registry name of the optimizer that made it.
	Optimizer string
	// Params holds one entry per parameter, in the optimizer's order.
	Params []ParamState
}

// ParamState is the state of one parameter.
type ParamState struct {
	Name string
	// Step is the number of steps the parameter took part in.
	Step int64
	// ElemSteps, if not nil, holds per element the number of steps the
	// element took part in; nil means Step for every element.
	ElemSteps []int64
	// Buffers holds the moment buffers allocated so far, in the order of
	// the optimizer's buffer names: "momentum_buffer" for SGD, "exp_avg"
	// and "exp_avg_sq" for Adam (PyTorch's names).
	Buffers []Buffer
}

// Buffer is one named moment buffer.
type Buffer struct {
	Name string
	Data []float32
}

// exportState copies slots into a State.
func exportState(optimizer string, slots []slot, bufNames []string) *State {
	st := &State{Optimizer: optimizer, Params: make([]ParamState, len(slots))}
	for i, s := range slots {
		ps := ParamState{Name: s.name, Step: s.step}
		if s.elemStep != nil {
			ps.ElemSteps = make([]int64, len(s.elemStep))
			for j, c := range s.elemStep {
				ps.ElemSteps[j] = int64(c)
			}
		}
		for k, b := range s.bufs {
			if b != nil {
				ps.Buffers = append(ps.Buffers, Buffer{Name: bufNames[k], Data: slices.Clone(b)})
			}
		}
		st.Params[i] = ps
	}
	return st
}

// importState checks st against slots and, if it fits, copies it into them.
// Parameters are matched by name, so the order of st.Params is free.
func importState(optimizer string, slots []slot, bufNames []string, st *State) error {
	if st.Optimizer != optimizer {
		return fmt.Errorf("optim: state of a %q optimizer given to %q", st.Optimizer, optimizer)
	}
	if len(st.Params) != len(slots) {
		return fmt.Errorf("optim: state has %d parameters, the optimizer %d", len(st.Params), len(slots))
	}
	index := make(map[string]int, len(slots))
	for i, s := range slots {
		index[s.name] = i
	}
	next := make([]slot, len(slots))
	seen := make([]bool, len(slots))
	for _, ps := range st.Params {
		i, ok := index[ps.Name]
		if !ok {
			return fmt.Errorf("optim: state for unknown parameter %q", ps.Name)
		}
		if seen[i] {
			return fmt.Errorf("optim: state for parameter %q given twice", ps.Name)
		}
		seen[i] = true
		s := slot{name: slots[i].name, n: slots[i].n, step: ps.Step, bufs: make([][]float32, len(bufNames))}
		if ps.Step < 0 || ps.Step > math.MaxUint32 {
			return fmt.Errorf("optim: parameter %q: step count %d out of range", ps.Name, ps.Step)
		}
		if ps.ElemSteps != nil {
			if len(ps.ElemSteps) != s.n {
				return fmt.Errorf("optim: parameter %q: %d element step counts, want %d", ps.Name, len(ps.ElemSteps), s.n)
			}
			s.elemStep = make([]uint32, s.n)
			for j, c := range ps.ElemSteps {
				if c < 0 || c > ps.Step {
					return fmt.Errorf("optim: parameter %q: element %d has step count %d, want 0 to %d", ps.Name, j, c, ps.Step)
				}
				s.elemStep[j] = uint32(c)
			}
		}
		for _, b := range ps.Buffers {
			k := slices.Index(bufNames, b.Name)
			if k < 0 {
				return fmt.Errorf("optim: parameter %q: unknown buffer %q for %s", ps.Name, b.Name, optimizer)
			}
			if s.bufs[k] != nil {
				return fmt.Errorf("optim: parameter %q: buffer %q given twice", ps.Name, b.Name)
			}
			if len(b.Data) != s.n {
				return fmt.Errorf("optim: parameter %q: buffer %q has %d values, want %d", ps.Name, b.Name, len(b.Data), s.n)
			}
			s.bufs[k] = slices.Clone(b.Data)
		}
		if n := len(ps.Buffers); n != 0 && n != len(bufNames) {
			return fmt.Errorf("optim: parameter %q: %d of the %d buffers of %s", ps.Name, n, len(bufNames), optimizer)
		}
		next[i] = s
	}
	copy(slots, next)
	return nil
}
