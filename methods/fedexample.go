// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods/fl"
	"github.com/repro-dp/repro/methods/mi"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
	"github.com/repro-dp/repro/privacy"
)

// The units of privacy of the local-DP federated methods (the
// privacy_unit hyperparameter).
const (
	// unitClient: the unit is one client's data; each client clips its
	// whole round update and adds noise to it (Sec-MMFL's Eq. 11 read
	// literally).
	unitClient = "client"
	// unitExample: the unit is one training example of one client; each
	// client runs DP-SGD on its own data for its local steps (Poisson
	// sampling, per-example clipping, Gaussian noise on the sum), and
	// uploads the result.
	unitExample = "example"
)

// unitParam is the privacy_unit hyperparameter of the local-DP federated
// methods that allow the record-level unit (secmmfl, ldpfed, nbafl).
//
// The default is example, chosen here (Sec-MMFL does not state its unit):
//   - the paper's σ formula is NbAFL's, whose neighbouring datasets differ
//     in one sample of one client (sensitivity 2C/m, m the local data
//     size), a record-level unit;
//   - the paper's accuracies (about 78% at ε = 1 on CIFAR-10, 64% on
//     CrisisMMD) are out of reach at the client unit with few clients: on
//     fl-mm at smoke every client-level defence stays at the untrained
//     head's accuracy at every ε up to 8 (docs/secmmfl.md), while its
//     signal-to-noise ratio per coordinate is about 5·10⁻⁴.
//
// Every run's privacy record states its unit.
func unitParam() Param {
	return Param{Name: "privacy_unit", Kind: String,
		Doc:     "unit of privacy: example (one training example of one client: local DP-SGD with Poisson sampling at q = B/m_k, per-example clipping and noise on every local step) or client (one client's data: its whole round update clipped and noised)",
		Default: same(unitExample), Check: oneOf(list(unitExample, unitClient))}
}

// ExampleUnitCaveat starts the privacy-record caveat of a federated run
// at the record-level unit (privacy_unit = example); a federated record
// without it is at the client unit (one client's data).
const ExampleUnitCaveat = "unit: one training example of one client"

// exampleRelation is the neighbouring relation of the record-level unit:
// one example of one client added or removed, sensitivity C (DP-SGD's;
// the accountants' Poisson-subsampled Gaussian holds under it).
var exampleRelation = mmRelations["add-remove"]

// An exampleDP is the record-level local DP of a federated run
// (privacy_unit = example): every sampled client runs DP-SGD on its own
// data for its local steps, each step a Poisson sample of its m_k examples
// at rate q_k = min(1, B/m_k), every per-example gradient clipped by the
// rule and Gaussian noise σ_g·C_g added to group g of their sum, divided
// by the expected batch q_k·m_k (the Privatizer).
type exampleDP struct {
	// q holds each client's sampling rate.
	q []float64
	// noise returns the clip rule and the noise multipliers of round r.
	noise func(r int) (nn.ClipRule, []float64)
	// public are the public examples the MINE critic is trained on, and
	// pairs the public examples each private one is paired with in its
	// own MINE estimate (the penalty must depend on one example only).
	public, pairs []*datasets.Example
}

// mineMarginals is the number of public examples each private example is
// paired with in its own MINE estimate under the record-level unit.
const mineMarginals = 15

// newExampleDP returns the record-level mechanism of run with the noise
// of noise, after checking that the MINE penalty, if any, has enough
// public examples.
func newExampleDP(run *fedRun, noise func(r int) (nn.ClipRule, []float64)) (*exampleDP, error) {
	e := &exampleDP{q: exampleRates(run), noise: noise}
	if run.lambda == 0 {
		return e, nil
	}
	for i := range run.job.Data.Public {
		ex := &run.job.Data.Public[i]
		if len(e.public) < mineExamples && checkFusionExample(run.model, ex, run.model.Config.Classes) == nil {
			e.public = append(e.public, ex)
		}
	}
	if len(e.public) < mineMarginals+1 {
		return nil, fmt.Errorf("methods: %s: %d valid public examples for the MINE critic under the example unit, want at least %d", run.name, len(e.public), mineMarginals+1)
	}
	e.pairs = e.public[:mineMarginals]
	return e, nil
}

// exampleRates returns each client's Poisson sampling rate q_k = min(1,
// B/m_k) (1 when the local batch is 0, all of the data).
func exampleRates(run *fedRun) []float64 {
	q := make([]float64, len(run.clients))
	for k, c := range run.clients {
		q[k] = 1
		if run.batch > 0 {
			q[k] = min(1, float64(run.batch)/float64(len(c)))
		}
	}
	return q
}

// exampleSteps returns the local DP-SGD steps each client takes in rounds
// [from, to) of the run's public schedule: its participations times E.
func exampleSteps(run *fedRun, from, to int) []int {
	n := fl.Participations(fl.Schedule(run.cfg)[from:to], run.cfg.Clients)
	for k := range n {
		n[k] *= run.cfg.LocalSteps
	}
	return n
}

// exampleEvent is one client's mechanism on one group: steps
// Poisson-subsampled Gaussian releases at rate q and noise multiplier
// sigma.
func exampleEvent(q, sigma float64, steps int) privacy.Event {
	return privacy.SelfComposed{Event: privacy.PoissonGaussian{Q: q, Sigma: sigma}, Count: steps}
}

// exampleSigma returns the smallest noise multiplier, over the clients'
// calibrations, for which every client k's steps[k] releases at rate q[k]
// are (ε, δ)-DP under the accountant: σ is calibrated for each distinct
// (q_k, steps_k) and the largest is returned (the worst client's). A
// client with no steps costs nothing. ε = +Inf gives 0.
func exampleSigma(accountant string, eps, delta float64, q []float64, steps []int) (float64, error) {
	if math.IsInf(eps, 1) {
		return 0, nil
	}
	type key struct {
		q float64
		n int
	}
	done := map[key]bool{}
	sigma := 0.0
	for k := range q {
		kk := key{q[k], steps[k]}
		if steps[k] == 0 || done[kk] {
			continue
		}
		done[kk] = true
		c, err := privacy.Calibrate(func() (privacy.Accountant, error) { return newMMAccountant(accountant, exampleRelation) },
			func(s float64) privacy.Event { return exampleEvent(kk.q, s, kk.n) }, eps, delta, nil)
		if err != nil {
			return 0, fmt.Errorf("methods: calibrating σ for ε = %v, δ = %v, q = %v, %d steps: %w", eps, delta, kk.q, kk.n, err)
		}
		sigma = max(sigma, c.Sigma)
	}
	return sigma, nil
}

// worstClient returns the largest ε at δ over the clients' mechanisms
// events[k] under the accountant, and the client that has it (the lowest
// on ties).
func worstClient(accountant string, delta float64, events []privacy.Composed) (float64, int, error) {
	worst, at := math.Inf(-1), 0
	for k, ev := range events {
		e, err := mmEpsilon(accountant, exampleRelation, delta, ev)
		if err != nil {
			return 0, 0, err
		}
		if e > worst {
			worst, at = e, k
		}
	}
	return worst, at, nil
}

// exampleAccounting returns the record of a record-level run whose
// client k's mechanism is events[k]: ε of the worst client under both
// accountants (the one of the hyperparameters is the run's), an error
// when it exceeds the target. sigma is the record's noise multiplier.
func exampleAccounting(name string, run *fedRun, events []privacy.Composed, sigma float64, caveats []string) (accounting, error) {
	job, h := run.job, run.job.Hyper
	q := exampleRates(run)
	steps := exampleSteps(run, 0, run.cfg.Rounds)
	worstQ, worstSteps := slices.Max(q), slices.Max(steps)
	caveats = append([]string{
		ExampleUnitCaveat + " (add-remove), against a server that sees every upload (local DP): each client runs DP-SGD on its own data, Poisson sampling at q_k = B/m_k, per-example ℓ₂ clipping, Gaussian noise on the sum at every local step",
		"client sampling gives no amplification (the server knows the schedule); the noise is calibrated for the worst client (its q_k and its local steps over the rounds it takes part in), and Epsilon is the worst client's",
	}, caveats...)
	if run.cfg.Weighting == fl.BySize {
		caveats = append(caveats, "the server weights the uploads by the clients' data sizes n_k, which it is assumed to know (weighting=uniform does not use them)")
	}
	if math.IsInf(job.Epsilon, 1) {
		a, err := nonPrivateAccounting(job.Epsilon, job.Delta, worstQ, worstSteps)
		a.Record.Sampling, a.Record.Neighbouring, a.Record.ClipNorm = "poisson", exampleRelation.Name, h.Clip
		a.Record.Caveats = caveats
		return a, err
	}
	var a accounting
	var err error
	var at int
	if a.EpsilonRDP, at, err = worstClient("rdp", job.Delta, events); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	if h.Accountant == "pld" {
		at = -1
	}
	if a.EpsilonPLD, _, err = worstClient("pld", job.Delta, events); err != nil {
		return accounting{}, fmt.Errorf("methods: %s: %w", name, err)
	}
	achieved := a.EpsilonRDP
	if h.Accountant == "pld" {
		achieved = a.EpsilonPLD
		if _, at, err = worstClient("pld", job.Delta, events); err != nil {
			return accounting{}, err
		}
	}
	if achieved > job.Epsilon {
		return accounting{}, fmt.Errorf("methods: %s: the executed mechanism is (%v, %v)-DP under %s for client %d, above the target ε = %v", name, achieved, job.Delta, h.Accountant, at, job.Epsilon)
	}
	evb, err := privacy.MarshalEvent(events[at])
	if err != nil {
		return accounting{}, err
	}
	clients, err := distinctEvents(events, steps)
	if err != nil {
		return accounting{}, err
	}
	a.Sigma = sigma
	a.Record = results.Privacy{
		Accountant: h.Accountant, EpsilonTarget: results.Float(job.Epsilon), Epsilon: results.Float(achieved),
		Delta: job.Delta, Sigma: sigma, SampleRate: q[at], Steps: int64(steps[at]), Sampling: "poisson",
		Neighbouring: exampleRelation.Name, ClipNorm: h.Clip, Events: json.RawMessage(evb), Caveats: caveats,
		ClientEvents: clients,
	}
	return a, nil
}

// distinctEvents returns the encodings of the clients' mechanisms events,
// each distinct one once, in client order, leaving out the clients that
// take no step (steps[k] = 0: nothing of theirs is released). They are
// the record's ClientEvents: the worst-ε client need not have the largest
// TPR at every FPR (a client of fewer steps at a higher rate against one
// of more steps at a lower rate), so a bound for an example of any client
// is the largest over them.
func distinctEvents(events []privacy.Composed, steps []int) ([]json.RawMessage, error) {
	var out []json.RawMessage
	seen := map[string]bool{}
	for k, ev := range events {
		if steps[k] == 0 {
			continue
		}
		b, err := privacy.MarshalEvent(ev)
		if err != nil {
			return nil, err
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, json.RawMessage(b))
		}
	}
	return out, nil
}

// privatizer returns the Privatizer of client k in round r: the round's
// rule and σ, normalising by batch, noise from the client's stream of
// (round, client).
func (e *exampleDP) privatizer(seed uint64, r, k int, batch float64) (*Privatizer, error) {
	rule, sigma := e.noise(r)
	return NewPrivatizer(rule, sigma, batch, streamRNG(seed, StreamClient, r, k).Uint64())
}

// updateExample is fedClient.Update under the record-level unit: E local
// DP-SGD steps of client k on its own data, each on a Poisson sample at
// rate q_k, privatised by the Privatizer (FedSGD: one step, whose noisy
// gradient is the upload).
func (c *fedClient) updateExample(r, k int, global, upload []float32, rng *rand.Rand) (fl.Info, error) {
	run, ex := c.run, c.run.example
	data := run.clients[k]
	q := ex.q[k]
	p, err := ex.privatizer(run.job.Seed, r, k, q*float64(len(data)))
	if err != nil {
		return fl.Info{}, err
	}
	var critic *mi.MINE
	if run.lambda > 0 {
		// The critic is trained on public examples at the global
		// model, so that it carries no private data.
		if critic, err = c.trainCritic(ex.public, rng); err != nil {
			return fl.Info{}, err
		}
	}
	info := fl.Info{Steps: run.cfg.LocalSteps}
	var opt optim.Optimizer
	// DP-SGD's sampler on the client's stream: one uniform draw per
	// example per step, in data order.
	sampler := &Poisson{N: len(data), Q: q, rng: rng}
	var idx []int
	var batch []*datasets.Example
	for range run.cfg.LocalSteps {
		idx = sampler.Next(idx[:0])
		batch = batch[:0]
		for _, i := range idx {
			batch = append(batch, data[i])
		}
		loss, err := c.exampleGradient(batch, critic, p, c.grad)
		if err != nil {
			return fl.Info{}, err
		}
		info.Examples += len(batch)
		info.Loss += loss / float64(run.cfg.LocalSteps)
		if run.cfg.Aggregation == fl.FedSGD {
			copy(upload, c.grad)
			return info, nil
		}
		if opt == nil {
			if opt, err = optim.New("sgd", c.params, nil); err != nil {
				return fl.Info{}, err
			}
		}
		c.layout.SetGrad(c.grad)
		opt.Step(c.params, run.localLR, nil)
	}
	copy(upload, c.layout.Values())
	return info, nil
}

// exampleGradient writes to g the privatised mean gradient of the batch
// (p.Privatize of the per-example gradients of the cross-entropy, plus,
// when critic is not nil, λ times the per-example MINE penalty) and
// returns the mean cross-entropy (0 for an empty batch).
//
// The penalty of example b is λ·(P+1)·Î_b, with Î_b the MINE estimate
// on the pairs of b and the P public examples ex.pairs (their features at
// the replica's current values; a fixed cyclic pairing gives the
// marginal): its gradient depends on b and public data only, as the
// per-example sensitivity needs. The factor P+1 makes b's weight in Î_b
// one, as in the batch penalty of fedClient.gradient.
func (c *fedClient) exampleGradient(batch []*datasets.Example, critic *mi.MINE, p *Privatizer, g []float32) (float64, error) {
	n := len(batch)
	var gx, gy [][]float64
	var ce []float64
	if critic != nil && n > 0 {
		pairs := c.run.example.pairs
		pimg, ptext, _ := c.features(pairs)
		img, text, losses := c.features(batch)
		ce = losses
		m := len(pairs) + 1
		perm := make([]int, m)
		for j := range perm {
			perm[j] = (j + 1) % m
		}
		gx, gy = make([][]float64, n), make([][]float64, n)
		for i := range batch {
			x := append([][]float64{img[i]}, pimg...)
			y := append([][]float64{text[i]}, ptext...)
			_, gi, gt, err := critic.Gradient(x, y, perm, true)
			if err != nil {
				return 0, err
			}
			gx[i], gy[i] = gi[0], gt[0]
		}
	}
	scale := float32(c.run.lambda * float64(mineMarginals+1))
	res, err := nn.PerSample(c.layout, n, func(t *nn.Tape, i int) (*nn.Node, error) {
		e := batch[i]
		f, pt := c.m.FeaturesFrom(t, c.imageInput(t, e), e.Prompt, nil)
		loss := t.CrossEntropy(c.m.HeadFrom(t, f, pt, nil), []int{e.Label}, nil)
		if gx == nil {
			return loss, nil
		}
		pen := t.Add(dot(t, gx[i], f), dot(t, gy[i], pt))
		return t.Add(loss, t.Scale(pen, scale)), nil
	}, c.opts)
	if err != nil {
		return 0, err
	}
	p.Privatize(g, res.Grads)
	if n == 0 {
		return 0, nil
	}
	if ce == nil {
		ce = res.Losses
	}
	return mean(ce), nil
}
