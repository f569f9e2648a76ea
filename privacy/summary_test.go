// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	// Opacus accountants_test.py: RDP 7.32911117143, PRV 6.777395712150674
	// (an upper bound with ε error 0.01).
	s, err := Summarize(SelfComposed{Event: PoissonGaussian{Q: 0.04, Sigma: 1.5}, Count: 2250}, 1e-5, AddOrRemove)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.EpsilonRDP-7.32911117143) > 5e-8 || s.RDPOrder != 3.9 {
		t.Errorf("RDP ε = %v at order %v", s.EpsilonRDP, s.RDPOrder)
	}
	if math.Abs(s.EpsilonPLD-6.777395712150674) > 0.03 || s.EpsilonPLDLower > s.EpsilonPLD || s.PLDInterval != 1e-4 || len(s.Warnings) != 0 {
		t.Errorf("PLD: %+v", s)
	}
	// DP-MTV's private-selection variant: one Gaussian release plus a pure
	// ε₂ = 0.1 Gumbel selection. RDP handles the pure event.
	s, err = Summarize(Composed{Gaussian{Sigma: 4}, EpsilonDelta{Epsilon: 0.1}}, 1e-5, ReplaceOne)
	if err != nil {
		t.Fatal(err)
	}
	if s.EpsilonPLD > s.EpsilonRDP || math.IsInf(s.EpsilonRDP, 0) {
		t.Errorf("Gaussian + selection: %+v", s)
	}
	// An (ε, δ) event with δ > 0: RDP cannot, PLD can.
	s, err = Summarize(EpsilonDelta{Epsilon: 1, Delta: 1e-7}, 1e-5, AddOrRemove)
	if err != nil || !math.IsInf(s.EpsilonRDP, 1) || len(s.Warnings) != 1 || s.EpsilonPLD > 1 {
		t.Errorf("(1, 1e-7) event: %+v, %v", s, err)
	}
	if _, err := Summarize(PoissonGaussian{Q: 2, Sigma: 1}, 1e-5, AddOrRemove); err == nil {
		t.Errorf("invalid event: got nil error")
	}
	if _, err := Summarize(PoissonGaussian{Q: 0.1, Sigma: 1}, 1e-5, ReplaceOne); err == nil {
		t.Errorf("Poisson under replace-one: got nil error")
	}
}
