// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package pipeline provides the run lifecycle of repro's fine-tuning
// experiments: the runners.Executor that takes a resolved run from its
// pretrained base through fine-tuning, evaluation and attacks to its
// recorded results. Importing it registers Execute for every method of the
// methods registry, Inputs as the runners' inputs function, and the
// registries' names (methods with their hyperparameters and architectures,
// tasks, attacks) as the spec checker's (experiments.RegisterNames):
//
//	import _ "github.com/repro-dp/repro/runners/pipeline"
//
// The steps of a run are, in order (each a Recorder stage):
//
//  1. base: the scale's pretrained base of the method's architecture
//     (TinyMLLM, ViT or fusion classifier; package pretrain, cached in
//     <results>/pretrain or BaseDir), copied so the run owns its model;
//  2. data: the task's dataset at the run's scale and seed (package
//     datasets); the seed also seeds the method, so methods compared at
//     one seed see the same members;
//  3. fine-tune: the run's method (package methods) on the private split,
//     with the hyperparameters methods.Resolve gives for the run's params;
//  4. eval: for generative tasks, exact-match accuracy of greedy decoding
//     on the test split, acc on every example and img on those whose
//     answer needs the image (Dual-Priv §3.3's IMG), in percent, with
//     acc_text and, with diagnostics on, the majority baseline acc_majority
//     (it reads the private answers: a non-private diagnostic, labelled so
//     in the privacy record); for classifiers, acc;
//  5. attacks: the run's attacks (package attacks), members the private
//     examples that are not canary copies, non-members every holdout
//     example, audit canaries those of the task (the -mia tasks); a TPR
//     above the accountant's bound or an audit bound above the accounted ε
//     fails the run, except in a planted under-noised control. The attacks
//     also see how the method releases one update (methods.Result.Release,
//     for the gradient-inversion attack gia, which package attacks/gia
//     registers: importing pipeline imports it) and the task's public
//     examples; the images an attack returns are written to the run's
//     folder as images/<name>.png for the grid plot kind.
//
// # Recorded results
//
// runs.parquet gets, besides the runner's columns (epsilon, sigma, ...):
// acc, img, acc_text, acc_majority; epsilon_rdp and epsilon_pld (the ε of
// the executed mechanism under both accountants); step_seconds and
// train_peak_bytes (nn.Meter); visual_tokens (dpsgd, dualpriv); and the
// attack results (mia_auc, mia_balanced_accuracy, mia_advantage,
// mia_tpr_at_fpr_0_01, mia_fpr_achieved_0_01, ..., and for private runs
// mia_tpr_bound_0_01, the accountant's bound at the Clopper–Pearson upper
// limit of the FPR, with mia_fpr_upper_0_01 and mia_tpr_lower_0_01). metrics.parquet gets the per-step training loss,
// batch size and clipped fraction (split train; non-private diagnostics,
// dropped with diagnostics=off) and the final test metrics (split test).
package pipeline
