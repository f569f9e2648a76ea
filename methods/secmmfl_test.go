// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
)

var flmm = sync.OnceValues(func() (*datasets.Dataset, error) {
	return datasets.Build("fl-mm", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
})

// fusionJob returns a job of method at ε eps with params on the first
// perClient private examples of each client of the smoke fl-mm task (data
// seed 1), with a freshly initialised smoke fusion classifier.
func fusionJob(t testing.TB, method string, perClient int, eps float64, params map[string]any) *Job {
	t.Helper()
	d, err := flmm()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes, cfg.SmearKeys, cfg.CLSLast = len(d.PublicClasses), false, false
	m, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sub := *d
	sub.Private = nil
	count := make([]int, d.Clients)
	for _, e := range d.Private {
		if e.Client >= 0 && count[e.Client] < perClient {
			count[e.Client]++
			sub.Private = append(sub.Private, e)
		}
	}
	h, err := ResolveAt(method, "smoke", eps, params)
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Model: m, Data: &sub, Hyper: h, Epsilon: eps, Delta: 1e-5, Seed: 3}
}

// fastSec are settings that keep a secmmfl test run short.
func fastSec(extra map[string]any) map[string]any {
	p := map[string]any{"rounds": 3, "local_steps": 1, "local_batch": 8, "mine_steps": 5,
		"cmi_examples": 48, "cmi_steps": 30, "risk_every": 2}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// values returns the values of every tensor of the job's model.
func values(job *Job) []float32 {
	var v []float32
	for _, p := range job.Model.Params() {
		v = append(v, p.Data...)
	}
	return v
}

func TestSecMMFLRun(t *testing.T) {
	job := fusionJob(t, "secmmfl", 12, 3, fastSec(map[string]any{"privacy_unit": "client"}))
	before := values(job)
	res, err := SecMMFL{}.FineTune(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Privacy
	if float64(p.Epsilon) > 3 || res.EpsilonRDP > 3 || res.EpsilonPLD > 3 || !(p.Sigma > 0) || len(p.Events) == 0 {
		t.Errorf("record %+v, ε RDP %v PLD %v; want ε ≤ 3, σ > 0 and events", p, res.EpsilonRDP, res.EpsilonPLD)
	}
	if p.Steps != 3 || p.Neighbouring != "replace-one" || p.Sampling != "none" {
		t.Errorf("record: %d rounds accounted, %s, %s; want 3 (full participation), replace-one, none", p.Steps, p.Neighbouring, p.Sampling)
	}
	v := res.Values
	for _, r := range []string{"r0", "r2"} {
		ri, rt := v["risk_image_"+r], v["risk_text_"+r]
		ei, et := v["epsilon_image_"+r], v["epsilon_text_"+r]
		if math.IsNaN(ri) || math.IsNaN(rt) || math.Abs(ei+et-3) > 1e-12 || (ri > rt) != (ei < et) && ri != rt {
			t.Errorf("%s: risks %v, %v and budgets %v, %v; want finite risks, Σε_i = 3, the riskier modality the smaller ε_i", r, ri, rt, ei, et)
		}
		for _, m := range mmModalities {
			if est, used := v["risk_estimate_"+m+"_"+r], v["risk_"+m+"_"+r]; used != max(0, est) {
				t.Errorf("%s: %s risk %v from the estimate %v, want its positive part", r, m, used, est)
			}
		}
		if !(v["sigma_image_"+r] > 0) || !(v["sigma_text_"+r] > 0) {
			t.Errorf("%s: σ %v, %v; want > 0", r, v["sigma_image_"+r], v["sigma_text_"+r])
		}
	}
	if _, ok := v["risk_image_r1"]; ok {
		t.Error("a risk estimate at round 1 with risk_every = 2")
	}
	// calibrate = joint: the composition meets the target within 1%,
	// each modality's ε alone is below it, and the record lists every
	// modality's σ of every segment.
	if !(float64(p.Epsilon) >= 0.99*3) || !(p.SigmaScale > 0 && p.SigmaScale < 1) || len(p.Components) != 4 {
		t.Errorf("record: ε %v, factor %v, %d components; want ε in [2.97, 3], a factor in (0, 1) and 4 components", p.Epsilon, p.SigmaScale, len(p.Components))
	}
	for i, c := range p.Components {
		r, m := []string{"r0", "r2"}[i/2], mmModalities[i%2]
		if c.Name != m+"@"+r || c.Sigma != v["sigma_"+m+"_"+r] || !(c.Epsilon < p.Epsilon) {
			t.Errorf("component %d: %+v; want %s@%s, σ %v, ε alone below the composed %v", i, c, m, r, v["sigma_"+m+"_"+r], p.Epsilon)
		}
	}
	if res.Steps != 3 || v["upload_floats"] != 3*4*float64(len(before)) {
		t.Errorf("%d rounds, %v floats uploaded; want 3 and %d", res.Steps, v["upload_floats"], 3*4*len(before))
	}
	if slices.Equal(values(job), before) {
		t.Error("the model did not change")
	}
}

// TestSecMMFLPaperCalibration runs the paper's σ_i under the add-remove
// relation (the paper's Δf = C), where it meets its stated ε = 1, and
// checks that both ε are recorded.
func TestSecMMFLPaperCalibration(t *testing.T) {
	t.Parallel()
	job := fusionJob(t, "secmmfl", 6, 1, fastSec(map[string]any{"calibrate": "paper", "neighbouring": "add-remove", "rounds": 2, "privacy_unit": "client"}))
	res, err := SecMMFL{}.FineTune(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Privacy
	if p.EpsilonNominal == nil || *p.EpsilonNominal != 1 || !(p.Epsilon <= 1) || p.Neighbouring != "add-remove" {
		t.Errorf("record: stated ε %v, accounted %v, %s; want 1, ≤ 1, add-remove", p.EpsilonNominal, p.Epsilon, p.Neighbouring)
	}
	// σ_i = √(2·2·ln(1.25/5e-6))/ε_i with T = 2 rounds (TestSecMMFLPaperSigma's formula).
	for _, m := range mmModalities {
		want := paperSigma(res.Values["epsilon_"+m+"_r0"], 5e-6, 2)
		if got := res.Values["sigma_"+m+"_r0"]; math.Abs(got-want) > 1e-12*want {
			t.Errorf("σ_%s = %v, want %v", m, got, want)
		}
	}
	t.Logf("paper σ: stated ε = 1, accounted ε = %.4f (RDP %.4f, PLD %.4f)", float64(p.Epsilon), res.EpsilonRDP, res.EpsilonPLD)
}

// TestSecMMFLDeterminism checks that a run gives the same bits on 1 and 3
// workers (with the feature representation of the risk estimate).
func TestSecMMFLDeterminism(t *testing.T) {
	var ref []float32
	for _, workers := range []int{1, 3} {
		job := fusionJob(t, "secmmfl", 10, 5, fastSec(map[string]any{"rounds": 2, "local_steps": 2, "cmi_data": "features"}))
		job.Workers = workers
		if _, err := (SecMMFL{}).FineTune(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		v := values(job)
		if ref == nil {
			ref = v
			continue
		}
		for i := range v {
			if math.Float32bits(v[i]) != math.Float32bits(ref[i]) {
				t.Fatalf("%d workers: value %d = %v, want %v (1 worker)", workers, i, v[i], ref[i])
			}
		}
	}
}

// TestSecMMFLPrivatize checks a client's upload: each modality's block
// (the head with the riskier modality) clipped to C, and noise of standard
// deviation σ_g·C on group g. The variance test compares the sample
// variance of n ≥ 10⁴ noise draws per group with (σ_g·C)²: its relative
// standard error is √(2/n) ≤ 0.0142, and the test rejects beyond 0.1
// (7 standard errors), falsely with probability below 10⁻¹¹.
func TestSecMMFLPrivatize(t *testing.T) {
	t.Parallel()
	for _, eps := range []float64{math.Inf(1), 2} {
		job := fusionJob(t, "secmmfl", 6, eps, fastSec(map[string]any{"clip": 0.5, "risk": "uniform", "head": "text"}))
		run, err := newFedRun("secmmfl", job)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newSecState(run)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.before(0, run.layout.Values()); err != nil {
			t.Fatal(err)
		}
		seg := s.segs[0]
		if math.IsInf(eps, 1) {
			rng := rand.New(rand.NewPCG(1, 2))
			u := make([]float32, run.layout.Size)
			for j := range u {
				u[j] = float32(rng.NormFloat64())
			}
			s.privatize(0, 1, u)
			for g, n := range nn.Norms(u, seg.rule) {
				if n > 0.5*(1+1e-6) || n < 0.49 {
					t.Errorf("ε = inf: group %d has norm %v after clipping, want 0.5", g, n)
				}
			}
			continue
		}
		u := make([]float32, run.layout.Size)
		s.privatize(2, 0, u)
		for g := range mmModalities {
			var sq float64
			n := 0
			for j, v := range u {
				if seg.rule.Part[j] == int32(g) {
					sq += float64(v) * float64(v)
					n++
				}
			}
			want := seg.sigma[g] * 0.5
			if got := math.Sqrt(sq / float64(n)); n < 10000 || math.Abs(got*got/(want*want)-1) > 0.1 {
				t.Errorf("ε = 2, group %d: noise std %v over %d draws, want %v", g, got, n, want)
			}
		}
		if seg.head != 1 || math.Abs(seg.eps[0]-1) > 1e-12 {
			t.Errorf("head group %d, ε_image %v; want text (1) and ε/2 = 1 under uniform risk", seg.head, seg.eps[0])
		}
	}
}

// TestFedAvgIsCentralised checks that fedavg with one client, full
// participation and one full-batch local step per round is centralised
// full-batch SGD, bit for bit, under both aggregations (FedSGD's server
// step at server_lr = local_lr).
func TestFedAvgIsCentralised(t *testing.T) {
	t.Parallel()
	for _, agg := range []string{"fedavg", "fedsgd"} {
		fedAvgIsCentralised(t, map[string]any{"rounds": 2, "local_steps": 1, "local_batch": 0, "local_lr": 0.05, "aggregation": agg})
	}
}

func fedAvgIsCentralised(t *testing.T, params map[string]any) {
	t.Helper()
	job := fusionJob(t, "fedavg", 6, math.Inf(1), params)
	one := *job.Data
	one.Clients, one.Private = 1, slices.Clone(one.Private)
	for i := range one.Private {
		one.Private[i].Client = 0
	}
	job.Data = &one
	ref := fusionJob(t, "fedavg", 6, math.Inf(1), params) // same data, same initial model
	m := ref.Model.(*nn.Fusion)
	full := m.Config.PEFT
	full.Method = "full"
	layout, err := m.SetPEFT(full)
	if err != nil {
		t.Fatal(err)
	}
	ps := optimParams(layout)
	opt, err := optim.New("sgd", ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		sum, _, _, err := nn.Gradient(layout, len(one.Private), func(tp *nn.Tape, i int) (*nn.Node, error) {
			e := &one.Private[i]
			return m.Loss(tp, e.Images[0], e.Prompt, e.Label, nil)
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float32, len(sum))
		for j, v := range sum {
			g[j] = float32(float64(v) * (1 / float64(len(one.Private))))
		}
		layout.SetGrad(g)
		opt.Step(ps, 0.05, nil)
	}
	if _, err := (FedAvg{}).FineTune(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	got, want := values(job), layout.Values()
	if !slices.Equal(got, want) {
		t.Errorf("%s with one client differs from centralised SGD", params["aggregation"])
	}
}

func TestFederatedBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc, method string
		params       map[string]any
		want         string
	}{
		{"negative λ", "secmmfl", map[string]any{"lambda": -0.1}, "lambda = -0.1"},
		{"unknown modality", "secmmfl", map[string]any{"head": "audio"}, `head = audio`},
		{"unknown aggregation", "fedavg", map[string]any{"aggregation": "fedprox"}, "aggregation = fedprox"},
	} {
		if _, err := ResolveAt(tc.method, "smoke", 1, tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.desc, err, tc.want)
		}
	}
	for _, tc := range []struct {
		desc   string
		eps    float64
		params map[string]any
		edit   func(j *Job)
		want   string
	}{
		{"more sampled clients than clients", 1, map[string]any{"clients_per_round": 5}, nil, "5 clients sampled per round out of 4"},
		{"client without data", 1, nil, func(j *Job) {
			d := *j.Data
			d.Private = slices.DeleteFunc(slices.Clone(d.Private), func(e datasets.Example) bool { return e.Client == 2 })
			j.Data = &d
		}, "client 2 has no training data"},
		{"α ≤ 0", 1, nil, func(j *Job) { d := *j.Data; d.Alpha = 0; j.Data = &d }, "Dirichlet α = 0"},
		{"no public data", 1, nil, func(j *Job) { d := *j.Data; d.Public = nil; j.Data = &d }, "0 valid public examples"},
		{"bad δ", 1, nil, func(j *Job) { j.Delta = 1 }, "elta"},
		{"fusion mode of another model", 1, map[string]any{"fusion": "early"}, nil, "fusion = early, but the model is a late-fusion classifier"},
		{"paper σ above the target under replace-one", 1, map[string]any{"calibrate": "paper", "risk": "uniform", "privacy_unit": "client"}, nil, "above the target ε = 1 (calibrate = paper)"},
		{"paper σ at the example unit", 1, map[string]any{"calibrate": "paper", "risk": "uniform"}, nil, "calibrate = paper needs privacy_unit = client"},
	} {
		job := fusionJob(t, "secmmfl", 6, tc.eps, fastSec(tc.params))
		if tc.edit != nil {
			tc.edit(job)
		}
		before := values(job)
		progressed := false
		job.Progress = func(int, int) { progressed = true }
		_, err := SecMMFL{}.FineTune(context.Background(), job)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.desc, err, tc.want)
		}
		if strings.Contains(tc.want, "above the target") {
			continue // the accounting follows the run
		}
		if progressed || !slices.Equal(values(job), before) {
			t.Errorf("%s: a round ran before the error", tc.desc)
		}
	}
	if _, err := (FedAvg{}).FineTune(context.Background(), fusionJob(t, "fedavg", 6, 1, nil)); err == nil || !strings.Contains(err.Error(), "ε = inf only") {
		t.Errorf("fedavg at ε = 1: got %v, want a refusal", err)
	}
}

// TestSecMMFLPenaltyGradient checks the MINE penalty's gradient: the
// gradient with λ > 0 minus the one with λ = 0, over λ, against the
// central difference of the batch's Î(h_img; h_text) (critic and
// permutation fixed) along random unit directions (step 3e-4; the
// critic's ReLU kinks and float32 features limit the agreement to about
// 2%, so the tolerance is 3%).
func TestSecMMFLPenaltyGradient(t *testing.T) {
	t.Parallel()
	const lambda, h = 0.5, 3e-4
	job := fusionJob(t, "secmmfl", 8, 3, fastSec(map[string]any{"lambda": lambda, "mine_steps": 40}))
	run, err := newFedRun("secmmfl", job)
	if err != nil {
		t.Fatal(err)
	}
	run.lambda, run.mineSteps = lambda, 40
	cl, err := run.newClient()
	if err != nil {
		t.Fatal(err)
	}
	c := cl.(*fedClient)
	global := run.layout.Values()
	c.layout.SetValues(global)
	data := run.clients[1][:8]
	critic, err := c.trainCritic(data, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	gl, g0 := make([]float32, len(global)), make([]float32, len(global))
	if _, err := c.gradient(data, critic, rand.New(rand.NewPCG(5, 5)), gl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.gradient(data, nil, rand.New(rand.NewPCG(5, 5)), g0); err != nil {
		t.Fatal(err)
	}
	perm := rand.New(rand.NewPCG(5, 5)).Perm(len(data)) // gradient's first draw
	// Directions in image.proj (the image feature is affine in it) and in
	// the text encoder (GELU, LayerNorm and softmax: smooth), so that the
	// difference quotient crosses no ReLU or max-pool kink.
	for _, prefix := range []string{"image.proj", "text."} {
		rng := rand.New(rand.NewPCG(9, 9))
		v := make([]float64, len(global))
		norm := 0.0
		for i, p := range run.layout.Params {
			if strings.HasPrefix(p.Name, prefix) {
				for j := run.layout.Offsets[i]; j < run.layout.Offsets[i+1]; j++ {
					v[j] = rng.NormFloat64()
					norm += v[j] * v[j]
				}
			}
		}
		got := 0.0
		for j := range v {
			v[j] /= math.Sqrt(norm)
			got += float64(gl[j]-g0[j]) / lambda * v[j]
		}
		mi := func(sign float64) float64 {
			w := make([]float32, len(global))
			for j := range w {
				w[j] = global[j] + float32(sign*h*v[j])
			}
			c.layout.SetValues(w)
			img, text, _ := c.features(data)
			e, err := critic.Estimate(img, text, perm)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		want := (mi(1) - mi(-1)) / (2 * h)
		if math.Abs(got-want) > 0.03*math.Abs(want)+1e-4 {
			t.Errorf("%s: directional derivative of Î: %v from the gradients, %v by central differences", prefix, got, want)
		}
		t.Logf("%s: directional derivative of Î: %v (gradients), %v (central difference)", prefix, got, want)
	}
}

// TestSecMMFLRiskSplit checks a segment's noise for given risks (the
// paper's Table 1 values, 0.2539 for the image and 0.5383 for the text):
// ε_i = ε·softmax(−R)_i (TestSecMMFLBudgetSplit's reference values), the
// riskier text modality gets the larger σ and the head, and a negative
// estimate counts as 0.
func TestSecMMFLRiskSplit(t *testing.T) {
	t.Parallel()
	job := fusionJob(t, "secmmfl", 6, 2, fastSec(map[string]any{"risk": "uniform", "rounds": 4}))
	run, err := newFedRun("secmmfl", job)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSecState(run)
	if err != nil {
		t.Fatal(err)
	}
	estimates := map[int][]float64{0: {0.2539, 0.5383}, 2: {-0.3, 0.1}}
	s.estimate = func(r int) ([]float64, error) { return estimates[r], nil }
	for _, r := range []int{0, 1, 2} {
		if err := s.before(r, run.layout.Values()); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.segs) != 2 || s.segs[1].start != 2 {
		t.Fatalf("%d segments, want 2 (rounds 0 and 2)", len(s.segs))
	}
	a, b := s.segs[0], s.segs[1]
	if math.Abs(a.eps[0]-2*0.5706246108294305) > 1e-12 || math.Abs(a.eps[1]-2*0.4293753891705695) > 1e-12 {
		t.Errorf("ε_i = %v, want 2 × (0.5706, 0.4294)", a.eps)
	}
	if !(a.sigma[1] > a.sigma[0]) || a.head != 1 {
		t.Errorf("σ = %v, head group %d; want the text's σ larger and the head with the text (1)", a.sigma, a.head)
	}
	if b.risks[0] != 0 || b.risks[1] != 0.1 || b.raw[0] != -0.3 || !(b.eps[0] > b.eps[1]) || b.head != 1 {
		t.Errorf("segment 2: risks %v from %v, ε %v, head %d; want [0 0.1], image the larger ε, head text", b.risks, b.raw, b.eps, b.head)
	}
	if got, want := a.rounds+b.rounds, s.calibrated; got != 4 || want != 4 {
		t.Errorf("segments of %d rounds, calibrated for %d; want 4 and 4", got, want)
	}
	acc, err := s.accounting()
	if err != nil {
		t.Fatal(err)
	}
	if acc.EpsilonRDP > 2 || acc.EpsilonPLD > 2 || len(acc.Record.Caveats) == 0 || !strings.Contains(strings.Join(acc.Record.Caveats, " "), "adaptive composition") {
		t.Errorf("two splits: ε RDP %v, PLD %v, caveats %q; want ≤ 2 and the adaptive-composition caveat", acc.EpsilonRDP, acc.EpsilonPLD, acc.Record.Caveats)
	}
	fedsgd := fusionJob(t, "secmmfl", 6, 2, fastSec(map[string]any{"aggregation": "fedsgd", "risk": "uniform"}))
	res, err := SecMMFL{}.FineTune(context.Background(), fedsgd)
	if err != nil {
		t.Fatalf("fedsgd: %v", err)
	}
	if float64(res.Privacy.Epsilon) > 2 || res.Values["fl_local_steps"] != 1 {
		t.Errorf("fedsgd: record ε %v, %v local steps; want ≤ 2 and 1", res.Privacy.Epsilon, res.Values["fl_local_steps"])
	}
}

// TestFedAvgServerStep checks the FedAvg server step: one round at
// server_step η_s moves every value η_s times as far from the start as
// plain FedAvg (η_s = 1) does, and secmmfl's tuned defaults resolve per ε.
func TestFedAvgServerStep(t *testing.T) {
	t.Parallel()
	const step = 0.25
	p := map[string]any{"rounds": 1, "local_steps": 2, "local_batch": 4}
	start := values(fusionJob(t, "fedavg", 6, math.Inf(1), p))
	var moved [2][]float32
	for i, s := range []float64{1, step} {
		p["server_step"] = s
		job := fusionJob(t, "fedavg", 6, math.Inf(1), p)
		if _, err := (FedAvg{}).FineTune(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		moved[i] = values(job)
	}
	far := 0.0
	for j, v := range start {
		full, got := float64(moved[0][j]-v), float64(moved[1][j]-v)
		far = max(far, math.Abs(full))
		if math.Abs(got-step*full) > 1e-6+1e-4*math.Abs(full) {
			t.Fatalf("value %d moved %v at step %v, want %v×%v", j, got, step, step, full)
		}
	}
	if far == 0 {
		t.Fatal("plain FedAvg did not move the model")
	}
	// The record-level recipe: server step 1, the local lr chosen by ε.
	for _, c := range []struct {
		method  string
		eps, lr float64
	}{
		{"secmmfl", 1, 0.05}, {"secmmfl", 3, 0.05}, {"secmmfl", 8, 0.2}, {"secmmfl", 20, 0.2}, {"secmmfl", math.Inf(1), 0.05},
		{"ldpfed", 0.5, 0.05}, {"ldpfed", 8, 0.1},
	} {
		h, err := ResolveAt(c.method, "smoke", c.eps, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s, lr := h.Float("server_step"), h.Float("local_lr"); s != 1 || lr != c.lr {
			t.Errorf("%s at smoke, ε = %v: server_step %v, local_lr %v; want 1 and %v", c.method, c.eps, s, lr, c.lr)
		}
	}
}

// TestLDPFed checks the uniform baseline: λ = 0 and risk=uniform by
// default, risk=cmi refused, and a run splits ε evenly (ε_i = ε/2, equal
// σ_i) with its accounted ε at most the target.
func TestLDPFed(t *testing.T) {
	t.Parallel()
	if _, err := ResolveAt("ldpfed", "smoke", 2, map[string]any{"risk": "cmi"}); err == nil {
		t.Error("ldpfed accepted risk=cmi")
	}
	job := fusionJob(t, "ldpfed", 6, 2, map[string]any{"rounds": 2, "local_steps": 1, "local_batch": 4})
	if job.Hyper.Float("lambda") != 0 || job.Hyper.String("risk") != "uniform" {
		t.Fatalf("λ = %v, risk %s; want 0 and uniform", job.Hyper.Float("lambda"), job.Hyper.String("risk"))
	}
	res, err := (LDPFed{}).FineTune(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Values
	if v["epsilon_image_r0"] != 1 || v["epsilon_text_r0"] != 1 || v["sigma_image_r0"] != v["sigma_text_r0"] || !(v["sigma_image_r0"] > 0) {
		t.Errorf("ε_i %v, %v, σ_i %v, %v; want 1, 1 and equal positive σ", v["epsilon_image_r0"], v["epsilon_text_r0"], v["sigma_image_r0"], v["sigma_text_r0"])
	}
	if !(res.EpsilonRDP <= 2) {
		t.Errorf("accounted ε %v above the target 2", res.EpsilonRDP)
	}
}

// TestFedNewHead checks that a fusion base pretrained on other labels (4
// coarse classes) gets a new head for the task's 10: the run trains, the
// head has 10 rows, and with a server step of 1e-30 the encoders keep the
// base's values (to 1e-20: zeros move by η_s times the update) while the
// head is the one newFusionHead draws (the same values twice).
func TestFedNewHead(t *testing.T) {
	t.Parallel()
	run := func() (*nn.Fusion, *nn.Fusion) {
		job := fusionJob(t, "fedavg", 6, math.Inf(1), map[string]any{"rounds": 1, "local_steps": 1, "server_step": 1e-30})
		m := job.Model.(*nn.Fusion)
		cfg := m.Config
		cfg.Classes = 4
		base, err := nn.NewFusion(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m4, err := nn.NewFusion(cfg)
		if err != nil {
			t.Fatal(err)
		}
		job.Model = m4
		if _, err := (FedAvg{}).FineTune(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		return base, job.Model.(*nn.Fusion)
	}
	base, got := run()
	_, again := run()
	if got.Config.Classes != 10 || got.Head.W.Shape[0] != 10 {
		t.Fatalf("trained model has %d classes (head %v), want 10", got.Config.Classes, got.Head.W.Shape)
	}
	bp := base.Params()
	for i, p := range got.Params() {
		if strings.HasPrefix(p.Name, "head.") {
			if !slices.Equal(p.Data, again.Params()[i].Data) {
				t.Errorf("%s differs between two runs", p.Name)
			}
			continue
		}
		for j, v := range p.Data {
			if math.Abs(float64(v-bp[i].Data[j])) > 1e-20 {
				t.Errorf("%s[%d] = %v, base %v, under a server step of 1e-30", p.Name, j, v, bp[i].Data[j])
				break
			}
		}
	}
}

// TestFedUpload checks the upload release the gradient-inversion attack
// reads: fedavg's is the example's raw gradient at the trained model (the
// reference: nn.Gradient on the model's own loss, relative squared error
// ≤ 1e-9), secmmfl's (ε = 1) is the same trial's bits twice, another
// trial's noise, and far from the raw gradient.
func TestFedUpload(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"fedavg", "secmmfl"} {
		eps, params := math.Inf(1), map[string]any{"rounds": 2, "local_steps": 1}
		if method == "secmmfl" {
			eps, params = 1, fastSec(map[string]any{"risk": "uniform"})
		}
		job := fusionJob(t, method, 6, eps, params)
		meth, _ := Lookup(method)
		res, err := meth.FineTune(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		if res.Upload == nil {
			t.Fatalf("%s: no upload release", method)
		}
		ex := &job.Data.Private[0]
		up := res.Upload
		g, err := up.Upload(ex, 0)
		if err != nil {
			t.Fatal(err)
		}
		m := up.Model
		raw, _, _, err := nn.Gradient(up.Layout, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) {
			return m.Loss(tp, ex.Images[0], ex.Prompt, ex.Label, nil)
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var num, den float64
		for j := range raw {
			d := float64(raw[j] - g[j])
			num, den = num+d*d, den+float64(raw[j])*float64(raw[j])
		}
		again, _ := up.Upload(ex, 0)
		other, _ := up.Upload(ex, 1)
		switch {
		case method == "fedavg" && (num > 1e-9*den || den == 0):
			t.Errorf("fedavg upload differs from the raw gradient: relative squared error %v", num/den)
		case method == "secmmfl" && num < den:
			t.Errorf("secmmfl upload within %v (relative squared error) of the raw gradient at ε = 1", num/den)
		case !slices.Equal(g, again):
			t.Errorf("%s: the same trial gives different uploads", method)
		case method == "secmmfl" && slices.Equal(g, other):
			t.Errorf("secmmfl: trials 0 and 1 draw the same noise")
		}
	}
}

// TestFedEarlyFusion checks that fusion = early trains an early-fusion
// classifier: the run is accepted, the model moves and keeps its mode.
func TestFedEarlyFusion(t *testing.T) {
	t.Parallel()
	job := fusionJob(t, "fedavg", 6, math.Inf(1), map[string]any{"rounds": 1, "local_steps": 1, "fusion": "early"})
	m := job.Model.(*nn.Fusion)
	cfg := m.Config
	cfg.FusionMode = "early"
	early, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	job.Model = early
	before := values(job)
	if _, err := (FedAvg{}).FineTune(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(values(job), before) || job.Model.(*nn.Fusion).Config.FusionMode != "early" {
		t.Errorf("early-fusion run: model unchanged or mode %q", job.Model.(*nn.Fusion).Config.FusionMode)
	}
}
