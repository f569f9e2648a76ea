// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/privacy"
)

// tightAccounting returns the privacy record of the executed two-partition
// mechanism: steps Poisson-subsampled Gaussian steps at rate q with
// multiplier σ_eff (σ/√(r_w³ + r_s³) as printed; sigmaEff), whose ε (under
// h's accountant) is the run's ε, with the ε of DP-SGD with the same σ
// (the paper's ε) as EpsilonNominal. acc is DP-SGD's calibration to the
// target: σ = acc.Sigma (calibrate nominal), or σ_eff = acc.Sigma
// (calibrate tight; p.sigma holds σ). With one partition or no noise the
// mechanism is DP-SGD's and acc is returned with EpsilonNominal equal to
// its ε.
func (p *rapftPartition) tightAccounting(name string, job *Job, acc accounting, q float64, steps int) (accounting, error) {
	out := acc
	out.Record.Caveats = append([]string(nil), acc.Record.Caveats...)
	if p.analysed && p.private {
		out.Record.Caveats = append(out.Record.Caveats, rapftCaveat)
	}
	nominal := acc.Record.Epsilon
	out.Record.EpsilonNominal = &nominal
	if p.rs == 0 || acc.Sigma == 0 {
		return out, nil
	}
	sEff := p.sigmaEff(p.sigma)
	if job.Hyper.String("calibrate") == "tight" {
		// acc is the record of σ_eff already; the paper's ε is that of σ.
		sEff = acc.Sigma
		rdp, pld, _, err := sampledGaussianEpsilon(name, job.Delta, q, steps, p.sigma)
		if err != nil {
			return accounting{}, err
		}
		nominal = results.Float(rdp)
		if job.Hyper.Accountant == "pld" {
			nominal = results.Float(pld)
		}
		out.Record.EpsilonNominal = &nominal
	} else {
		rdp, pld, ev, err := sampledGaussianEpsilon(name, job.Delta, q, steps, sEff)
		if err != nil {
			return accounting{}, err
		}
		out.EpsilonRDP, out.EpsilonPLD = rdp, pld
		out.Record.Epsilon = results.Float(rdp)
		if job.Hyper.Accountant == "pld" {
			out.Record.Epsilon = results.Float(pld)
		}
		out.Record.Sigma = sEff
		out.Record.Events = ev
	}
	out.Record.Caveats = append(out.Record.Caveats, fmt.Sprintf(
		"Rap-FT: ε is that of the executed mechanism (σ_eff = σ/√(r_w^(2p−1)+r_s^(2p−1)) = %.6g with σ = %.6g, r_w = %.6g, clip power p = %g); the paper reports ε_nominal = %.6g for σ (epsilon_nominal)", sEff, p.sigma, p.rw, p.pow(), float64(nominal)))
	return out, nil
}

// sampledGaussianEpsilon returns the ε at δ of steps Poisson-subsampled
// Gaussian steps at rate q with multiplier sigma under the RDP and the PLD
// accountant, and the mechanism as encoded events.
func sampledGaussianEpsilon(name string, delta, q float64, steps int, sigma float64) (rdpEps, pldEps float64, events json.RawMessage, err error) {
	ev := privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: q, Sigma: sigma}, Count: steps}
	rdp, err := privacy.NewRDP(nil)
	if err != nil {
		return 0, 0, nil, err
	}
	if err := rdp.Compose(ev, 1); err != nil {
		return 0, 0, nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	g, err := rdp.EpsilonOrder(delta)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	pld, err := privacy.NewPLD(nil)
	if err != nil {
		return 0, 0, nil, err
	}
	if err := pld.Compose(ev, 1); err != nil {
		return 0, 0, nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	if pldEps, err = pld.Epsilon(delta); err != nil {
		return 0, 0, nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	evb, err := privacy.MarshalEvent(ev)
	if err != nil {
		return 0, 0, nil, err
	}
	return g.Epsilon, pldEps, json.RawMessage(evb), nil
}

// values returns the run's Rap-FT results for the manifest: the weak
// share, the partitions' clip norms and noise stds, σ, σ_eff, and ε
// nominal and tight side by side.
func (p *rapftPartition) values(c float64, tight accounting) map[string]float64 {
	cs := 0.0
	if p.rs > 0 {
		cs = c * p.clip(p.rs)
	}
	return map[string]float64{
		"rapft_weak_share":      p.rw,
		"rapft_clip_weak":       c * p.clip(p.rw),
		"rapft_clip_strong":     cs,
		"rapft_noise_weak":      p.sigma * math.Sqrt(p.rw) * c,
		"rapft_noise_strong":    p.sigma * math.Sqrt(p.rs) * c,
		"sigma_nominal":         p.sigma,
		"sigma_eff":             tight.Record.Sigma,
		"epsilon_nominal":       float64(*tight.Record.EpsilonNominal),
		"epsilon_tight":         float64(tight.Record.Epsilon),
		"rapft_lrp_split_error": p.splitErr,
	}
}

// partitionMetrics returns, per step with a non-empty batch, the mean
// per-sample norm of the weak and the strong partition before clipping and
// the share of examples above each partition's clip: non-private
// diagnostics, like clipped_fraction.
func partitionMetrics(reports []*Report) []Metric {
	var ms []Metric
	for step, r := range reports {
		if r == nil || r.Examples == 0 || len(r.GroupMeanNorm) != 2 {
			continue
		}
		n := float64(r.Examples)
		ms = append(ms,
			Metric{step, "norm_weak", r.GroupMeanNorm[0]},
			Metric{step, "norm_strong", r.GroupMeanNorm[1]},
			Metric{step, "clipped_weak_fraction", float64(r.GroupClipped[0]) / n},
			Metric{step, "clipped_strong_fraction", float64(r.GroupClipped[1]) / n})
	}
	return ms
}
