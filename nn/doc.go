// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package nn provides a small CPU training engine for transformers with exact
// per-sample gradients, parameter-efficient fine-tuning and the shared TinyMLLM
// model of the repro harness.
//
// # Overview
//
// Values are float32, stored row-major in flat slices; reductions that lose
// precision in float32 (norms, LayerNorm statistics, softmax and
// cross-entropy normalisers) accumulate in float64. Matrix products go
// through a [Backend] (the default, [CPU], is a register-blocked kernel in
// Go assembly with a pure-Go fallback, the same bits on every CPU), so a
// GPU backend can replace it without touching the layers.
//
// Computation is recorded on a [Tape], a reverse-mode automatic
// differentiator. Every layer has an explicit forward and backward rule. The
// package functions [PerSample] and [Gradient] give each example its own
// tape, run in parallel on up to GOMAXPROCS goroutines. TinyMLLM's
// PerSample and Gradient run, where they can (LoRA, adapters or BitFit's
// biases in any part, no hooks), the batched engine instead: a few
// examples on one tape, their sequences stacked as rows, so that every
// frozen weight sees all their rows in one matrix product per layer, with
// the gradients of the LoRA factors, adapters and biases formed from each
// example's rows (bit for bit those of one tape per example); a
// [VisualCache] there keeps the visual tokens of a frozen encoder across
// calls. TinyMLLM.MeanLosses computes losses without gradients the same
// way, and TinyMLLM.LossCached takes a frozen encoder's outputs from the
// cache on the one-tape path of a visual transform. Forward passes
// without gradients (MeanLosses, TokenLosses, Generate, and callers'
// passes on [NewInferenceTape]) run on inference tapes, which record no
// backward rule, reuse their memory from call to call and fuse maps whose
// intermediate values nothing reads, with the bits of an ordinary tape.
// Because
// the work is split into units fixed by the batch alone and results are
// reduced in example order, every number the package produces is the same
// bit for bit whatever GOMAXPROCS is.
//
// # Parameters and per-sample gradients
//
// Every tensor of a model is a named [Param] with a [Kind] (weight, bias,
// norm, embedding, head, lora_a, lora_b, adapter, ...). A [Layout] lists the
// trainable ones and gives each a range in one flat vector. [PerSample] runs
// a loss over a batch and returns every example's gradient as such a flat
// vector, exactly (no approximation, no sharing across examples). [Clip]
// rescales them by a caller-given rule (flat, per part given by an element
// mask, per layer) and [Sum] adds them in example order. The per-sample
// gradients of an example are the gradient of that example's own loss; the
// batch gradient is their sum.
//
// Rows: a weight of shape [out, in...] has out rows (output neurons of a
// Linear, output filters of a Conv2d), so row masks mean the same thing for
// every layer.
//
// # Models
//
// [TinyMLLM] is a LLaVA-shaped multimodal model: a ViT vision encoder with a
// [CLS] token, a visual-token transform slot, a 2-layer projector and a causal
// decoder language model with a tied head; its token order comes from
// learned absolute position embeddings or, with Config.Positions "rope",
// from rotary embeddings on queries and keys ([Tape.Rotary]). [ViT] is an image classifier and
// [Fusion] a two-encoder (CNN image, transformer text) classifier with early
// or late fusion, built from the same layers. [Preset] returns the smoke,
// small and full configurations. [PEFT] adds LoRA, Houlsby adapters, BitFit
// or full fine-tuning to a model.
//
// [Encode] writes a [Model] as a safetensors checkpoint (every tensor, the
// architecture and the configuration) to an io.Writer, the same bytes for
// equal models, and [Load] rebuilds the model from a checkpoint file. The
// package writes no files: it imports nothing of repro, and the caller
// writes the checkpoint atomically with the project's one atomic-write
// helper (package pretrain does).
//
// # A DP-SGD step
//
// The typical steps are:
//
//  1. build the model from a preset and choose what trains:
//     cfg, _ := nn.Preset("small", vocab); cfg.PEFT.Method = "lora";
//     m, _ := nn.NewTinyMLLM(cfg); layout := nn.NewLayout(m.Params())
//  2. per-sample gradients of a batch of Sequences:
//     r, _ := m.PerSample(layout, batch, hooks, transform, nil)
//  3. clip them (nn.Flat(C), nn.MaskParts, or layout.Groups for per-layer
//     and per-modality bounds) and sum them: nn.ClipAll(r.Grads, rule);
//     g := nn.Sum(nil, r.Grads)
//  4. add noise, divide by the (expected) batch size, and hand the result
//     to an optimizer: layout.SetGrad(g) fills every Param.Grad, or write
//     the update with layout.Values and layout.SetValues.
//
// The non-private batch gradient is m.Gradient (or the package function
// Gradient), which accumulates examples in 16 fixed groups instead of
// keeping one vector per example.
//
// # Sequences and hooks
//
// A Sequence is a token list in the project's vocabulary (<pad> 0, <unk> 1,
// <bos> 2, <eos> 3, <image> 4) with one image (3×28×28, channel-major, in
// [0, 1]) per <image> placeholder and a loss mask over the tokens. Each
// placeholder becomes the image's visual tokens: [CLS] and the patch
// tokens of the vision encoder, passed through the VisualTransform (which
// may prune and merge them, given the [CLS]→patch attention of the
// configured vision block) and the projector. With Config.CLSLast (every
// preset) the language model reads the first of them, [CLS], after the
// others; with Config.SmearKeys (every preset) each of its attention keys
// is mixed with the key before it, so a word right after an image is found
// by what the image shows.
//
// Hooks read every linear map's input and output, every block's input,
// attention probabilities and per-head outputs (Observe), and read and
// replace per-head outputs at chosen positions (Heads). Generation
// (TinyMLLM.Generate) is greedy or top-k with a caller-seeded generator.
//
// # Ownership
//
// Param.Data is owned by the model; optimizers write to it between steps,
// never during a forward or backward pass. Slices returned by [PerSample]
// belong to the caller. Tensors passed to hooks are owned by the tape and are
// valid until the tape is discarded; hooks must not modify them.
//
// # Panics and errors
//
// Shape mismatches and other programmer errors panic with a constant message
// starting with "nn:". Bad configurations and inputs (unknown preset, a
// sequence longer than the model's maximum length, a token id outside the
// vocabulary) are returned as errors.
package nn
