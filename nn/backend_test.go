// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestCPUGemm compares CPU.Gemm with the definition C = α·op(A)·op(B) + β·C
// evaluated in float64, for every transpose combination, strides wider than
// the matrices, shapes that do and do not fill the panels, and a product
// large enough to run its panels concurrently (which must give the same
// bits under GOMAXPROCS 1, 2 and 4).
func TestCPUGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(80, 80))
	for _, s := range [][3]int{{1, 1, 1}, {3, 5, 2}, {29, 384, 96}, {64, 192, 7}, {65, 193, 70}, {130, 400, 65}, {200, 450, 50}} {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				desc := fmt.Sprintf("%dx%dx%d tA=%v tB=%v", m, n, k, tA, tB)
				ar, ac := m, k
				if tA {
					ar, ac = k, m
				}
				br, bc := k, n
				if tB {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+3, bc+1, n+2
				a := randTensor(rng, 1, ar*lda).Data
				b := randTensor(rng, 1, br*ldb).Data
				c0 := randTensor(rng, 1, m*ldc).Data
				const alpha, beta = 0.75, -0.5
				want := make([]float64, m*ldc)
				for i := 0; i < m; i++ {
					for j := 0; j < ldc; j++ {
						want[i*ldc+j] = float64(c0[i*ldc+j])
						if j >= n {
							continue // outside C: untouched
						}
						var d float64
						for l := 0; l < k; l++ {
							var x, y float32
							if tA {
								x = a[l*lda+i]
							} else {
								x = a[i*lda+l]
							}
							if tB {
								y = b[j*ldb+l]
							} else {
								y = b[l*ldb+j]
							}
							d += float64(x) * float64(y)
						}
						want[i*ldc+j] = alpha*d + beta*want[i*ldc+j]
					}
				}
				var first []float32
				for _, procs := range []int{1, 2, 4} {
					old := runtime.GOMAXPROCS(procs)
					c := slices.Clone(c0)
					CPU{}.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					runtime.GOMAXPROCS(old)
					for i, v := range c {
						// float32 sums of k products of N(0,1) values: error
						// a few ulps of √k.
						if math.Abs(float64(v)-want[i]) > 1e-5*math.Sqrt(float64(k))*4 {
							t.Fatalf("%s: C[%d] = %v, want %v", desc, i, v, want[i])
						}
					}
					if first == nil {
						first = c
					} else if !slices.Equal(c, first) {
						t.Errorf("%s: GOMAXPROCS %d changes the result", desc, procs)
					}
				}
			}
		}
	}
}
