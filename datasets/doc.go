// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package datasets provides the data of every repro task: real Fashion-MNIST
// images, synthetic shape scenes and personal-data records, one vocabulary
// (a word-level one whose generated names are spelled with sub-word pieces),
// and the six tasks built on them with their splits, canaries and
// federated partitions. Nothing is downloaded: the default data is embedded
// in the binary.
//
// # Overview
//
// Build returns a task's Dataset. It is a pure function of the task, the
// scale preset, the seed, the data source and the options: the same inputs
// give the same examples and the same Fingerprint (SHA-256 over a canonical
// encoding of every example of every split) on any machine, whatever
// GOMAXPROCS.
//
//	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
//	for _, ex := range d.Private { … ex.Images, ex.Prompt, ex.Answer … }
//
// The tasks (Tasks lists them) and the papers they stand in for:
//
//   - fashion-vqa: attribute questions about Fashion-MNIST images, a quarter
//     answerable from the text alone (Example.TextOnly), so an IMG-style
//     accuracy split exists (Dual-Priv's ScienceQA Acc and IMG).
//   - shapes-vqa: compositional questions about generated CLEVR-like scenes
//     (colour, shape, count, position), a GQA stand-in.
//   - fashion-cls: fine-label classification; the public split has coarse
//     labels (SPARTA's public pretraining → private fine-tuning).
//   - fashion-upper: the fine label among the four upper-body garments,
//     which the public coarse labels merge into one (SPARTA's second
//     fine-tuning task; fashion-cls's public split).
//   - records: Echr-like case sentences and E2E-like data-to-text pairs with
//     exact PII spans (Rap-FT's perplexity, extraction and reconstruction).
//     Names come from private lists disjoint from the public ones the base
//     is pretrained on, but every name is two sub-word pieces that public
//     names use too, so a private name is a new combination of known
//     tokens, as an unseen name is for GPT-2's BPE in Lukas et al.
//     ("Analyzing Leakage of Personally Identifiable Information in
//     Language Models", IEEE S&P 2023).
//   - icl: in-context episodes, N demonstrations and a query, with random
//     label words per public episode and a fixed mapping for the private
//     task (DP-MTV's chunks).
//   - fl-mm: image + caption classification over clients with Dirichlet(α)
//     label skew (Sec-MMFL).
//
// # Splits
//
// Every task has four splits (SplitNames): public, for pretraining the base
// model; private, the fine-tuning train set and the members of membership
// inference; holdout, non-members drawn from the same distribution as
// private (tested with Kolmogorov–Smirnov statistics); test. The private,
// holdout and test splits share no source item (Example.Items). Source items
// are divided between public and private use once and for all by a hash
// (Fashion-MNIST images by their index in the release, generated scenes by
// their layout, records by disjoint name lists), so a base model pretrained
// on any task's public split at any seed has never seen any private item.
//
// Variants: the -mia tasks (a small member set and audit canaries), the
// -lira tasks (a fixed pool split by the seed) and the -tune tasks
// (fashion-vqa-tune, shapes-vqa-tune: the private task's questions about
// public items only, with a validation split of public items that
// pretraining holds out, PretrainHeldOut; fl-mm-tune: fl-mm's public
// pairs over the same clients, validated on those held out), for choosing
// hyperparameters on public data; the -tune-lira tasks pose the -lira regime on a -tune task,
// for choosing the membership experiments' recipe on public data.
//
// Canaries are random secrets (six digit words, or noise images with random
// labels for classification tasks) inserted 1, 4 and 16 times into private
// train, with as many reference canaries drawn the same way and not
// inserted; Dataset.Canaries records them all for exposure and audits.
//
// # Conventions shared with nn and methods
//
// Images are RGB, 3×28×28, float32 in [0, 1], channel-major (CHW) in a flat
// slice of length ImageLen; Fashion-MNIST's gray level is replicated to the
// three channels. Token ids come from Vocab, the project's one vocabulary,
// with fixed special ids Pad 0, Unk 1, BOS 2, EOS 3, Image 4, Sep 5 and
// Mask 6. A prompt holds one Image placeholder per image, in the order of
// Example.Images. Generative examples carry a prompt and an answer (loss on
// the answer tokens only); classification examples carry a Label.
//
// # Scales and sources
//
// Smoke (CI: a fine-tuning run in seconds, 256 private examples), Small (the
// default: 2000 private examples, trends visible with 3 seeds) and Full
// (20000, closer to the papers). The embedded Fashion-MNIST subset (8000
// images, see data/fashion-mnist/README.md) serves Smoke and Small; Full
// needs the full release, read from Options.DataDir or DefaultFashionDir
// (Debian package dataset-fashion-mnist), and Build says so rather than
// shrinking the data. With a DataDir every scale draws from all 70000 images.
//
// User data: LoadVQA reads a JSONL file of image, question and answer beside
// a folder of PNG or JPEG images (for example a VQA-RAD export).
//
// Data is seeded for reproducibility; nothing here is meant for production
// privacy releases.
package datasets
