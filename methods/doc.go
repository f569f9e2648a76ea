// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package methods provides the fine-tuning methods of repro behind one small
// interface, Method, with a registry by name: the baselines nonprivate,
// dpsgd (DP-SGD on LoRA) and dpzo (differentially private zeroth-order
// fine-tuning, Algorithm 3 of the Dual-Priv paper).
//
// # Usage
//
// A Job holds a fresh copy of the pretrained base model, the private training
// sequences, the hyperparameters, the privacy target and a seed:
//
//	h, _ := methods.Defaults("dpsgd", "smoke")
//	h, ignored, err := h.Parse(cfg.Params) // a spec's params override defaults
//	m, _ := methods.Lookup("dpsgd")
//	res, err := m.FineTune(ctx, &methods.Job{Model: model, Train: train, Hyper: h,
//		Epsilon: 8, Delta: 1e-5, Seed: 1})
//
// FineTune adds LoRA to the model, trains it in place and returns a Result:
// the privacy record (DESIGN §5), the ε of the executed mechanism under both
// accountants, per-step metrics, and the time and memory of a step.
//
// # Privacy
//
// Batches are drawn by Poisson sampling at rate q = B/N and gradients are
// normalised by the expected batch size q·N, exactly the mechanism the
// accountant's PoissonGaussian event describes (ANCHORS §1.7, pitfall 1).
// σ is calibrated by the accountant named in Hyper (RDP by default, as the
// paper) to the run's target ε over its (q, steps); the achieved ε never
// exceeds the target, and FineTune fails rather than record one that does.
// The relation is add-or-remove-one record.
//
// # Decisions where the papers leave room
//
//   - DP-SGD at ε = ∞ still clips (σ = 0): the row then isolates the cost
//     of clipping, and nonprivate (no clipping) is the unclipped reference.
//   - nonprivate uses the same Poisson sampler and normaliser as DP-SGD, so
//     the two differ only by clipping and noise. It refuses a finite ε.
//   - DPZO's direction z covers every LoRA tensor (Table 7: "Fine-tuning
//     Method LoRA"); the clip applies to the raw loss difference, not to it
//     over 2φ (Algorithm 3, line 8); its step is plain SGD.
//   - The loss of an example is the mean cross-entropy over its answer
//     tokens (nn.TinyMLLM.Loss), not the sum of Dual-Priv's Eq. (3), so the
//     clip norm C = 1 means the same for short and long answers.
//   - Hyperparameters by scale are in Defaults; the spec's params override
//     them (ParamNames).
//
// # Determinism
//
// Every random stream (sampler, LoRA initialisation, noise, DPZO's
// directions) is derived from Job.Seed and a purpose name (the Stream
// constants), and every computation is reduced in a fixed order, so the same
// job gives the same bits whatever GOMAXPROCS and Job.Workers are. Seeded
// noise is for reproducible research only: anyone who knows the seed can
// remove it, so the models are not production DP releases.
package methods
