// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"math"
)

func init() { Register(FedAvg{}) }

// FedAvg is the non-private federated baseline of Sec-MMFL (ε = ∞): the
// fusion classifier trained over the task's clients by FedAvg (or FedSGD,
// the aggregation hyperparameter) with package fl, every tensor trainable,
// local plain-SGD steps on minibatches, no clipping and no noise.
//
// References:
//   - H. B. McMahan et al., Communication-efficient learning of deep
//     networks from decentralized data, AISTATS 2017, Algorithm 1.
type FedAvg struct{}

// Name implements Method.
func (FedAvg) Name() string { return "fedavg" }

// Arch implements Method.
func (FedAvg) Arch() string { return "fusion" }

// Params implements Method: the federated recipe (fedParams), with the
// local learning rate chosen on public data at smoke (experiments
// tune-secmmfl: fl-mm-tune, seed 1, local_lr ∈ {0.01, 0.02, 0.05, 0.1},
// best validation accuracy on the coarse-label base with a new head: 0.1,
// 60.0%; 0.05 58.3%, 0.02 48.3%, 0.01 46.7%; the base's new head 21.7%);
// small and full keep 0.05, not tuned.
func (FedAvg) Params() []Param {
	return withTuned(fedParams(same(1.0)), "local_lr", byScale(0.1, 0.05, 0.05), "smoke")
}

// FineTune implements Method. The job's ε must be +Inf: the run has no
// guarantee.
func (FedAvg) FineTune(ctx context.Context, job *Job) (*Result, error) {
	const name = "fedavg"
	if !math.IsInf(job.Epsilon, 1) {
		return nil, fmt.Errorf("methods: fedavg: target ε = %v: the non-private baseline runs at ε = inf only", job.Epsilon)
	}
	run, err := newFedRun(name, job)
	if err != nil {
		return nil, err
	}
	acc, err := nonPrivateAccounting(job.Epsilon, job.Delta, float64(run.cfg.PerRound)/float64(run.cfg.Clients), run.cfg.Rounds)
	if err != nil {
		return nil, err
	}
	acc.Record.Sampling = "none"
	rec, err := run.simulate(ctx)
	if err != nil {
		return nil, err
	}
	return run.result(rec, acc), nil
}
