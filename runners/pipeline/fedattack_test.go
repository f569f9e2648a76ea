// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// TestFusionTarget checks the membership target of a federated run: the
// members are every client's private examples that are not canary copies
// (each its (image, caption) pair, class and index in the private split),
// the non-members the holdout; loss-mia runs on it; an attack that reads
// answer tokens (mink-mia) is an error naming the attacks a federated run
// takes, and a task without a holdout has no non-members.
func TestFusionTarget(t *testing.T) {
	t.Parallel()
	d, err := DataPart("fl-mm", "smoke", 1, experiments.Partition{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := fusionTarget(m, d, results.Privacy{})
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for i, e := range d.Private {
		if e.Canary < 0 {
			want = append(want, i)
		}
	}
	if len(want) == len(d.Private) || len(want) == 0 {
		t.Fatalf("fl-mm at smoke: %d of %d private examples are not canary copies; the test needs both kinds", len(want), len(d.Private))
	}
	if len(tg.Members) != len(want) || len(tg.NonMembers) != len(d.Holdout) {
		t.Fatalf("%d members and %d non-members, want %d and %d", len(tg.Members), len(tg.NonMembers), len(want), len(d.Holdout))
	}
	check := func(side string, got attacks.Example, e *datasets.Example, id int) {
		t.Helper()
		if got.ID != int64(id) || got.Label != e.Label || !slices.Equal(got.Seq.Tokens, e.Prompt) || len(got.Seq.Images) != 1 || &got.Seq.Images[0][0] != &e.Images[0][0] {
			t.Errorf("%s %d: id %d, label %d, tokens %v: not the example's pair", side, id, got.ID, got.Label, got.Seq.Tokens)
		}
	}
	for j, i := range want {
		check("member", tg.Members[j], &d.Private[i], i)
	}
	for i := range d.Holdout {
		check("non-member", tg.NonMembers[i], &d.Holdout[i], i)
	}
	if tg.Fusion != m || tg.Model != nil || tg.Classifier != nil || tg.TPRBound != nil {
		t.Errorf("target: fusion %v, model %v, classifier %v, bound set %v", tg.Fusion != nil, tg.Model != nil, tg.Classifier != nil, tg.TPRBound != nil)
	}
	rep, err := (attacks.LossMIA{}).Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results["mia_members"] != float64(len(want)) || rep.Results["mia_nonmembers"] != float64(len(d.Holdout)) {
		t.Errorf("loss-mia: %v members, %v non-members", rep.Results["mia_members"], rep.Results["mia_nonmembers"])
	}

	ecfg := &experiments.Config{Method: "fedavg", Attacks: []string{"mink-mia"}}
	err = fedAttackStage(context.Background(), ecfg, m, &methods.Result{}, d, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "mink-mia needs a tinymllm; a federated run takes gia-upload, gia-round, loss-mia, maxrenyi-mia") {
		t.Errorf("mink-mia on a federated run: error %v", err)
	}
	tune, err := DataPart("fl-mm-tune", "smoke", 1, experiments.Partition{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fusionTarget(m, tune, results.Privacy{}); err == nil || !strings.Contains(err.Error(), "no holdout") {
		t.Errorf("fl-mm-tune (no holdout): error %v", err)
	}
}
