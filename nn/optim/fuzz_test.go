// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"bytes"
	"testing"

	"github.com/repro-dp/repro/nn/safetensors"
)

// FuzzStateFromFile checks that no checkpoint makes StateFromFile or
// SetState panic, and that a state SetState accepts can be stepped from.
func FuzzStateFromFile(f *testing.F) {
	for _, name := range Names() {
		ps := []Param{{Name: "w", Data: make([]float32, 3), Grad: []float32{1, -2, 3}}, {Name: "w/b", Data: make([]float32, 2), Grad: []float32{1, 1}}}
		opt, _ := New(name, ps, allSettings[name])
		opt.Step(ps, 0.1, &Mask{Elems: [][]bool{{true, false, true}, nil}})
		ts, meta := opt.State().Tensors("o/")
		var buf bytes.Buffer
		if err := safetensors.Encode(&buf, ts, meta); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := safetensors.Decode(b)
		if err != nil {
			return
		}
		st, err := StateFromFile(file, "o/")
		if err != nil {
			return
		}
		for _, name := range Names() {
			ps := []Param{{Name: "w", Data: make([]float32, 3), Grad: []float32{1, -2, 3}}, {Name: "w/b", Data: make([]float32, 2), Grad: []float32{1, 1}}}
			opt, _ := New(name, ps, allSettings[name])
			if opt.SetState(st) == nil {
				opt.Step(ps, 0.1, &Mask{Elems: [][]bool{{false, true, true}, nil}})
				opt.Step(ps, 0.1, nil)
			}
		}
	})
}
