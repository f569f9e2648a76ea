// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Schedule gives the learning rate of each step.
type Schedule interface {
	// LR returns the learning rate of step t, counted from 0. It depends on
	// t and the schedule's fields only. LR panics if t is negative or if
	// the schedule's fields are invalid (see its Validate method).
	LR(t int) float64
}

// MomentumSchedule is a Schedule that also gives the momentum of each step,
// for Momentumer.SetMomentum.
type MomentumSchedule interface {
	Schedule
	// Momentum returns the momentum of step t.
	Momentum(t int) float64
}

var (
	_ Schedule         = Constant{}
	_ Schedule         = Cosine{}
	_ MomentumSchedule = OneCycle{}
)

// Constant is a constant learning rate.
type Constant struct {
	Value float64 // ≥ 0, finite
}

// LR implements Schedule.
func (c Constant) LR(t int) float64 {
	checkT(t)
	if c.Validate() != nil {
		panic("optim: invalid schedule")
	}
	return c.Value
}

// Validate returns an error if c's fields are invalid.
func (c Constant) Validate() error { return checkLR("learning rate", c.Value) }

// Cosine is a linear warm-up followed by a cosine decay (Loshchilov &
// Hutter 2017, without restarts). With W warm-up steps out of T:
//
//	LR(t) = Peak · (t+1)/W                            for t < W
//	LR(t) = Min + (Peak − Min) · (1 + cos(π·p)) / 2,  p = (t−W)/(T−W), for W ≤ t < T
//	LR(t) = Min                                        for t ≥ T
//
// The first warm-up step already has Peak/W (not 0, as in some libraries),
// so that no step is spent with a zero learning rate; the last warm-up step
// and the first decay step both have Peak.
type Cosine struct {
	Peak   float64 // > 0, finite
	Min    float64 // final learning rate, 0 ≤ Min ≤ Peak; 0 by default
	Warmup int     // W, 0 ≤ W ≤ Steps; 0 means no warm-up
	Steps  int     // T ≥ 1, the number of steps of the run
}

// LR implements Schedule.
func (c Cosine) LR(t int) float64 {
	checkT(t)
	if c.Validate() != nil {
		panic("optim: invalid schedule")
	}
	switch {
	case t < c.Warmup:
		return c.Peak * float64(t+1) / float64(c.Warmup)
	case t >= c.Steps:
		return c.Min
	}
	p := float64(t-c.Warmup) / float64(c.Steps-c.Warmup)
	return c.Min + float64((c.Peak-c.Min)*(1+math.Cos(math.Pi*p))/2)
}

// Validate returns an error if c's fields are invalid.
func (c Cosine) Validate() error {
	if err := checkLR("peak learning rate", c.Peak); err != nil {
		return err
	}
	switch {
	case c.Peak == 0:
		return fmt.Errorf("optim: peak learning rate must be positive")
	case !(c.Min >= 0 && c.Min <= c.Peak):
		return fmt.Errorf("optim: final learning rate is %v, must be in [0, %v]", c.Min, c.Peak)
	case c.Steps < 1:
		return fmt.Errorf("optim: schedule has %d steps, must have at least 1", c.Steps)
	case c.Warmup < 0 || c.Warmup > c.Steps:
		return fmt.Errorf("optim: %d warm-up steps, must be in [0, %d]", c.Warmup, c.Steps)
	}
	return nil
}

// OneCycle is the one-cycle policy of Smith & Topin (2019) as PyTorch's
// OneCycleLR computes it with anneal_strategy='cos' and three_phase=False.
// With T = Steps, initial = Max/DivFactor and final = initial/FinalDivFactor,
// phase 1 runs from step 0 to e₁ = PctStart·T − 1, phase 2 from e₁ to T − 1:
//
//	LR(t) = cos_anneal(initial, Max, t/e₁)             for t ≤ e₁
//	LR(t) = cos_anneal(Max, final, (t−e₁)/(T−1−e₁))   for t > e₁
//	cos_anneal(a, b, p) = b + (a − b)/2 · (cos(π·p) + 1)
//
// and the momentum runs inversely, from MaxMomentum down to BaseMomentum in
// phase 1 and back up in phase 2. Past the end, for t ≥ T, LR(t) = final and
// Momentum(t) = MaxMomentum (PyTorch raises an error there). A phase 1 of
// zero length (PctStart·T = 1) is taken as finished at step 0 (PyTorch
// divides by zero there).
type OneCycle struct {
	Max            float64 // peak learning rate, > 0, finite
	Steps          int     // T ≥ 1
	PctStart       float64 // fraction of steps in phase 1, in [0, 1]; 0 means 0.3
	DivFactor      float64 // ≥ 1; 0 means 25
	FinalDivFactor float64 // ≥ 1; 0 means 1e4
	BaseMomentum   float64 // in [0, MaxMomentum]; 0 means 0.85
	MaxMomentum    float64 // < 1; 0 means 0.95
}

func (c OneCycle) withDefaults() OneCycle {
	def := func(x *float64, v float64) {
		if *x == 0 {
			*x = v
		}
	}
	def(&c.PctStart, 0.3)
	def(&c.DivFactor, 25)
	def(&c.FinalDivFactor, 1e4)
	def(&c.BaseMomentum, 0.85)
	def(&c.MaxMomentum, 0.95)
	return c
}

// Validate returns an error if c's fields are invalid.
func (c OneCycle) Validate() error {
	if err := checkLR("peak learning rate", c.Max); err != nil {
		return err
	}
	d := c.withDefaults()
	switch {
	case c.Max == 0:
		return fmt.Errorf("optim: peak learning rate must be positive")
	case c.Steps < 1:
		return fmt.Errorf("optim: schedule has %d steps, must have at least 1", c.Steps)
	case !(d.PctStart >= 0 && d.PctStart <= 1):
		return fmt.Errorf("optim: pct_start is %v, must be in [0, 1]", c.PctStart)
	case !(d.DivFactor >= 1) || math.IsInf(d.DivFactor, 0):
		return fmt.Errorf("optim: div factor is %v, must be finite and at least 1", c.DivFactor)
	case !(d.FinalDivFactor >= 1) || math.IsInf(d.FinalDivFactor, 0):
		return fmt.Errorf("optim: final div factor is %v, must be finite and at least 1", c.FinalDivFactor)
	case !(d.MaxMomentum >= 0 && d.MaxMomentum < 1):
		return fmt.Errorf("optim: max momentum is %v, must be in [0, 1)", d.MaxMomentum)
	case !(d.BaseMomentum >= 0 && d.BaseMomentum <= d.MaxMomentum):
		return fmt.Errorf("optim: base momentum is %v, must be in [0, %v]", d.BaseMomentum, d.MaxMomentum)
	}
	return nil
}

// phase returns the phase (0 or 1) of step t and its progress p in [0, 1].
func (c OneCycle) phase(t int) (int, float64) {
	checkT(t)
	if c.Validate() != nil {
		panic("optim: invalid schedule")
	}
	T := float64(c.Steps)
	e1 := float64(c.PctStart*T) - 1
	last := T - 1
	x := float64(t)
	switch {
	case x <= e1 && e1 == 0:
		return 0, 1
	case x <= e1:
		return 0, x / e1
	case x >= last:
		return 1, 1
	}
	return 1, (x - e1) / (last - e1)
}

func cosAnneal(start, end, p float64) float64 {
	return end + float64((start-end)/2.0*(math.Cos(math.Pi*p)+1))
}

// LR implements Schedule.
func (c OneCycle) LR(t int) float64 {
	c = c.withDefaults()
	initial := c.Max / c.DivFactor
	final := initial / c.FinalDivFactor
	ph, p := c.phase(t)
	if ph == 0 {
		return cosAnneal(initial, c.Max, p)
	}
	return cosAnneal(c.Max, final, p)
}

// Momentum implements MomentumSchedule.
func (c OneCycle) Momentum(t int) float64 {
	c = c.withDefaults()
	ph, p := c.phase(t)
	if ph == 0 {
		return cosAnneal(c.MaxMomentum, c.BaseMomentum, p)
	}
	return cosAnneal(c.BaseMomentum, c.MaxMomentum, p)
}

func checkT(t int) {
	if t < 0 {
		panic("optim: negative step")
	}
}

func checkLR(what string, lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("optim: %s is %v, must be non-negative and finite", what, lr)
	}
	return nil
}

// ScheduleSettings configures a schedule built by name. Fields a schedule
// does not use are ignored; zero values give that schedule's defaults.
type ScheduleSettings struct {
	// LR is the constant learning rate (constant) or the peak one (cosine,
	// onecycle).
	LR float64
	// Steps is the number of steps of the run (cosine, onecycle).
	Steps int
	// Warmup is the number of linear warm-up steps (cosine).
	Warmup int
	// MinLR is the final learning rate (cosine).
	MinLR float64
	// PctStart, DivFactor, FinalDivFactor, BaseMomentum and MaxMomentum
	// are OneCycle's fields (onecycle).
	PctStart, DivFactor, FinalDivFactor, BaseMomentum, MaxMomentum float64
}

// validator is a Schedule with a Validate method.
type validator interface {
	Schedule
	Validate() error
}

var schedules = map[string]func(s ScheduleSettings) validator{
	"constant": func(s ScheduleSettings) validator { return Constant{Value: s.LR} },
	"cosine": func(s ScheduleSettings) validator {
		return Cosine{Peak: s.LR, Min: s.MinLR, Warmup: s.Warmup, Steps: s.Steps}
	},
	"onecycle": func(s ScheduleSettings) validator {
		return OneCycle{Max: s.LR, Steps: s.Steps, PctStart: s.PctStart, DivFactor: s.DivFactor,
			FinalDivFactor: s.FinalDivFactor, BaseMomentum: s.BaseMomentum, MaxMomentum: s.MaxMomentum}
	},
}

// ScheduleNames returns the names of the registered schedules, sorted.
func ScheduleNames() []string {
	names := make([]string, 0, len(schedules))
	for name := range schedules {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// NewSchedule returns the schedule called name configured by s (nil for the
// zero value), or an error if the name is unknown or the settings invalid.
func NewSchedule(name string, s *ScheduleSettings) (Schedule, error) {
	ctor, ok := schedules[name]
	if !ok {
		return nil, fmt.Errorf("optim: unknown schedule %q (known: %s)", name, strings.Join(ScheduleNames(), ", "))
	}
	var set ScheduleSettings
	if s != nil {
		set = *s
	}
	sch := ctor(set)
	if err := sch.Validate(); err != nil {
		return nil, err
	}
	return sch, nil
}
