// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package privacy provides the differential-privacy accounting that every ε
// reported by repro rests on: mechanisms described as composable events,
// a Rényi-DP accountant and a tight privacy-loss-distribution (PLD)
// accountant, calibration of the noise multiplier to a target (ε, δ), the
// analytic Gaussian mechanism, parameter checks, and seeded Gaussian noise.
//
// # Overview
//
// A private computation is described as an Event:
//
//   - Gaussian{Sigma, Sensitivity}: one Gaussian release (DP-MTV's mean,
//     a Sec-MMFL per-modality release); a Rap-FT step is
//     PoissonSampled{q, Gaussian{Sigma: σ, Sensitivity: √(r_w³ + r_s³)}},
//     its two-partition noise whitened to one effective multiplier;
//   - PoissonGaussian{Q, Sigma}: one DP-SGD step, the Poisson-subsampled
//     Gaussian with noise multiplier Sigma; PoissonSampled{Q, Event} is the
//     general form;
//   - SelfComposed{Event, Count} and Composed{…}: repetition and sequences of
//     heterogeneous phases (SPARTA's warm-up, scoring and sparse epochs);
//   - EpsilonDelta{Epsilon, Delta}: a mechanism known to be (ε, δ)-DP, such
//     as a report-noisy-max selection (δ = 0);
//   - NonPrivate{}: a release with no guarantee.
//
// An Accountant composes events and answers Epsilon(δ) and Delta(ε):
//
//   - RDP tracks Rényi DP at a grid of orders (a superset of Opacus's) and
//     converts with Balle et al. (2020), Thm 21; EpsilonOrder also reports
//     the optimal order and warns when it lies at the edge of the grid.
//   - PLD is tight: a connect-the-dots discretisation of the privacy loss
//     distribution composed by FFT. Its ε is an upper bound on the true ε;
//     EpsilonBounds gives an interval that contains the true ε, and TPR
//     the largest true-positive rate any membership attack can reach at a
//     given false-positive rate. PureInterval gives the grid spacing that
//     holds the losses ±ε of pure ε-DP releases (randomised responses)
//     exactly, so that their composition is read without discretisation
//     error; EpsilonDeltaTPR is the same bound for a mechanism known only
//     to be (ε, δ)-DP.
//
// The neighbouring relation is explicit (AddOrRemove by default;
// ReplaceOne where the event supports it). Calibrate finds the smallest
// noise multiplier whose ε does not exceed a target, never above it;
// AnalyticGaussianSigma does the same for one Gaussian release (Balle &
// Wang 2018), and ClassicalGaussianSigma gives the textbook bound.
//
// Summarize gives a run's privacy record (ε by both accountants, the RDP
// order, the PLD's error interval, warnings); MarshalEvent and
// UnmarshalEvent give events a JSON form for run manifests.
//
// A typical use, for DP-SGD with T steps of Poisson sampling at rate q:
//
//	a, _ := privacy.NewPLD(nil)
//	err := a.Compose(privacy.PoissonGaussian{Q: q, Sigma: sigma}, T)
//	eps, err := a.Epsilon(1e-5)
//
// Parameters are checked in one place, the Check functions: ε > 0 or +Inf,
// 0 ≤ δ < 1, finite σ ≥ 0, 0 ≤ q ≤ 1, steps ≥ 0; NaN and ±Inf are rejected
// with an error that names the parameter. Edge cases follow dp_accounting:
// σ = 0 gives ε = +Inf, q = 0 gives ε = 0.
//
// # Noise
//
// NewNoise returns a Gaussian noise stream seeded from a seed and a purpose
// name, so that runs reproduce bit for bit. Seeded noise is for reproducible
// research, not for production releases: anyone who knows the seed can
// subtract the noise. NewSecureNoise seeds from crypto/rand. Neither defends
// against floating-point attacks on the noise (Mironov 2012).
package privacy
