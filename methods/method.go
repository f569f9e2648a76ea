// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/repro-dp/repro/internal/registry"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
)

// A Method fine-tunes a pretrained model on private data.
type Method interface {
	// Name returns the method's registry name (nonprivate, dpsgd, ...).
	Name() string
	// FineTune trains job.Model in place and returns what it did. It
	// returns an error for invalid hyperparameters or privacy parameters
	// (before any step), a failing model, or a cancelled ctx.
	FineTune(ctx context.Context, job *Job) (*Result, error)
}

// A Job is one fine-tuning task.
type Job struct {
	// Model is the model to fine-tune. FineTune adds the PEFT modules of
	// Hyper (LoRA) and trains them in place; the model's PEFT must be the
	// zero value (a fresh copy of the pretrained base).
	Model *nn.TinyMLLM
	// Train is the private training set (the members). FineTune does not
	// modify it.
	Train []nn.Sequence
	// Hyper holds the resolved hyperparameters; see Defaults and Parse.
	Hyper Hyper
	// Epsilon is the target ε (> 0, or +Inf for no privacy) and Delta the
	// target δ of the run.
	Epsilon, Delta float64
	// Seed seeds every random stream of the run: the sampler, the LoRA
	// initialisation, the DP noise and DPZO's directions each draw from
	// their own stream derived from Seed and a purpose name (Streams).
	Seed uint64
	// Workers is the number of goroutines per step; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Progress, when not nil, is called after every step with the number
	// of steps done and the total.
	Progress func(done, total int)
}

// A Result is what a fine-tuning run did.
type Result struct {
	// Privacy is the privacy record of the mechanism the run executed
	// (DESIGN §5): accountant, target and achieved ε, δ, σ, q, steps,
	// sampling scheme, neighbouring relation, clip norm, events, caveats.
	Privacy results.Privacy
	// EpsilonRDP and EpsilonPLD are the ε of the executed mechanism under
	// the RDP and the PLD accountant (+Inf for a non-private run);
	// Privacy.Epsilon is the one of Privacy.Accountant.
	EpsilonRDP, EpsilonPLD float64
	// Steps is the number of optimisation steps taken.
	Steps int
	// Metrics are per-step training metrics (loss, batch size, ...).
	Metrics []Metric
	// StepTime is the mean wall time of a step and PeakBytes the largest
	// training state of a step (tapes, per-sample gradients, optimizer
	// moments and model), as nn.Meter measures them.
	StepTime  time.Duration
	PeakBytes int64
	// Warnings are things to show beside the results.
	Warnings []string
}

// A Metric is the value of a named training metric at a step.
type Metric struct {
	Step  int
	Name  string
	Value float64
}

var known = registry.New[Method]("methods: method")

// Register adds m to the registry under m.Name(). It is meant to be called
// from init functions; it panics if the name is taken.
func Register(m Method) { known.Register(m.Name(), m) }

// Lookup returns the method registered under name.
func Lookup(name string) (Method, bool) { return known.Lookup(name) }

// Names returns the names of the registered methods, sorted.
func Names() []string { return known.Names() }

// check returns an error for a job that no method can run.
func (j *Job) check(name string) error {
	switch {
	case j.Model == nil:
		return fmt.Errorf("methods: %s: no model", name)
	case len(j.Train) == 0:
		return fmt.Errorf("methods: %s: empty training set", name)
	case j.Model.Config.PEFT.Method != "" && j.Model.Config.PEFT.Method != "none":
		return fmt.Errorf("methods: %s: the model already has PEFT %q; give a fresh copy of the base", name, j.Model.Config.PEFT.Method)
	case math.IsNaN(j.Epsilon) || j.Epsilon <= 0:
		return fmt.Errorf("methods: %s: ε = %v, want ε > 0 or +Inf", name, j.Epsilon)
	case math.IsNaN(j.Delta) || j.Delta < 0 || j.Delta >= 1:
		return fmt.Errorf("methods: %s: δ = %v, want 0 ≤ δ < 1", name, j.Delta)
	}
	for i := range j.Train {
		if err := j.Model.Check(&j.Train[i]); err != nil {
			return fmt.Errorf("methods: %s: training example %d: %w", name, i, err)
		}
		if !slices.Contains(j.Train[i].Loss, true) {
			return fmt.Errorf("methods: %s: training example %d has no answer token", name, i)
		}
	}
	return j.Hyper.Validate()
}
