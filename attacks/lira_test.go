// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogitConfidence: for one token of loss l, p = e^(−l) and
// φ = log(p/(1−p)); log 1 = 0 gives +∞ and p = ½ gives 0.
func TestLogitConfidence(t *testing.T) {
	for _, tc := range []struct {
		losses []float64
		want   float64
	}{
		{[]float64{math.Ln2}, 0},
		{[]float64{0.1, 0.2}, math.Log(math.Exp(-0.3) / (1 - math.Exp(-0.3)))},
		{[]float64{30}, math.Log(math.Exp(-30) / (1 - math.Exp(-30)))},
		{[]float64{1e-12}, math.Log((1 - 1e-12) / 1e-12)},
	} {
		if got := LogitConfidence(tc.losses); math.Abs(got-tc.want) > 1e-9*max(1, math.Abs(tc.want)) {
			t.Errorf("LogitConfidence(%v) = %v, want %v", tc.losses, got, tc.want)
		}
	}
	if !math.IsInf(LogitConfidence([]float64{0}), 1) {
		t.Error("a certain answer is not +Inf")
	}
}

// TestLiRA checks the fits and scores against hand computation: in
// confidences {1, 3} (μ 2, σ 1), out {−1, −1, 2} (μ 0, σ √2); at φ = 2
// the online score is log N(2; 2, 1) − log N(2; 0, 2) = −0 + 1 − log 1 +
// log √2 = 1 + ½ log 2, and the offline score log Φ(2/√2) =
// log Φ(√2) = log 0.9213503964748575 (Φ(√2) = (1 + erf(1))/2).
// With fixed variance both σ are the root mean square over examples.
func TestLiRA(t *testing.T) {
	fits := FitLiRA([][]float64{{1, 3}, {0, 0}}, [][]float64{{-1, -1, 2}, {1, 3}}, false)
	f := fits[0]
	if f.MuIn != 2 || f.SigmaIn != 1 || f.MuOut != 0 || math.Abs(f.SigmaOut-math.Sqrt2) > 1e-15 {
		t.Fatalf("fit %+v", f)
	}
	on, off := LiRA(2, f)
	if want := 1 + 0.5*math.Log(2); math.Abs(on-want) > 1e-12 {
		t.Errorf("online %v, want %v", on, want)
	}
	if want := math.Log((1 + math.Erf(1)) / 2); math.Abs(off-want) > 1e-12 {
		t.Errorf("offline %v, want %v", off, want)
	}
	fixed := FitLiRA([][]float64{{1, 3}, {0, 0}}, [][]float64{{-1, -1, 2}, {1, 3}}, true)
	if s := fixed[1].SigmaIn; math.Abs(s-math.Sqrt(0.5)) > 1e-15 {
		t.Errorf("fixed σ_in %v, want √½", s)
	}
	if s := fixed[0].SigmaOut; math.Abs(s-math.Sqrt(1.5)) > 1e-15 {
		t.Errorf("fixed σ_out %v, want √1.5", s)
	}
}

// TestLiRAPower: members' confidences drawn from N(1, 1) and non-members'
// from N(0, 1), with 64 shadows each to fit: the online score is then the
// Neyman–Pearson test, whose AUC is Φ(1/√2) = 0.7602 (a separation of
// μ = 1); over 2000 examples the AUC's standard error is about 0.011, so
// outside ±0.05 fails with probability below 1e-5.
func TestLiRAPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	n := 2000
	in, out := make([][]float64, n), make([][]float64, n)
	for i := range n {
		for range 64 {
			in[i] = append(in[i], rng.NormFloat64()+1)
			out[i] = append(out[i], rng.NormFloat64())
		}
	}
	fits := FitLiRA(in, out, false)
	var mem, non, memOff, nonOff []float64
	for i := range n {
		member := i%2 == 0
		phi := rng.NormFloat64()
		if member {
			phi++
		}
		on, off := LiRA(phi, fits[i])
		if member {
			mem, memOff = append(mem, on), append(memOff, off)
		} else {
			non, nonOff = append(non, on), append(nonOff, off)
		}
	}
	want := 0.5 * math.Erfc(-1/math.Sqrt2/math.Sqrt2)
	for _, tc := range []struct {
		desc     string
		mem, non []float64
	}{{"online", mem, non}, {"offline", memOff, nonOff}} {
		if auc := NewROC(tc.mem, tc.non).AUC(); math.Abs(auc-want) > 0.05 {
			t.Errorf("%s: AUC %v, want %v", tc.desc, auc, want)
		}
	}
}
