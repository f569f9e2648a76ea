// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods/fl"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// exampleRun returns an ldpfed run under the record-level unit at ε =
// eps with clip norm clip, its Sec-MMFL state after round 0's split, and
// a client replica at the global model.
func exampleRun(t *testing.T, eps, clip float64) (*fedRun, *secState, *fedClient) {
	t.Helper()
	job := fusionJob(t, "ldpfed", 8, eps, fastSec(map[string]any{"clip": clip, "head": "text", "privacy_unit": "example"}))
	run, err := newFedRun("ldpfed", job)
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
	if run.example, err = newExampleDP(run, s.noise); err != nil {
		t.Fatal(err)
	}
	cl, err := run.newClient()
	if err != nil {
		t.Fatal(err)
	}
	c := cl.(*fedClient)
	c.layout.SetValues(run.layout.Values())
	return run, s, c
}

// TestExampleClip checks the record-level step without noise against a
// slow reference: each example's gradient computed alone (nn.Gradient on
// a batch of one, not the per-sample engine), each modality block (the
// head with the text) scaled in float64 by min(1, C/‖block‖), summed and
// divided by the batch size.
func TestExampleClip(t *testing.T) {
	t.Parallel()
	const clip = 0.05 // small enough that every block is clipped
	run, s, c := exampleRun(t, math.Inf(1), clip)
	rule := s.segs[0].rule
	batch := run.clients[0][:5]
	p, err := NewPrivatizer(rule, []float64{0, 0}, float64(len(batch)), 1)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, run.layout.Size)
	if _, err := c.exampleGradient(batch, nil, p, got); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, run.layout.Size)
	clipped := 0
	for _, e := range batch {
		g := make([]float32, run.layout.Size)
		if _, err := c.gradient([]*datasets.Example{e}, nil, nil, g); err != nil {
			t.Fatal(err)
		}
		sq := make([]float64, len(rule.C))
		for j, v := range g {
			sq[rule.Part[j]] += float64(v) * float64(v)
		}
		for grp, c := range rule.C {
			if math.Sqrt(sq[grp]) > c {
				clipped++
			}
		}
		for j, v := range g {
			grp := rule.Part[j]
			f := min(1, rule.C[grp]/math.Sqrt(sq[grp]))
			want[j] += f * float64(v) / float64(len(batch))
		}
	}
	if clipped == 0 {
		t.Fatal("no example clipped: the test does not exercise clipping")
	}
	var num, den float64
	for j := range want {
		d := float64(got[j]) - want[j]
		num, den = num+d*d, den+want[j]*want[j]
	}
	if !(den > 0) || math.Sqrt(num/den) > 1e-5 {
		t.Errorf("clipped mean differs from the slow reference: relative error %v (norm² %v)", math.Sqrt(num/den), den)
	}
}

// TestExampleNoise checks the noise of one record-level step on an empty
// Poisson batch (noise only): coordinate j of group g is σ_g·C·z_j/B with
// z the standard normals of the client's stream of (round, client), drawn
// in coordinate order, and the sample standard deviation of each group
// (≥ 10⁴ coordinates, relative standard error of the variance √(2/n) ≤
// 0.0142) is within 10% of σ_g·C/B (7 standard errors: false rejection
// below 10⁻¹¹).
func TestExampleNoise(t *testing.T) {
	t.Parallel()
	const clip, batch, r, k = 0.5, 4.0, 2, 1
	run, s, c := exampleRun(t, 2, clip)
	seg := s.segs[0]
	p, err := run.example.privatizer(run.job.Seed, r, k, batch)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, run.layout.Size)
	if _, err := c.exampleGradient(nil, nil, p, got); err != nil {
		t.Fatal(err)
	}
	z := privacy.NewNoise(streamRNG(run.job.Seed, StreamClient, r, k).Uint64(), StreamNoise)
	sq := make([]float64, len(mmModalities))
	n := make([]int, len(mmModalities))
	for j, v := range got {
		grp := seg.rule.Part[j]
		want := float32(float64(float32(seg.sigma[grp]*clip*z.Normal())) / batch)
		if v != want {
			t.Fatalf("coordinate %d: %v, want %v", j, v, want)
		}
		sq[grp] += float64(v) * float64(v)
		n[grp]++
	}
	for g := range mmModalities {
		want := seg.sigma[g] * clip / batch
		if sd := math.Sqrt(sq[g] / float64(n[g])); n[g] < 10000 || math.Abs(sd*sd/(want*want)-1) > 0.1 {
			t.Errorf("group %d: noise std %v over %d coordinates, want %v", g, sd, n[g], want)
		}
	}
}

// TestExampleAccounting runs secmmfl (uniform split), ldpfed and nbafl
// under the record-level unit with two of four clients a round and
// clients of different sizes, and checks the record against the privacy
// package's accountants composed here: every client's Poisson-subsampled
// Gaussian steps at q_k = B/m_k over its participations times E, the
// worst client's ε is the record's and at most the target, σ is
// calibrated (within 1% of the target; 1% less noise exceeds it), and the
// record states the unit. One Poisson sample enters both modalities' blocks
// of a step, so the step is composed as one Gaussian release.
func TestExampleAccounting(t *testing.T) {
	t.Parallel()
	const eps, delta, batch, steps = 2.0, 1e-5, 4, 2
	for _, name := range []string{"secmmfl", "ldpfed", "nbafl"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			params := fastSec(map[string]any{"risk": "uniform", "clients_per_round": 2, "rounds": 4, "local_steps": steps, "local_batch": batch, "lambda": 0.0})
			if name == "nbafl" {
				params = map[string]any{"rounds": 4, "clients_per_round": 2, "local_steps": steps, "local_batch": batch, "server_step": 0.5}
			}
			job := fusionJob(t, name, 10, eps, params)
			// Client 1 keeps 5 examples (q = 0.8), the others 10 (q = 0.4).
			d := *job.Data
			d.Private = nil
			kept := 0
			for _, e := range job.Data.Private {
				if e.Client == 1 {
					if kept == 5 {
						continue
					}
					kept++
				}
				d.Private = append(d.Private, e)
			}
			job.Data = &d
			m, _ := Lookup(name)
			res, err := m.FineTune(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			sizes := make([]int, d.Clients)
			for _, e := range d.Private {
				sizes[e.Client]++
			}
			cfg := fl.Config{Clients: d.Clients, PerRound: 2, Rounds: 4, Seed: job.Seed}
			part := fl.Participations(fl.Schedule(cfg), d.Clients)
			sigmas := []float64{res.Values["sigma_image_r0"], res.Values["sigma_text_r0"]}
			if name == "nbafl" {
				sigmas = []float64{res.Values["sigma_upload"]}
			}
			// One Poisson sample enters every group of a step: the step
			// is one Gaussian of noise multiplier (Σ_g σ_g⁻²)^(−1/2)
			// (whitening each group by its σ_g).
			prec := 0.0
			for _, s := range sigmas {
				prec += 1 / (s * s)
			}
			sigmaStep := 1 / math.Sqrt(prec)
			worstAt := func(sigma float64) (float64, int) {
				worst, at := 0.0, -1
				for k := range sizes {
					a, err := privacy.NewRDP(&privacy.RDPOptions{Relation: privacy.AddOrRemove})
					if err != nil {
						t.Fatal(err)
					}
					q := min(1, float64(batch)/float64(sizes[k]))
					if err := a.Compose(privacy.PoissonGaussian{Q: q, Sigma: sigma}, part[k]*steps); err != nil {
						t.Fatal(err)
					}
					e, err := a.Epsilon(delta)
					if err != nil {
						t.Fatal(err)
					}
					if e > worst {
						worst, at = e, k
					}
				}
				return worst, at
			}
			worst, at := worstAt(sigmaStep)
			p := res.Privacy
			if math.Abs(worst-res.EpsilonRDP) > 1e-9*worst || float64(p.Epsilon) != res.EpsilonRDP || !(worst <= eps) || !(res.EpsilonPLD <= eps) {
				t.Errorf("ε: record %v (RDP %v, PLD %v), the accountant directly %v (client %d); want equal and ≤ %v", p.Epsilon, res.EpsilonRDP, res.EpsilonPLD, worst, at, eps)
			}
			q := min(1, float64(batch)/float64(sizes[at]))
			if p.SampleRate != q || p.Steps != int64(part[at]*steps) || p.Sampling != "poisson" || p.Neighbouring != "add-remove" {
				t.Errorf("record: q %v, %d steps, %s, %s; want %v, %d, poisson, add-remove", p.SampleRate, p.Steps, p.Sampling, p.Neighbouring, q, part[at]*steps)
			}
			// The record lists every distinct client's mechanism: each
			// client that takes a step has one of their ε, each of them
			// is some client's, and the worst is the record's.
			clientEps := map[string]bool{}
			for k := range sizes {
				if part[k] == 0 {
					continue
				}
				a, err := privacy.NewRDP(&privacy.RDPOptions{Relation: privacy.AddOrRemove})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Compose(privacy.PoissonGaussian{Q: min(1, float64(batch)/float64(sizes[k])), Sigma: sigmaStep}, part[k]*steps); err != nil {
					t.Fatal(err)
				}
				e, err := a.Epsilon(delta)
				if err != nil {
					t.Fatal(err)
				}
				clientEps[fmt.Sprintf("%.9g", e)] = true
			}
			listed := map[string]bool{}
			worstListed := false
			for _, b := range p.ClientEvents {
				ev, err := privacy.UnmarshalEvent(b)
				if err != nil {
					t.Fatal(err)
				}
				a, err := privacy.NewRDP(&privacy.RDPOptions{Relation: privacy.AddOrRemove})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Compose(ev, 1); err != nil {
					t.Fatal(err)
				}
				e, err := a.Epsilon(delta)
				if err != nil {
					t.Fatal(err)
				}
				listed[fmt.Sprintf("%.9g", e)] = true
				worstListed = worstListed || string(b) == string(p.Events)
			}
			if !maps.Equal(listed, clientEps) || !worstListed {
				t.Errorf("client events of ε %v (the worst's listed: %v); the clients' ε %v", slices.Sorted(maps.Keys(listed)), worstListed, slices.Sorted(maps.Keys(clientEps)))
			}
			if len(p.Caveats) == 0 || !strings.Contains(p.Caveats[0], "one training example of one client") {
				t.Errorf("the record does not state the unit: %q", p.Caveats)
			}
			// Calibration (secmmfl and ldpfed jointly, calibrate =
			// joint; nbafl's one block): within 1% of the target, and
			// with 1% less noise on every group the worst client
			// exceeds it.
			if worstLess, _ := worstAt(sigmaStep / 1.01); !(worst >= 0.99*eps) || !(worstLess > eps) {
				t.Errorf("σ %v is not calibrated: the worst client's ε %v, and %v with 1%% less noise; want in [%v, %v], and above %v", sigmas, worst, worstLess, 0.99*eps, eps, eps)
			}
			if name != "nbafl" && (len(p.Components) != 4 || !(p.Components[0].Epsilon < p.Epsilon) || p.Components[1].Sigma != sigmas[1]) {
				t.Errorf("components %+v; want image and text of rounds 0 and 2 (risk_every = 2), σ as the values %v, each ε alone below the composed %v", p.Components, sigmas, p.Epsilon)
			}
		})
	}
}

// TestExampleDeterminism checks that record-level runs (secmmfl with the
// MINE penalty, nbafl) give the same bits on 1 and 2 workers, and that
// the client unit gives another model.
func TestExampleDeterminism(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"secmmfl", "nbafl"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var runs [][]float32
			for _, tc := range []struct {
				workers int
				unit    string
			}{{1, "example"}, {2, "example"}, {2, "client"}} {
				params := fastSec(map[string]any{"rounds": 2, "local_steps": 2, "risk": "uniform", "privacy_unit": tc.unit})
				if name == "nbafl" {
					params = map[string]any{"rounds": 2, "local_steps": 2, "local_batch": 4, "privacy_unit": tc.unit, "server_step": 0.5}
				}
				job := fusionJob(t, name, 8, 4, params)
				job.Workers = tc.workers
				m, _ := Lookup(name)
				if _, err := m.FineTune(context.Background(), job); err != nil {
					t.Fatal(err)
				}
				runs = append(runs, values(job))
			}
			if !slices.Equal(runs[0], runs[1]) {
				t.Error("1 and 2 workers differ")
			}
			if slices.Equal(runs[1], runs[2]) {
				t.Error("the example and client units give the same model")
			}
		})
	}
}

// TestExampleUpload checks the record-level batch-1 upload: the example's
// gradient clipped per modality plus the run's noise σ_g·C (a sum of one),
// so at ε = inf it is the clipped gradient itself.
func TestExampleUpload(t *testing.T) {
	t.Parallel()
	const clip = 0.05
	job := fusionJob(t, "ldpfed", 6, math.Inf(1), fastSec(map[string]any{"clip": clip, "rounds": 1, "head": "text"}))
	res, err := LDPFed{}.FineTune(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	ex := &job.Data.Private[0]
	g, err := res.Upload.Upload(ex, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _, _, err := nn.Gradient(res.Upload.Layout, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) {
		return res.Upload.Model.Loss(tp, ex.Images[0], ex.Prompt, ex.Label, nil)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The head goes with the text (head = text): group 1.
	part := res.Upload.Layout.Parts(func(p *nn.Param) int {
		if strings.HasPrefix(p.Name, "image.") {
			return 0
		}
		return 1
	})
	sq := make([]float64, 2)
	for j, v := range raw {
		sq[part[j]] += float64(v) * float64(v)
	}
	for j, v := range raw {
		want := float64(v) * min(1, clip/math.Sqrt(sq[part[j]]))
		if math.Abs(float64(g[j])-want) > 1e-6*clip {
			t.Fatalf("coordinate %d: upload %v, want the clipped gradient %v", j, g[j], want)
		}
	}
}
