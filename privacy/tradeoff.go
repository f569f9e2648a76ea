// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import "math"

// EpsilonDeltaTPR returns the largest true-positive rate any membership
// test can reach at false-positive rate fpr against an (ε, δ)-DP
// mechanism, 1 − f(fpr) for its trade-off function
//
//	f(α) = max(0, 1 − δ − e^ε·α, e^−ε·(1 − δ − α)),
//
// that is min(1, δ + e^ε·α, 1 − e^−ε·(1 − δ − α)). It is tight: the
// randomised response with an extra δ of disclosure attains it, so it is
// the bound a record that states only (ε, δ) gives (a composition of pure
// ε-DP releases accounted to (ε, δ), as LDP-FL's). ε = 0 and δ = 0 give
// fpr; ε = +Inf gives 1 for fpr > 0 and δ at fpr = 0.
//
// References:
//   - P. Kairouz, S. Oh and P. Viswanath, The composition theorem for
//     differential privacy, ICML 2015 (Theorem 2.1: the region of an
//     (ε, δ)-DP test).
//   - J. Dong, A. Roth and W. J. Su, Gaussian differential privacy, JRSS
//     B 2022 (Proposition 2.5: the same region as the trade-off f_ε,δ).
func EpsilonDeltaTPR(epsilon, delta, fpr float64) (float64, error) {
	if err := CheckLoss(epsilon); err != nil {
		return 0, err
	}
	if err := CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := CheckFPR(fpr); err != nil {
		return 0, err
	}
	if math.IsInf(epsilon, 1) {
		if fpr == 0 {
			return delta, nil
		}
		return 1, nil
	}
	// The two lines of the region's upper edge cross at
	// α* = (1 − δ)/(1 + e^ε); the first is the smaller below it. At
	// fpr = 0 the first is δ whatever ε: e^ε·0 would be NaN where e^ε
	// overflows (ε > ln(MaxFloat64) ≈ 709.8).
	a := delta
	if fpr > 0 {
		a += math.Exp(epsilon) * fpr
	}
	b := 1 - math.Exp(-epsilon)*(1-delta-fpr)
	return math.Min(1, math.Min(a, b)), nil
}
