// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"fmt"

	"github.com/repro-dp/repro/nn/cuda/ptx"
)

// AdamStep applies one Adam (or AdamW) update with coefficients c
// (ptx.NewAdam) to theta from the gradient g, updating the moment buffers
// m and v, on the GPU: the arithmetic of nn/optim's Adam, with its bits.
// theta, m and v are updated in place. It panics if the lengths differ.
func (d *Device) AdamStep(theta, g, m, v []float32, c ptx.Adam) error {
	n := len(theta)
	if len(g) != n || len(m) != n || len(v) != n {
		panic("cuda: AdamStep length mismatch")
	}
	if n == 0 {
		return nil
	}
	l, err := ptx.Elems(n)
	if err != nil {
		return err
	}
	err = d.do(func() error {
		bufs := make([]buffer, 4)
		defer func() {
			for i := range bufs {
				d.free(&bufs[i])
			}
		}()
		for i, x := range [][]float32{theta, g, m, v} {
			var err error
			if bufs[i], err = d.alloc(4 * int64(n)); err != nil {
				return err
			}
			if err := put(bufs[i].ptr, x); err != nil {
				return err
			}
		}
		args := append([]ptx.Arg{p(bufs[0]), p(bufs[1]), p(bufs[2]), p(bufs[3]), ptx.I(n)}, c.Args()...)
		if err := d.launch("adam_step", l, args...); err != nil {
			return err
		}
		for i, x := range [][]float32{theta, nil, m, v} {
			if err := get(x, bufs[i].ptr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: AdamStep: %w", err)
	}
	return nil
}
