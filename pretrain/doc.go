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
// ten fine labels) or "fusion" (the image + caption classifier pretrained on
// fl-mm's public split). The command line is `repro pretrain`.
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
// for the quality measures. Training has two stages:
//
//  1. Vision (Plan.VisionSteps): the vision encoder with a linear head on
//     [CLS] classifies the public training images into their ten classes
//     (the class names are public: fashion-vqa's public captions state
//     them). Gradients through the language model reach the encoder far
//     more slowly; without this stage the base barely looks at its images.
//  2. Mixture (Plan.Steps): every tensor trains on batches with a fixed
//     number of examples of each source (Plan.Mix): fashion-vqa captions and
//     class questions, shapes-vqa captions, counts and existence questions,
//     coarse-label classification as "<image> kind of item" → upper, long,
//     footwear or accessory (a prompt unlike the private "what kind of item
//     is it ?"), public records (text LM), and in-context episodes.
//
// Episodes are generated afresh for every batch from the public training
// images, in the icl task's format "<image> means W ; … <image> means" → W,
// with random classes and random label words per episode, so a word means
// nothing outside its episode and zero-shot accuracy is at chance by
// construction. Their loss marks the answer and every demonstration word
// whose class was shown before. Two auxiliary public variants supervise the
// two halves of the in-context circuit directly: named episodes use the
// class names as words (look at the image before "means"), aliased ones
// write the class name after each word (a word picks up its image's class).
//
// The optimizer is AdamW (weight decay 0.01, none on biases, norms and
// embeddings) with a linear warm-up then a cosine decay to a tenth of the
// peak, on the mean batch gradient clipped to norm 1. The recipes:
//
//	scale  vision steps×batch@lr  mixture steps  batch (icl/fashion/coarse/shapes/records)  peak lr
//	smoke  150×16@3e-3            400            18 (8/4/2/2/2), 2 LM blocks               3e-3
//	small  300×32@2e-3            1000           17 (6/4/2/3/2)                             2e-3
//	full   3000×64@1e-3           20000          40 (16/8/4/6/6)                            5e-4
//
// The smoke preset's single language-model block is raised to two: in-context
// learning needs one attention layer that brings each image's class to the
// following tokens and one that matches the query against them.
//
// # Known limit: in-context learning
//
// With these recipes the bases do not learn in context yet: on held-out
// episodes, accuracy with the demonstrations stays at chance, like zero-shot
// accuracy (small: 0.18 with 8 demonstrations, 0.19 zero-shot, chance 0.20).
// The models learn to copy one of the episode's words but not to match the
// query image against the demonstrations within these budgets.
//
// What is known about why:
//
//   - The image features suffice. Choosing the word of the demonstration
//     whose vision [CLS] output is nearest (cosine) to the query's gets 0.77
//     on 200 held-out small episodes with the small recipe's stage-1
//     encoder (chance 0.20), and 0.675 with the smoke base (chance 0.33);
//     the manifest reports it for every base as icl_nn_acc.
//   - Matching by content is what is slow to learn, even without images. A
//     text-only version of the episodes ("k w ;" blocks, 5 keys per
//     episode from 100, label words from 100, 8 demonstrations, every
//     repeated key's word a target; 2-block LM of the small width, rotary
//     positions, AdamW 2e-3, 8 episodes a step) is still at 2.0 nats per
//     target after 19000 steps (guessing among the episode's 5 words is
//     1.61; learned positions are slower still). An independent PyTorch 1.13
//     model of the same shape and recipe (learned positions) follows the
//     same curve (3.9 nats at step 1000, 3.3 at 2750), so this is the task's
//     plateau, not a defect of package nn; there, 64 episodes a step reach
//     2.05 nats at step 1750 (112 000 episodes): the same progress per
//     episode as ours with 8 or 32 a step. A repeated random sequence is
//     learned within 300 steps, but its repeats sit at a fixed offset, so a
//     positional look-back solves it without any matching.
//   - What does not get past the plateau (episodes only, from the stage-1
//     encoder, 600–1200 steps of 8–12 episodes, 150 held-out 8-shot 5-way
//     episodes each, all within 0.16–0.27 few-shot): adding repeated random
//     sequences and text key–word episodes to the batches; episodes whose
//     repeated classes reuse the very same image (exact keys; not learned in
//     600 steps either); a longer vision stage (2000 steps), frozen or trained; rotary position
//     embeddings (nn Config.Positions "rope"); rotary embeddings with [CLS]
//     moved to the last visual token and the "means" token dropped, which
//     makes the task exactly a two-block induction with fuzzy keys; training
//     on 12-shot 3-way episodes, whose demonstration words are mostly
//     in-context targets. Earlier attempts (session 1): 3 LM blocks, named
//     and aliased episodes, sinusoidal positions, 6000 episode-heavy smoke
//     steps (few-shot 0.32, zero-shot 0.42, chance 0.33), 1500 steps of 48
//     episodes.
//
// So the gap is in learning the match-and-copy circuit, not in the
// features: its plateau outlasts the small budget (15 minutes on two cores,
// about 2500 mixture steps) by a wide margin even with text keys. Meeting
// the bar will take far longer training (well over 2·10⁴ steps: hours on
// two cores, or a GPU backend for nn) or a curriculum or architecture that
// shortens the plateau; neither is established here. DP-MTV's mean
// activations will carry little task signal on these bases until then.
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
// nearest-neighbour reference on the same episodes (icl_nn_acc); and a quick non-private
// LoRA fine-tune on fashion-vqa's private train split, exact match on its
// test split before and after (finetune_base_acc, finetune_acc), which shows
// the private task is new to the base.
//
// # Cache key
//
// The key is the SHA-256 of the canonical JSON of: FormatVersion, the
// architecture, the scale, the seed, the model configuration, the recipe,
// the fingerprints of every public dataset read (package datasets), the
// vocabulary hash and the Fashion-MNIST source. The code revision is
// recorded in the manifest but not keyed; FormatVersion is bumped when the
// training code changes what a configuration produces.
//
// # Reproducibility
//
// Initial values come from the model's seed (package nn), the batch order
// and the generated episodes from rand.NewPCG(seed, stream) with fixed
// streams, evaluation writes one slot per example, and package nn computes
// every gradient in a fixed order whatever GOMAXPROCS is. Rebuilding a base
// therefore gives the same checkpoint bytes and the same hash.
package pretrain
