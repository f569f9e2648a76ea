// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"fmt"
	"math"
)

// An AxisKind describes a sweep axis: whether its values are integers and
// which values are allowed.
type AxisKind struct {
	Name string
	// Int is true for integer axes (their values are integral float64s).
	Int bool
	// Doc says what the axis is and its range.
	Doc string
	// Check returns an error for an out-of-range value.
	Check func(v float64) error
}

// Axes lists the sweep axes a spec may use, in the order runs are expanded
// (the last axis varies fastest).
var Axes = []AxisKind{
	{Name: "epsilon", Doc: "privacy budget ε > 0, or inf", Check: CheckEpsilon},
	{Name: "retention", Doc: "fraction of visual tokens kept, in (0, 1]", Check: halfOpenUnit},
	{Name: "prune_ratio", Doc: "fraction pruned, in [0, 1)", Check: unitOpenRight},
	{Name: "update_ratio", Doc: "fraction of blocks updated (P_K), in (0, 1]", Check: halfOpenUnit},
	{Name: "beta", Doc: "irrelevance ratio β, in [0, 1]", Check: unit},
	{Name: "sparsity", Doc: "fraction of rows kept, in (0, 1]", Check: halfOpenUnit},
	{Name: "lambda", Doc: "penalty weight λ ≥ 0", Check: nonNegative},
	{Name: "clip", Doc: "clipping norm C > 0", Check: positive},
	{Name: "lr", Doc: "learning rate > 0", Check: positive},
	{Name: "head_lr", Doc: "learning rate of the classifier head > 0", Check: positive},
	{Name: "epochs", Doc: "passes over the training set in expectation > 0", Check: positive},
	{Name: "phi", Doc: "DPZO's perturbation scale φ > 0", Check: positive},
	{Name: "chunks", Int: true, Doc: "chunk count K ≥ 1", Check: atLeast(1)},
	{Name: "shots", Int: true, Doc: "demonstrations per prompt N ≥ 0", Check: atLeast(0)},
	{Name: "clients", Int: true, Doc: "federated clients of fl-mm's partition ≥ 1 (a data param)", Check: atLeast(1)},
	{Name: "dirichlet_alpha", Doc: "Dirichlet concentration α > 0 of fl-mm's label skew across clients (a data param)", Check: positive},
	{Name: "train_holdout", Int: true, Doc: "control: 1 fine-tunes on the holdout split in place of the private one (no private record, no canary; the attacks still target the private split), 0 on the private split (a data param)", Check: zeroOrOne},
	{Name: "shapes_balanced", Int: true, Doc: "1: shapes-vqa's private-side questions with answers balanced within each kind (its public split as it is), 0: as generated (a data param; other tasks ignore it)", Check: zeroOrOne},
	{Name: "vision_patch", Int: true, Doc: "side of the vision encoder's patches in pixels, dividing the 28-pixel images: 4 gives 49 patches an image, with a base pretrained for it (a base param; absent: the preset's)", Check: divides(28)},
	{Name: "vision_scenes", Int: true, Doc: "1: the base whose vision encoder also learnt public scene objects' colours and shapes (pretrain --scenes), 0: the preset's (a base param)", Check: zeroOrOne},
	{Name: "shapes_questions", Int: true, Doc: "1: the base whose pretraining mixture also holds public shapes-vqa questions of every kind (pretrain --shapes-questions), 0: the preset's (a base param)", Check: zeroOrOne},
	{Name: "caption_stage", Int: true, Doc: "1: the base pretrained with a captions-only stage before the mixture (pretrain --captions, LLaVA's feature alignment), 0: the preset's (a base param)", Check: zeroOrOne},
	{Name: "cell_captions", Int: true, Doc: "N ≥ 1: the base pretrained with a captions-only stage on cell-first scene captions (\"at the top left a red circle and …\") for N times the mixture's steps, the vision encoder trained too, the captions kept in the mixture (pretrain --cell-captions --caption-scale N --caption-vision), 0: the preset's (a base param)", Check: atLeast(0)},
	{Name: "cell_form", Int: true, Doc: "with cell_captions: the form of the cell-first descriptions in the stage and the mixture, 1: the cells in a random order, 2: one named cell a sequence (\"what is at the bottom right ?\" → \"a red circle\"), 3: public colour-at and shape-at questions about every cell, 4: 2 and 3, 5: 1 and 3, 6: 2 on public layouts drawn afresh every pass, 7: 4 so, 8: 1 so (pretrain --cell-form), 0: the fixed order (a base param)", Check: within(0, 8)},
	{Name: "server_step", Doc: "FedAvg server step η_s on the mean upload > 0 (1: plain FedAvg)", Check: positive},
	{Name: "local_lr", Doc: "federated clients' local SGD learning rate > 0", Check: positive},
	{Name: "noise_scale", Doc: "control: scale of the noise σ against the calibrated σ > 0 (≠ 1 plants an under-noised run)", Check: positive},
	{Name: "seed", Int: true, Doc: "seed, an integer in [0, 2⁵³]", Check: atLeast(0)},
}

func axisKind(name string) (AxisKind, int, bool) {
	for i, a := range Axes {
		if a.Name == name {
			return a, i, true
		}
	}
	return AxisKind{}, -1, false
}

func finite(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%v is not a finite number", v)
	}
	return nil
}

func unit(v float64) error {
	if err := finite(v); err != nil {
		return err
	}
	if v < 0 || v > 1 {
		return fmt.Errorf("%v is not in [0, 1]", v)
	}
	return nil
}

func halfOpenUnit(v float64) error {
	if err := finite(v); err != nil {
		return err
	}
	if v <= 0 || v > 1 {
		return fmt.Errorf("%v is not in (0, 1]", v)
	}
	return nil
}

func unitOpenRight(v float64) error {
	if err := finite(v); err != nil {
		return err
	}
	if v < 0 || v >= 1 {
		return fmt.Errorf("%v is not in [0, 1)", v)
	}
	return nil
}

func nonNegative(v float64) error {
	if err := finite(v); err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%v is negative", v)
	}
	return nil
}

func positive(v float64) error {
	if err := finite(v); err != nil {
		return err
	}
	if v <= 0 {
		return fmt.Errorf("%v is not > 0", v)
	}
	return nil
}

// maxInt is the largest integer an axis or id may hold exactly in a float64.
const maxInt = 1 << 53

func atLeast(lo float64) func(float64) error {
	return func(v float64) error {
		if err := finite(v); err != nil {
			return err
		}
		if v < lo || v > maxInt {
			return fmt.Errorf("%v is not in [%v, 2⁵³]", v, lo)
		}
		return nil
	}
}

// within returns a check that v is in [lo, hi].
func within(lo, hi float64) func(float64) error {
	return func(v float64) error {
		if err := finite(v); err != nil {
			return err
		}
		if v < lo || v > hi {
			return fmt.Errorf("%v is not in [%v, %v]", v, lo, hi)
		}
		return nil
	}
}

func zeroOrOne(v float64) error {
	if v != 0 && v != 1 {
		return fmt.Errorf("%v is not 0 or 1", v)
	}
	return nil
}

// divides returns a check that v is a positive divisor of n.
func divides(n int) func(v float64) error {
	return func(v float64) error {
		if v < 1 || n%int(v) != 0 {
			return fmt.Errorf("%v does not divide %d", v, n)
		}
		return nil
	}
}
