// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods/fl"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

func init() { Register(SecMMFL{}) }

// SecMMFL is Sec-MMFL: federated training of the two-encoder fusion
// classifier with local differential privacy whose strength is set per
// modality by each modality's leakage risk. Every round:
//
//  1. at round 0 and every risk_every rounds, the risk of each modality i
//     is estimated as R_i = I(G; D^i | D^{-i}), the conditional mutual
//     information between the per-example gradient G and the modality's
//     data given the other modality's, on public examples at the current
//     global model (package mi's classifier estimator with k-NN
//     resampling; gradients and data reduced by fixed Gaussian random
//     projections; a negative estimate counts as 0, since a CMI is ≥ 0);
//     the budget is split as ε_i = ε·softmax(−R)_i, δ_i =
//     δ/M (Eq. 9–10), and σ_i is calibrated by the accountant so that a
//     client's modality-i uploads over the run are (ε_i, δ_i)-DP
//     (calibrate=split), then, by default (calibrate=joint), all σ_i are
//     scaled by one common factor, the smallest for which the composition
//     of every modality's releases is (ε, δ)-DP: the split's ratios
//     σ_i/σ_j with less noise (calibrate=paper: σ_i = √(2T
//     ln(1.25/δ_i))/ε_i as stated);
//  2. each sampled client trains locally (FedAvg or FedSGD, package fl) on
//     its loss plus λ·Î(h_img; h_text), the MINE estimate of the mutual
//     information between the two encoders' features on the minibatch,
//     with a critic the client trains on its own data that round;
//  3. the client's update (model delta or gradient) is clipped per
//     modality to ℓ₂ norm C and gets Gaussian noise σ_i·C on modality i's
//     parameters (the one Privatizer), then uploaded; the server averages.
//
// Parameters are grouped by name: image.* to the image modality, text.*
// to the text modality, and the head to the riskier modality's group (the
// smaller ε_i, head=riskiest) or a named one.
//
// Privacy, privacy_unit = example (the default, see unitParam): the unit
// is one training example of one client, against a server that sees every
// upload; each client runs DP-SGD on its own data for its local steps
// (Poisson sampling at q_k = B/m_k, each example's gradient clipped per
// modality to C, noise σ_i·C on modality i's sum; exampleDP), σ_i
// calibrated to (ε_i, δ_i) for the worst client's q_k and steps (then
// jointly, calibrate=joint), and the MINE critic trained on public
// examples. One Poisson sample enters every modality's block of a step,
// so the record composes each step as one Gaussian release of noise
// multiplier (Σ_i σ_i⁻²)^(−1/2) (effectiveSigma), not as independently
// sampled per-modality releases, which would understate ε. The rest of this paragraph is
// privacy_unit = client.
//
// Privacy, privacy_unit = client: the unit is one client's local data,
// against a server that sees every upload (local DP); any change of it
// moves a clipped block by at
// most 2C (replace-one; neighbouring=add-remove takes one client's upload
// against none, sensitivity C, the Δf = C of the paper's σ_i). Client
// sampling is known to the server, so it
// gives no amplification: each σ_i is calibrated for the largest number of
// rounds any client takes part in (summed over the risk segments). The
// record composes every modality's Gaussian releases over the segments;
// its ε never exceeds the target (FineTune fails otherwise). When the
// risks are re-estimated, each segment's σ_i depend on earlier releases
// (adaptive composition); the composed Gaussians depend on the per-round
// precision Σ_i (Δ/σ_i)² only, which the joint calibration sets for the
// whole run whatever the split (calibrate=split: since each σ_i is at least
// the exact Gaussian calibration for (ε_i, δ_i) over the rounds, basic
// composition bounds it by the same a-priori budget), and the Gaussian-DP
// filter makes the whole run (ε, δ)-DP whatever the risks turn out to be.
//
// References:
//   - Enhancing privacy in multimodal federated learning with information
//     theory (Sec-MMFL), NeurIPS 2025 (Eq. 8–10, 12; the authors'
//     corrected Eq. 10, ε_i = ε·R'_i).
//   - A. Molavipour, G. Bassi and M. Skoglund, Neural estimators for
//     conditional mutual information using nearest neighbors sampling, IEEE
//     Trans. Signal Processing 69, 2021.
//   - M. I. Belghazi et al., Mutual information neural estimation, ICML
//     2018.
//   - A. Smith and A. Thakurta, Fully adaptive composition for Gaussian
//     differential privacy, arXiv:2210.17520, 2022 (the filter).
type SecMMFL struct{}

// Name implements Method.
func (SecMMFL) Name() string { return "secmmfl" }

// Arch implements Method.
func (SecMMFL) Arch() string { return "fusion" }

// mmModalities are the modalities of the fusion classifier, in group
// order; their names prefix the parameter names.
var mmModalities = []string{"image", "text"}

// Params implements Method: the federated recipe (fedParams) and Sec-MMFL's
// knobs, at the paper's values where it states them (C = 1, λ = 0.1, the
// critic's 2000 steps at full; fewer at smoke and small to keep runs
// short), with the recipe of secmmflRecipe.
func (SecMMFL) Params() []Param {
	return append(secmmflRecipe(fedParams(same(1.0)), secmmflLR),
		unitParam(),
		Param{Name: "clip", Kind: Float, Doc: "per-modality ℓ₂ clip norm C of a client's update (privacy_unit = client) or of one example's gradient (example), > 0",
			Default: same(1.0), Check: positive, set: func(h *Hyper, v any) { h.Clip = v.(float64) }},
		Param{Name: "accountant", Kind: String, Doc: "accountant that calibrates σ_i and gives the run's ε: rdp or pld",
			Default: same("rdp"), Check: oneOf(list("rdp", "pld")), set: func(h *Hyper, v any) { h.Accountant = v.(string) }},
		Param{Name: "neighbouring", Kind: String, Doc: "the guarantee's relation: replace-one (a client's data, local DP; sensitivity 2C) or add-remove (a client's upload against none; sensitivity C, the paper's Δf)",
			Default: same("replace-one"), Check: oneOf(list("replace-one", "add-remove"))},
		Param{Name: "calibrate", Kind: String, Doc: "σ_i: joint (the split's σ_i times one factor, the smallest for which the composition over modalities, rounds and sampling is (ε, δ)-DP), split (each modality calibrated to (ε_i, δ_i) alone) or paper (√(2T ln(1.25/δ_i))/ε_i)",
			Default: same(calibrateJoint), Check: oneOf(list(calibrateJoint, calibrateSplit, calibratePaper))},
		Param{Name: "lambda", Kind: Float, Doc: "weight λ of the MINE penalty λ·Î(h_img; h_text) in the local loss, ≥ 0 (0: none)",
			Default: same(0.1), Check: nonNegative},
		Param{Name: "mine_steps", Kind: Int, Doc: "Adam steps of a client's MINE critic per round, ≥ 1",
			Default: byScale(50, 100, 2000), Check: between(1, 1<<20)},
		Param{Name: "risk", Kind: String, Doc: "leakage risk: cmi (R_i = I(G; D^i | D^{-i})) or uniform (R_i = 0: ε_i = ε/M, an ablation)",
			Default: same("cmi"), Check: oneOf(list("cmi", "uniform"))},
		Param{Name: "risk_every", Kind: Int, Doc: "re-estimate the risks every this many rounds, ≥ 0 (0: before training only)",
			Default: same(10), Check: between(0, 1<<20)},
		Param{Name: "cmi_examples", Kind: Int, Doc: "public examples the CMI estimator uses, ≥ 24",
			Default: byScale(512, 1024, 2048), Check: between(24, 1<<20)},
		Param{Name: "cmi_k", Kind: Int, Doc: "nearest neighbours of the CMI resampling, ≥ 1",
			Default: same(5), Check: between(1, 1<<10)},
		Param{Name: "cmi_steps", Kind: Int, Doc: "Adam steps of the CMI classifier, ≥ 1",
			Default: byScale(300, 1000, 2000), Check: between(1, 1<<20)},
		Param{Name: "cmi_form", Kind: String, Doc: "CMI estimate: dv (Donsker–Varadhan), log-odds or paper (the stated ratio of classifier outputs)",
			Default: same("dv"), Check: oneOf(list("dv", "log-odds", "paper"))},
		Param{Name: "cmi_data", Kind: String, Doc: "what represents D^i in the CMI: raw (pixels, bag of words) or features (the current model's image and pooled text features)",
			Default: same("raw"), Check: oneOf(list("raw", "features"))},
		Param{Name: "projection", Kind: Int, Doc: "dimensions of the random projections of each gradient block and of each modality's data, ≥ 1",
			Default: same(16), Check: between(1, 1<<12)},
		Param{Name: "head", Kind: String, Doc: "the modality group the classifier head is clipped and noised with: riskiest (smallest ε_i), image or text",
			Default: same("riskiest"), Check: oneOf(list("riskiest", "image", "text"))},
	)
}

// FineTune implements Method.
func (SecMMFL) FineTune(ctx context.Context, job *Job) (*Result, error) {
	return fineTuneSec(ctx, "secmmfl", job)
}

// fineTuneSec runs Sec-MMFL's mechanism as method name (secmmfl, ldpfed).
func fineTuneSec(ctx context.Context, name string, job *Job) (*Result, error) {
	run, err := newFedRun(name, job)
	if err != nil {
		return nil, err
	}
	h := job.Hyper
	run.lambda, run.mineSteps = h.Float("lambda"), h.Int("mine_steps")
	s, err := newSecState(run)
	if err != nil {
		return nil, err
	}
	run.before = s.before
	if s.example {
		if run.example, err = newExampleDP(run, s.noise); err != nil {
			return nil, err
		}
	} else {
		run.privatize = s.privatize
	}
	rec, err := run.simulate(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.accounting()
	if err != nil {
		return nil, err
	}
	res := run.result(rec, acc)
	s.values(res.Values)
	return res, nil
}

// secmmflStep is the server step η_s of the client-level baselines
// (ldpfl, fedmm-dp) where no value was chosen for their scale and ε: the
// client-level Sec-MMFL's choice at smoke, ε = 1, the smaller of the two
// it had (so a run errs towards keeping the base model).
const secmmflStep = 1e-4

// secmmflRecipe returns ps with Sec-MMFL's recipe under the record-level
// unit (privacy_unit = example): the FedAvg server step 1 (the mean of the
// local models, not tuned) and the clients' local learning rate lr, chosen
// at smoke by ε on public data (experiments tune-secmmfl: fl-mm-tune,
// local_lr ∈ {0.02, 0.05, 0.1, 0.2}, best validation accuracy, ties to the
// larger) and marked tuned there; small and full keep 0.05, not tuned.
//
// Under privacy_unit = client the server step is the knob instead: each
// client's whole update carries noise σ_i·C on every coordinate, and at
// smoke (ε = 1: σ_i ≈ 50) plain FedAvg collapses the model; that unit
// chose η_s = 10⁻⁴ at ε = 1 (the step that keeps the new head: nothing
// learns), which such runs must set (server_step).
func secmmflRecipe(ps []Param, lr PerEpsilon) []Param {
	ps = withTuned(ps, "server_step", same(1.0))
	ps = withByEpsilon(ps, "local_lr", "smoke", lr)
	return editParam(ps, "local_lr", func(p *Param) {
		// The default at smoke is the value at the reference budget.
		p.Default, p.Tuned = byScale(lr.At(ReferenceEpsilon), 0.05, 0.05), []string{"smoke"}
	})
}

// secmmflLR is Sec-MMFL's local learning rate by ε at smoke: at ε = 1,
// with the joint calibration (calibrate = joint), 0.05 (28.4 ± 9.4 over
// seeds 1–3 on the 60 validation pairs, the base's new head 13.2 ± 7.4;
// 0.02 27.4, 0.1 27.3, 0.2 25.5); at ε = 8, also under the joint
// calibration, 0.2 (40.8 ± 7.9 over seeds 1–3; 0.02 31.6, 0.05 38.0, 0.1
// 36.8; the split calibration had chosen 0.2 too, on seed 1).
// ε = ∞ (clipping only) keeps 0.05, not tuned.
var secmmflLR = PerEpsilon{{1, 0.05}, {8, 0.2}, {math.Inf(1), 0.05}}

// tunedServerStep returns ps with the server step chosen at smoke by ε
// (experiments tune-secmmfl), marked tuned there; small and full keep the
// default, not tuned.
func tunedServerStep(ps []Param, t PerEpsilon) []Param {
	ps = withByEpsilon(ps, "server_step", "smoke", t)
	return editParam(ps, "server_step", func(p *Param) { p.Tuned = []string{"smoke"} })
}

// An mmSegment is the noise of the rounds between two risk estimates.
type mmSegment struct {
	start, rounds int       // first round; the most rounds a client takes part in
	raw           []float64 // the risk estimates; risks are their positive parts
	risks, eps    []float64
	deltas, sigma []float64
	// scale is the joint calibration's factor (calibrate = joint): sigma
	// is scale times the split's σ_i; 0 otherwise.
	scale float64
	head  int // the group of the head's parameters
	rule  nn.ClipRule
}

// A secState is Sec-MMFL's side of a run: the risk segments and the noise
// of the current one.
type secState struct {
	run *fedRun
	h   Hyper
	rel mmRelation
	// example is set under the record-level unit (privacy_unit =
	// example); steps then holds every client's local DP-SGD steps over
	// the run, and segSteps those of each segment.
	example    bool
	steps      []int
	segSteps   [][]int
	starts     []int // first round of each segment
	partRounds []int // the most rounds a client takes part in, per segment
	calibrated int   // Σ partRounds: the rounds σ_i is calibrated for
	blocks     []int32
	// estimate, when not nil, returns the risk estimates at the global
	// model for the segment starting at round r (riskEstimator.estimate;
	// nil: every risk 0, risk=uniform).
	estimate func(r int) ([]float64, error)
	segs     []mmSegment
}

// newSecState returns the state of run, with every check made: the risk
// segments, the participations, the parameter groups and the risk
// estimator's data.
func newSecState(run *fedRun) (*secState, error) {
	h := run.job.Hyper
	s := &secState{run: run, h: h, rel: mmRelations[h.String("neighbouring")], example: h.String("privacy_unit") == unitExample}
	if s.example {
		if h.String("calibrate") == calibratePaper {
			return nil, fmt.Errorf("methods: %s: calibrate = paper needs privacy_unit = client (the paper's σ_i is for a client's round uploads)", run.name)
		}
		s.rel = exampleRelation
		s.steps = exampleSteps(run, 0, run.cfg.Rounds)
	}
	every := h.Int("risk_every")
	if every == 0 {
		every = run.cfg.Rounds
	}
	for r := 0; r < run.cfg.Rounds; r += every {
		s.starts = append(s.starts, r)
	}
	sched := fl.Schedule(run.cfg)
	for i, start := range s.starts {
		end := run.cfg.Rounds
		if i+1 < len(s.starts) {
			end = s.starts[i+1]
		}
		n := slices.Max(fl.Participations(sched[start:end], run.cfg.Clients))
		s.partRounds = append(s.partRounds, n)
		s.calibrated += n
		s.segSteps = append(s.segSteps, exampleSteps(run, start, end))
	}
	var bad string
	s.blocks = run.layout.Parts(func(p *nn.Param) int {
		for g, m := range mmModalities {
			if strings.HasPrefix(p.Name, m+".") {
				return g
			}
		}
		if !strings.HasPrefix(p.Name, "head.") {
			bad = p.Name
		}
		return len(mmModalities) // the head's block
	})
	if bad != "" {
		return nil, fmt.Errorf("methods: secmmfl: parameter %s belongs to no modality (want image.*, text.* or head.*)", bad)
	}
	if h.String("risk") == "cmi" {
		e, err := newRiskEstimator(run, s.blocks)
		if err != nil {
			return nil, err
		}
		s.estimate = e.estimate
	}
	return s, nil
}

// before starts a segment at its first round: the risks at the current
// global model, the budget split, σ_i and the clip rule.
func (s *secState) before(r int, global []float32) error {
	i := slices.Index(s.starts, r)
	if i < 0 {
		return nil
	}
	job := s.run.job
	raw := make([]float64, len(mmModalities))
	if s.estimate != nil {
		s.run.layout.SetValues(global)
		var err error
		if raw, err = s.estimate(r); err != nil {
			return err
		}
	}
	// A conditional MI is ≥ 0; a negative held-out estimate means no
	// dependence the classifier could detect, and counts as 0.
	risks := make([]float64, len(raw))
	for g, v := range raw {
		risks[g] = max(0, v)
	}
	eps, deltas, err := splitBudget(job.Epsilon, job.Delta, risks)
	if err != nil {
		return err
	}
	seg := mmSegment{start: r, rounds: s.partRounds[i], raw: raw, risks: risks, eps: eps, deltas: deltas}
	for g := range eps {
		var sigma float64
		var err error
		if s.example {
			sigma, err = exampleSigma(s.h.Accountant, eps[g], deltas[g], exampleRates(s.run), s.steps)
		} else {
			sigma, err = modalitySigma(s.h.String("calibrate"), s.h.Accountant, s.rel, eps[g], deltas[g], s.calibrationRounds())
		}
		if err != nil {
			return err
		}
		seg.sigma = append(seg.sigma, sigma)
	}
	if s.h.String("calibrate") == calibrateJoint && !math.IsInf(job.Epsilon, 1) {
		var q []float64
		if s.example {
			q = exampleRates(s.run)
		}
		f, err := jointScale(s.h.Accountant, s.rel, job.Epsilon, job.Delta, jointFamilies(s.rel, seg.sigma, q, s.steps, s.calibrationRounds()))
		if err != nil {
			return err
		}
		seg.sigma, seg.scale = scaled(seg.sigma, f), f
	}
	seg.head = s.headGroup(eps)
	part := make([]int32, len(s.blocks))
	for j, b := range s.blocks {
		part[j] = b
		if int(b) == len(mmModalities) {
			part[j] = int32(seg.head)
		}
	}
	seg.rule = nn.ClipRule{Part: part, C: slices.Repeat([]float64{s.h.Clip}, len(mmModalities))}
	s.segs = append(s.segs, seg)
	return nil
}

// calibrationRounds returns the T of σ_i: the paper's T (the run's rounds)
// for calibrate=paper, else the most rounds a client takes part in.
func (s *secState) calibrationRounds() int {
	if s.h.String("calibrate") == calibratePaper {
		return s.run.cfg.Rounds
	}
	return s.calibrated
}

// headGroup returns the group of the head: the named modality, or the one
// with the smallest ε_i (the first on ties).
func (s *secState) headGroup(eps []float64) int {
	if g := slices.Index(mmModalities, s.h.String("head")); g >= 0 {
		return g
	}
	g := 0
	for i, e := range eps {
		if e < eps[g] {
			g = i
		}
	}
	return g
}

// privatize clips client k's update u of round r per modality and adds the
// segment's noise (the Privatizer, one contribution, normaliser 1), with a
// noise stream of its own per (round, client).
func (s *secState) privatize(r, k int, u []float32) Report {
	seg := &s.segs[len(s.segs)-1]
	seed := streamRNG(s.run.job.Seed, StreamClient, r, k).Uint64()
	p, err := NewPrivatizer(seg.rule, seg.sigma, 1, seed)
	if err != nil {
		panic(err) // the rule and σ were checked when the segment began
	}
	return p.Privatize(u, [][]float32{slices.Clone(u)})
}

// noise returns the clip rule and σ_i of the current segment (the
// record-level mechanism's, exampleDP.noise).
func (s *secState) noise(int) (nn.ClipRule, []float64) {
	seg := &s.segs[len(s.segs)-1]
	return seg.rule, seg.sigma
}

// clientEvents returns, under the record-level unit, the mechanism of
// each client over the run: in every segment, its Poisson-subsampled
// Gaussian steps, each releasing every modality's block of one sample at
// once (one Gaussian of effectiveSigma of the segment's σ_i; composing
// the modalities as independently sampled releases would understate ε).
func (s *secState) clientEvents() []privacy.Composed {
	q := exampleRates(s.run)
	ev := make([]privacy.Composed, len(q))
	for k := range ev {
		for i, seg := range s.segs {
			ev[k] = append(ev[k], exampleEvent(q[k], effectiveSigma(seg.sigma), s.segSteps[i][k]))
		}
	}
	return ev
}

// events returns the mechanism of one client over the run: every
// modality's Gaussian releases in every segment.
func (s *secState) events() privacy.Composed {
	var ev privacy.Composed
	for _, seg := range s.segs {
		for g := range mmModalities {
			ev = append(ev, modalityEvent(s.rel, seg.sigma[g], seg.rounds))
		}
	}
	return ev
}

// accounting returns the run's privacy record: ε of the composed events
// under both accountants, never above the target.
func (s *secState) accounting() (accounting, error) {
	job, h := s.run.job, s.h
	if s.example {
		return s.exampleAccounting()
	}
	q := float64(s.run.cfg.PerRound) / float64(s.run.cfg.Clients)
	if math.IsInf(job.Epsilon, 1) {
		a, err := nonPrivateAccounting(job.Epsilon, job.Delta, q, s.calibrated)
		a.Record.Sampling, a.Record.Neighbouring, a.Record.ClipNorm = "none", s.rel.Name, h.Clip
		return a, err
	}
	ev := s.events()
	var a accounting
	var err error
	if a.EpsilonRDP, err = mmEpsilon("rdp", s.rel, job.Delta, ev); err != nil {
		return accounting{}, err
	}
	if a.EpsilonPLD, err = mmEpsilon("pld", s.rel, job.Delta, ev); err != nil {
		return accounting{}, err
	}
	achieved := a.EpsilonRDP
	if h.Accountant == "pld" {
		achieved = a.EpsilonPLD
	}
	if achieved > job.Epsilon {
		return accounting{}, fmt.Errorf("methods: secmmfl: the executed mechanism is (%v, %v)-DP under %s, above the target ε = %v (calibrate = %s)", achieved, job.Delta, h.Accountant, job.Epsilon, h.String("calibrate"))
	}
	evb, err := privacy.MarshalEvent(ev)
	if err != nil {
		return accounting{}, err
	}
	a.Sigma = math.Inf(1)
	for _, seg := range s.segs {
		a.Sigma = min(a.Sigma, slices.Min(seg.sigma))
	}
	a.Record = results.Privacy{
		Accountant: h.Accountant, EpsilonTarget: results.Float(job.Epsilon), Epsilon: results.Float(achieved),
		Delta: job.Delta, Sigma: a.Sigma, SampleRate: q, Steps: int64(s.calibrated), Sampling: "none",
		Neighbouring: s.rel.Name, ClipNorm: h.Clip, Events: json.RawMessage(evb), Caveats: s.caveats(),
	}
	if err := s.components(&a.Record); err != nil {
		return accounting{}, err
	}
	if h.String("calibrate") == calibratePaper {
		stated := results.Float(job.Epsilon) // Σ ε_i = ε, by basic composition
		a.Record.EpsilonNominal = &stated
	}
	return a, nil
}

// exampleAccounting is accounting under the record-level unit: the worst
// client's composed events.
func (s *secState) exampleAccounting() (accounting, error) {
	sigma := math.Inf(1)
	for _, seg := range s.segs {
		sigma = min(sigma, slices.Min(seg.sigma))
	}
	c := []string{"Record.Sigma is the smallest σ_i of the run; the per-modality σ_i are in the run's values and Record.Components",
		"one Poisson sample enters every modality's block of a step, so a step is one Gaussian release of noise multiplier (Σ_i σ_i⁻²)^(−1/2) (the events), not independent per-modality releases",
		s.calibrationCaveat()}
	if len(s.starts) > 1 {
		c = append(c, "adaptive composition: the risks, and so the σ_i, of each segment depend on earlier releases; Epsilon composes the realised σ_i of the worst client, and each segment's σ_i are calibrated for the whole run, but no filter for adaptively chosen subsampled Gaussian releases is checked")
	}
	if s.estimate != nil {
		c = append(c, "the risks R_i are estimated on public examples at the current global model (a post-processing of the uploads): no privacy cost")
	}
	if s.run.lambda > 0 {
		c = append(c, "the MINE critic is trained on public examples at the global model, and each example's penalty pairs it with public examples only, so its gradient depends on that example alone")
	}
	if s.run.job.Hyper.String("neighbouring") != exampleRelation.Name {
		c = append(c, "the neighbouring hyperparameter applies to the client unit only; the example unit is add-remove of one example")
	}
	a, err := exampleAccounting(s.run.name, s.run, s.clientEvents(), sigma, c)
	if err != nil || math.IsInf(s.run.job.Epsilon, 1) {
		return a, err
	}
	if err := s.components(&a.Record); err != nil {
		return accounting{}, err
	}
	return a, nil
}

// components records in rec each modality's σ_i (per segment when the
// risks are re-estimated) and its ε at rec.Delta alone (the worst
// client's under the record-level unit), under the run's accountant, and
// the joint calibration's factor (the first segment's; each segment's is
// in the run's values).
func (s *secState) components(rec *results.Privacy) error {
	eps, err := s.aloneEpsilons(rec.Delta)
	if err != nil {
		return err
	}
	rec.SigmaScale = s.segs[0].scale
	for _, seg := range s.segs {
		for g, m := range mmModalities {
			name := m
			if len(s.segs) > 1 {
				name = fmt.Sprintf("%s@r%d", m, seg.start)
			}
			rec.Components = append(rec.Components, results.PrivacyComponent{Name: name, Sigma: seg.sigma[g], Epsilon: results.Float(eps[g])})
		}
	}
	return nil
}

// aloneEpsilons returns each modality's ε at delta of its releases over
// the run alone, under the run's accountant: the worst client's composed
// Poisson-subsampled steps under the record-level unit, the Gaussian
// releases of one client under the client unit.
func (s *secState) aloneEpsilons(delta float64) ([]float64, error) {
	out := make([]float64, len(mmModalities))
	for g := range mmModalities {
		var e float64
		var err error
		if s.example {
			q := exampleRates(s.run)
			evs := make([]privacy.Composed, len(q))
			for k := range evs {
				for i, seg := range s.segs {
					evs[k] = append(evs[k], exampleEvent(q[k], seg.sigma[g], s.segSteps[i][k]))
				}
			}
			e, _, err = worstClient(s.h.Accountant, delta, evs)
		} else {
			var ev privacy.Composed
			for _, seg := range s.segs {
				ev = append(ev, modalityEvent(s.rel, seg.sigma[g], seg.rounds))
			}
			e, err = mmEpsilon(s.h.Accountant, s.rel, delta, ev)
		}
		if err != nil {
			return nil, err
		}
		out[g] = e
	}
	return out, nil
}

// calibrationCaveat states how the σ_i were calibrated.
func (s *secState) calibrationCaveat() string {
	switch s.h.String("calibrate") {
	case calibrateJoint:
		return "calibrate = joint: σ_i is the risk split's calibration to (ε_i, δ_i) times one factor (Record.SigmaScale), the smallest for which the composition of every modality's releases is (ε, δ)-DP; each modality's ε alone is in Record.Components"
	case calibratePaper:
		return "calibrate = paper: σ_i = √(2T ln(1.25/δ_i))/ε_i as stated; each modality's ε alone is in Record.Components"
	}
	return "calibrate = split: each σ_i is calibrated to (ε_i, δ_i) alone, and Epsilon composes them (below the target: the split is conservative); each modality's ε alone is in Record.Components"
}

// caveats returns what the privacy record must say about the run.
func (s *secState) caveats() []string {
	unit := "local DP: the unit is one client's data against a server that sees every upload; a clipped modality block moves by at most 2C (replace-one)"
	if s.rel.Name == "add-remove" {
		unit = "client-level DP: one client's upload against none (add-remove, sensitivity C, the paper's Δf); a server that sees single uploads can tell a client's data apart by up to 2C, which this relation does not cover"
	}
	c := []string{
		unit,
		"client sampling gives no amplification (the server knows the schedule): σ_i is calibrated for the most rounds any client takes part in",
		"Record.Sigma is the smallest σ_i of the run; the per-modality σ_i are in the run's values and Record.Components",
		s.calibrationCaveat(),
	}
	switch {
	case len(s.starts) > 1 && s.h.String("calibrate") == calibratePaper:
		c = append(c, "adaptive composition: the risks, and so the σ_i, of each segment depend on earlier releases, and the paper's σ_i are not calibrated by an accountant, so no a-priori bound covers every split; Epsilon composes the realised σ_i only")
	case len(s.starts) > 1 && s.h.String("calibrate") == calibrateJoint:
		c = append(c, "adaptive composition: the risks, and so the σ_i, of each segment depend on earlier releases; the joint calibration bounds every split's per-round Gaussian precision Σ_i (Δ/σ_i)² by the one that meets (ε, δ) over the whole run (the composed Gaussians depend on it only), so the run is (ε, δ)-DP by the Gaussian-DP filter (Smith and Thakurta, Fully adaptive composition for Gaussian differential privacy, 2022); Epsilon composes the realised σ_i")
	case len(s.starts) > 1:
		c = append(c, "adaptive composition: the risks, and so the σ_i, of each segment depend on earlier releases; every split's per-round Gaussian precision Σ_i (Δ/σ_i)² is bounded a priori by basic composition of its (ε_i, δ_i), so the run is (ε, δ)-DP by the Gaussian-DP filter (Smith and Thakurta, Fully adaptive composition for Gaussian differential privacy, 2022); Epsilon composes the realised σ_i")
	}
	if s.run.cfg.Weighting == fl.BySize {
		c = append(c, "the server weights the uploads by the clients' data sizes n_k, which it is assumed to know (weighting=uniform does not use them)")
	}
	if s.estimate != nil {
		c = append(c, "the risks R_i are estimated on public examples at the current global model (a post-processing of the uploads): no privacy cost")
	}
	return c
}

// values adds the run's per-segment risks, budgets, σ and joint factor
// to v, and each modality's ε alone at the run's δ (aloneEpsilons; NaN if
// the accountant fails).
func (s *secState) values(v map[string]float64) {
	for _, seg := range s.segs {
		for g, m := range mmModalities {
			v[fmt.Sprintf("risk_%s_r%d", m, seg.start)] = seg.risks[g]
			v[fmt.Sprintf("risk_estimate_%s_r%d", m, seg.start)] = seg.raw[g]
			v[fmt.Sprintf("epsilon_%s_r%d", m, seg.start)] = seg.eps[g]
			v[fmt.Sprintf("sigma_%s_r%d", m, seg.start)] = seg.sigma[g]
		}
		v[fmt.Sprintf("head_group_r%d", seg.start)] = float64(seg.head)
		if seg.scale > 0 {
			v[fmt.Sprintf("sigma_scale_r%d", seg.start)] = seg.scale
		}
	}
	if math.IsInf(s.run.job.Epsilon, 1) {
		return
	}
	eps, err := s.aloneEpsilons(s.run.job.Delta)
	for g, m := range mmModalities {
		v["epsilon_accounted_"+m] = math.NaN()
		if err == nil {
			v["epsilon_accounted_"+m] = eps[g]
		}
	}
}
