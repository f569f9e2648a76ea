// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package attacks provides the privacy attacks that repro runs on every
// trained model, behind one small interface, Attack, with a registry by
// name. The first is loss-mia, loss-threshold membership inference on
// private-train members against holdout non-members.
//
// # Metrics
//
// Membership attacks give every candidate a score (higher: more likely a
// member) and report, from the ROC of the scores (NewROC, Membership):
//
//   - AUC, ties counted ½;
//   - balanced accuracy, max over thresholds of 1 − (FPR + FNR)/2;
//   - advantage, max over thresholds of |TPR − FPR|;
//   - TPR at FPR 1e-2 and 1e-3: the largest TPR whose FPR is at most the
//     target, with the FPR achieved (with m non-members it is a multiple of
//     1/m, so 1e-3 needs m ≥ 1000 to be met exactly);
//   - for a private run, the accountant's upper bound on the TPR
//     (privacy.PLD.TPR) at the Clopper–Pearson upper limit of the FPR,
//     with a warning when the Clopper–Pearson lower limit of the TPR
//     exceeds it: a correct accountant is flagged in at most BoundAlpha
//     (1e-3) of reports.
//
// Per-example scores are returned for scores.parquet.
package attacks
