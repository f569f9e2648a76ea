// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"runtime"
	"sync"
	"sync/atomic"

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
// inner loops on amd64 and arm64).
//
// Gemm cuts C into panels of at most 64×192 elements and has gonum compute
// each panel serially, summing over the whole of k in a fixed order; only
// products of at least 2²² multiply-adds run their panels on several
// goroutines. Training already runs one example per goroutine, and the
// products of one example are small: letting gonum split each of them among
// goroutines of its own (which it does from four 64×64 output blocks on, also
// cutting k into blocks of 64) cost about a third more CPU time on them.
// The panels and the order of every sum depend only on the shapes, so the
// results do not depend on GOMAXPROCS.
type CPU struct{}

var _ Backend = CPU{}

var cpuBLAS gonum.Implementation

// Panel sizes of CPU.Gemm: gonum computes a product serially when C has
// fewer than four 64×64 blocks, and 1×3 blocks is the widest such panel.
const (
	gemmPanelRows = 64
	gemmPanelCols = 192
	// gemmParallel is the size m·n·k from which the panels of one product
	// run concurrently.
	gemmParallel = 1 << 22
)

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
	if m <= gemmPanelRows && n <= gemmPanelCols {
		cpuBLAS.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	pr, pc := (m+gemmPanelRows-1)/gemmPanelRows, (n+gemmPanelCols-1)/gemmPanelCols
	panel := func(p int) {
		i, j := p/pc*gemmPanelRows, p%pc*gemmPanelCols
		mi, nj := min(gemmPanelRows, m-i), min(gemmPanelCols, n-j)
		var ai, bj []float32
		if tA {
			ai = a[i:] // A is k×m: columns i…
		} else {
			ai = a[i*lda:]
		}
		if tB {
			bj = b[j*ldb:] // B is n×k: rows j…
		} else {
			bj = b[j:]
		}
		cpuBLAS.Sgemm(ta, tb, mi, nj, k, alpha, ai, lda, bj, ldb, beta, c[i*ldc+j:], ldc)
	}
	w := 1
	if m*n*k >= gemmParallel {
		w = min(runtime.GOMAXPROCS(0), pr*pc)
	}
	if w <= 1 {
		for p := range pr * pc {
			panel(p)
		}
		return
	}
	// nn imports nothing of repro, so this loop is its own rather than
	// internal/parallel.For; it also allocates no per-panel error slice,
	// which matters on every matrix product.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for {
				p := int(next.Add(1) - 1)
				if p >= pr*pc {
					return
				}
				panel(p)
			}
		})
	}
	wg.Wait()
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
