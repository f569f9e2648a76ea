// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package runners provides the execution of experiment runs: the run
// lifecycle, the local worker pool, resume, atomic recording, progress and
// graceful stopping.
//
// # The lifecycle
//
// [Sweep] executes the runs of a spec. The steps are:
//
//  1. [Plan] expands the spec into runs: each run's config, its [Inputs]
//     (data fingerprint and base checkpoint hash, from Options.Inputs) and
//     its id, a hash of both.
//  2. The runs that --only selects ([Select]) and whose manifest does not
//     say status ok (resume; --fresh runs them all) are pending. If a
//     pending run's method has no [Executor], Sweep fails before starting
//     any run.
//  3. A [Backend] ([Local] by default: a pool of Jobs workers) executes the
//     pending runs. Each run: its folder is emptied, a manifest with status
//     "running" is written, the method's Executor runs (pretrained base →
//     fine-tune → attacks, marking each stage on the [Recorder]), then
//     metrics.parquet and scores.parquet are written, and the manifest
//     last, with status ok or failed. An error or a panic fails that run
//     only (the panic's stack is recorded) and the sweep goes on, unless
//     FailFast is set.
//  4. runs.parquet is written from the manifests of every planned run.
//
// A pending run that another experiment under the same root has finished
// (same id: same config and inputs) is copied rather than run again, so
// fig1 after table1 costs nothing; its manifest names the source in
// CopiedFrom.
//
// Each run is locked (flock(2) on .locks/ID.lock) while it executes, so two
// repro processes sweeping the same folder never run it twice: the second
// leaves it alone and reports it. Every file is written atomically (see
// internal/results), so a run killed at any point leaves either no manifest
// or one that says "running", and is run again next time.
//
// # Stopping
//
// When ctx is cancelled (the first SIGINT or SIGTERM: cmd/repro hands
// Sweep the context of signal.NotifyContext), no new run starts; the runs
// in progress finish and are recorded, runs.parquet is written, and Sweep
// returns an error wrapping ctx.Err(). Executors get a context that the
// first signal does not cancel; the second signal kills the process, which
// leaves no half-written file behind.
//
// # Determinism
//
// A run's seeds come only from its config (experiments.Config.Seed), never
// from the worker that runs it or the order runs finish in, so results do
// not depend on Jobs. Executors must draw every random stream from
// rand.New(rand.NewPCG(seed, stream)).
package runners
