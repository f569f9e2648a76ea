// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"math"
	"sync"

	"github.com/repro-dp/repro/privacy"
)

// oracleCaveat is the privacy-record caveat of the oracle mask.
const oracleCaveat = "SPARTA oracle mask: the mask is chosen from unclipped, noise-free gradients of the private examples (Algorithm 3 of the paper); the run is not differentially private (ε = inf), though its steps add the noise σ calibrated for oracle_epsilon"

// spartaAccounting calibrates one σ for SPARTA's whole schedule s (T
// epochs of the Poisson-subsampled Gaussian mechanism at rate q: warm-up,
// scoring and sparse phases) to the target (ε, δ) with h's accountant, so
// that the achieved ε never exceeds the target (ε = +Inf: σ = 0), and
// returns σ with the record of the mechanism the mask executes
// (spartaSchedule.events): the phases as events, ε under both accountants.
// The oracle mask is not private: its target must be +Inf, and its σ is
// calibrated for the budget oracle_epsilon (the one of the private masks
// it is compared with), so that it runs with their noise.
func spartaAccounting(name string, h Hyper, eps, delta float64, s spartaSchedule, mask string) (accounting, error) {
	steps := s.warmup + s.train
	if needsScoring(mask) {
		steps += s.score
	}
	budget := eps
	switch {
	case mask == maskOracle && !math.IsInf(eps, 1):
		return accounting{}, fmt.Errorf("methods: %s: target ε = %v: the oracle mask is not private; run it at ε = inf (oracle_epsilon = %v sets the budget its noise is calibrated for)", name, eps, h.Float("oracle_epsilon"))
	case mask == maskOracle:
		budget = h.Float("oracle_epsilon")
	case math.IsInf(eps, 1):
		a, err := nonPrivateAccounting(eps, delta, s.q, steps)
		a.Record.ClipNorm = h.Clip
		return a, err
	}
	sigma, err := spartaSigma(name, h.Accountant, budget, delta, s)
	if err != nil {
		return accounting{}, err
	}
	ev := s.events(sigma, mask)
	a := accounting{Sigma: sigma, EpsilonRDP: math.Inf(1), EpsilonPLD: math.Inf(1)}
	var caveats []string
	if mask == maskOracle {
		caveats = append(caveats, oracleCaveat)
	} else {
		if a.EpsilonRDP, a.EpsilonPLD, err = epsilons(ev, delta); err != nil {
			return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
		}
	}
	if err := a.poissonRecord(name, h, ev, eps, delta, s.q, steps, mask != maskOracle); err != nil {
		return accounting{}, err
	}
	a.Record.Caveats = caveats
	return a, nil
}

// epsilons returns the ε at δ of ev under the RDP and the PLD accountant.
func epsilons(ev privacy.Event, delta float64) (rdpEps, pldEps float64, err error) {
	rdp, err := privacy.NewRDP(nil)
	if err != nil {
		return 0, 0, err
	}
	if err := rdp.Compose(ev, 1); err != nil {
		return 0, 0, err
	}
	g, err := rdp.EpsilonOrder(delta)
	if err != nil {
		return 0, 0, err
	}
	pld, err := privacy.NewPLD(nil)
	if err != nil {
		return 0, 0, err
	}
	if err := pld.Compose(ev, 1); err != nil {
		return 0, 0, err
	}
	if pldEps, err = pld.Epsilon(delta); err != nil {
		return 0, 0, err
	}
	return g.Epsilon, pldEps, nil
}

// spartaSigma returns the smallest σ (privacy.Calibrate) whose SPARTA
// schedule s (all three phases, whatever the mask) has ε ≤ eps at δ under
// the accountant named acct, memoised: runs of a sweep that share the
// schedule share σ, and every mask of one schedule runs with the same σ.
func spartaSigma(name, acct string, eps, delta float64, s spartaSchedule) (float64, error) {
	k := spartaKey{acct, eps, delta, s}
	spartaCache.Lock()
	e := spartaCache.m[k]
	if e == nil {
		e = &spartaEntry{}
		spartaCache.m[k] = e
	}
	spartaCache.Unlock()
	e.once.Do(func() {
		newAcc := func() (privacy.Accountant, error) { return privacy.NewRDP(nil) }
		if acct == "pld" {
			newAcc = func() (privacy.Accountant, error) { return privacy.NewPLD(nil) }
		}
		family := func(sigma float64) privacy.Event { return s.events(sigma, maskSPARTA) }
		c, err := privacy.Calibrate(newAcc, family, eps, delta, nil)
		if err != nil {
			e.err = fmt.Errorf("methods: %s: calibrating σ for ε = %v, δ = %v, q = %v, %d+%d+%d steps: %w", name, eps, delta, s.q, s.warmup, s.score, s.train, err)
			return
		}
		e.sigma = c.Sigma
	})
	return e.sigma, e.err
}

var spartaCache = struct {
	sync.Mutex
	m map[spartaKey]*spartaEntry
}{m: map[spartaKey]*spartaEntry{}}

type spartaKey struct {
	acct       string
	eps, delta float64
	s          spartaSchedule
}

type spartaEntry struct {
	once  sync.Once
	sigma float64
	err   error
}
