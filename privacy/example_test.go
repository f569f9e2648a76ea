// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy_test

import (
	"fmt"
	"log"

	"github.com/repro-dp/repro/privacy"
)

// DP-SGD: 2250 steps of the Poisson-subsampled Gaussian with q = 0.04 and
// noise multiplier 1.5 (Opacus's test case, ε = 7.32911117143 by RDP).
func ExampleRDP() {
	a, err := privacy.NewRDP(nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Compose(privacy.PoissonGaussian{Q: 0.04, Sigma: 1.5}, 2250); err != nil {
		log.Fatal(err)
	}
	g, err := a.EpsilonOrder(1e-5)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ε = %.6f at order %v\n", g.Epsilon, g.Order)
	// Output:
	// ε = 7.329111 at order 3.9
}

// The tight accountant for the same run, with its error interval and the
// largest true-positive rate any membership attack can reach at a 1%
// false-positive rate.
func ExamplePLD() {
	a, err := privacy.NewPLD(nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Compose(privacy.PoissonGaussian{Q: 0.04, Sigma: 1.5}, 2250); err != nil {
		log.Fatal(err)
	}
	lo, hi, err := a.EpsilonBounds(1e-5)
	if err != nil {
		log.Fatal(err)
	}
	tpr, err := a.TPR(0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ε = %.3f, true ε in [%.3f, %.3f]\n", hi, lo, hi)
	fmt.Printf("TPR at FPR 0.01 ≤ %.3f\n", tpr)
	// Output:
	// ε = 6.769, true ε in [6.723, 6.769]
	// TPR at FPR 0.01 ≤ 0.180
}

// SPARTA-style phases with one σ: 2 epochs of DP-BitFit, 1 epoch of
// private scoring, 7 epochs of sparse DP-SGD, at different sampling rates.
// Calibrate σ for the whole run to ε = 3 at δ = 1e-5.
func ExampleCalibrate() {
	phases := func(sigma float64) privacy.Event {
		return privacy.Composed{
			privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: 0.01, Sigma: sigma}, Count: 200},
			privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: 0.01, Sigma: sigma}, Count: 100},
			privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: 0.02, Sigma: sigma}, Count: 350},
		}
	}
	newRDP := func() (privacy.Accountant, error) { return privacy.NewRDP(nil) }
	c, err := privacy.Calibrate(newRDP, phases, 3, 1e-5, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("σ = %.3f gives ε = %.3f ≤ 3\n", c.Sigma, c.Epsilon)
	// Output:
	// σ = 0.985 gives ε = 2.999 ≤ 3
}

// DP-MTV releases one mean of K = 100 chunks with per-layer clipping C over
// 32 layers: sensitivity √32·C/K. The analytic Gaussian mechanism gives
// the noise; the classical bound, for comparison, needs more.
func ExampleAnalyticGaussianSigma() {
	sens := 0.05656854 // √32/100, C = 1
	s, err := privacy.AnalyticGaussianSigma(1, 1e-5, sens)
	if err != nil {
		log.Fatal(err)
	}
	c, err := privacy.ClassicalGaussianSigma(1, 1e-5, sens)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("analytic σ = %.4f, classical σ = %.4f\n", s, c)
	// Output:
	// analytic σ = 0.2110, classical σ = 0.2741
}

// Noise streams: one per purpose, reproducible from the run's seed.
func ExampleNewNoise() {
	grad := make([]float32, 4)
	privacy.NewNoise(42, "dpsgd/gradient").AddGaussian32(grad, 0.5)
	again := make([]float32, 4)
	privacy.NewNoise(42, "dpsgd/gradient").AddGaussian32(again, 0.5)
	fmt.Println(grad[0] == again[0] && grad[3] == again[3])
	// Output:
	// true
}
