// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"fmt"
	"math"
)

// This file is the one place where privacy parameters are checked. Every
// event, accountant, calibration and mechanism calls these functions, and the
// repro command line maps their errors to its flags.

// CheckEpsilon returns an error if epsilon is not a valid privacy budget:
// ε must be > 0 or +Inf. NaN and -Inf are rejected.
func CheckEpsilon(epsilon float64) error {
	if math.IsNaN(epsilon) || epsilon <= 0 {
		return fmt.Errorf("privacy: epsilon is %v, must be > 0 or +Inf", epsilon)
	}
	return nil
}

// CheckLoss returns an error if epsilon is not a valid value of the privacy
// loss at which δ(ε) is evaluated: ε must be ≥ 0 or +Inf (ε = 0 is allowed
// here, as in dp_accounting's get_delta).
func CheckLoss(epsilon float64) error {
	if math.IsNaN(epsilon) || epsilon < 0 {
		return fmt.Errorf("privacy: epsilon is %v, must be ≥ 0 or +Inf", epsilon)
	}
	return nil
}

// CheckDelta returns an error if delta is not in [0, 1). NaN and ±Inf are
// rejected.
func CheckDelta(delta float64) error {
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return fmt.Errorf("privacy: delta is %v, must be in [0, 1)", delta)
	}
	return nil
}

// CheckSigma returns an error if sigma, a noise standard deviation or noise
// multiplier, is not finite and ≥ 0. σ = 0 is allowed: it means no noise, and
// every accountant then reports ε = +Inf.
func CheckSigma(sigma float64) error {
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma < 0 {
		return fmt.Errorf("privacy: sigma is %v, must be finite and ≥ 0", sigma)
	}
	return nil
}

// CheckSensitivity returns an error if sensitivity is NaN or negative.
// Sensitivity +Inf is allowed (it gives δ = 1), and 0 means no privacy loss
// where a sensitivity is taken literally (GaussianDelta); Gaussian events read
// 0 as the default 1.
func CheckSensitivity(sensitivity float64) error {
	if math.IsNaN(sensitivity) || sensitivity < 0 {
		return fmt.Errorf("privacy: sensitivity is %v, must be ≥ 0", sensitivity)
	}
	return nil
}

// CheckSampleRate returns an error if q is not a Poisson sampling probability
// in [0, 1]. q = 0 is allowed and costs nothing (ε = 0), as in dp_accounting;
// NaN and ±Inf are rejected.
func CheckSampleRate(q float64) error {
	if math.IsNaN(q) || q < 0 || q > 1 {
		return fmt.Errorf("privacy: sample rate is %v, must be in [0, 1]", q)
	}
	return nil
}

// CheckSteps returns an error if steps, a number of compositions, is negative.
func CheckSteps(steps int) error {
	if steps < 0 {
		return fmt.Errorf("privacy: steps is %d, must be ≥ 0", steps)
	}
	return nil
}

// CheckFPR returns an error if fpr, a false-positive rate, is not in [0, 1].
func CheckFPR(fpr float64) error {
	if math.IsNaN(fpr) || fpr < 0 || fpr > 1 {
		return fmt.Errorf("privacy: false-positive rate is %v, must be in [0, 1]", fpr)
	}
	return nil
}
