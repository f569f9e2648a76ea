// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"maps"
	"regexp"
	"slices"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/methods"
)

// knownMetrics are the names of the results and run-table columns that
// runs record outside the families of metricFamily: the tasks' accuracies
// and perplexities, the privacy record, the methods' diagnostics and the
// attacks' fixed results. The spec checker uses them to catch a
// misspelt metric in a table, plot or claim (experiments.Names.Metrics);
// every column of the checked-in run tables under results/baselines is
// one of them or of a family (TestKnownMetricsCoverBaselines).
var knownMetrics = []string{
	// run columns and the privacy record
	"run_id", "experiment", "status", "error", "method", "task", "scale", "seed",
	"epsilon_target", "epsilon", "delta", "sigma", "sample_rate", "steps", "seconds",
	"epsilon_nominal", "epsilon_pld", "epsilon_rdp", "epsilon_tight", "oracle_epsilon",
	"sigma_eff", "sigma_nominal", "step_seconds", "train_peak_bytes",
	"trainable_params", "trainable_params_adapter", "trainable_params_bias", "trainable_params_embedding",
	"trainable_params_head", "trainable_params_lora_a", "trainable_params_lora_b",
	"trainable_params_norm", "trainable_params_weight", "visual_tokens", "train_loss",
	// tasks
	"acc", "img", "acc_text", "acc_majority", "label_acc", "ppl", "ppl_e2e", "ppl_echr", "records_ppl",
	"heldout_acc", "heldout_n", "finetune_base_acc", "finetune_gain",
	"icl_zero_shot_acc", "icl_few_shot_acc", "icl_nn_acc", "icl_gain", "icl_shots",
	// methods
	"rapft_analysis_peak_bytes", "rapft_analysis_seconds", "rapft_clip_strong", "rapft_clip_weak", "rapft_lrp_split_error",
	"rapft_noise_strong", "rapft_noise_weak", "rapft_weak_share",
	"sparta_score_steps", "sparta_sparse_step_seconds", "sparta_sparse_steps", "sparta_trainable_fraction", "sparta_warmup_steps",
	"mtv_chunks", "mtv_clip", "mtv_cosine", "mtv_heads", "mtv_layers", "mtv_noise_norm",
	"mtv_sensitivity", "mtv_shots", "mtv_sigma", "mtv_signal_norm",
	// federated methods: the simulation's counts (fl_*; run tables made before
	// the rename carry them without the prefix), communication, and the
	// baselines' noise; epsilon_basic, the sum of the modalities' ε, is no
	// longer recorded but is a column of a checked-in table made before
	// the modalities' σ were calibrated jointly
	"fl_clients", "fl_clients_per_round", "fl_local_steps", "fl_rounds",
	"clients", "clients_per_round", "local_steps", "rounds", "max_participations",
	"upload_floats", "download_floats", "epsilon_basic", "epsilon_coordinate", "radius",
	"sigma_download", "sigma_server", "sigma_upload",
	// attacks
	"audit_canaries", "audit_correct", "audit_epsilon", "audit_epsilon_lb", "audit_epsilon_median",
	"audit_guesses", "audit_pass", "audit_runs_epsilon_lb", "audit_runs_fp", "audit_runs_in",
	"audit_runs_out", "audit_runs_pass", "audit_runs_tp",
	"mean_audit_epsilon", "mean_audit_epsilon_lb", "mean_audit_fpr", "mean_audit_tpr", "mean_audit_trials",
	"ea_precision", "ea_recall", "exposure_max",
	"lira_shadows", "lira_undefined",
	"pii_base_precision", "pii_base_recall", "pii_names_generated", "pii_precision", "pii_recall",
	"ra_base_top1", "ra_targets", "ra_top1", "recon_base_top1", "recon_chance", "recon_top1",
}

// metricFamily matches the metrics that attacks name by their options or
// score sets: a membership-inference score's statistics
// (<prefix>_auc_lo, <prefix>_tpr_at_fpr_0_01, ...), the exposure of
// canaries repeated r times, gradient inversion at batch size k and of
// federated uploads and rounds (gia_upload_*, gia_round_*), and
// Sec-MMFL's per-modality budgets, σ and leakage risks at risk
// re-estimation r (epsilon_image_r0, risk_text_r0, ...).
var metricFamily = regexp.MustCompile(`^(` +
	`[a-z0-9_]+_(auc|advantage|balanced_accuracy)(_lo|_hi)?` +
	`|[a-z0-9_]+_(tpr_at_fpr|tpr_rand|tie_members|tie_nonmembers|tpr_lower|tpr_lo|tpr_hi|tpr_bound|fpr_upper|fpr_achieved|fp)_0_[0-9]+` +
	`|[a-z0-9_]+_(members|nonmembers)` +
	`|exposure_(extrap_)?rep[0-9]+` +
	`|gia_b[0-9]+_[a-z_]+` +
	`|gia_upload_[a-z_]+` +
	`|gia_round_[a-z_]+` +
	`|(epsilon|sigma|risk|risk_estimate)_[a-z]+_r[0-9]+` +
	`|epsilon_accounted_[a-z]+` +
	`|head_group_r[0-9]+` +
	`)$`)

// knownMetric reports whether runs record a metric called name.
func knownMetric(name string) bool {
	return slices.Contains(knownMetrics, name) || metricFamily.MatchString(name)
}

// effective returns the effective settings of run c's params where its
// method knows them (methods.Effector), for the spec checker.
func effective(c *experiments.Config) map[string]string {
	m, ok := methods.Lookup(c.Method)
	if !ok {
		return nil
	}
	e, ok := m.(methods.Effector)
	if !ok || c.Patch() != 0 {
		// Effector reads the preset's patches; a base param changes them.
		return nil
	}
	h, err := resolve(c)
	if err != nil {
		return nil
	}
	return e.Effective(c.Task, c.Scale, h)
}

// plannedSteps returns the steps run c will take and their cost class
// where its method knows them before it runs (methods.Stepper), for the
// runner's ETA; 0 steps otherwise.
func plannedSteps(c *experiments.Config) (int64, string) {
	m, ok := methods.Lookup(c.Method)
	if !ok {
		return 0, ""
	}
	st, ok := m.(methods.Stepper)
	if !ok {
		return 0, c.Method
	}
	for _, k := range experiments.DataParams {
		if _, ok := c.Params[k]; ok && k != "shapes_balanced" {
			return 0, "" // the data differ from the task's at scale (balanced answers keep its sizes)
		}
	}
	h, err := resolve(c)
	if err != nil {
		return 0, ""
	}
	steps, class := st.PlannedSteps(c.Task, c.Scale, h)
	return int64(steps), class
}

// resolve returns the hyperparameters of run c, as fineTuneStage resolves
// them: the variant label and the data params are not among them.
func resolve(c *experiments.Config) (methods.Hyper, error) {
	params := maps.Clone(c.Params)
	delete(params, experiments.VariantParam)
	for _, k := range slices.Concat(experiments.DataParams, experiments.BaseParams) {
		delete(params, k)
	}
	return methods.ResolveAt(c.Method, c.Scale, float64(c.Epsilon), params)
}
