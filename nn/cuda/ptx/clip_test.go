// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// scaleRow is the Go twin of kernels.cu's scale_rows on one row: the
// element rule the kernel applies with factor f.
func scaleRow(g []float32, f float32, nudge bool) {
	for j, v := range g {
		switch {
		case f == 0:
			g[j] = 0
		case f == 1:
		default:
			s := v * f
			if nudge && s == v {
				s = math.Nextafter32(v, 0)
			}
			g[j] = s
		}
	}
}

// clipRow is the clipping of nn/cuda's DPSGDStep on one row, with the
// norms in float64 (sumsq_rows sums in another order, which this twin
// does not model).
func clipRow(g []float32, c float64) float64 {
	norm := nn.Norm(g)
	scaleRow(g, ClipFactor(norm, c), false)
	for nn.Norm(g) > c {
		scaleRow(g, NudgeFactor, true)
	}
	return norm
}

// TestClipMatchesCPU checks the host half of the device's clipping
// (ClipFactor, NudgeFactor) with the kernels' element rule against nn.Clip,
// the reference: the same bits and norms for gradients below, at and above
// the bound, tiny ones (subnormal elements, where only the nudge can
// shrink them), and non-finite ones.
func TestClipMatchesCPU(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var cases [][]float32
	for _, s := range []float64{1e-3, 0.5, 1, 3, 1e4} {
		g := make([]float32, 257)
		for j := range g {
			g[j] = float32(s * rng.NormFloat64() / 16)
		}
		cases = append(cases, g)
	}
	sub := make([]float32, 9)
	for j := range sub {
		sub[j] = math.Float32frombits(uint32(1 + j)) // subnormals
	}
	cases = append(cases, sub, []float32{1, float32(math.NaN()), 2}, []float32{float32(math.Inf(-1)), 0})
	for _, c := range []float64{1, 0.1, 1e-44} {
		for i, g := range cases {
			want, got := slices.Clone(g), slices.Clone(g)
			wn := nn.Clip(want, nn.Flat(c))[0]
			gn := clipRow(got, c)
			if !slices.Equal(math32bits(got), math32bits(want)) || !(gn == wn || math.IsNaN(gn) && math.IsNaN(wn)) {
				t.Errorf("C = %v, case %d: norm %v and %v…, nn.Clip gives %v and %v…", c, i, gn, got[:2], wn, want[:2])
			}
		}
	}
}

func math32bits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}
