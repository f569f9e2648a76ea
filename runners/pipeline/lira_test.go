// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"testing"
)

const liraSpec = `
name: lira
description: the LiRA control
scale: smoke
delta: 1e-5
tasks: [shapes-vqa-lira]
params: {epochs: 300, batch_size: 16, schedule: cosine}
methods:
  - name: nonprivate
sweep:
  epsilon: [inf]
  seed: [1, 2, 3, 4, 5, 6, 7, 8]
attacks: [lira-mia]
`

// TestLiRAControl runs LiRA's non-private control at the smoke preset, on
// the pretrained smoke base (built into the test's folder): eight runs
// over shapes-vqa-lira's pool of 32, each trained on its own random half
// for 300 epochs, are each other's shadows; LiRA must tell members from
// non-members (online AUC ≥ 0.75 averaged over the eight targets), and the
// multi-run audit's guess must find the canary in exactly the runs that
// trained on it. Eight runs are too few for a positive ε bound (16 give at
// most 0.31), so the test checks the guesses, which the bound is made of.
// On a freshly initialised base LiRA works as well but no run learns the
// canary's answer of another kind: the audit needs the pretrained base.
func TestLiRAControl(t *testing.T) {
	if testing.Short() {
		t.Skip("trains six models for 300 epochs")
	}
	_, rows := sweepSpec(t, "lira.yaml", liraSpec, 2, 8)
	mean := 0.0
	for _, r := range rows {
		t.Logf("seed %d: conf_auc %.3f lira online %.3f (pe %.3f) offline %.3f, shadows %v; audit over runs ε ≥ %.3f (tp %v/%v fp %v/%v)",
			r.Seed, r.Results["conf_auc"], r.Results["lira_online_auc"], r.Results["lira_online_pe_auc"], r.Results["lira_offline_auc"],
			r.Results["lira_shadows"], r.Results["audit_runs_epsilon_lb"], r.Results["audit_runs_tp"], r.Results["audit_runs_in"],
			r.Results["audit_runs_fp"], r.Results["audit_runs_out"])
		if r.Results["lira_shadows"] != 7 {
			t.Errorf("seed %d: %v shadows, want 7", r.Seed, r.Results["lira_shadows"])
		}
		if _, ok := r.Results["audit_runs_epsilon_lb"]; !ok {
			t.Errorf("seed %d: no multi-run audit", r.Seed)
		}
		if r.Results["audit_runs_tp"] != r.Results["audit_runs_in"] || r.Results["audit_runs_fp"] != 0 {
			t.Errorf("seed %d: the audit guessed the canary in for %v of %v runs with it and %v of %v without, want all and none",
				r.Seed, r.Results["audit_runs_tp"], r.Results["audit_runs_in"], r.Results["audit_runs_fp"], r.Results["audit_runs_out"])
		}
		mean += r.Results["lira_online_auc"] / float64(len(rows))
	}
	if mean < 0.75 {
		t.Errorf("non-private LiRA control: mean online AUC %.3f, want ≥ 0.75", mean)
	}
	// The pooled ROC is one curve over every run as target: the same in
	// every row, and as strong as the runs' own.
	pooled := rows[0].Results
	t.Logf("pooled: online AUC %.3f, TPR %.3f at 1%% FPR over %v non-members",
		pooled["lira_pooled_online_auc"], pooled["lira_pooled_online_tpr_at_fpr_0_01"], pooled["lira_pooled_online_nonmembers"])
	for _, r := range rows {
		if r.Results["lira_pooled_online_auc"] != pooled["lira_pooled_online_auc"] {
			t.Errorf("seed %d: pooled AUC %v, seed %d's %v", r.Seed, r.Results["lira_pooled_online_auc"], rows[0].Seed, pooled["lira_pooled_online_auc"])
		}
	}
	if a := pooled["lira_pooled_online_auc"]; !(a >= 0.75) {
		t.Errorf("non-private LiRA control: pooled online AUC %.3f, want ≥ 0.75", a)
	}
}
