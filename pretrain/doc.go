// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package pretrain provides the pretrained base models of the repro harness:
// the TinyMLLM of each preset trained on the public data mixture only,
// cached by a hash of its whole configuration, reproducible bit for bit, and
// measured on public held-out data.
//
// # Usage
//
// Every fine-tuning run asks for its preset's base:
//
//	r, err := pretrain.Base(ctx, pretrain.Options{Scale: "smoke", Dir: "results/pretrain"})
//	m := r.TinyMLLM()             // frozen base; SetPEFT to fine-tune it
//	fresh, err := r.Load()        // another independent copy (shadow models)
//	r.Hash, r.Checkpoint, r.Manifest.Metrics
//
// The first call trains the base and writes Dir/<arch>-<scale>-<key>/
// model.safetensors and manifest.json; later calls load it. Concurrent
// calls, from goroutines or processes, build it once: the others wait on a
// file lock (flock on Unix) and then read the cache. Options.Fresh rebuilds.
// Every file is written atomically (temporary file, fsync, rename) and the
// manifest last, so an entry with a manifest is complete; an entry whose
// checkpoint does not match the manifest's hash is rebuilt.
//
// # Cache key
//
// The key is the SHA-256 of the canonical JSON of: FormatVersion, the
// architecture, the scale, the seed, the model configuration, the training
// Plan, the fingerprints of every public dataset read (package datasets),
// the vocabulary hash and the Fashion-MNIST source. The code revision is
// recorded in the manifest but not keyed; FormatVersion is bumped when the
// training code changes what a configuration produces.
//
// # Reproducibility
//
// Initial values come from the model's seed (package nn), the batch order
// and the generated episodes from rand.NewPCG(seed, stream) with fixed
// streams, and package nn computes every gradient in a fixed order whatever
// GOMAXPROCS is. Rebuilding a base therefore gives the same checkpoint bytes
// and the same hash.
package pretrain
