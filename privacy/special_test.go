// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"math"
	"testing"
)

// TestLogNormCDF checks log Φ against log(½ erfc(−x/√2)) where that does not
// underflow, the continuity of the switch to the asymptotic series at
// x = −30, and the leading term −x²/2 − log(−x√(2π)) far out.
func TestLogNormCDF(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{-37, -29.9, -20, -5, -1, 0, 1, 4.9, 5.1, 8, 40} {
		want := math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		if x > 5 {
			want = math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
		}
		if got := logNormCDF(x); !equalWithinRel(got, want, 1e-12) && math.Abs(got-want) > 1e-300 {
			t.Errorf("logNormCDF(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	a, b := logNormCDF(-30-1e-12), logNormCDF(-30+1e-12)
	if math.Abs(a-b) > 1e-9 {
		t.Errorf("logNormCDF jumps at −30: %.17g, %.17g", a, b)
	}
	x := -1e4
	if got, want := logNormCDF(x), -x*x/2-math.Log(-x*math.Sqrt(2*math.Pi)); !equalWithinRel(got, want, 1e-12) {
		t.Errorf("logNormCDF(%g) = %g, want %g", x, got, want)
	}
	if q := normQuantile(0.1); math.Abs(normCDF(q)-0.1) > 1e-15 {
		t.Errorf("normQuantile(0.1) = %g", q)
	}
}

func TestLogAddSub(t *testing.T) {
	t.Parallel()
	if got := logAdd(math.Log(2), math.Log(3)); math.Abs(got-math.Log(5)) > 1e-15 {
		t.Errorf("logAdd = %g", got)
	}
	if got := logSub(math.Log(5), math.Log(3)); math.Abs(got-math.Log(2)) > 1e-15 {
		t.Errorf("logSub = %g", got)
	}
	if got := logSub(1, 1); !math.IsInf(got, -1) {
		t.Errorf("logSub(1, 1) = %g", got)
	}
	if got := logAdd(math.Inf(-1), 2); got != 2 {
		t.Errorf("logAdd(−Inf, 2) = %g", got)
	}
}
