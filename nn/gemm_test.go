// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// fma32Big is the independent reference of fma32: x·y + z computed exactly
// with math/big and rounded once to the nearest float32 (ties to even).
func fma32Big(x, y, z float32) float32 {
	bx := new(big.Float).SetPrec(300).SetFloat64(float64(x))
	by := new(big.Float).SetPrec(300).SetFloat64(float64(y))
	bz := new(big.Float).SetPrec(300).SetFloat64(float64(z))
	r := new(big.Float).SetPrec(300).Mul(bx, by)
	r.Add(r, bz)
	f, _ := r.Float32()
	return f
}

// TestFMA32 checks fma32 against exact arithmetic (math/big) on random
// operands, on operands whose float64 sum falls exactly halfway between
// two float32 values (where rounding twice goes wrong), and on results in
// float32's subnormal range.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	check := func(x, y, z float32) {
		t.Helper()
		got, want := fma32(x, y, z), fma32Big(x, y, z)
		if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", x, y, z, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 200000 {
		x := float32(rng.NormFloat64())
		y := float32(rng.NormFloat64())
		z := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30)))
		check(x, y, z)
	}
	// Halfway cases, where rounding twice goes wrong: x·y = 2⁻²⁴ − j²·2⁻⁷⁰
	// with x = 2⁻²⁴(1 + j·2⁻²³) and y = 1 − j·2⁻²³, so for z in [1, 2)
	// the exact sum lies a hair below the midpoint z + 2⁻²⁴ between z and
	// its float32 successor, and float64 rounds it onto the midpoint: with
	// z's last bit 1, ties-to-even would then wrongly round up.
	check(float32(math.Ldexp(1+math.Ldexp(1, -23), -24)), 1-float32(math.Ldexp(1, -23)), 1+float32(math.Ldexp(1, -23)))
	for range 20000 {
		j := float64(1 + rng.IntN(64))
		x := float32(math.Ldexp(1+j*math.Ldexp(1, -23), -24))
		y := float32(1 - j*math.Ldexp(1, -23))
		z := float32(1 + rng.Float64())
		check(x, y, z)
		check(-x, y, -z)
		check(x, -y, z) // far from a midpoint: the fast path
	}
	// Subnormal results.
	for range 20000 {
		x := float32(rng.NormFloat64() * 1e-20)
		y := float32(rng.NormFloat64() * 1e-20)
		z := float32(rng.NormFloat64() * 1e-40)
		check(x, y, z)
	}
	check(float32(math.MaxFloat32), 2, 0)
	check(float32(math.Inf(1)), 1, 1)
	if v := fma32(float32(math.NaN()), 1, 1); v == v {
		t.Errorf("fma32(NaN, 1, 1) = %v, want NaN", v)
	}
}

// gemmNaive is the definition of Gemm's result (gemm.go): for each element
// the fused chain over k, then α and β with separate roundings.
func gemmNaive(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for l := 0; l < k; l++ {
				x, y := gemmAt(a, lda, i, l, tA), gemmAt(b, ldb, l, j, tB)
				s = fma32(x, y, s)
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = float32(alpha*s) + float32(beta*c[i*ldc+j])
			}
		}
	}
}

// gemmAt returns op(X)(i, j) of the row-major matrix x with row stride ld.
func gemmAt(x []float32, ld, i, j int, trans bool) float32 {
	if trans {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

// TestGemmKernels checks every kernel this CPU runs (assembly and pure Go)
// bit for bit against gemmNaive, and gemmNaive against the product in
// float64, on sizes that do and do not fill the tiles, every transpose,
// strides wider than the rows, α and β of several kinds (β = 0 must not
// read C, which holds NaN there; β = 0.3, whose product with C rounds, so
// that a kernel that fuses β·C into the sum fails, where a power of two
// cannot tell), and products large enough to run on several goroutines
// under GOMAXPROCS 1, 2 and 3.
func TestGemmKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	shapes := [][3]int{{1, 1, 1}, {1, 17, 3}, {5, 15, 2}, {6, 16, 1}, {7, 33, 9}, {12, 32, 64}, {13, 31, 17}, {33, 64, 64}, {97, 65, 40}, {200, 130, 170}}
	scal := [][2]float32{{1, 0}, {0.75, -0.5}, {1, 1}, {-2, 0}, {0.75, 0.3}}
	for _, kern := range gemmKernels() {
		for si, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				tA, tB := tr[0], tr[1]
				ab := scal[si%len(scal)]
				desc := fmt.Sprintf("%s %dx%dx%d tA=%v tB=%v α=%v β=%v", kern.name, m, n, k, tA, tB, ab[0], ab[1])
				checkGemm(t, rng, desc, kern, tA, tB, m, n, k, ab[0], ab[1])
			}
		}
	}
}

// checkGemm runs one comparison of TestGemmKernels.
func checkGemm(t *testing.T, rng *rand.Rand, desc string, kern gemmKernel, tA, tB bool, m, n, k int, alpha, beta float32) {
	t.Helper()
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
	if beta == 0 {
		for i := range c0 {
			c0[i] = float32(math.NaN())
		}
	}
	want := slices.Clone(c0)
	gemmNaive(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
	// The definition against float64: the chain of k fused steps is off by
	// a few ulps of √k·max|terms|.
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var d float64
			for l := 0; l < k; l++ {
				x, y := gemmAt(a, lda, i, l, tA), gemmAt(b, ldb, l, j, tB)
				d += float64(x) * float64(y)
			}
			d *= float64(alpha)
			if beta != 0 {
				d += float64(beta) * float64(c0[i*ldc+j])
			}
			if e := math.Abs(float64(want[i*ldc+j]) - d); e > 4e-6*math.Sqrt(float64(k))*4 {
				t.Fatalf("%s: naive C[%d,%d] = %v, float64 %v", desc, i, j, want[i*ldc+j], d)
			}
		}
	}
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		c := slices.Clone(c0)
		gemm(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		runtime.GOMAXPROCS(old)
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(want[i]) && !(c[i] != c[i] && want[i] != want[i]) {
				t.Fatalf("%s GOMAXPROCS %d: C[%d] = %v, want %v (bit for bit)", desc, procs, i, c[i], want[i])
			}
		}
		if m*n*k < gemmParallel {
			break // one goroutine whatever GOMAXPROCS is
		}
	}
}

// TestGemmParallel checks that a product split among goroutines gives
// the bits of the serial kernel, for every kernel this CPU runs.
func TestGemmParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("large products")
	}
	rng := rand.New(rand.NewPCG(21, 3))
	const m, n, k = 250, 150, 120 // 4.5·10⁶ ≥ gemmParallel multiply-adds
	a := randTensor(rng, 1, m*k).Data
	b := randTensor(rng, 1, n*k).Data
	var first []float32
	for _, kern := range gemmKernels() {
		for _, procs := range []int{1, 2, 4} {
			old := runtime.GOMAXPROCS(procs)
			c := make([]float32, m*n)
			gemm(kern, false, true, m, n, k, 1, a, k, b, k, 0, c, n)
			runtime.GOMAXPROCS(old)
			if first == nil {
				first = c
			} else if !slices.Equal(c, first) {
				t.Errorf("%s GOMAXPROCS %d: result differs from the first kernel's", kern.name, procs)
			}
		}
	}
}

// TestGemmShortTiles checks the short kernels (tiles of 1 to 5 rows) bit
// for bit against gemmNaive: each one alone, writing C directly with α
// and β and strides wider than the rows, and through gemm on every number
// of rows left over by the tiles of gemmMR (m = 1…20, and past the first
// row block), every transpose, and panels full, partial and narrow; β
// includes 0.3, whose product with C rounds (see TestGemmKernels).
func TestGemmShortTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for _, kern := range gemmKernels() {
		for _, kk := range []*gemmKernel{&kern, kern.narrow} {
			if kk == nil || kk.short == nil {
				continue
			}
			for rows := 1; rows < gemmMR; rows++ {
				for _, k := range []int{1, 2, 9, 64} {
					nr, lda, ldc := kk.nr, k+3, kk.nr+5
					a := randTensor(rng, 1, rows*lda).Data
					b := randTensor(rng, 1, k*nr).Data
					for _, ab := range [][2]float32{{1, 0}, {0.75, -0.5}, {0.75, 0.3}} {
						c0 := randTensor(rng, 1, rows*ldc).Data
						want := slices.Clone(c0)
						gemmNaive(false, false, rows, nr, k, ab[0], a, lda, b, nr, ab[1], want, ldc)
						c := slices.Clone(c0)
						kk.short(rows, k, a, lda, 1, b, nr, c, ldc, ab[0], ab[1])
						for i := range c {
							if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s short(%d) k=%d α=%v β=%v: C[%d] = %v, want %v (bit for bit)", kk.name, rows, k, ab[0], ab[1], i, c[i], want[i])
							}
						}
					}
				}
			}
		}
		ms := []int{97, 98, 99, 100, 101, 103}
		for m := 1; m <= 20; m++ {
			ms = append(ms, m)
		}
		for i, m := range ms {
			for _, n := range []int{16, 40, 64, 7, 8} {
				for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
					ab := [][2]float32{{1, 0}, {0.75, -0.5}, {0.75, 0.3}}[(i+n)%3]
					k := 1 + (m*n)%37
					desc := fmt.Sprintf("%s %dx%dx%d tA=%v tB=%v α=%v β=%v", kern.name, m, n, k, tr[0], tr[1], ab[0], ab[1])
					checkGemm(t, rng, desc, kern, tr[0], tr[1], m, n, k, ab[0], ab[1])
				}
			}
		}
	}
}

// TestGemmTileRows checks the tiling of a row block: the tiles cover the
// rows exactly, none has more than gemmMR rows, and with short kernels
// none of the last ones has fewer than 3 rows unless the block does.
func TestGemmTileRows(t *testing.T) {
	for _, short := range []bool{false, true} {
		for m := 1; m <= gemmMC; m++ { // the rows of one block
			var tiles []int
			for left := m; left > 0; {
				r := gemmTileRows(left, short)
				if r < 1 || r > gemmMR || r > left {
					t.Fatalf("short=%v m=%d: tile of %d rows with %d left", short, m, r, left)
				}
				tiles = append(tiles, r)
				left -= r
			}
			for i, r := range tiles {
				if r < gemmMR && i < len(tiles)-2 {
					t.Fatalf("short=%v m=%d: tiles %v: a short tile before the last two", short, m, tiles)
				}
				if short && m >= 3 && r < 3 {
					t.Fatalf("short=%v m=%d: tiles %v: a tile of fewer than 3 rows", short, m, tiles)
				}
			}
		}
	}
}
