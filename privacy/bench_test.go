// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import "testing"

// The targets: ε of 10⁴ Poisson-Gaussian steps by RDP well under
// 10 ms, by the tight accountant under 1 s, a calibration under 10 s.

var benchSink float64

func BenchmarkRDPEpsilon10kSteps(b *testing.B) {
	for b.Loop() {
		a, _ := NewRDP(nil)
		if err := a.Compose(PoissonGaussian{Q: 0.01, Sigma: 1}, 10000); err != nil {
			b.Fatal(err)
		}
		benchSink, _ = a.Epsilon(1e-5)
	}
}

func BenchmarkPLDEpsilon10kSteps(b *testing.B) {
	for b.Loop() {
		a, _ := NewPLD(nil)
		if err := a.Compose(PoissonGaussian{Q: 0.01, Sigma: 1}, 10000); err != nil {
			b.Fatal(err)
		}
		benchSink, _ = a.Epsilon(1e-5)
	}
}

func BenchmarkCalibrateRDP(b *testing.B) {
	for b.Loop() {
		c, err := Calibrate(newRDP, dpsgd(0.01, 10000), 3, 1e-5, nil)
		if err != nil {
			b.Fatal(err)
		}
		benchSink = c.Sigma
	}
}

// BenchmarkCalibratePLD calibrates with the tight accountant the way repro
// account does: from the RDP σ, bracketing by factors of 1.1.
func BenchmarkCalibratePLD(b *testing.B) {
	for b.Loop() {
		c, err := Calibrate(newRDP, dpsgd(0.01, 10000), 3, 1e-5, nil)
		if err != nil {
			b.Fatal(err)
		}
		c, err = Calibrate(func() (Accountant, error) { return NewPLD(nil) }, dpsgd(0.01, 10000), 3, 1e-5,
			&CalibrateOptions{Initial: c.Sigma, Step: 1.1})
		if err != nil {
			b.Fatal(err)
		}
		benchSink = c.Sigma
	}
}
