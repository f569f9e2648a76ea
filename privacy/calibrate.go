// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"errors"
	"fmt"
	"math"
)

// CalibrateOptions configures Calibrate. The zero value (or a nil pointer)
// gives the defaults.
type CalibrateOptions struct {
	// RelTol is the relative precision of the search: the returned σ is at
	// most (1+RelTol) times the smallest σ whose ε meets the target. If 0
	// it is 1e-3; it must not exceed 5e-3.
	RelTol float64
	// Initial is the first σ tried. If 0 it is 1.
	Initial float64
	// MaxSigma is the largest σ tried before giving up. If 0 it is 1e6, as
	// Opacus's MAX_SIGMA.
	MaxSigma float64
	// Step is the factor by which σ grows or shrinks while bracketing. If
	// 0 it is 2. A good Initial with a small Step (say 1.1) saves
	// evaluations of an expensive accountant.
	Step float64
}

// Calibration is the result of Calibrate.
type Calibration struct {
	// Sigma is the calibrated noise multiplier; Epsilon is its ε(δ), never
	// above the target.
	Sigma, Epsilon float64
	// Lower is the largest σ tried whose ε exceeds the target, so the
	// smallest admissible σ lies in (Lower, Sigma]; 0 if Sigma is 0.
	Lower float64
	// Evaluations counts the accountant runs.
	Evaluations int
}

// Calibrate returns the noise multiplier σ for which the event family(σ),
// composed once on a fresh accountant from newAccountant, is (ε, δ)-DP with
// ε ≤ epsilon: the accountant's ε at the returned σ never exceeds the
// target (dp_accounting's guarantee; Opacus issue #346), and σ is within a
// factor 1+RelTol of the smallest σ that meets it, assuming ε decreases in
// σ. The search brackets the root by multiplying or dividing σ by Step from
// Initial and then bisects log σ.
//
// family must return events whose cost decreases as σ grows, for example
//
//	func(s float64) Event { return SelfComposed{PoissonGaussian{Q: q, Sigma: s}, steps} }
//
// If epsilon is +Inf, or σ = 0 already meets the target (q = 0), the result
// is σ = 0. A σ whose events the accountant rejects with ErrGridTooLarge
// (a PLD grid too small for the loss range of a small σ) counts as missing
// the target and is never returned. It returns an error if the parameters
// are invalid, an accountant fails otherwise, or σ = MaxSigma does not meet
// the target (wrapping ErrGridTooLarge if that was the reason).
func Calibrate(newAccountant func() (Accountant, error), family func(sigma float64) Event, epsilon, delta float64, opts *CalibrateOptions) (Calibration, error) {
	if err := CheckEpsilon(epsilon); err != nil {
		return Calibration{}, err
	}
	if err := CheckDelta(delta); err != nil {
		return Calibration{}, err
	}
	var o CalibrateOptions
	if opts != nil {
		o = *opts
	}
	if o.RelTol == 0 {
		o.RelTol = 1e-3
	}
	if o.Initial == 0 {
		o.Initial = 1
	}
	if o.MaxSigma == 0 {
		o.MaxSigma = 1e6
	}
	if o.Step == 0 {
		o.Step = 2
	}
	if !(o.Step > 1 && o.Step <= 16) {
		return Calibration{}, fmt.Errorf("privacy: calibration Step is %v, must be in (1, 16]", o.Step)
	}
	if !(o.RelTol > 0 && o.RelTol <= 5e-3) {
		return Calibration{}, fmt.Errorf("privacy: calibration RelTol is %v, must be in (0, 0.005]", o.RelTol)
	}
	if err := CheckSigma(o.Initial); err != nil || o.Initial == 0 {
		return Calibration{}, fmt.Errorf("privacy: calibration Initial is %v, must be finite and > 0", o.Initial)
	}
	if err := CheckSigma(o.MaxSigma); err != nil || o.MaxSigma < o.Initial {
		return Calibration{}, fmt.Errorf("privacy: calibration MaxSigma is %v, must be finite and ≥ Initial", o.MaxSigma)
	}
	if newAccountant == nil || family == nil {
		return Calibration{}, errors.New("privacy: Calibrate needs an accountant constructor and an event family")
	}
	var c Calibration
	var gridErr error
	eval := func(sigma float64) (float64, error) {
		c.Evaluations++
		a, err := newAccountant()
		if err != nil {
			return 0, err
		}
		if err := a.Compose(family(sigma), 1); err != nil {
			if errors.Is(err, ErrGridTooLarge) && sigma > 0 {
				// The loss range of a small σ does not fit the PLD
				// grid: treat its ε as above any target. Such a σ is
				// never returned, so the guarantee is kept; if no σ up to
				// MaxSigma fits, the error below reports it.
				gridErr = err
				return math.Inf(1), nil
			}
			return 0, err
		}
		return a.Epsilon(delta)
	}
	if math.IsInf(epsilon, 1) {
		e0, err := eval(0)
		if err != nil {
			return c, err
		}
		c.Epsilon = e0
		return c, nil
	}
	e0, err := eval(0)
	if err != nil {
		return c, err
	}
	if e0 <= epsilon {
		c.Epsilon = e0
		return c, nil
	}
	lo, hi := 0.0, o.Initial
	ehi, err := eval(hi)
	if err != nil {
		return c, err
	}
	if ehi > epsilon {
		for ehi > epsilon {
			if hi >= o.MaxSigma {
				if math.IsInf(ehi, 1) && gridErr != nil {
					return c, fmt.Errorf("privacy: epsilon %g not reached with sigma up to %g: %w", epsilon, o.MaxSigma, gridErr)
				}
				return c, fmt.Errorf("privacy: epsilon %g not reached with sigma up to %g (ε = %g); the budget is too small", epsilon, o.MaxSigma, ehi)
			}
			lo, hi = hi, math.Min(o.Step*hi, o.MaxSigma)
			if ehi, err = eval(hi); err != nil {
				return c, err
			}
		}
	} else {
		for {
			s := hi / o.Step
			e, err := eval(s)
			if err != nil {
				return c, err
			}
			if e > epsilon {
				lo = s
				break
			}
			hi, ehi = s, e
			if s < 1e-12 {
				// ε stays below the target as σ → 0 but not at 0: return
				// the tiny σ found.
				c.Sigma, c.Epsilon = hi, ehi
				return c, nil
			}
		}
	}
	for hi > lo*(1+o.RelTol) {
		mid := math.Sqrt(lo * hi)
		e, err := eval(mid)
		if err != nil {
			return c, err
		}
		if e > epsilon {
			lo = mid
		} else {
			hi, ehi = mid, e
		}
	}
	c.Sigma, c.Epsilon, c.Lower = hi, ehi, lo
	return c, nil
}
