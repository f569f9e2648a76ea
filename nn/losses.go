// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// MeanLosses writes the loss of every sequence of batch under m to out (len
// batch): the mean next-token cross-entropy over the tokens its Loss marks,
// as Loss computes it with the visual transform vt (nil: none), without
// gradients. It computes them on up to workers
// goroutines (0 means GOMAXPROCS), each sequence on its own, so the results
// do not depend on workers. It returns the error of the lowest-indexed
// sequence that fails, and an error for a sequence that marks no token. It
// panics if len(out) != len(batch).
//
// This is the one per-example loss of the project: zeroth-order training,
// membership inference and evaluation all call it.
func MeanLosses(m *TinyMLLM, batch []Sequence, vt VisualTransform, workers int, out []float64) error {
	if len(out) != len(batch) {
		panic("nn: MeanLosses: len(out) != len(batch)")
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(batch)))
	errs := make([]error, len(batch))
	one := func(i int) {
		ls, _, err := m.TokenLosses(&batch[i], nil, vt)
		if err == nil && len(ls) == 0 {
			err = fmt.Errorf("nn: sequence %d marks no loss token", i)
		}
		if err != nil {
			errs[i] = err
			return
		}
		s := 0.0
		for _, l := range ls {
			s += l
		}
		out[i] = s / float64(len(ls))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batch) {
					return
				}
				one(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
