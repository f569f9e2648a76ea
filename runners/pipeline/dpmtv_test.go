// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"testing"

	"github.com/repro-dp/repro/experiments"
)

// mtvSpec is a small DP-MTV spec whose values fit the icl task at smoke
// scale (32 private episodes of 4 shots, one language-model block).
const mtvSpec = `name: m
description: d
scale: smoke
tasks: [icl]
methods:
  - {name: dpmtv, params: {clip: 1, layers: "0"}, sweep: {chunks: [4, 8]}}
  - {name: zeroshot, params: {query_shots: 2}, sweep: {epsilon: [inf]}}
sweep:
  epsilon: [1]
  shots: [2]
`

// TestMTVSpecErrors checks that DP-MTV's data-bounded hyperparameters are
// refused at their lines before anything runs: a chunk count above the
// private episodes, shots above an episode's, a layer the model lacks.
func TestMTVSpecErrors(t *testing.T) {
	if _, err := experiments.Parse("m.yaml", []byte(mtvSpec), nil); err != nil {
		t.Fatal(err)
	}
	specErrors(t, "m.yaml", mtvSpec, []specEdit{
		{"chunks: [4, 8]", "chunks: [4, 800]", `m.yaml:6: task icl at smoke scale: chunks: 800 episodes asked, the task has 32 private episodes`},
		{"shots: [2]", "shots: [2, 5]", `m.yaml:10: task icl at smoke scale: shots: 5 demonstrations asked, an episode has 4`},
		{`layers: "0"`, `layers: "0,1"`, `m.yaml:6: task icl at smoke scale: layers: layer "1" is not a block index in [0, 1)`},
		{"query_shots: 2", "query_shots: 9", `m.yaml:7: task icl at smoke scale: query_shots: 9 demonstrations asked, an episode has 4`},
		{"clip: 1", "clip: -1", `m.yaml:6: clip = -1: want a finite value ≥ 0`},
	})
}
