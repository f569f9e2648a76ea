// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package attacks provides the privacy attacks that repro runs on every
// trained model, behind one small interface, Attack, with a registry by
// name:
//
//   - loss-mia: minus the loss (perplexity is a monotone transform of it);
//   - zlib-mia: the loss over the zlib length of the answer;
//   - ref-mia: the loss calibrated by the pretrained base as a reference
//     model (the base's loss minus the target's);
//   - mink-mia: Min-K% Prob, K = 10%, 20% by default (option k);
//   - maxrenyi-mia: MaxRényi-K% of VL-MIA, by default Rényi orders 0.5, 1,
//     2, ∞ × K = 0, 10, 100% × the position slices img, inst, desp,
//     inst_desp (options orders, k and slices);
//   - audit-one-run: the one-run privacy audit of Steinke, Nasr &
//     Jagielski (2023) on audit canaries;
//   - exposure: the canary exposure of Carlini et al. (2019), exact by
//     enumerating the secrets' space and by skew-normal extrapolation;
//   - pii-extraction: names extracted from sampled generations (Lukas et
//     al. 2023), with the base model as control and Rap-FT's EA metrics;
//   - pii-reconstruction: masked names reconstructed by likelihood among
//     a candidate list, and Rap-FT's RA.
//
// An attack may take options (Optioned): a table of Option declarations
// that the spec checker reads, like a method's hyperparameters, and
// Configure, which returns the attack with a spec's options. Without
// options an attack computes its default score sets.
//
// The extraction attacks decode with nn's KV cache (TinyMLLM.Extend,
// GenerateBatch).
//
// The membership attacks score private-train members against holdout
// non-members. Every score comes from one forward pass per example, shared
// by all the attacks run on one Target.
//
// # Metrics
//
// Membership attacks give every candidate a score (higher: more likely a
// member) and report, for each score set, from the ROC of the scores
// (NewROC, MembershipAlpha):
//
//   - AUC, ties counted ½; balanced accuracy, max over thresholds of
//     1 − (FPR + FNR)/2; advantage, max over thresholds of |TPR − FPR|;
//     each with a 95% stratified bootstrap interval;
//   - TPR at FPR 1e-1, 1e-2 and 1e-3: the largest TPR whose FPR is at most
//     the target, with the FPR achieved, the number of non-members it rests
//     on and a Clopper–Pearson 95% interval; missing, with a warning, when
//     the split has fewer than 1/FPR non-members;
//   - for a private run, the accountant's upper bound on the TPR
//     (privacy.PLD.TPR) at the Clopper–Pearson upper limit of the FPR, and
//     a violation when the Clopper–Pearson lower limit of the TPR exceeds
//     it: a correct accountant is flagged in at most BoundAlpha (1e-3) of
//     reports. The pipeline fails a run with a violation.
//
// Per-example scores are returned for scores.parquet, labelled by score
// set.
//
// Gradient-inversion attacks on one released update (images, labels and
// text tokens) are in the subpackage gia.
package attacks
