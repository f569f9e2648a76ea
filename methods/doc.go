// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package methods provides the fine-tuning methods of repro behind one small
// interface, Method, with a registry by name: the baselines nonprivate,
// dpsgd (DP-SGD on LoRA) and dpzo (differentially private zeroth-order
// fine-tuning, Algorithm 3 of the Dual-Priv paper), dualpriv (Dual-Priv
// Pruning: DP-SGD with visual token pruning and top-K% block updates) and
// rapft (Rap-FT: a relevance mask from layer-wise relevance propagation and
// DP-SGD with two-partition clipping and noise), which train TinyMLLM, and
// sparta (SPARTA: DP-BitFit warm-up, private ℓ₁ row scores, sparse DP-SGD
// on the ViT classifier, with the paper's baseline masks as its mask
// hyperparameter). Every method that trains TinyMLLM takes the PEFT family
// as a hyperparameter (peft: lora, adapter or bitfit). On the fusion
// classifier and fl-mm's federated clients (package fl): fedavg
// (non-private FedAvg or FedSGD) and secmmfl (Sec-MMFL: per-modality local
// DP with budgets ε_i = ε·softmax(−R_i) from conditional-MI leakage risks,
// and a MINE cross-modal penalty; package mi) with its uniform baseline
// ldpfed (ε_i = ε/M, no penalty). In context, without training, on the
// icl task: dpmtv (DP-MTV: one analytic-Gaussian release of the clipped
// mean head outputs of disjoint in-context prompts, heads chosen publicly
// by REINFORCE or privately by the Gumbel mechanism, applied by
// nn.Steering), mtv (clean MTV, its non-private reference), zeroshot and
// fewshot (the query alone; one private episode's demonstrations before
// it).
//
// # Usage
//
// A Job holds a fresh copy of the pretrained base model of the method's
// architecture, the task's dataset (the members are its private split),
// the resolved hyperparameters, the privacy target and a seed:
//
//	h, err := methods.ResolveAt("dpsgd", "smoke", 8, cfg.Params) // defaults at ε = 8, then the spec's params
//	m, _ := methods.Lookup("dpsgd")
//	res, err := m.FineTune(ctx, &methods.Job{Model: model, Data: data, Hyper: h,
//		Epsilon: 8, Delta: 1e-5, Seed: 1})
//
// FineTune trains the model in place and returns a Result: the privacy
// record, the ε of the executed mechanism under both accountants, per-step
// metrics, and the time and memory of a step.
//
// # Adding a method
//
// A method is one file: a type with Name, Arch (the base it fine-tunes:
// tinymllm, vit or fusion), Params (its hyperparameters: name, kind,
// default per scale, or per scale and target ε (Param.ByEpsilon), range;
// the LoRA recipe is loraParams) and FineTune,
// registered from an init function. The spec checker, Resolve and the
// pipeline read nothing else. Methods that train build on the shared
// pieces:
//
//   - a Privatizer, the only code that clips and adds noise: per-example
//     contributions clipped jointly or per group, summed, noised per group
//     and divided by the expected batch size, with a Report of what it did;
//   - the training loop (loop): Poisson batch → update (privatised or
//     plain) → optional mask hook after the noise (Dual-Priv's top-K%
//     blocks, SPARTA's rows: optim.Mask, whose Reset zeroes the masked
//     moments) → optimizer step → metrics;
//   - the accounting (sampledGaussianAccounting): σ calibrated to the
//     target so that the achieved ε never exceeds it.
//
// # Privacy
//
// Batches are drawn by Poisson sampling at rate q = B/N and gradients are
// normalised by the expected batch size q·N, exactly the mechanism the
// accountant's PoissonGaussian event describes (dividing by the realised
// batch size, a common pitfall, would make the batch size itself leak).
// σ is calibrated by the accountant named in Hyper (RDP by default, as the
// paper) to the run's target ε over its (q, steps); the achieved ε never
// exceeds the target, and FineTune fails rather than record one that does.
// The relation is add-or-remove-one record.
//
// # Decisions where the papers leave room
//
//   - DP-SGD at ε = ∞ still clips (σ = 0): the row then isolates the cost
//     of clipping, and nonprivate (no clipping) is the unclipped reference.
//   - Rap-FT (RapFT): relevance by the α-β rule (α = 0.5) through linear
//     maps and the z-rule for parameters, pass-through for GELU, LayerNorm
//     and softmax, top-p (0.9) initialisation at the answer positions,
//     summed over positions and averaged over relevance_examples private
//     examples (an uncharged caveat; relevance_data=public avoids it);
//     zero-initialised PEFT tensors get small random values for the
//     analysis only; per-tensor min-max, one global threshold, r_w from
//     the actual mask; clips C·r² and noise σ√r·C as printed, ε recorded
//     both nominal (σ) and tight (σ_eff = σ/√(r_w³ + r_s³)); σ is DP-SGD's
//     at the target ε (calibrate=tight matches the tight ε instead).
//   - SPARTA: the warm-up trains the head, biases and LayerNorm
//     gains (the paper's code for DeiT); the scoring epoch clips the
//     warm-up tensors and the maskable weights jointly and takes the
//     absolute value per example before the noise (the paper's Eq. 11, not
//     its code's abs of the batch sum); rows are ranked by largest value,
//     ⌈s·R⌉ kept per layer; the scoring epoch moves nothing and does not
//     advance the learning-rate schedule; one σ for all T epochs (PLD by
//     default); each phase samples and draws noise from its own stream.
//   - nonprivate uses the same Poisson sampler and normaliser as DP-SGD, so
//     the two differ only by clipping and noise. It refuses a finite ε.
//   - DPZO's direction z covers every LoRA tensor (Table 7: "Fine-tuning
//     Method LoRA"); the clip applies to the raw loss difference, not to it
//     over 2φ (Algorithm 3, line 8), unless clip_scope is derivative (then
//     C_ZO bounds l_i/2φ, which keeps a small φ from burying the signal in
//     noise scaled for a loss difference); its step is plain SGD.
//   - The loss of an example is the mean cross-entropy over its answer
//     tokens (nn.TinyMLLM.Loss), not the sum of Dual-Priv's Eq. (3), so the
//     clip norm C = 1 means the same for short and long answers.
//   - Hyperparameters by scale are in each method's Params; the spec's
//     params override them (ResolveAt, with the run's target ε).
//     nonprivate's and dpsgd's learning rate and epochs at smoke and
//     small, and dpzo's clip scope, φ, learning rate and epochs at smoke
//     and small, were chosen on public validation data (the -tune tasks of
//     experiments tune-baselines: best mean validation accuracy). dpsgd's
//     at smoke were chosen at each ε of table1 and table10 (a run at
//     another ε takes the choice of the nearest tuned ε at or below it,
//     PerEpsilon.At), at small at ε = 3 (used at every ε ≥ 1) and at
//     table10's; dpzo's epochs at smoke at ε = 1 and 3; dualpriv and rapft
//     share dpsgd's, also on the records tasks, where nothing was tuned. A
//     default chosen by comparing test accuracy (none is now, at smoke and
//     small) is flagged in the privacy record's caveats of the runs that
//     keep it (Param.Tuned).
//   - Per-step metrics computed from private data without noise (realised
//     batch size, batch loss, clipped fraction) are diagnostics outside the
//     guarantee; the privacy record says so, and diagnostics=off drops
//     them. A non-finite per-example contribution counts as zero, so a NaN
//     loss never makes the sensitivity unbounded.
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
