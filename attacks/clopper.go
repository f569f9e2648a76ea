// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// ClopperPearson returns the exact one-sided confidence limits of level
// 1 − α for the success probability p of a binomial with k successes in n
// trials (Clopper & Pearson 1934):
//
//	lo = the p with P(Bin(n, p) ≥ k) = α, that is I⁻¹(α; k, n−k+1), and 0 if k = 0;
//	hi = the p with P(Bin(n, p) ≤ k) = α, that is 1 − I⁻¹(α; n−k, k+1), and 1 if k = n,
//
// where I⁻¹ inverts the regularised incomplete beta function I_x(a, b)
// (mathext.InvRegIncBeta, a port of Cephes incbi). Whatever p is,
// P(p < lo) ≤ α and P(p > hi) ≤ α; [lo, hi] is a two-sided interval of
// level 1 − 2α, so the usual 95% interval takes α = 0.025. For k = 0 and
// k = n the limits have the closed forms hi = 1 − α^(1/n) and lo = α^(1/n).
//
// ClopperPearson panics if n < 1, k is not in [0, n], or α is not in
// (0, 1).
//
// References:
//   - C. J. Clopper, E. S. Pearson, The use of confidence or fiducial limits
//     illustrated in the case of the binomial, Biometrika 26(4), 1934.
//   - R. G. Newcombe, Two-sided confidence intervals for the single
//     proportion: comparison of seven methods, Statistics in Medicine
//     17(8), 1998 (Table II, method 5, gives exact intervals to check
//     against).
func ClopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if n < 1 || k < 0 || k > n {
		panic("attacks: Clopper–Pearson needs 0 ≤ k ≤ n and n ≥ 1")
	}
	if !(alpha > 0 && alpha < 1) {
		panic("attacks: Clopper–Pearson level α not in (0, 1)")
	}
	fk, fn := float64(k), float64(n)
	switch k {
	case 0:
		lo = 0
	case n:
		lo = math.Pow(alpha, 1/fn)
	default:
		lo = mathext.InvRegIncBeta(fk, fn-fk+1, alpha)
	}
	switch k {
	case n:
		hi = 1
	case 0:
		hi = -math.Expm1(math.Log(alpha) / fn)
	default:
		// By I_x(a, b) = 1 − I_{1−x}(b, a), inverting at α rather than at
		// 1 − α, which would lose the digits of a small α.
		hi = 1 - mathext.InvRegIncBeta(fn-fk, fk+1, alpha)
	}
	return lo, hi
}
