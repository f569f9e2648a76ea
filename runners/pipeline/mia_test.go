// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners"
)

func init() { attacks.Register(violator{}) }

// violator is a test attack whose report always has a violation.
type violator struct{}

func (violator) Name() string { return "test-violator" }

func (violator) Run(context.Context, *attacks.Target) (*attacks.Report, error) {
	return &attacks.Report{Results: map[string]float64{"violator_ran": 1}, Violations: []string{"test-violator: planted violation"}}, nil
}

const controlSpec = `
name: controls
description: the membership-inference and audit controls
scale: smoke
delta: 1e-5
tasks: [shapes-vqa-mia]
params: {epochs: 300, batch_size: 16, schedule: cosine, lr: 0.01}
methods:
  - name: nonprivate
    sweep: {epsilon: [inf]}
  - name: dpsgd
    sweep: {noise_scale: [1, 0.0001]}
sweep:
  epsilon: [0.1]
attacks: [loss-mia, audit-one-run]
`

// TestControls runs the controls of the audit experiment's mechanism at
// the smoke preset (on a freshly initialised base): the non-private run on
// shapes-vqa-mia's 16 members, trained for 300 epochs with a cosine
// learning-rate decay (without it, Adam at a constant rate keeps
// unlearning what it memorised) at the learning rate 0.01 (pinned, so that
// the defaults tuned on public data do not move the control), must leak to
// the loss attack: the lower limit of its AUC's interval above 0.5. (The
// issue's bar of AUC ≥ 0.75 is held by the stronger attack the suite has
// for it, in TestLiRAControl; on this fresh base the loss attack's AUC
// scatters between 0.55 and 0.81 with the learning rate and the base's
// draw.) The honest DP-SGD run at ε = 0.1 must pass the
// one-run audit, and the planted under-noised one (noise_scale 1e-4, ε
// still accounted as 0.1) must fail it, recorded as a warning on a run
// that is otherwise ok.
func TestControls(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three models for 300 epochs")
	}
	freshBase(t)
	root, rows := sweepSpec(t, "controls.yaml", controlSpec, 2, 3)
	for _, r := range rows {
		planted := r.Params["noise_scale"] == 0.0001
		t.Logf("%s noise_scale %v: mia_auc %.3f [%.3f, %.3f] tpr@1%% %.3f, audit ε ≥ %.3f (%v of %v) pass %v",
			r.Method, r.Params["noise_scale"], r.Results["mia_auc"], r.Results["mia_auc_lo"], r.Results["mia_auc_hi"], r.Results["mia_tpr_at_fpr_0_01"],
			r.Results["audit_epsilon_lb"], r.Results["audit_correct"], r.Results["audit_guesses"], r.Results["audit_pass"])
		switch {
		case r.Method == "nonprivate":
			if lo := r.Results["mia_auc_lo"]; !(lo > 0.5) {
				t.Errorf("non-private control: AUC %v, interval from %v, want it above 0.5", r.Results["mia_auc"], lo)
			}
		case planted:
			if r.Results["audit_pass"] != 0 || !(r.Results["audit_epsilon_lb"] > 0.1) {
				t.Errorf("planted control: audit ε ≥ %v, pass %v; want a failed audit", r.Results["audit_epsilon_lb"], r.Results["audit_pass"])
			}
			m, err := results.ReadManifest(results.RunDir(root, "controls", r.RunID))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(m.Warnings, "\n"), "planted under-noised control") {
				t.Errorf("planted control: warnings %q, want the expected audit failure", m.Warnings)
			}
		default:
			if r.Results["audit_pass"] != 1 {
				t.Errorf("honest DP-SGD at ε = 0.1: audit ε ≥ %v fails", r.Results["audit_epsilon_lb"])
			}
		}
	}
}

// TestViolationFailsRun checks that a violation in an attack's report
// fails the run after its results are recorded, and that an attack the
// run lacks the data for (audit-one-run without canaries) fails the run
// with an error naming what is missing while the other attacks still run.
func TestViolationFailsRun(t *testing.T) {
	freshBase(t)
	for _, tc := range []struct {
		attack, want string
	}{
		{"test-violator", "planted violation"},
		{"audit-one-run", "audit canaries"},
	} {
		spec := strings.NewReplacer("tasks: [shapes-vqa-mia]", "tasks: [shapes-vqa]", "epochs: 300", "epochs: 1",
			"attacks: [loss-mia, audit-one-run]", "attacks: ["+tc.attack+", loss-mia]",
			"    sweep: {noise_scale: [1, 0.0001]}\n", "").Replace(controlSpec)
		s, err := experiments.Parse("v.yaml", []byte(spec), nil)
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		sum, _ := runners.Sweep(context.Background(), s, &runners.Options{Root: root, Jobs: 1, Only: []string{"method=dpsgd"}})
		if sum.Failed != 1 {
			t.Fatalf("%s: summary %+v, want one failed run", tc.attack, sum)
		}
		if f := sum.Failures[0]; !strings.Contains(f.Err, tc.want) {
			t.Errorf("%s: run failed with %q, want %q", tc.attack, f.Err, tc.want)
		}
		m, err := results.ReadManifest(results.RunDir(root, "controls", sum.Failures[0].ID))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Results["mia_auc"]; !ok {
			t.Errorf("%s: the failed run did not record loss-mia's results: %v", tc.attack, m.Results)
		}
	}
}
