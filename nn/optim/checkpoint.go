// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/repro-dp/repro/nn/safetensors"
)

// Names of a parameter's entries in a checkpoint, after prefix + name + "/".
const (
	stepSuffix     = "step"      // I64 scalar: ParamState.Step
	elemStepSuffix = "elem_step" // I64 [n]: ParamState.ElemSteps
	// Buffers are F32 [n] under their own names.

	// optimizerKey is the metadata key, after prefix, naming the optimizer.
	optimizerKey = "optimizer"
)

// Tensors returns s as safetensors tensors and metadata, every name starting
// with prefix (for example "optim/"): for each parameter p,
// prefix+p+"/step" (I64 scalar), prefix+p+"/elem_step" (I64, when present)
// and prefix+p+"/"+buffer (F32) for each buffer; the metadata maps
// prefix+"optimizer" to s.Optimizer. The tensors share their data with s.
func (s *State) Tensors(prefix string) ([]safetensors.Tensor, map[string]string) {
	var ts []safetensors.Tensor
	for _, p := range s.Params {
		base := prefix + p.Name + "/"
		ts = append(ts, safetensors.Tensor{Name: base + stepSuffix, DType: safetensors.I64, Shape: []int{}, Ints: []int64{p.Step}})
		if p.ElemSteps != nil {
			ts = append(ts, safetensors.Tensor{Name: base + elemStepSuffix, DType: safetensors.I64, Shape: []int{len(p.ElemSteps)}, Ints: p.ElemSteps})
		}
		for _, b := range p.Buffers {
			ts = append(ts, safetensors.Tensor{Name: base + b.Name, DType: safetensors.F32, Shape: []int{len(b.Data)}, Data: b.Data})
		}
	}
	return ts, map[string]string{prefix + optimizerKey: s.Optimizer}
}

// StateFromFile rebuilds the State that Tensors wrote under prefix into f.
// It uses the tensors whose names start with prefix and ignores the others.
// Parameters come out sorted by name; Optimizer.SetState matches them by
// name. StateFromFile returns an error if the optimizer name is missing or a
// tensor is malformed.
func StateFromFile(f *safetensors.File, prefix string) (*State, error) {
	name, ok := f.Metadata[prefix+optimizerKey]
	if !ok {
		return nil, fmt.Errorf("optim: no metadata %q in the checkpoint", prefix+optimizerKey)
	}
	st := &State{Optimizer: name}
	var cur *ParamState
	for _, t := range f.Tensors {
		rest, ok := strings.CutPrefix(t.Name, prefix)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '/')
		if i <= 0 {
			return nil, fmt.Errorf("optim: checkpoint tensor %q is not <parameter>/<entry>", t.Name)
		}
		param, entry := rest[:i], rest[i+1:]
		if cur == nil || cur.Name != param {
			if j := slices.IndexFunc(st.Params, func(p ParamState) bool { return p.Name == param }); j >= 0 {
				// Names sort so that a parameter's entries are adjacent,
				// except when another parameter's name extends it with
				// "/"; find it again.
				cur = &st.Params[j]
			} else {
				st.Params = append(st.Params, ParamState{Name: param, Step: -1})
				cur = &st.Params[len(st.Params)-1]
			}
		}
		switch entry {
		case stepSuffix:
			if t.DType != safetensors.I64 || len(t.Shape) != 0 {
				return nil, fmt.Errorf("optim: checkpoint tensor %q is %s %v, want I64 []", t.Name, t.DType, t.Shape)
			}
			cur.Step = t.Ints[0]
		case elemStepSuffix:
			if t.DType != safetensors.I64 || len(t.Shape) != 1 {
				return nil, fmt.Errorf("optim: checkpoint tensor %q is %s %v, want I64 [n]", t.Name, t.DType, t.Shape)
			}
			cur.ElemSteps = t.Ints
		default:
			if t.DType != safetensors.F32 || len(t.Shape) != 1 {
				return nil, fmt.Errorf("optim: checkpoint tensor %q is %s %v, want F32 [n]", t.Name, t.DType, t.Shape)
			}
			cur.Buffers = append(cur.Buffers, Buffer{Name: entry, Data: t.Data})
		}
	}
	for i := range st.Params {
		if st.Params[i].Step < 0 {
			return nil, fmt.Errorf("optim: checkpoint has no %q", prefix+st.Params[i].Name+"/"+stepSuffix)
		}
	}
	return st, nil
}
