// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/nn/safetensors"
)

// TestCheckpointResume checks that a run stopped after some steps, saved
// through safetensors and resumed into a fresh optimizer continues bit for
// bit like the run that never stopped, for every optimizer, with masked
// steps before and after the checkpoint.
func TestCheckpointResume(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 9))
			ps := randomParams(rng)
			opt, err := New(name, ps, allSettings[name])
			if err != nil {
				t.Fatal(err)
			}
			masks := func(s int) *Mask {
				e := make([]bool, 12)
				for j := range e {
					e[j] = (j+s)%3 != 0
				}
				return &Mask{Params: []bool{true, s%2 == 0, true}, Elems: [][]bool{e, nil, nil}}
			}
			for s := range 5 {
				fillGrads(rng, ps)
				opt.Step(ps, 0.01, masks(s))
			}

			// Save model values and optimizer state in one file.
			var model []safetensors.Tensor
			for _, p := range ps {
				model = append(model, safetensors.Tensor{Name: "model/" + p.Name, Shape: []int{len(p.Data)}, Data: p.Data})
			}
			state, meta := opt.State().Tensors("optim/")
			var buf bytes.Buffer
			if err := safetensors.Encode(&buf, append(model, state...), meta); err != nil {
				t.Fatal(err)
			}

			// Resume into fresh parameters and a fresh optimizer.
			f, err := safetensors.Decode(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			resumed := randomParams(rand.New(rand.NewPCG(100, 100)))
			dst := make([]safetensors.Tensor, len(resumed))
			for i, p := range resumed {
				dst[i] = safetensors.Tensor{Name: "model/" + p.Name, Shape: []int{len(p.Data)}, Data: p.Data}
			}
			if err := f.Filter(func(n string) bool { return strings.HasPrefix(n, "model/") }).Fill(dst); err != nil {
				t.Fatal(err)
			}
			st, err := StateFromFile(f, "optim/")
			if err != nil {
				t.Fatal(err)
			}
			opt2, err := New(name, resumed, allSettings[name])
			if err != nil {
				t.Fatal(err)
			}
			if err := opt2.SetState(st); err != nil {
				t.Fatal(err)
			}
			for s := 5; s < 10; s++ {
				fillGrads(rng, ps)
				for i := range ps {
					copy(resumed[i].Grad, ps[i].Grad)
				}
				opt.Step(ps, 0.01, masks(s))
				opt2.Step(resumed, 0.01, masks(s))
				for i := range ps {
					if !bitsEqual(ps[i].Data, resumed[i].Data) {
						t.Fatalf("step %d parameter %q: resumed run differs", s, ps[i].Name)
					}
				}
			}
		})
	}
}

func TestStateIsACopy(t *testing.T) {
	t.Parallel()
	ps := randomParams(rand.New(rand.NewPCG(10, 10)))
	opt, _ := New("adam", ps, nil)
	opt.Step(ps, 0.1, nil)
	st := opt.State()
	st.Params[0].Buffers[0].Data[0] = 42
	if opt.State().Params[0].Buffers[0].Data[0] == 42 {
		t.Error("State shares its buffers with the optimizer")
	}
	st = opt.State()
	if err := opt.SetState(st); err != nil {
		t.Fatal(err)
	}
	st.Params[0].Buffers[0].Data[0] = 42
	if opt.State().Params[0].Buffers[0].Data[0] == 42 {
		t.Error("SetState keeps the caller's buffers")
	}
}

func TestSetStateErrors(t *testing.T) {
	t.Parallel()
	ps := randomParams(rand.New(rand.NewPCG(11, 11)))
	opt, _ := New("adam", ps, nil)
	opt.Step(ps, 0.1, &Mask{Elems: [][]bool{make([]bool, 12), nil, nil}})
	for _, tc := range []struct {
		desc   string
		change func(s *State)
		msg    string
	}{
		{"other optimizer", func(s *State) { s.Optimizer = "adamw" }, `state of a "adamw" optimizer given to "adam"`},
		{"missing parameter", func(s *State) { s.Params = s.Params[:2] }, "state has 2 parameters"},
		{"unknown parameter", func(s *State) { s.Params[1].Name = "x" }, `unknown parameter "x"`},
		{"parameter twice", func(s *State) { s.Params[1] = s.Params[0] }, "given twice"},
		{"short buffer", func(s *State) { s.Params[2].Buffers[0].Data = s.Params[2].Buffers[0].Data[:1] }, "has 1 values, want 5"},
		{"unknown buffer", func(s *State) { s.Params[2].Buffers[0].Name = "momentum_buffer" }, `unknown buffer "momentum_buffer"`},
		{"one buffer of two", func(s *State) { s.Params[2].Buffers = s.Params[2].Buffers[:1] }, "1 of the 2 buffers"},
		{"negative step", func(s *State) { s.Params[1].Step = -1 }, "step count -1"},
		{"element count above step", func(s *State) { s.Params[0].ElemSteps[3] = 9 }, "element 3 has step count 9"},
		{"short element counts", func(s *State) { s.Params[0].ElemSteps = s.Params[0].ElemSteps[:2] }, "2 element step counts"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			before := opt.State()
			st := opt.State()
			tc.change(st)
			err := opt.SetState(st)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want an error containing %q", err, tc.msg)
			}
			after := opt.State()
			for i := range before.Params {
				if !paramStateEqual(before.Params[i], after.Params[i]) {
					t.Fatal("a failed SetState changed the state")
				}
			}
		})
	}
}

func TestStateFromFileErrors(t *testing.T) {
	t.Parallel()
	decode := func(ts []safetensors.Tensor, meta map[string]string) *safetensors.File {
		var buf bytes.Buffer
		if err := safetensors.Encode(&buf, ts, meta); err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.Decode(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	meta := map[string]string{"o/optimizer": "sgd"}
	step := safetensors.Tensor{Name: "o/w/step", DType: safetensors.I64, Shape: []int{}, Ints: []int64{1}}
	for _, tc := range []struct {
		desc string
		f    *safetensors.File
		msg  string
	}{
		{"no optimizer name", decode([]safetensors.Tensor{step}, nil), `no metadata "o/optimizer"`},
		{"no step", decode([]safetensors.Tensor{{Name: "o/w/momentum_buffer", Shape: []int{1}, Data: []float32{1}}}, meta), `no "o/w/step"`},
		{"float step", decode([]safetensors.Tensor{{Name: "o/w/step", Shape: []int{}, Data: []float32{1}}}, meta), "want I64 []"},
		{"no parameter name", decode([]safetensors.Tensor{{Name: "o/step", DType: safetensors.I64, Shape: []int{}, Ints: []int64{1}}}, meta), "not <parameter>/<entry>"},
		{"matrix buffer", decode([]safetensors.Tensor{step, {Name: "o/w/momentum_buffer", Shape: []int{1, 1}, Data: []float32{1}}}, meta), "want F32 [n]"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := StateFromFile(tc.f, "o/")
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want an error containing %q", err, tc.msg)
			}
		})
	}
	// Parameter names that extend one another with "/" still group right.
	ps := []Param{{Name: "a", Data: make([]float32, 2), Grad: []float32{1, 2}}, {Name: "a/b", Data: make([]float32, 3), Grad: []float32{1, 2, 3}}, {Name: "a.c", Data: make([]float32, 1), Grad: []float32{1}}}
	opt, _ := New("sgd", ps, &Settings{Momentum: 0.5})
	opt.Step(ps, 0.1, nil)
	ts, m := opt.State().Tensors("o/")
	st, err := StateFromFile(decode(ts, m), "o/")
	if err != nil {
		t.Fatal(err)
	}
	opt2, _ := New("sgd", ps, &Settings{Momentum: 0.5})
	if err := opt2.SetState(st); err != nil {
		t.Fatal(err)
	}
	for i, p := range opt2.State().Params {
		if !paramStateEqual(p, opt.State().Params[i]) || !slices.Equal(p.Buffers[0].Data, opt.State().Params[i].Buffers[0].Data) {
			t.Errorf("parameter %q: state differs after the round trip", p.Name)
		}
	}
}
