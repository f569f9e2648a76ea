// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/privacy"
)

// accounting is the privacy side of a run: σ and its record.
type accounting struct {
	Sigma                  float64
	Record                 results.Privacy
	EpsilonRDP, EpsilonPLD float64
	Warnings               []string
}

// nonPrivateAccounting returns the record of a run without a guarantee
// that samples at rate q for steps steps.
func nonPrivateAccounting(eps, delta, q float64, steps int) (accounting, error) {
	ev, err := privacy.MarshalEvent(privacy.NonPrivate{})
	if err != nil {
		return accounting{}, err
	}
	return accounting{
		EpsilonRDP: math.Inf(1),
		EpsilonPLD: math.Inf(1),
		Record: results.Privacy{
			Accountant:    "none",
			EpsilonTarget: results.Float(eps),
			Epsilon:       results.Float(math.Inf(1)),
			Delta:         delta,
			SampleRate:    q,
			Steps:         int64(steps),
			Sampling:      "poisson",
			Neighbouring:  "add-remove",
			Events:        json.RawMessage(ev),
		},
	}, nil
}

// sampledGaussianAccounting calibrates the noise multiplier σ of steps
// Poisson-subsampled Gaussian steps at rate q (sensitivity clip on the sum)
// to the target (ε, δ) with h's accountant, so that the achieved ε never
// exceeds the target (ε = +Inf gives σ = 0), and returns σ with the record.
// name prefixes errors.
func sampledGaussianAccounting(name string, h Hyper, eps, delta, q float64, steps int) (accounting, error) {
	k := acctKey{h.Accountant, eps, delta, q, steps, h.Clip}
	acctCache.Lock()
	e := acctCache.m[k]
	if e == nil {
		e = &acctEntry{}
		acctCache.m[k] = e
	}
	acctCache.Unlock()
	e.once.Do(func() { e.a, e.err = calibrate(name, h, eps, delta, q, steps) })
	a := e.a
	a.Warnings = slices.Clone(a.Warnings)
	return a, e.err
}

// acctCache memoises calibrations: runs of a sweep that share (ε, δ, q,
// steps) share σ (Calibrate is deterministic, so this changes no result).
var acctCache = struct {
	sync.Mutex
	m map[acctKey]*acctEntry
}{m: map[acctKey]*acctEntry{}}

type acctKey struct {
	accountant    string
	eps, delta, q float64
	steps         int
	clip          float64
}

type acctEntry struct {
	once sync.Once
	a    accounting
	err  error
}

func calibrate(name string, h Hyper, eps, delta, q float64, steps int) (accounting, error) {
	if err := privacy.CheckEpsilon(eps); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	if err := privacy.CheckDelta(delta); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	family := func(s float64) privacy.Event {
		return privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: q, Sigma: s}, Count: steps}
	}
	newRDP := func() (privacy.Accountant, error) { return privacy.NewRDP(nil) }
	// The PLD's grid follows the target ε (privacy.PLDInterval), so that
	// the small σ of a large ε fits it.
	pldOpts := &privacy.PLDOptions{Interval: privacy.PLDInterval(eps)}
	newPLD := func() (privacy.Accountant, error) { return privacy.NewPLD(pldOpts) }
	var a accounting
	if !math.IsInf(eps, 1) {
		c, err := privacy.Calibrate(newRDP, family, eps, delta, nil)
		if err == nil && h.Accountant == "pld" && c.Sigma > 0 {
			// RDP's σ is a close starting point for the PLD's (usually
			// a few percent above it); Calibrate brackets in both
			// directions from there.
			c, err = privacy.Calibrate(newPLD, family, eps, delta, &privacy.CalibrateOptions{Initial: c.Sigma, Step: 1.1})
		}
		if errors.Is(err, privacy.ErrGridTooLarge) {
			return accounting{}, fmt.Errorf("methods: %s: target ε = %v is too large for the PLD accountant's grid: calibrate with accountant rdp, or run at ε = inf for no noise", name, eps)
		}
		if err != nil {
			return accounting{}, fmt.Errorf("methods: %s: calibrating σ for ε = %v, δ = %v, q = %v, %d steps: %w", name, eps, delta, q, steps, err)
		}
		a.Sigma = c.Sigma
	}
	ev := family(a.Sigma)
	rdp, err := privacy.NewRDP(nil)
	if err != nil {
		return accounting{}, err
	}
	if err := rdp.Compose(ev, 1); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	g, err := rdp.EpsilonOrder(delta)
	if err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	a.EpsilonRDP = g.Epsilon
	for _, w := range g.Warnings {
		a.Warnings = append(a.Warnings, w.Error())
	}
	a.EpsilonPLD = math.Inf(1)
	if a.Sigma > 0 {
		pld, err := privacy.NewPLD(pldOpts)
		if err != nil {
			return accounting{}, err
		}
		err = pld.Compose(ev, 1)
		if err == nil {
			a.EpsilonPLD, err = pld.Epsilon(delta)
		}
		switch {
		case errors.Is(err, privacy.ErrGridTooLarge) && h.Accountant != "pld":
			// Noise this small spans more privacy loss than the PLD's
			// grid holds; the RDP ε stands alone.
			a.EpsilonPLD = math.NaN()
			a.Warnings = append(a.Warnings, fmt.Sprintf("ε = %v is too large for the PLD accountant's grid: epsilon_pld is not computed (the RDP accountant's ε is the run's)", eps))
		case err != nil:
			return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
		}
	}
	if err := a.poissonRecord(name, h, ev, eps, delta, q, steps, true); err != nil {
		return accounting{}, err
	}
	return a, nil
}

// poissonRecord sets a.Record to the record of the Poisson-sampled
// mechanism ev at rate q over steps steps with noise multiplier a.Sigma:
// its ε is that of h's accountant (a.EpsilonRDP or a.EpsilonPLD), which
// must not exceed the target eps when check is true (a non-private
// control does not check it).
func (a *accounting) poissonRecord(name string, h Hyper, ev privacy.Event, eps, delta, q float64, steps int, check bool) error {
	achieved := a.EpsilonRDP
	if h.Accountant == "pld" {
		achieved = a.EpsilonPLD
	}
	if check && achieved > eps {
		// Calibrate guarantees this cannot happen; a failure here is a bug
		// that must not reach a results table.
		return fmt.Errorf("methods: %s: achieved ε = %v exceeds the target %v", name, achieved, eps)
	}
	evb, err := privacy.MarshalEvent(ev)
	if err != nil {
		return err
	}
	a.Record = results.Privacy{
		Accountant:    h.Accountant,
		EpsilonTarget: results.Float(eps),
		Epsilon:       results.Float(achieved),
		Delta:         delta,
		Sigma:         a.Sigma,
		SampleRate:    q,
		Steps:         int64(steps),
		Sampling:      "poisson",
		Neighbouring:  "add-remove",
		ClipNorm:      h.Clip,
		Events:        json.RawMessage(evb),
	}
	return nil
}
