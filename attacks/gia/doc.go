// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package gia implements gradient-inversion attacks: what an attacker who
// sees one released update of a batch recovers of the batch's images,
// labels and text tokens.
//
// # Threat model
//
// The attacker knows the architecture and the weights at the step, and
// sees one update of a batch of B examples (B = 1 by default) exactly as
// the method releases it (Release): the raw mean gradient (non-private
// training, FedAvg), the clipped mean, the clipped and noised mean (DP-SGD,
// Sec-MMFL's per-modality noise through a grouped clip rule), or the
// noised mean restricted to the top-K% blocks by norm (Dual-Priv's
// Mechanism 2), the mean of per-example gradients clipped and noised
// partition by partition (Rap-FT's weak and strong relevance partitions;
// the attacker knows the mask), or one privatised scalar along a public
// direction (DPZO's zeroth-order step, ZOMatch). Only the trainable
// tensors of the model are in the update.
//
// # Attacks
//
// The pipeline of an attack on one update is:
//
//  1. labels from the gradient of the classifier head's bias (LabelIDLG
//     for B = 1, after Zhao et al. 2020; LabelsSign for batches, the
//     gradient-sign rule of Wainakh et al. 2022);
//  2. text tokens from the rows of the token-embedding gradient
//     (BagOfWords; Melis et al. 2019): a token that is in no example of
//     the batch gets an exactly zero row (except through a head tied to
//     the embedding, as TinyMLLM's, where the largest rows are taken);
//  3. images, by the attack that fits the released tensors (below).
//
// For the ViT and TinyMLLM's vision encoder, with the patch embedding and
// the learned position embedding released, PatchRecovery is the closed
// form of Lu et al. 2022 (APRIL), exact for B = 1. For the fusion
// classifier (convolutional image encoder) the attack is gradient
// matching, Inverting Gradients (cosine distance, total variation,
// Adam, restarts; Geiping et al. 2020) or DLG (ℓ₂ distance; Zhu et al.
// 2019) on the released gradients of the convolutions and image.proj
// (ConvMatch, minimised by Invert). Its gradient with respect to the image
// is a second-order derivative of the loss; it is computed exactly (almost
// everywhere) from the analytically recovered output gradient of
// image.proj (LinearInput's argument, Phong et al. 2017; Geiping et al.
// 2020 §4), see ConvMatch.
//
// For TinyMLLM with LoRA on its language model (what the methods of
// package methods release; vision encoder and projector frozen),
// AttackMLLMLoRA is gradient matching through the whole model
// (GradientMatch): its gradient with respect to the image, a
// Hessian-vector product, is the central difference of two first-order
// input gradients at θ ± h·v (Pearlmutter 1994), not a double backward
// (see GradientMatch for why). Such an update depends on the image only
// through its patch embeddings, so the attack can also search over an
// EmbeddingPrior, the conditional means of a Gaussian model of the public
// images given those embeddings. A batch of B sequences is matched
// jointly (SumGrad: the candidate update is the sum of the examples'
// gradients), and a visual-token transform (Dual-Priv's pruning and
// fusion) runs in the attacked forward pass. For a batch of one the
// candidate gradient is clipped as the release clips it when that changes
// the distance (GradientMatch.Clip: Rap-FT's partitions). DPZO's release
// is attacked by AttackMLLMZO: the candidate is the clipped loss
// difference along the released direction, matched to the scalar (one
// equation; ZOMatch).
//
// The text of such an update cannot come from the embedding rows (lm.tok
// is frozen under LoRA). SpanText reads it off the first block's LoRA A
// gradients instead (DAGER's span test, Petrov et al., NeurIPS 2024): the
// query, key and value maps read the same input LN1(tok + pos) at every
// position, each A gradient's rows lie in the span of those inputs, and
// once the inputs the attacker knows (image, answer) are projected out,
// the true token at each position is the candidate whose input lies in
// what is left; positions are fixed most-certain first, each joining the
// known inputs, and a two-part clip (Rap-FT's partitions) is undone by
// the one ratio of its factors. It needs LoRA's B ≠ 0 (at B = 0, the
// first step from a base, A gets no gradient). The same span holds the
// visual tokens' inputs when the text is known: SpanImage's objective is
// their distance to it (as TIGER's subspace distance), a first-order
// function of the image, and AttackMLLMSpan minimises it over the prior
// (Attack's option span). RecoverText recovers a sequence's prompt tokens
// by gradient matching over relaxed token embeddings (TAG, Deng et al.,
// Findings of EMNLP 2021; LAMP, Balunović et al., NeurIPS 2022): softmax
// mixtures of the token embeddings at each unknown position
// (TextGrad feeds them through nn.TinyMLLM.ForwardEmbeds), started at a
// public positional prior (PositionPrior), fitted by the same
// Hessian-vector product in the embeddings, decoded to the nearest token
// embeddings and refined by rounds of coordinate descent on the exact
// distance and LAMP's discrete token-order moves (swaps, token and span
// moves). Its data-independent baseline is the prior's most probable
// token at each position (PriorGuess). Attack runs one of the two on
// batches of 1 with the option text (1 SpanText, 2 RecoverText).
//
// # On the run path
//
// Importing the package registers Attack as the attack "gia" of package
// attacks: the pipeline runs it on each trained model of a spec that
// names it (experiment gia), against the update the run's method releases
// (attacks.Target.Release), and writes its reconstructions for the grid
// plot kind. Table runs the image attacks on the ViT and the fusion
// classifier, which no method fine-tunes, against the release mechanisms
// of the methods at one analytic-Gaussian release's noise (Defences), and
// writes their table and grids (Markdown, WriteGrid; TestTable).
//
// # Metrics
//
// PSNR (mean and max over the batch), SSIM (Wang et al. 2004, 11×11
// Gaussian window, σ = 1.5), label accuracy and the token recovery rate
// TRR, all after matching reconstructions to originals with the Hungarian
// algorithm (Assign).
//
// References:
//
//   - Zhu, Liu & Han, "Deep Leakage from Gradients", NeurIPS 2019.
//   - Zhao, Mopuri & Bilen, "iDLG: Improved Deep Leakage from Gradients",
//     arXiv 2001.02610, 2020.
//   - Geiping, Bauermeister, Dröge & Moeller, "Inverting Gradients – How
//     easy is it to break privacy in federated learning?", NeurIPS 2020.
//   - Melis, Song, De Cristofaro & Shmatikov, "Exploiting Unintended
//     Feature Leakage in Collaborative Learning", IEEE S&P 2019.
//   - Phong, Aono, Hayashi, Wang & Moriai, "Privacy-Preserving Deep
//     Learning via Additively Homomorphic Encryption", IEEE TIFS 2017.
//   - Lu, Huang, Lin, Ma & Yao, "APRIL: Finding the Achilles' Heel on
//     Privacy for Vision Transformers", CVPR 2022.
//   - Wainakh, Ventola, Müßig, Keim, Cordero, Zimmer, Grube, Kersting &
//     Mühlhäuser, "User-Level Label Leakage from Gradients in Federated
//     Learning", PETS 2022.
//   - Pearlmutter, "Fast Exact Multiplication by the Hessian", Neural
//     Computation 6(1), 1994.
//   - Jeon, Kim, Lee, Oh & Ok, "Gradient Inversion with Generative
//     Image Prior", NeurIPS 2021.
//   - Deng et al., "TAG: Gradient Attack on Transformer-based Language
//     Models", Findings of EMNLP 2021.
//   - Balunović, Dimitrov, Jovanović & Vechev, "LAMP: Extracting Text
//     from Gradients with Language Model Priors", NeurIPS 2022.
//   - Petrov, Dimitrov, Baader, Müller & Vechev, "DAGER: Exact Gradient
//     Inversion for Large Language Models", NeurIPS 2024.
//   - Kalikman, Petrov, Dimitrov & Vechev, "TIGER: Inverting Transformer
//     Gradients via Embedding-Subspace Distance Optimization", arXiv
//     2606.18312, 2026.
//   - Wang, Bovik, Sheikh & Simoncelli, "Image Quality Assessment: From
//     Error Visibility to Structural Similarity", IEEE TIP 13(4), 2004.
//   - Kuhn, "The Hungarian Method for the Assignment Problem", Naval
//     Research Logistics Quarterly 2, 1955.
package gia
