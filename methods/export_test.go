// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"

	"github.com/repro-dp/repro/nn"
)

// RapFTFirstStep builds Rap-FT's loop on job as FineTune does (relevance
// analysis and calibration included), runs the loop's first step on the
// training examples idx and returns the step's privatised update, the
// layout of the trainable tensors and the release FineTune declares.
func RapFTFirstStep(job *Job, idx []int) ([]float32, *nn.Layout, *Release, error) {
	l, _, part, _, err := rapftLoop(context.Background(), job)
	if err != nil {
		return nil, nil, nil, err
	}
	g := make([]float32, l.layout.Size)
	if _, err := l.update(0, idx, g); err != nil {
		return nil, nil, nil, err
	}
	return g, l.layout, part.release(job.Hyper), nil
}

// DPZOFirstStep builds DPZO's loop on job as FineTune does, runs its first
// step on the training examples idx and returns the step's update
// s·z/(2φ), the layout and the release FineTune declares.
func DPZOFirstStep(job *Job, idx []int) ([]float32, *nn.Layout, *Release, error) {
	l, _, rel, err := dpzoLoop(job)
	if err != nil {
		return nil, nil, nil, err
	}
	g := make([]float32, l.layout.Size)
	if _, err := l.update(0, idx, g); err != nil {
		return nil, nil, nil, err
	}
	return g, l.layout, &Release{ZO: rel}, nil
}

// SmokeJob and TrainOf are smokeJob and trainOf for the external tests.
var (
	SmokeJob = smokeJob
	TrainOf  = trainOf
)
