// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package runners provides the execution of experiment runs: the run
// lifecycle, the local worker pool and the seam for remote executors,
// resume, atomic recording, progress and graceful stopping.
//
// # The lifecycle
//
// [Sweep] executes the runs of a spec in named stages:
//
//  1. plan: [Plan] expands the spec into runs: each run's config, its
//     [Inputs] (data and base identities, from Options.Inputs, computed
//     without building either, so planning costs a small record per run)
//     and its id, a hash of both and of the code on the run's path
//     (repro.Code). The runs --only selects ([Select]) that are not
//     finished are pending (--fresh makes them all pending). A run is
//     finished when its manifest says ok and every file it records
//     verifies (size and SHA-256); a run whose files or manifest are
//     damaged is named on the progress writer and run again.
//  2. prepare: pending runs another experiment under the same root has
//     finished (same id: same config, inputs and code) are copied rather
//     than run again, so fig1 after table1 costs nothing; their manifest
//     names the source in CopiedFrom. If a pending run's method has no
//     [Executor], Sweep fails before starting any run.
//  3. dispatch: a [Backend] ([Local] by default: a pool of Jobs workers)
//     executes the pending runs. Each run: its folder is emptied, a
//     manifest with status "running" is written, the method's Executor
//     runs (pretrained base → fine-tune → attacks, marking each stage on
//     the [Recorder]), then metrics.parquet, scores.parquet and
//     predictions.parquet (each test example's output) are written, and the manifest last, with status ok or failed and the
//     size and SHA-256 of every file in the folder. An error or a panic
//     fails that run only (the panic's stack is recorded) and the sweep
//     goes on, unless FailFast is set. A run whose final manifest cannot
//     be written (a full disk) counts as failed and its folder is removed,
//     so no "running" manifest stays behind. A [Remote] backend (package
//     runners/slurm) executes the runs in other processes instead, each a
//     Sweep of one run into the same folder with Options.NoRunsFile set,
//     and reports them through a [Tracker] that reads their manifests.
//     The progress line's ETA replays the pool over the runs left, each
//     costed from its planned steps (experiments.Names.Steps) at the
//     seconds per step that the finished runs of its method and task
//     took in this invocation; until one has finished, at the mean of
//     those of the runs of the same scale recorded under the results
//     folder (Σ seconds / Σ steps: a sweep's length is a sum, which a
//     median of runs slowed by load underestimates; the
//     checked-in tables included), else at those of the tables checked in
//     with the code (embedded in the binary: a fresh results folder), of
//     any scale, converted by the ratio of the scales' costs, each scaled
//     by how fast this invocation runs; then of its method's cost class,
//     never another class's. A run whose steps are not planned costs a
//     whole run of its method and task: this invocation's, else those
//     of its own experiment (same method, task and variant) recorded at
//     its scale, else those of other experiments with the same
//     hyperparameters, else those of the nearest such recipe (the most
//     hyperparameters in common; the line says how many runs are costed
//     so), else those of every experiment. Such an estimate is
//     marked on the line ("ETA ~12m0s (from checked-in timings)") until
//     this invocation's own runs have replaced it. So a sweep whose runs
//     differ a hundredfold in length (table1's DPZO and DP-SGD) is not
//     estimated from its mean run, nor a DPZO step from a DP-SGD one.
//     Each run records the load it ran under (the 1-minute load average
//     at its start and end, GOMAXPROCS and the jobs, in its manifest and
//     its runs.parquet row; none of it in the run id), and the prior
//     counts a recorded run's seconds at today's load: a CPU-bound run
//     of J at once at load L on N cores gets min(1, N/(J·c),
//     (N/max(L, 1))^0.668) of its quiet speed, c = 1.33 the cores a run
//     keeps busy alone (see runCores; the exponent fitted on measured
//     runs, see loadExponent), so its quiet time is its wall time times
//     that, and today's estimate is the quiet time over today's share
//     (the load when the sweep starts plus its jobs' threads, J·c;
//     unknown, so quiet, for a remote backend; runs recorded before loads
//     were count at the median share of their scale's runs that recorded
//     one, as they are where none did). The first line, printed before any run starts, carries
//     the recorded runs' estimate already ("ETA ?" only where none tells,
//     or where a remote backend has not yet shown how many runs it runs
//     at once).
//  4. record: outcomes are counted from the manifests of the runs executed
//     here, in memory, and runs.parquet is written from the manifests of
//     every planned run.
//  5. summarise: the error names the failed runs and the runs not run.
//
// Each run is locked (flock(2) on .locks/ID.lock) while it executes, so two
// repro processes sweeping the same folder never run it twice: a run the
// other process holds is waited for, then adopted if the other process
// finished it (Summary.Adopted) or executed here if it did not; each
// process reports what it did, and both record the final state. Every
// file is written atomically (see internal/results), so a run killed at
// any point leaves either no manifest or one that says "running", which
// [State] reports as interrupted once no process holds the run's lock, and
// is run again next time.
//
// # Stopping
//
// When ctx is cancelled (the first SIGINT or SIGTERM: cmd/repro hands
// Sweep a context it cancels on the first signal), no new run starts; the
// runs in progress finish and are recorded, runs.parquet is written, and
// Sweep returns an error wrapping ctx.Err(). Executors get a context that
// the first signal does not cancel, but work that can be discarded and
// done again, such as pretraining a base the cache does not hold, uses
// [StopContext] and stops at once: its runs are recorded as not run, and
// nothing half-built is cached. Meanwhile the progress line shows what
// [Note] says (the base pretraining, its step and ETA) in place of the
// sweep's ETA. The second signal exits the process at once, which leaves
// no half-written file behind.
//
// # Determinism
//
// A run's seeds come only from its config (experiments.Config.Seed), never
// from the worker that runs it or the order runs finish in, so results do
// not depend on Jobs. Executors must draw every random stream from
// rand.New(rand.NewPCG(seed, stream)).
package runners
