// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

package nn

import "golang.org/x/sys/cpu"

//go:generate go run gemm_short_gen.go

// The assembly kernels of gemm_amd64.s. Strides are in elements; the
// pointers address A(0, 0), B(0, 0) and C(0, 0) of the tile.
//
//go:noescape
func gemm6x16AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm6x32AVX512(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// The short kernels of gemm_short_amd64.s (written by gemm_short_gen.go):
// tiles of 1 to 5 rows.
//
//go:noescape
func gemm1x16AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm2x16AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm3x16AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm4x16AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm5x16AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm1x32AVX512(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm2x32AVX512(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm3x32AVX512(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm4x32AVX512(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm5x32AVX512(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// The narrow kernels of gemm_short_amd64.s: tiles of 1 to 6 rows and 8
// columns.
//
//go:noescape
func gemm1x8AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm2x8AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm3x8AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm4x8AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm5x8AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func gemm6x8AVX2(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

// gemmAsm is the signature of the assembly kernels.
type gemmAsm func(k int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, alpha, beta float32)

var (
	gemmShortAVX2   = [gemmMR]gemmAsm{nil, gemm1x16AVX2, gemm2x16AVX2, gemm3x16AVX2, gemm4x16AVX2, gemm5x16AVX2}
	gemmShortAVX512 = [gemmMR]gemmAsm{nil, gemm1x32AVX512, gemm2x32AVX512, gemm3x32AVX512, gemm4x32AVX512, gemm5x32AVX512}
	gemmShortAVX2x8 = [gemmMR]gemmAsm{nil, gemm1x8AVX2, gemm2x8AVX2, gemm3x8AVX2, gemm4x8AVX2, gemm5x8AVX2}

	// gemmAVX2x8 is the narrow companion of gemmAVX2 (and, through it,
	// of gemmAVX512): panels of at most 8 columns take half the work of
	// a 16-column tile, and are stored directly rather than through the
	// scratch tile.
	gemmAVX2x8 = gemmKernel{name: "avx2x8", nr: 8, run: func(k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		gemm6x8AVX2(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta)
	}, short: func(rows, k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		gemmShortAVX2x8[rows](k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta)
	}}
	gemmAVX2 = gemmKernel{name: "avx2", nr: 16, narrow: &gemmAVX2x8, run: func(k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		gemm6x16AVX2(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta)
	}, short: func(rows, k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		gemmShortAVX2[rows](k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta)
	}}
	gemmAVX512 = gemmKernel{name: "avx512", nr: 32, narrow: &gemmAVX2, run: func(k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		gemm6x32AVX512(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta)
	}, short: func(rows, k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
		gemmShortAVX512[rows](k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta)
	}}
)

// gemmKernels lists the kernels this CPU runs, the preferred one first.
func gemmKernels() []gemmKernel {
	var ks []gemmKernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, gemmAVX512)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, gemmAVX2)
	}
	return append(ks, gemmGo)
}

//go:noescape
func gemmPackT8AVX2(dst *float32, ldd int, src *float32, lds int, n8 int)

// gemmPackT8 transposes the 8×(8·n8) block of src (row stride lds) into
// dst (row stride ldd) with AVX2 where the CPU has it and reports whether
// it did.
func gemmPackT8(dst []float32, ldd int, src []float32, lds int, n8 int) bool {
	if !cpu.X86.HasAVX2 || n8 == 0 {
		return false
	}
	_ = src[7*lds+8*n8-1]
	_ = dst[(8*n8-1)*ldd+7]
	gemmPackT8AVX2(&dst[0], ldd, &src[0], lds, n8)
	return true
}

// fmaPeakAVX512 and fmaPeakAVX2 run n rounds of independent fused
// multiply-adds (768 and 96 a round): BenchmarkPeak's measure of the
// machine's peak.
//
//go:noescape
func fmaPeakAVX512(n int)

//go:noescape
func fmaPeakAVX2(n int)

// addChain runs n rounds of 8 dependent integer additions: one cycle each,
// so BenchmarkPeak/clock measures the core's clock while it runs.
//
//go:noescape
func addChain(n int)
