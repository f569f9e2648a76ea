// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"errors"
	"fmt"
	"math"

	"github.com/repro-dp/repro/privacy"
)

// The calibrations of Sec-MMFL's per-modality noise (the calibrate
// hyperparameter).
//
// The default is joint: a client's upload (or one example's contribution
// to it) releases every modality's noisy block at once, so its privacy
// loss is their composition, and calibrating each modality to (ε_i, δ_i)
// alone leaves that composition well below the target (ε ≈ 0.7 at a
// target of 1 on fl-mm at smoke). The joint calibration gives the same
// guarantee, (ε, δ) for the whole release, with less noise, and keeps the
// risk-based split's say in where the noise goes (the ratios σ_i/σ_j).
const (
	// calibrateJoint: σ_i = f·σ_i^split, with σ_i^split the split's
	// calibration and one common factor f, the smallest (found by
	// bisection) for which the composition of every modality's releases
	// over the run, as the record composes it, is (ε, δ)-DP.
	calibrateJoint = "joint"
	// calibrateSplit: σ_i calibrated by the run's accountant so that
	// the modality's releases over the run are (ε_i, δ_i)-DP on their own.
	calibrateSplit = "split"
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
// the accountant (calibrateSplit, the base of calibrateJoint; never
// above ε_i), or the paper's
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
// named accountant and relation, +Inf when an event has no noise. Under
// the PLD, events made only of pure ε-DP releases of one ε (ldpfl's
// randomised responses) are composed on the grid privacy.PureInterval
// gives, which holds their privacy losses ±ε exactly (at the default
// spacing each would be split between its neighbouring grid points, a
// pessimistic error that millions of releases add up); every other event
// on the default grid. When the privacy-loss grid of the default spacing (10⁻⁴) does
// not fit (privacy.ErrGridTooLarge: a small σ, at a budget of thousands),
// it retries at the spacings pldFallback lists in turn, as repro account
// does; a coarser grid still gives an upper bound on ε, with a looser
// error bound. A run that fits the default grid is accounted as before.
func mmEpsilon(accountant string, rel mmRelation, delta float64, events privacy.Event) (float64, error) {
	var a privacy.Accountant
	var err error
	if accountant == "pld" {
		// Pure ε-DP releases (ldpfl's randomised responses) get a grid
		// that holds their losses ±ε exactly; every other mechanism the
		// default (PureInterval is 0).
		a, err = privacy.NewPLD(&privacy.PLDOptions{Relation: rel.Relation, Interval: privacy.PureInterval(events)})
	} else {
		a, err = newMMAccountant(accountant, rel)
	}
	if err != nil {
		return 0, err
	}
	err = a.Compose(events, 1)
	for _, h := range pldFallback {
		if accountant != "pld" || !errors.Is(err, privacy.ErrGridTooLarge) {
			break
		}
		if a, err = privacy.NewPLD(&privacy.PLDOptions{Relation: rel.Relation, Interval: h}); err != nil {
			return 0, err
		}
		err = a.Compose(events, 1)
	}
	if err != nil {
		return 0, fmt.Errorf("methods: secmmfl: %w", err)
	}
	return a.Epsilon(delta)
}

// pldFallback are the PLD grid spacings mmEpsilon tries, in turn, after
// the default 10⁻⁴ does not fit.
var pldFallback = []float64{1e-3, 1e-2, 0.1}

// effectiveSigma returns the noise multiplier of the one Gaussian release
// equivalent to releasing every block g of an update at once, each
// clipped to C_g with noise σ_g·C_g: σ = (Σ_g σ_g⁻²)^(−1/2). Dividing
// block g by σ_g·C_g gives unit noise on every coordinate and moves the
// whole vector by at most Δ·√(Σ_g σ_g⁻²) when each block moves by at most
// Δ·C_g, and the Gaussian mechanism depends on that ratio only (Dong, Roth
// and Su, Gaussian differential privacy, JRSS B 2022, Corollary 3.3, for
// the composition of Gaussians). When the blocks share one Poisson sample
// (one example enters every block or none), this is the only correct
// accounting: composing the blocks' subsampled releases as independent
// ones understates ε. A σ_g of 0 gives 0.
func effectiveSigma(sigma []float64) float64 {
	prec := 0.0
	for _, s := range sigma {
		if s == 0 {
			return 0
		}
		prec += 1 / (s * s)
	}
	return 1 / math.Sqrt(prec)
}

// jointScale returns the common factor f of the joint calibration: the
// smallest f, within privacy.Calibrate's relative tolerance 10⁻³, for
// which every mechanism families[k](f) is (ε, δ)-DP under the named
// accountant and relation, i.e. the largest of their calibrations (the
// worst client's). Each family must cost less as f grows. ε = +Inf or no
// family gives 1.
func jointScale(accountant string, rel mmRelation, eps, delta float64, families []func(f float64) privacy.Event) (float64, error) {
	if math.IsInf(eps, 1) || len(families) == 0 {
		return 1, nil
	}
	f := 0.0
	for _, family := range families {
		c, err := privacy.Calibrate(func() (privacy.Accountant, error) { return newMMAccountant(accountant, rel) },
			family, eps, delta, &privacy.CalibrateOptions{Initial: 1, Step: 1.5})
		if err != nil {
			return 0, fmt.Errorf("methods: secmmfl: joint calibration for ε = %v, δ = %v: %w", eps, delta, err)
		}
		f = max(f, c.Sigma)
	}
	return f, nil
}

// jointFamilies returns the mechanisms the joint calibration bounds, as
// functions of the factor f on the split's σ_i (base), each over the
// whole run as the record composes it:
//   - under the record-level unit (q not nil), one per distinct client
//     (q[k], steps[k]): steps[k] Poisson-subsampled releases at rate q[k]
//     of every modality's block at once (one Gaussian of noise multiplier
//     f·effectiveSigma(base));
//   - under the client unit (q nil), every modality's Gaussian releases of
//     the relation's sensitivity over rounds participations.
func jointFamilies(rel mmRelation, base, q []float64, steps []int, rounds int) []func(f float64) privacy.Event {
	if q == nil {
		return []func(float64) privacy.Event{func(f float64) privacy.Event {
			var ev privacy.Composed
			for _, b := range base {
				ev = append(ev, modalityEvent(rel, f*b, rounds))
			}
			return ev
		}}
	}
	type key struct {
		q float64
		n int
	}
	var fams []func(float64) privacy.Event
	done := map[key]bool{}
	eff := effectiveSigma(base)
	for k := range q {
		kk := key{q[k], steps[k]}
		if kk.n == 0 || done[kk] {
			continue
		}
		done[kk] = true
		fams = append(fams, func(f float64) privacy.Event { return exampleEvent(kk.q, f*eff, kk.n) })
	}
	return fams
}

// scaled returns f·s.
func scaled(s []float64, f float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = f * v
	}
	return out
}
