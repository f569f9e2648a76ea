// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"math"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// TestPrivatizeClip checks clipping, summing and normalising against a
// hand computation with σ = 0, and that a non-finite gradient contributes
// nothing (bounded sensitivity).
func TestPrivatizeClip(t *testing.T) {
	p, err := NewPrivatizer(nn.Flat(1), []float64{0}, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	grads := [][]float32{
		{3, 4},                                 // norm 5: clipped to (0.6, 0.8)
		{0.3, 0.4},                             // norm 0.5: kept
		{float32(math.NaN()), 1},               // non-finite: zero
		{float32(math.Inf(1)), float32(-1e30)}, // non-finite: zero
	}
	dst := make([]float32, 2)
	rep := p.Privatize(dst, grads)
	want := []float64{(0.6 + 0.3) / 4, (0.8 + 0.4) / 4}
	for j := range dst {
		if math.Abs(float64(dst[j])-want[j]) > 1e-7 {
			t.Errorf("dst[%d] = %v, want %v", j, dst[j], want[j])
		}
	}
	if rep.Examples != 4 || rep.Clipped != 1 || rep.NonFinite != 2 || math.Abs(rep.MeanNorm-2.75) > 1e-6 {
		t.Errorf("report %+v, want 4 examples, 1 clipped, 2 non-finite, mean norm 2.75", rep)
	}
}

// TestPrivatizeGroups checks per-group clipping and per-group noise: with
// two groups of clip norms 1 and 10 and multipliers 2 and 0.5, the noise
// on an empty batch has standard deviation σ_g·C_g/B per coordinate (2/B
// and 5/B). The sample standard deviation over n draws is within 5% of the
// truth with probability > 0.9999 for n = 20000 (its relative standard
// error is 1/√(2n) = 0.5%).
func TestPrivatizeGroups(t *testing.T) {
	rule := nn.ClipRule{Part: []int32{0, 1, 1, -1}, C: []float64{1, 10}}
	p, err := NewPrivatizer(rule, []float64{2, 0.5}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 4)
	p.Privatize(dst, [][]float32{{2, 6, 8, 100}})
	// Group 0 = (2) clipped to 1; group 1 = (6, 8), norm 10, kept; the
	// dropped coordinate is zeroed. Noise is on top: check the clipped
	// sum by removing the noise with σ = 0.
	p0, _ := NewPrivatizer(rule, []float64{0, 0}, 2, 3)
	p0.Privatize(dst, [][]float32{{2, 6, 8, 100}})
	for j, want := range []float32{0.5, 3, 4, 0} {
		if math.Abs(float64(dst[j]-want)) > 1e-6 {
			t.Errorf("σ = 0: dst[%d] = %v, want %v", j, dst[j], want)
		}
	}
	const n = 20000
	var ss [4]float64
	for range n {
		p.Privatize(dst, nil)
		for j, v := range dst {
			ss[j] += float64(v) * float64(v)
		}
	}
	for j, want := range []float64{2 * 1 / 2.0, 0.5 * 10 / 2.0, 0.5 * 10 / 2.0, 0} {
		got := math.Sqrt(ss[j] / n)
		if math.Abs(got-want) > 0.05*want || (want == 0 && got != 0) {
			t.Errorf("coordinate %d: noise std %v, want %v", j, got, want)
		}
	}
	if _, err := NewPrivatizer(nn.ClipRule{C: []float64{1, 2}}, []float64{1, 1}, 1, 1); err == nil {
		t.Error("two groups without a partition: no error")
	}
	for _, bad := range []struct {
		c, s, b float64
	}{{0, 1, 1}, {math.Inf(1), 1, 1}, {1, -1, 1}, {1, math.NaN(), 1}, {1, 1, 0}} {
		if _, err := NewPrivatizer(nn.Flat(bad.c), []float64{bad.s}, bad.b, 1); err == nil {
			t.Errorf("NewPrivatizer(C=%v, σ=%v, B=%v): no error", bad.c, bad.s, bad.b)
		}
	}
}

// TestPrivatizeScalars checks DPZO's path: clipping to ±C, NaN and ±Inf
// counted as zero (a NaN loss difference used to poison the step).
func TestPrivatizeScalars(t *testing.T) {
	p, err := NewPrivatizer(nn.Flat(1), []float64{0}, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, rep := p.PrivatizeScalars([]float64{3, 0.2, -5, math.NaN(), math.Inf(-1)})
	if want := (1 + 0.2 - 1) / 4.0; math.Abs(s-want) > 1e-15 {
		t.Errorf("s = %v, want %v", s, want)
	}
	if rep.Clipped != 2 || rep.NonFinite != 2 || rep.Examples != 5 {
		t.Errorf("report %+v, want 2 clipped and 2 non-finite of 5", rep)
	}
}
