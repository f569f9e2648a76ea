// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Backend is the kernel layer: the dense products that dominate training.
// Layers call only these methods, so a GPU implementation can replace the CPU
// one without touching them.
//
// Gemm computes C = α·op(A)·op(B) + β·C for row-major matrices, where op(X) is
// X or Xᵀ as tA and tB say, op(A) is m×k, op(B) is k×n and C is m×n; lda, ldb
// and ldc are the row strides. An implementation must give the same bits for
// the same inputs whatever the number of threads (partition work by output
// blocks, never reduce in completion order).
type Backend interface {
	Gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// CPU is the default backend: gonum's pure-Go BLAS (assembly kernels for the
// inner loops on amd64 and arm64). Its Sgemm splits large products into
// output blocks, each summed over k in a fixed order by one goroutine, so its
// results do not depend on GOMAXPROCS.
type CPU struct{}

var _ Backend = CPU{}

var cpuBLAS gonum.Implementation

// Gemm implements Backend.
func (CPU) Gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	if k == 0 {
		// gonum rejects k = 0 with lda < 1; C = β·C is the answer.
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
		return
	}
	cpuBLAS.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// kernels is the backend every layer uses. It is set once, before any model
// runs, by SetBackend.
var kernels Backend = CPU{}

// SetBackend makes b the backend of every layer in the package. It must be
// called before any computation starts; it is not safe to call concurrently
// with training. A nil b restores the CPU backend.
func SetBackend(b Backend) {
	if b == nil {
		b = CPU{}
	}
	kernels = b
}
