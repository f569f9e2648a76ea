// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/cuda/ptx"
)

// Gemm implements nn.Backend: C = α·op(A)·op(B) + β·C, with the bits of
// nn.CPU.Gemm. A product of fewer than MinGemm multiply-adds, or one
// without multiply-adds (k = 0 or α = 0), runs on the CPU backend; the
// others copy their operands to the GPU, run the sgemm kernel and copy C
// back. It panics, as nn.CPU does, if a slice is too short for its matrix
// or a stride for its row, and with the driver's error if the device
// fails.
func (d *Device) Gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 || alpha == 0 || m*n*k < d.MinGemm {
		nn.CPU{}.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	a = span("A", ar, ac, a, lda)
	b = span("B", br, bc, b, ldb)
	c = span("C", m, n, c, ldc)
	l, err := ptx.Gemm(m, n)
	if err != nil {
		panic("cuda: " + err.Error())
	}
	err = d.do(func() error {
		for i, x := range [][]float32{a, b, c} {
			if err := d.grow(&d.gemm[i], 4*int64(len(x))); err != nil {
				return err
			}
		}
		if err := put(d.gemm[0].ptr, a); err != nil {
			return err
		}
		if err := put(d.gemm[1].ptr, b); err != nil {
			return err
		}
		// C is read for β ≠ 0, and copied back whole: the gaps between
		// its rows (ldc > n) must come back as they were.
		if beta != 0 || ldc != n {
			if err := put(d.gemm[2].ptr, c); err != nil {
				return err
			}
		}
		if err := d.launch("sgemm", l, ptx.I(b2i(tA)), ptx.I(b2i(tB)), ptx.I(m), ptx.I(n), ptx.I(k),
			ptx.F(alpha), p(d.gemm[0]), ptx.I(lda), p(d.gemm[1]), ptx.I(ldb), ptx.F(beta), p(d.gemm[2]), ptx.I(ldc)); err != nil {
			return err
		}
		return get(c, d.gemm[2].ptr)
	})
	if err != nil {
		panic("cuda: Gemm: " + err.Error())
	}
}

// span returns the part of x that holds a rows×cols row-major matrix of
// row stride ld, and panics (as nn.CPU.Gemm does) if x is too short.
func span(name string, rows, cols int, x []float32, ld int) []float32 {
	n := (rows-1)*ld + cols
	if ld < cols || len(x) < n {
		panic("cuda: Gemm matrix " + name + " too short for its shape or stride")
	}
	return x[:n]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
