// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import "github.com/repro-dp/repro/datasets"

// A Stepper is a Method whose number of optimisation steps is known before
// it runs: PlannedSteps returns the steps a run of task at scale with
// hyperparameters h takes, and the cost class of a step (first-order for
// the DP-SGD loop with its per-example gradients, zeroth-order for two
// forward passes), or 0 steps if it cannot tell. The runner predicts a
// sweep's time from them.
type Stepper interface {
	PlannedSteps(task, scale string, h Hyper) (steps int, class string)
}

// Cost classes of a step (Stepper).
const (
	FirstOrder = "first-order"
	ZeroOrder  = "zeroth-order"
)

var (
	_ Stepper = NonPrivate{}
	_ Stepper = DPSGD{}
	_ Stepper = DualPriv{}
	_ Stepper = RapFT{}
	_ Stepper = DPZO{}
)

// PlannedSteps implements Stepper.
func (NonPrivate) PlannedSteps(task, scale string, h Hyper) (int, string) {
	return loraSteps(task, scale, h), FirstOrder
}

// PlannedSteps implements Stepper.
func (DPSGD) PlannedSteps(task, scale string, h Hyper) (int, string) {
	return loraSteps(task, scale, h), FirstOrder
}

// PlannedSteps implements Stepper.
func (DualPriv) PlannedSteps(task, scale string, h Hyper) (int, string) {
	return loraSteps(task, scale, h), FirstOrder
}

// PlannedSteps implements Stepper.
func (RapFT) PlannedSteps(task, scale string, h Hyper) (int, string) {
	return loraSteps(task, scale, h), FirstOrder
}

// PlannedSteps implements Stepper.
func (DPZO) PlannedSteps(task, scale string, h Hyper) (int, string) {
	return loraSteps(task, scale, h), ZeroOrder
}

// loraSteps returns the steps of the LoRA loop (newLoRALoop) over the
// private split of task at scale (datasets.PrivateSize); 0 where its size
// is not known before the run.
func loraSteps(task, scale string, h Hyper) int {
	n, ok := datasets.PrivateSize(task, datasets.Scale(scale))
	if !ok || h.BatchSize <= 0 {
		return 0
	}
	steps, _ := h.steps(n)
	return steps
}
