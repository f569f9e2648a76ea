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
// BenchmarkPeak/clock measures the core's clock with a chain of dependent
// integer additions (one cycle each) and reports it as GHz of process CPU
// time, a check of the FMA rows: a core with two FMA units of 8 float32
// lanes (AVX2 on AMD Zen 3, Intel Haswell to Alder Lake) peaks at 32
// operations per cycle.
func BenchmarkPeak(b *testing.B) {
	const rounds = 1 << 16
	b.Run("clock", func(b *testing.B) {
		cpu := startCPU(b)
		for b.Loop() {
			addChain(rounds)
		}
		cpu.stop(b)
		if t, ok := processCPU(); ok && cpu.ok && t > cpu.start {
			b.ReportMetric(8*rounds*float64(b.N)/(t-cpu.start).Seconds()/1e9, "GHz")
		}
	})
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
