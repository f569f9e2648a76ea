// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package pretrain provides the pretrained base models of the repro harness:
// the TinyMLLM of each preset trained on the public data mixture only, and
// the ViT and fusion classifier bases, each cached by a hash of its whole
// configuration, reproducible bit for bit, and measured on public held-out
// data.
//
// # Usage
//
// Every fine-tuning run asks for its preset's base:
//
//	r, err := pretrain.Base(ctx, pretrain.Options{Scale: "smoke", Dir: "results/pretrain"})
//	m := r.TinyMLLM()          // every tensor frozen; m.SetPEFT(...) to fine-tune
//	cp, err := r.Load()        // another independent copy (shadow models, seeds)
//	_ = r.Hash                 // hex SHA-256 of r.Checkpoint, for run ids
//	_ = r.Manifest.Metrics     // quality on public held-out data
//
// Options.Arch selects "vit" (an image classifier pretrained on the coarse
// labels of fashion-cls's public split; ViTFor gives it a new head for the
// ten fine labels), "cnn" (the small convolutional classifier, nn.CNN,
// pretrained on the same coarse labels), "cnn-gn" (the same CNN with a
// group norm of four groups in each block, nn.Config.ConvGroups) or
// "fusion" (the image + caption
// classifier pretrained on the coarse labels of fl-mm's public split; the
// federated methods give it a new head for the fine labels;
// Options.ImageEncoder and FusionMode shape it). The command line is
// `repro pretrain`.
//
// The first call trains the base and writes Dir/<arch>-<scale>-<key>/
// model.safetensors and manifest.json; later calls load it. Concurrent
// calls, from goroutines or processes, build it once: the others wait on a
// file lock (flock on Unix, an atomic mkdir elsewhere) and then read the
// cache. Options.Fresh rebuilds. Every file is written atomically
// (temporary file, fsync, rename) and the manifest last, so an entry with a
// manifest is complete; an entry whose checkpoint does not match the
// manifest's hash is rebuilt. Progress lines with an ETA go to
// Options.Progress.
//
// # The public mixture (TinyMLLM)
//
// Only the public splits of package datasets are read, at the preset's
// scale and the base's seed. One item in eight (by a hash of its name:
// Fashion-MNIST image, scene, record) is held out of training in every task
// for the quality measures. Training has three stages:
//
//  1. Vision (Plan.VisionSteps): the vision encoder with a linear head on
//     [CLS] classifies the public training images into their ten classes
//     (the class names are public: fashion-vqa's public captions state
//     them). Gradients through the language model reach the encoder far
//     more slowly; without this stage the base barely looks at its images.
//     The scenes variant (Options.Scenes, Plan.VisionScenes) also
//     classifies the objects of public shapes-vqa scenes by colour and
//     shape. The encoder is frozen from here on, as LLaVA's is.
//  2. In context (Plan.ICLSteps): the projector and the language model
//     learn from in-context episodes alone, each image entering as its
//     [CLS] token only (a demonstration is 3 tokens instead of 19).
//  3. Mixture (Plan.Steps): the projector and the language model train on
//     batches with every visual token and a fixed number of examples of
//     each source (Plan.Mix): fashion-vqa captions and class questions,
//     shapes-vqa captions, counts and existence questions, coarse-label
//     classification as "<image> kind of item" → upper, long, footwear or
//     accessory (a prompt unlike the private "what kind of item is it ?"),
//     public records (text LM), and in-context episodes. Half of the
//     image-carrying sequences (Plan.PruneShare) instead see their images
//     through Dual-Priv's visual token pruning (nn.TokenPruning, the code
//     the dualpriv method runs) at a retention drawn from 0.1–0.7, so the
//     base still answers once Dual-Priv prunes (see Plan.PruneShare).
//     The shapes-questions variant (Options.ShapesQuestions,
//     Plan.WithShapesQuestions) adds a source of public shapes-vqa
//     questions of every kind about the public training scenes.
//
// Episodes are generated afresh for every batch from the public training
// images, in the icl task's format "<image> W ; … <image>" → W, with random
// classes and random label words per episode, so a word means nothing
// outside its episode and zero-shot accuracy is at chance by construction.
// Their loss marks the answer and every demonstration word whose class was
// shown before.
//
// The optimizer is AdamW (weight decay 0.01, none on biases, norms,
// embeddings and smear logits) with a linear warm-up then a cosine decay to
// a tenth of the peak, on the mean batch gradient clipped to norm 1. The
// recipes:
//
//	scale  vision steps×batch@lr  in-context steps×episodes@lr  mixture steps  batch (icl/fashion/coarse/shapes/records)  peak lr
//	smoke  150×16@3e-3            300×16@3e-3                   400            18 (8/4/2/2/2), 2 LM blocks               3e-3
//	small  300×32@2e-3            600×16@2e-3                   1000           17 (6/4/2/3/2)                             2e-3
//	full   3000×64@1e-3           3000×32@1e-3                  20000          40 (16/8/4/6/6)                            5e-4
//
// The smoke preset's single language-model block is raised to two, and its
// training episodes have 6 demonstrations (Plan.TrainShots).
//
// # How the bases learn in context
//
// In-context learning here means matching the query image against the
// demonstrations' images and copying the word that follows the best match.
// The recipe makes that circuit learnable within its budgets in three ways:
//
//   - every preset sets nn Config.SmearKeys and CLSLast, so a word's
//     attention key also describes the [CLS] summary of the image before
//     it, and one attention layer can find "the word after an image like
//     mine";
//   - the vision encoder is frozen after stage 1;
//   - stage 2 trains on short episodes ([CLS] tokens only) before stage 3
//     carries the circuit over to every visual token.
//
// The measurements behind each choice are in docs/engine.md ("Engineering
// notes: pretraining and the engine"). The manifest reports the result for
// every base (icl_few_shot_acc, icl_zero_shot_acc, icl_gain) with the
// nearest-neighbour reference (icl_nn_acc); the package test asserts the
// gain at smoke scale.
//
// # Quality
//
// Manifest.Metrics, with the chance level of each accuracy (the majority
// answer) in Manifest.Chance: exact-match accuracy on held-out public
// fashion class questions, coarse labels and shapes counts and existence
// questions; perplexity on held-out public records; in-context accuracy on
// held-out episodes of held-out images with fresh label words, scored among
// the episode's label words, with and without the demonstrations
// (icl_few_shot_acc, icl_zero_shot_acc, icl_gain), and the [CLS]
// nearest-neighbour reference on the same episodes (icl_nn_acc); the
// fashion class and shapes accuracies again with Dual-Priv's token pruning
// at its default retention 0.4 (fashion_class_acc_pruned,
// shapes_vqa_acc_pruned); and a quick non-private
// LoRA fine-tune on fashion-vqa's private train split, exact match on its
// test split before and after (finetune_base_acc, finetune_acc), which shows
// the private task is new to the base.
//
// # Cache key
//
// The key is the SHA-256 of the canonical JSON of: FormatVersion, the
// architecture, the scale, the seed, the model configuration, the recipe,
// the fingerprints of every public dataset read (package datasets), the
// vocabulary hash, the Fashion-MNIST source and a fingerprint of the
// engine's arithmetic (the bits packages nn and nn/optim compute on a fixed
// probe, so a change of summation order or initialisation gives new keys).
// The code revision is recorded in the manifest but not keyed;
// FormatVersion is bumped when the training code changes what a
// configuration produces in a way the engine fingerprint does not see.
//
// # Reproducibility
//
// Initial values come from the model's seed (package nn), the batch order
// and the generated episodes from rand.NewPCG(seed, stream) with fixed
// streams, evaluation writes one slot per example, and package nn computes
// every gradient in a fixed order whatever GOMAXPROCS is. Rebuilding a base
// therefore gives the same checkpoint bytes and the same hash.
package pretrain
