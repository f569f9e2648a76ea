// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package mi provides neural estimators of information between sets of
// samples: the classifier-based conditional mutual information estimator
// with nearest-neighbour resampling (CMI; Sec-MMFL's leakage risk
// R_i = I(G; D^i | D^{-i})) and the Donsker–Varadhan estimator MINE
// (Sec-MMFL's cross-modal penalty λ·Î), both on small MLPs (MLP) trained by
// Adam. Values are in nats. Everything is deterministic given the seeds.
package mi
