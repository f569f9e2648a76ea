// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestClipEdgeCases checks the bound ‖g_k‖ ≤ C_k on inputs the random trials
// of TestClip do not reach: non-finite elements and subnormal values that
// no float32 factor below 1 can shrink.
func TestClipEdgeCases(t *testing.T) {
	t.Parallel()
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	u := float32(math.SmallestNonzeroFloat32)
	for _, tc := range []struct {
		desc string
		g    []float32
		rule ClipRule
	}{
		{"infinite element", []float32{inf, 1, 2}, Flat(1)},
		{"NaN element", []float32{0.5, nan}, Flat(1)},
		{"NaN in one part", []float32{nan, 3, 4, 0.1}, ClipRule{Part: []int32{0, 1, 1, 0}, C: []float64{1, 1}}},
		// 8 ulps of the smallest subnormal scaled by 7.5/8 rounds back to
		// 8 ulps, and 8·(1−2⁻²²) too: the nudge must still shrink it.
		{"subnormal", []float32{8 * u}, Flat(7.5 * math.SmallestNonzeroFloat32)},
		{"subnormal parts", []float32{8 * u, 1, 8 * u}, ClipRule{Part: []int32{0, 1, 0}, C: []float64{11 * math.SmallestNonzeroFloat32, 0.5}}},
	} {
		done := make(chan []float64, 1)
		g := append([]float32(nil), tc.g...)
		go func() { done <- Clip(g, tc.rule) }()
		var pre []float64
		select {
		case pre = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Clip does not return", tc.desc)
		}
		for k, n := range Norms(g, tc.rule) {
			if !(n <= tc.rule.C[k]) {
				t.Errorf("%s: part %d has norm %v after clipping, bound %v (before: %v)", tc.desc, k, n, tc.rule.C[k], pre[k])
			}
		}
		if tc.desc == "NaN in one part" {
			// The finite part is clipped as usual, the other zeroed.
			if !math.IsNaN(pre[0]) || g[0] != 0 || g[3] != 0 || math.Abs(Norm(g[1:3])-1) > 1e-6 {
				t.Errorf("%s: got %v with norms %v", tc.desc, g, pre)
			}
		}
	}
	if ok, msg := panics(func() { Clip([]float32{1, 2}, ClipRule{Part: []int32{0, 2}, C: []float64{1, 1}}) }); !ok || msg != errClip.Error() {
		t.Errorf("part index out of range: panicked %v with %q, want %q", ok, msg, errClip)
	}
}

// TestClipLong checks the bound on long gradients, where the float32
// rounding of the rescaled elements adds up over many terms, for flat,
// two-part and many-part (per-layer) rules and bounds from 1e-6 to 1e3.
func TestClipLong(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(81, 81))
	const n = 50000
	for trial := range 40 {
		g := make([]float32, n)
		sc := math.Pow(10, rng.Float64()*8-4)
		for i := range g {
			g[i] = float32(rng.NormFloat64() * sc)
		}
		var rule ClipRule
		switch trial % 3 {
		case 0:
			rule = Flat(math.Pow(10, rng.Float64()*9-6))
		case 1:
			mask := make([]float32, n)
			for i := range mask {
				mask[i] = float32(rng.IntN(2))
			}
			rule = MaskParts(mask, math.Pow(10, rng.Float64()*9-6), math.Pow(10, rng.Float64()*9-6))
		default:
			rule.Part = make([]int32, n)
			rule.C = make([]float64, 17)
			for k := range rule.C {
				rule.C[k] = math.Pow(10, rng.Float64()*9-6)
			}
			for i := range rule.Part {
				rule.Part[i] = int32(i*17/n) - 1 // part −1 is dropped
			}
		}
		pre := Clip(g, rule)
		for k, nk := range Norms(g, rule) {
			if nk > rule.C[k] {
				t.Fatalf("trial %d: part %d norm %v > C = %v", trial, k, nk, rule.C[k])
			}
			if pre[k] > rule.C[k] && nk < rule.C[k]*(1-1e-6) {
				t.Errorf("trial %d: part %d clipped to %v, want C = %v", trial, k, nk, rule.C[k])
			}
		}
	}
}

func TestSumEmpty(t *testing.T) {
	t.Parallel()
	// An empty batch sums to zero, whatever dst held before.
	dst := []float32{1, 2, 3}
	if got := Sum(dst, nil); len(got) != 3 || got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Errorf("Sum of no vectors into %v: %v", []float32{1, 2, 3}, got)
	}
	if got := Sum(nil, nil); got != nil {
		t.Errorf("Sum(nil, nil) = %v", got)
	}
}
