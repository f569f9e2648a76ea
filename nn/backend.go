// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

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

// CPU is the default backend: a register-blocked matrix product in Go
// assembly on amd64 CPUs with AVX2 and FMA (wider tiles where they also
// have AVX-512), and a pure-Go kernel everywhere else; see gemm.go.
//
// Every element of C is one fused-multiply-add chain over k in increasing
// order, whatever the kernel, the tiling and the number of goroutines, so
// the results are the same bit for bit on every CPU and for any
// GOMAXPROCS. Products of at least 2²² multiply-adds run their blocks of C
// on GOMAXPROCS goroutines; smaller ones (all of a training step's, which
// runs one example per goroutine) run on the caller's.
//
// The kernel is chosen at start-up from the CPU's features; the
// environment variable REPRO_GEMM=go (or avx2) forces a narrower one, and
// the build tag purego leaves the assembly out. [GemmKernel] names the one
// in use.
type CPU struct{}

var _ Backend = CPU{}

// Gemm implements Backend. It panics if a slice is too short for its
// matrix or a stride is smaller than its row.
func (CPU) Gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic("nn: negative Gemm dimension")
	}
	if m == 0 || n == 0 {
		return
	}
	checkMatrix("C", m, n, c, ldc)
	if k == 0 || alpha == 0 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(row)
				continue
			}
			for j := range row {
				row[j] *= beta
			}
		}
		return
	}
	if tA {
		checkMatrix("A", k, m, a, lda)
	} else {
		checkMatrix("A", m, k, a, lda)
	}
	if tB {
		checkMatrix("B", n, k, b, ldb)
	} else {
		checkMatrix("B", k, n, b, ldb)
	}
	gemm(gemmUse, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkMatrix panics unless x holds a rows×cols row-major matrix with row
// stride ld.
func checkMatrix(name string, rows, cols int, x []float32, ld int) {
	if ld < cols || len(x) < (rows-1)*ld+cols {
		panic("nn: Gemm matrix " + name + " too short for its shape or stride")
	}
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
