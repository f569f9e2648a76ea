// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"fmt"

	"github.com/repro-dp/repro/nn/cuda/ptx"
)

// The forward kernels of the tape's row and elementwise ops, with host
// slices in and out. The tape does not call them yet (its values live in
// host memory); they are here, and checked against the CPU on a device,
// for the device-resident tape to come.

// GELU sets y = x·Φ(x) elementwise. It panics if the lengths differ.
func (d *Device) GELU(y, x []float32) error {
	if len(y) != len(x) {
		panic("cuda: GELU length mismatch")
	}
	if len(x) == 0 {
		return nil
	}
	l, err := ptx.Elems(len(x))
	if err != nil {
		return err
	}
	return d.run("gelu", func(b []buffer) error {
		return d.launch("gelu", l, p(b[0]), p(b[1]), ptx.I(len(x)))
	}, []slot{{in: x}, {out: y}})
}

// Softmax sets each of the rows of y (cols columns) to the softmax of the
// same row of x. It panics if x or y is not rows×cols.
func (d *Device) Softmax(y, x []float32, rows, cols int) error {
	if len(x) != rows*cols || len(y) != rows*cols {
		panic("cuda: Softmax shape mismatch")
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	l, err := ptx.Rows(rows)
	if err != nil {
		return err
	}
	return d.run("softmax_rows", func(b []buffer) error {
		return d.launch("softmax_rows", l, p(b[0]), p(b[1]), ptx.I(rows), ptx.I(cols))
	}, []slot{{in: x}, {out: y}})
}

// LayerNorm sets each row of y to (x − μ)/√(σ² + eps)·g + b over the same
// row of x (rows×cols; g and b have cols elements). It panics on a shape
// mismatch.
func (d *Device) LayerNorm(y, x, g, b []float32, rows, cols int, eps float64) error {
	if len(x) != rows*cols || len(y) != rows*cols || len(g) != cols || len(b) != cols {
		panic("cuda: LayerNorm shape mismatch")
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	l, err := ptx.Rows(rows)
	if err != nil {
		return err
	}
	return d.run("layernorm_rows", func(bs []buffer) error {
		return d.launch("layernorm_rows", l, p(bs[0]), p(bs[1]), p(bs[2]), p(bs[3]), ptx.I(rows), ptx.I(cols), ptx.D(eps))
	}, []slot{{in: x}, {in: g}, {in: b}, {out: y}})
}

// A slot is one operand of run: a host slice copied in, or one copied out.
type slot struct{ in, out []float32 }

// run allocates a device buffer per slot, copies the inputs in, calls
// launch with the buffers, copies the outputs back and frees the buffers.
func (d *Device) run(name string, launch func([]buffer) error, slots []slot) error {
	err := d.do(func() error {
		bufs := make([]buffer, len(slots))
		defer func() {
			for i := range bufs {
				d.free(&bufs[i])
			}
		}()
		for i, s := range slots {
			var err error
			if bufs[i], err = d.alloc(4 * int64(len(s.in)+len(s.out))); err != nil {
				return err
			}
			if err := put(bufs[i].ptr, s.in); err != nil {
				return err
			}
		}
		if err := launch(bufs); err != nil {
			return err
		}
		for i, s := range slots {
			if err := get(s.out, bufs[i].ptr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", name, err)
	}
	return nil
}
