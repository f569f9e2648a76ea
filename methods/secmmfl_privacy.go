// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"math"

	"github.com/repro-dp/repro/privacy"
)

// The calibrations of Sec-MMFL's per-modality noise (the calibrate
// hyperparameter).
const (
	// calibrateAccountant: σ_i calibrated by the run's accountant so that
	// the modality's uploads over the run are (ε_i, δ_i)-DP.
	calibrateAccountant = "accountant"
	// calibratePaper: the paper's σ_i = √(2T ln(1.25/δ_i))/ε_i.
	calibratePaper = "paper"
)

// An mmRelation is a neighbouring relation of Sec-MMFL's guarantee with
// the ℓ₂ sensitivity, in units of the clip norm C, of one client's clipped
// per-modality upload under it.
type mmRelation struct {
	Name        string
	Relation    privacy.Relation
	Sensitivity float64
}

// The relations (the neighbouring hyperparameter):
//   - replace-one (the default): the unit is one client's local data
//     against a server that sees every upload (local DP); any change of
//     the data moves a block clipped to C by at most 2C;
//   - add-remove: one client's upload against none (client-level DP, as
//     in DP-FedAvg), sensitivity C: the Δf = C of the paper's σ_i.
var mmRelations = map[string]mmRelation{
	"replace-one": {"replace-one", privacy.ReplaceOne, 2},
	"add-remove":  {"add-remove", privacy.AddOrRemove, 1},
}

// riskWeights returns Sec-MMFL's normalised risk weights R'_i =
// exp(−R_i)/Σ_t exp(−R_t) (Eq. 9), computed stably. It returns an error
// for no risks or a non-finite risk.
func riskWeights(risks []float64) ([]float64, error) {
	if len(risks) == 0 {
		return nil, fmt.Errorf("methods: secmmfl: no modality risks")
	}
	lo := math.Inf(1)
	for i, r := range risks {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("methods: secmmfl: risk %v of modality %d is not finite", r, i)
		}
		lo = min(lo, r)
	}
	w := make([]float64, len(risks))
	s := 0.0
	for i, r := range risks {
		w[i] = math.Exp(-(r - lo))
		s += w[i]
	}
	for i := range w {
		w[i] /= s
	}
	return w, nil
}

// splitBudget returns Sec-MMFL's per-modality budgets (Eq. 10 as
// corrected by the authors): ε_i = ε·R'_i and δ_i = δ/M, so that
// Σ ε_i = ε and Σ δ_i = δ. ε = +Inf gives ε_i = +Inf.
func splitBudget(eps, delta float64, risks []float64) (epsI, deltaI []float64, err error) {
	if err := checkPrivacy("secmmfl", eps, delta); err != nil {
		return nil, nil, err
	}
	w, err := riskWeights(risks)
	if err != nil {
		return nil, nil, err
	}
	epsI, deltaI = make([]float64, len(w)), make([]float64, len(w))
	for i, wi := range w {
		epsI[i] = eps * wi
		deltaI[i] = delta / float64(len(w))
	}
	return epsI, deltaI, nil
}

// modalityEvent is the privacy event of one modality's uploads of one
// client: rounds Gaussian releases of noise multiplier sigma (noise
// standard deviation σ·C) on a block of the relation's sensitivity.
func modalityEvent(rel mmRelation, sigma float64, rounds int) privacy.Event {
	return privacy.SelfComposed{Event: privacy.Gaussian{Sigma: sigma, Sensitivity: rel.Sensitivity}, Count: rounds}
}

// newMMAccountant returns a fresh accountant of the given name ("rdp" or
// "pld") under the relation.
func newMMAccountant(name string, rel mmRelation) (privacy.Accountant, error) {
	if name == "pld" {
		return privacy.NewPLD(&privacy.PLDOptions{Relation: rel.Relation})
	}
	return privacy.NewRDP(&privacy.RDPOptions{Relation: rel.Relation})
}

// modalitySigma returns the noise multiplier σ_i for which a client's
// modality-i uploads over rounds participations are (ε_i, δ_i)-DP under
// the accountant (calibrateAccountant; never above ε_i), or the paper's
// √(2T ln(1.25/δ_i))/ε_i with T = rounds (calibratePaper). ε_i = +Inf
// gives 0.
func modalitySigma(calibration, accountant string, rel mmRelation, epsI, deltaI float64, rounds int) (float64, error) {
	if math.IsInf(epsI, 1) {
		return 0, nil
	}
	if calibration == calibratePaper {
		return paperSigma(epsI, deltaI, rounds), nil
	}
	c, err := privacy.Calibrate(func() (privacy.Accountant, error) { return newMMAccountant(accountant, rel) },
		func(s float64) privacy.Event { return modalityEvent(rel, s, rounds) }, epsI, deltaI, nil)
	if err != nil {
		return 0, fmt.Errorf("methods: secmmfl: calibrating σ for ε_i = %v, δ_i = %v, %d rounds: %w", epsI, deltaI, rounds, err)
	}
	return c.Sigma, nil
}

// paperSigma is Sec-MMFL's stated noise multiplier σ_i = √(2T ln(1.25/δ_i))
// / ε_i (attributed by the authors to Wei et al., NbAFL, IEEE TIFS 2020).
func paperSigma(epsI, deltaI float64, rounds int) float64 {
	return math.Sqrt(2*float64(rounds)*math.Log(1.25/deltaI)) / epsI
}

// mmEpsilon returns the ε at δ of the composition of events under the
// named accountant and relation, +Inf when an event has no noise.
func mmEpsilon(accountant string, rel mmRelation, delta float64, events privacy.Event) (float64, error) {
	a, err := newMMAccountant(accountant, rel)
	if err != nil {
		return 0, err
	}
	if err := a.Compose(events, 1); err != nil {
		return 0, fmt.Errorf("methods: secmmfl: %w", err)
	}
	return a.Epsilon(delta)
}
