// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package slurm provides the Slurm executor of repro: the runs of a sweep
// execute as the tasks of a job array on a cluster, each task one run
// into a results folder that the submitting machine and every compute
// node share.
//
// # A submission
//
// [Submit] makes one submission of the pending runs of an experiment, in
// these steps:
//
//  1. check: sbatch, squeue and scancel are on PATH, and the cluster's
//     MaxArraySize is read (scontrol show config);
//  2. write the submission's folder, results/EXP/.slurm/TIME-N/, holding
//     the run ids in task order (runs.txt), one job script (job.sh), the
//     pretraining script (pretrain.sh) and a probe file;
//  3. probe: one short srun checks that a compute node sees the probe
//     file, so that a results folder the nodes cannot see is an error at
//     submission, not an hour later (a cluster with no free node within
//     30 s skips the probe with a warning; every task checks it again);
//  4. submit the pretraining of the bases the runs need as one job, then
//     the runs as `sbatch --array` jobs of at most MaxArraySize tasks,
//     each depending on the pretraining job (--dependency=afterok). If a
//     submission fails, the jobs already submitted are cancelled, so
//     nothing is submitted half-way;
//  5. record the job ids in submission.json, which repro status and
//     repro cancel read.
//
// Each task executes `repro task`, a sweep of its one run with the run's
// lock (flock(2) on results/EXP/.locks/ID.lock) and atomic writes, as the
// local pool does, so two submissions of the same experiment never run a
// run twice at once, and a task killed at any point (time limit, node
// failure, scancel) leaves its run unfinished, never half-written: the
// next submission runs it again. A task whose run fails executes it again
// up to Options.Retries times; sbatch --requeue lets Slurm requeue a task
// whose node failed. The pretrained bases are cached under a file lock
// too (package pretrain), so tasks never race on the cache.
//
// [Wait] follows a submission (squeue, and the manifests the tasks write)
// until its jobs have left the queue, and cancels them (scancel) when its
// context is done. [Backend] is the [runners.Remote] that does both for
// runners.Sweep, so that `repro run --executor slurm --wait` reports and
// records a sweep as a local run does.
//
// Results are those of the local pool bit for bit: a run's seeds come
// from its config only, and the tasks run the same binary.
//
// The cluster needs no accounting daemon: job states come from squeue,
// and outcomes from the files the tasks write.
package slurm
