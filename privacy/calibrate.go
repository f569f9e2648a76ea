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
	o, err := opts.withDefaults()
	if err != nil {
		return Calibration{}, err
	}
	if newAccountant == nil || family == nil {
		return Calibration{}, errors.New("privacy: Calibrate needs an accountant constructor and an event family")
	}
	k := &calibrator{newAccountant: newAccountant, family: family, delta: delta, epsilon: epsilon, o: o}
	e0, err := k.eval(0)
	if err != nil {
		return k.c, err
	}
	if math.IsInf(epsilon, 1) || e0 <= epsilon {
		k.c.Epsilon = e0
		return k.c, nil
	}
	lo, hi, ehi, done, err := k.bracket()
	if err != nil {
		return k.c, err
	}
	if done {
		k.c.Sigma, k.c.Epsilon = hi, ehi
		return k.c, nil
	}
	lo, hi, ehi, err = k.bisect(lo, hi, ehi)
	if err != nil {
		return k.c, err
	}
	k.c.Sigma, k.c.Epsilon, k.c.Lower = hi, ehi, lo
	return k.c, nil
}

// withDefaults returns the options with their defaults filled in, or an
// error if one is out of range. A nil o gives the defaults.
func (o *CalibrateOptions) withDefaults() (CalibrateOptions, error) {
	var d CalibrateOptions
	if o != nil {
		d = *o
	}
	if d.RelTol == 0 {
		d.RelTol = 1e-3
	}
	if d.Initial == 0 {
		d.Initial = 1
	}
	if d.MaxSigma == 0 {
		d.MaxSigma = 1e6
	}
	if d.Step == 0 {
		d.Step = 2
	}
	if !(d.Step > 1 && d.Step <= 16) {
		return d, fmt.Errorf("privacy: calibration Step is %v, must be in (1, 16]", d.Step)
	}
	if !(d.RelTol > 0 && d.RelTol <= 5e-3) {
		return d, fmt.Errorf("privacy: calibration RelTol is %v, must be in (0, 0.005]", d.RelTol)
	}
	if err := CheckSigma(d.Initial); err != nil || d.Initial == 0 {
		return d, fmt.Errorf("privacy: calibration Initial is %v, must be finite and > 0", d.Initial)
	}
	if err := CheckSigma(d.MaxSigma); err != nil || d.MaxSigma < d.Initial {
		return d, fmt.Errorf("privacy: calibration MaxSigma is %v, must be finite and ≥ Initial", d.MaxSigma)
	}
	return d, nil
}

// calibrator is the state of one Calibrate search.
type calibrator struct {
	newAccountant  func() (Accountant, error)
	family         func(sigma float64) Event
	epsilon, delta float64
	o              CalibrateOptions
	c              Calibration // the result so far: Evaluations
	// gridErr is the last ErrGridTooLarge of an accountant, for the error
	// when no σ meets the target.
	gridErr error
}

// eval returns ε(δ) of family(sigma) on a fresh accountant.
func (k *calibrator) eval(sigma float64) (float64, error) {
	k.c.Evaluations++
	a, err := k.newAccountant()
	if err != nil {
		return 0, err
	}
	if err := a.Compose(k.family(sigma), 1); err != nil {
		if errors.Is(err, ErrGridTooLarge) && sigma > 0 {
			// The loss range of a small σ does not fit the PLD grid:
			// treat its ε as above any target. Such a σ is never
			// returned, so the guarantee is kept; if no σ up to MaxSigma
			// fits, bracket reports it.
			k.gridErr = err
			return math.Inf(1), nil
		}
		return 0, err
	}
	return a.Epsilon(k.delta)
}

// bracket returns lo < hi with ε(lo) above the target and ε(hi) = ehi
// within it, multiplying or dividing σ by Step from Initial. done reports
// that ε stays within the target down to a tiny σ = hi, which is then the
// answer.
func (k *calibrator) bracket() (lo, hi, ehi float64, done bool, err error) {
	o, epsilon := k.o, k.epsilon
	lo, hi = 0.0, o.Initial
	if ehi, err = k.eval(hi); err != nil {
		return 0, 0, 0, false, err
	}
	if ehi > epsilon {
		for ehi > epsilon {
			if hi >= o.MaxSigma {
				if math.IsInf(ehi, 1) && k.gridErr != nil {
					return 0, 0, 0, false, fmt.Errorf("privacy: epsilon %g not reached with sigma up to %g: %w", epsilon, o.MaxSigma, k.gridErr)
				}
				return 0, 0, 0, false, fmt.Errorf("privacy: epsilon %g not reached with sigma up to %g (ε = %g); the budget is too small", epsilon, o.MaxSigma, ehi)
			}
			lo, hi = hi, math.Min(o.Step*hi, o.MaxSigma)
			if ehi, err = k.eval(hi); err != nil {
				return 0, 0, 0, false, err
			}
		}
		return lo, hi, ehi, false, nil
	}
	for {
		s := hi / o.Step
		e, err := k.eval(s)
		if err != nil {
			return 0, 0, 0, false, err
		}
		if e > epsilon {
			return s, hi, ehi, false, nil
		}
		hi, ehi = s, e
		if s < 1e-12 {
			// ε stays below the target as σ → 0 but not at 0: return the
			// tiny σ found.
			return 0, hi, ehi, true, nil
		}
	}
}

// bisect narrows the bracket (lo, hi], ehi = ε(hi), by bisecting log σ
// until hi ≤ lo·(1+RelTol).
func (k *calibrator) bisect(lo, hi, ehi float64) (float64, float64, float64, error) {
	for hi > lo*(1+k.o.RelTol) {
		mid := math.Sqrt(lo * hi)
		e, err := k.eval(mid)
		if err != nil {
			return 0, 0, 0, err
		}
		if e > k.epsilon {
			lo = mid
		} else {
			hi, ehi = mid, e
		}
	}
	return lo, hi, ehi, nil
}
