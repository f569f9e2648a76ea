// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"fmt"
	"strings"
)

// An Event describes a randomised mechanism, or a composition of mechanisms,
// whose privacy cost an Accountant adds up. The set of events is closed:
// Gaussian, PoissonGaussian, PoissonSampled, SelfComposed, Composed,
// EpsilonDelta and NonPrivate. Events are plain values; accountants never
// modify them.
type Event interface {
	// check validates the event's parameters through the Check functions.
	check() error
	fmt.Stringer
}

// Relation is the neighbouring relation under which a guarantee holds.
type Relation int

const (
	// AddOrRemove: datasets D and D' are neighbours if one is the other
	// with one record added. It is the zero value and the default, and the
	// only relation under which Poisson subsampling is supported.
	AddOrRemove Relation = iota
	// ReplaceOne: D and D' have the same size and differ in one record.
	// Sensitivities of Gaussian events must then be replace-one
	// sensitivities (usually twice the add/remove ones).
	ReplaceOne
)

func (r Relation) String() string {
	switch r {
	case AddOrRemove:
		return "add-or-remove-one"
	case ReplaceOne:
		return "replace-one"
	}
	return fmt.Sprintf("Relation(%d)", int(r))
}

func checkRelation(r Relation) error {
	if r != AddOrRemove && r != ReplaceOne {
		return fmt.Errorf("privacy: unknown neighbouring relation %d", int(r))
	}
	return nil
}

// Gaussian is the Gaussian mechanism f(D) + N(0, Sigma² I) for a function f
// of ℓ₂ sensitivity Sensitivity. Only the ratio Sigma/Sensitivity, the noise
// multiplier, matters. If Sensitivity is 0 it is taken to be 1, so
// Gaussian{Sigma: z} is the mechanism with noise multiplier z. Sigma = 0
// means no noise (ε = +Inf).
type Gaussian struct {
	Sigma       float64
	Sensitivity float64
}

func (g Gaussian) check() error {
	if err := CheckSigma(g.Sigma); err != nil {
		return err
	}
	return CheckSensitivity(g.Sensitivity)
}

// multiplier returns σ/Δ, with Δ = 0 read as 1.
func (g Gaussian) multiplier() float64 {
	if g.Sensitivity == 0 {
		return g.Sigma
	}
	return g.Sigma / g.Sensitivity
}

func (g Gaussian) String() string {
	if g.Sensitivity == 0 || g.Sensitivity == 1 {
		return fmt.Sprintf("Gaussian(σ=%g)", g.Sigma)
	}
	return fmt.Sprintf("Gaussian(σ=%g, Δ=%g)", g.Sigma, g.Sensitivity)
}

// PoissonGaussian is one step of DP-SGD: the sampled Gaussian mechanism that
// includes each record independently with probability Q and adds
// N(0, Sigma²) noise to a sum of sensitivity 1 (Sigma is the noise
// multiplier). It equals PoissonSampled{Q, Gaussian{Sigma: Sigma}}. Q = 0
// costs nothing; Sigma = 0 with Q > 0 gives ε = +Inf.
type PoissonGaussian struct {
	Q     float64
	Sigma float64
}

func (p PoissonGaussian) check() error {
	if err := CheckSampleRate(p.Q); err != nil {
		return err
	}
	return CheckSigma(p.Sigma)
}

func (p PoissonGaussian) String() string {
	return fmt.Sprintf("PoissonGaussian(q=%g, σ=%g)", p.Q, p.Sigma)
}

// PoissonSampled is Event run on a Poisson sample of the dataset, each record
// included independently with probability Q. The accountants support a
// Gaussian inner event (under AddOrRemove only).
type PoissonSampled struct {
	Q     float64
	Event Event
}

func (p PoissonSampled) check() error {
	if err := CheckSampleRate(p.Q); err != nil {
		return err
	}
	if p.Event == nil {
		return fmt.Errorf("privacy: PoissonSampled has a nil event")
	}
	return p.Event.check()
}

func (p PoissonSampled) String() string {
	return fmt.Sprintf("PoissonSampled(q=%g, %v)", p.Q, p.Event)
}

// SelfComposed is Event applied Count times, each time with fresh randomness.
type SelfComposed struct {
	Event Event
	Count int
}

func (s SelfComposed) check() error {
	if err := CheckSteps(s.Count); err != nil {
		return err
	}
	if s.Event == nil {
		return fmt.Errorf("privacy: SelfComposed has a nil event")
	}
	return s.Event.check()
}

func (s SelfComposed) String() string { return fmt.Sprintf("%v×%d", s.Event, s.Count) }

// Composed is the adaptive composition of its events in order, for example
// the phases of a training run with different sampling rates and numbers of
// steps. An empty Composed costs nothing.
type Composed []Event

func (c Composed) check() error {
	for i, e := range c {
		if e == nil {
			return fmt.Errorf("privacy: Composed event %d is nil", i)
		}
		if err := e.check(); err != nil {
			return err
		}
	}
	return nil
}

func (c Composed) String() string {
	s := make([]string, len(c))
	for i, e := range c {
		s[i] = e.String()
	}
	return "Composed[" + strings.Join(s, ", ") + "]"
}

// EpsilonDelta is a mechanism known only to be (Epsilon, Delta)-DP, such as
// a report-noisy-max selection (Delta = 0, pure ε-DP) or a release
// calibrated by another analysis. Epsilon = +Inf is allowed (no guarantee).
// The RDP accountant supports it only when Delta = 0.
type EpsilonDelta struct {
	Epsilon float64
	Delta   float64
}

func (e EpsilonDelta) check() error {
	if err := CheckLoss(e.Epsilon); err != nil {
		return err
	}
	return CheckDelta(e.Delta)
}

func (e EpsilonDelta) String() string {
	return fmt.Sprintf("EpsilonDelta(ε=%g, δ=%g)", e.Epsilon, e.Delta)
}

// NonPrivate is a release with no privacy guarantee: ε = +Inf for every δ < 1.
type NonPrivate struct{}

func (NonPrivate) check() error   { return nil }
func (NonPrivate) String() string { return "NonPrivate" }

// Compile-time checks that every event implements Event.
var (
	_ Event = Gaussian{}
	_ Event = PoissonGaussian{}
	_ Event = PoissonSampled{}
	_ Event = SelfComposed{}
	_ Event = Composed{}
	_ Event = EpsilonDelta{}
	_ Event = NonPrivate{}
)

// Steps returns Count times Steps(Event) for SelfComposed, the sum over the
// events of a Composed, and 1 for every other event. It is the number of
// mechanism invocations in e, which enters the PLD accountant's error bound.
func Steps(e Event) int {
	switch e := e.(type) {
	case SelfComposed:
		return e.Count * Steps(e.Event)
	case Composed:
		n := 0
		for _, x := range e {
			n += Steps(x)
		}
		return n
	}
	return 1
}
