// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods/fl"
	"github.com/repro-dp/repro/privacy"
)

// flDPParams returns the hyperparameters of the single-block federated DP
// baselines of Sec-MMFL's comparison (nbafl, ldpfl, fedmm-dp): the
// federated recipe (fedParams), with the server step η_s of step, and
// the clip norm C and accountant of Sec-MMFL (C = 1, the paper's).
func flDPParams(step func(string) any) []Param {
	return append(fedParams(step),
		Param{Name: "clip", Kind: Float, Doc: "ℓ₂ clip norm C of a client's whole update, > 0",
			Default: same(1.0), Check: positive, set: func(h *Hyper, v any) { h.Clip = v.(float64) }},
		Param{Name: "accountant", Kind: String, Doc: "accountant that calibrates the noise and gives the run's ε: rdp or pld",
			Default: same("rdp"), Check: oneOf(list("rdp", "pld")), set: func(h *Hyper, v any) { h.Accountant = v.(string) }},
	)
}

// maxParticipations returns the most rounds any client of run takes part
// in (client sampling is on a public schedule, so it gives no
// amplification).
func (run *fedRun) maxParticipations() int {
	return slices.Max(fl.Participations(fl.Schedule(run.cfg), run.cfg.Clients))
}

// flDPAccounting returns the record of a federated baseline whose
// mechanism, per client over the run, is ev under rel: ε under both
// accountants (the one of the hyperparameters is the run's), an error when
// it exceeds the target. sigma is the record's noise multiplier, steps the
// accounted releases.
func flDPAccounting(name string, run *fedRun, rel mmRelation, ev privacy.Event, sigma float64, steps int, caveats []string) (accounting, error) {
	job, h := run.job, run.job.Hyper
	q := float64(run.cfg.PerRound) / float64(run.cfg.Clients)
	if math.IsInf(job.Epsilon, 1) {
		a, err := nonPrivateAccounting(job.Epsilon, job.Delta, q, steps)
		a.Record.Sampling, a.Record.Neighbouring, a.Record.ClipNorm = "none", rel.Name, h.Clip
		return a, err
	}
	var a accounting
	var err error
	if a.EpsilonRDP, err = mmEpsilon("rdp", rel, job.Delta, ev); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	if a.EpsilonPLD, err = mmEpsilon("pld", rel, job.Delta, ev); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	achieved := a.EpsilonRDP
	if h.Accountant == "pld" {
		achieved = a.EpsilonPLD
	}
	if achieved > job.Epsilon {
		return accounting{}, fmt.Errorf("methods: %s: the executed mechanism is (%v, %v)-DP under %s, above the target ε = %v", name, achieved, job.Delta, h.Accountant, job.Epsilon)
	}
	evb, err := privacy.MarshalEvent(ev)
	if err != nil {
		return accounting{}, err
	}
	a.Sigma = sigma
	a.Record = results.Privacy{
		Accountant: h.Accountant, EpsilonTarget: results.Float(job.Epsilon), Epsilon: results.Float(achieved),
		Delta: job.Delta, Sigma: sigma, SampleRate: q, Steps: int64(steps), Sampling: "none",
		Neighbouring: rel.Name, ClipNorm: h.Clip, Events: json.RawMessage(evb),
		Caveats: append([]string{"client sampling gives no amplification (the server knows the schedule): the noise is calibrated for the most rounds any client takes part in"}, caveats...),
	}
	if run.cfg.Weighting == fl.BySize {
		a.Record.Caveats = append(a.Record.Caveats, "the server weights the uploads by the clients' data sizes n_k, which it is assumed to know (weighting=uniform does not use them)")
	}
	return a, nil
}
