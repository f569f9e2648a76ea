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
// Mechanism 2). Only the trainable tensors of the model are in the update.
//
// # Attacks
//
// The pipeline of an attack on one update is:
//
//  1. labels from the gradient of the classifier head's bias (LabelsIDLG
//     for B = 1, after Zhao et al. 2020; LabelsSign for batches, the
//     gradient-sign rule of Wainakh et al. 2022);
//  2. text tokens from the non-zero rows of the token-embedding gradient
//     (BagOfWords): a token that is in no example of the batch gets an
//     exactly zero row;
//  3. images: the analytic recoveries where they are exact for B = 1
//     (LinearInput, the input of a fully connected layer with bias, Phong
//     et al. 2017, Geiping et al. 2020 §4; PatchRecovery, the patches of a
//     ViT whose patch embedding and learned position embedding are both
//     released, Lu et al. 2022 "APRIL"), followed for the fusion
//     classifier's convolutional encoder by an Inverting-Gradients style
//     optimisation of the image (cosine distance plus total variation,
//     Adam, restarts; Invert) towards the recovered layer input.
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
//   - Phong, Aono, Hayashi, Wang & Moriai, "Privacy-Preserving Deep
//     Learning via Additively Homomorphic Encryption", IEEE TIFS 2017.
//   - Lu, Huang, Lin, Ma & Yao, "APRIL: Finding the Achilles' Heel on
//     Privacy for Vision Transformers", CVPR 2022.
//   - Wainakh, Ventola, Müßig, Keim, Cordero, Zimmer, Grube, Kersting &
//     Mühlhäuser, "User-Level Label Leakage from Gradients in Federated
//     Learning", PETS 2022.
//   - Wang, Bovik, Sheikh & Simoncelli, "Image Quality Assessment: From
//     Error Visibility to Structural Similarity", IEEE TIP 13(4), 2004.
//   - Kuhn, "The Hungarian Method for the Assignment Problem", Naval
//     Research Logistics Quarterly 2, 1955.
package gia
