// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// setWorkers fixes the number of goroutines of opt's steps.
func setWorkers(opt Optimizer, w int) {
	switch o := opt.(type) {
	case *SGD:
		o.sched.workers = w
	case *Adam:
		o.sched.workers = w
	default:
		panic(fmt.Sprintf("unknown optimizer %T", opt))
	}
}

// TestWorkersDoNotChangeResults checks that steps large enough to run in
// parallel give the same bits on 1, 2 and 7 goroutines, with masks and
// resets, for every optimizer.
func TestWorkersDoNotChangeResults(t *testing.T) {
	t.Parallel()
	sizes := []int{minParallel + 12345, 3*chunkLen + 7, 5}
	mk := func() []Param {
		rng := rand.New(rand.NewPCG(12, 12))
		ps := make([]Param, len(sizes))
		for i, n := range sizes {
			ps[i] = Param{Name: fmt.Sprint("p", i), Data: make([]float32, n), Grad: make([]float32, n)}
			for j := range ps[i].Data {
				ps[i].Data[j] = float32(rng.NormFloat64())
			}
		}
		return ps
	}
	for _, name := range Names() {
		var runs [][]Param
		for _, w := range []int{1, 2, 7} {
			ps := mk()
			opt, err := New(name, ps, allSettings[name])
			if err != nil {
				t.Fatal(err)
			}
			setWorkers(opt, w)
			rng := rand.New(rand.NewPCG(13, 13))
			for s := range 4 {
				fillGrads(rng, ps)
				elems := make([]bool, sizes[1])
				for j := range elems {
					elems[j] = (j+s)%4 != 0
				}
				opt.Step(ps, 0.01, &Mask{Params: []bool{true, true, s%2 == 0}, Elems: [][]bool{nil, elems, nil}, Reset: s == 3})
			}
			runs = append(runs, ps)
		}
		for r := 1; r < len(runs); r++ {
			for i := range sizes {
				if !bitsEqual(runs[0][i].Data, runs[r][i].Data) {
					t.Errorf("%s: parameter %d differs between 1 goroutine and run %d", name, i, r)
				}
			}
		}
	}
}
