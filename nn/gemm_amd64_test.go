// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

package nn

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkPeak measures the peak float32 rate of one core: independent
// fused multiply-adds in registers, 2 floating-point operations each, on
// AVX-512 and AVX2. BenchmarkGemm's GFLOP/s are to be read against it.
func BenchmarkPeak(b *testing.B) {
	const rounds = 1 << 16
	for _, k := range []struct {
		name  string
		ok    bool
		flops float64 // per round
		run   func(int)
	}{
		{"avx512", cpu.X86.HasAVX512F, 2 * 24 * 16, fmaPeakAVX512},
		{"avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA, 2 * 12 * 8, fmaPeakAVX2},
	} {
		if !k.ok {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			cpu := startCPU(b)
			for b.Loop() {
				k.run(rounds)
			}
			cpu.stopFlops(b, k.flops*rounds)
		})
	}
}
