// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// TestFusionTarget checks the membership target of a federated run: the
// members are every client's private examples that are not canary copies
// (each its (image, caption) pair, class and index in the private split),
// the non-members the holdout; loss-mia runs on it; an attack that reads
// answer tokens (mink-mia) is an error naming the attacks a federated run
// takes, and a task without a holdout has no non-members.
func TestFusionTarget(t *testing.T) {
	t.Parallel()
	d, err := DataPart("fl-mm", "smoke", 1, experiments.Partition{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := fusionTarget(m, d, results.Privacy{})
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for i, e := range d.Private {
		if e.Canary < 0 {
			want = append(want, i)
		}
	}
	if len(want) == len(d.Private) || len(want) == 0 {
		t.Fatalf("fl-mm at smoke: %d of %d private examples are not canary copies; the test needs both kinds", len(want), len(d.Private))
	}
	if len(tg.Members) != len(want) || len(tg.NonMembers) != len(d.Holdout) {
		t.Fatalf("%d members and %d non-members, want %d and %d", len(tg.Members), len(tg.NonMembers), len(want), len(d.Holdout))
	}
	check := func(side string, got attacks.Example, e *datasets.Example, id int) {
		t.Helper()
		if got.ID != int64(id) || got.Label != e.Label || !slices.Equal(got.Seq.Tokens, e.Prompt) || len(got.Seq.Images) != 1 || &got.Seq.Images[0][0] != &e.Images[0][0] {
			t.Errorf("%s %d: id %d, label %d, tokens %v: not the example's pair", side, id, got.ID, got.Label, got.Seq.Tokens)
		}
	}
	for j, i := range want {
		check("member", tg.Members[j], &d.Private[i], i)
	}
	for i := range d.Holdout {
		check("non-member", tg.NonMembers[i], &d.Holdout[i], i)
	}
	if tg.Fusion != m || tg.Model != nil || tg.Classifier != nil || tg.TPRBound != nil {
		t.Errorf("target: fusion %v, model %v, classifier %v, bound set %v", tg.Fusion != nil, tg.Model != nil, tg.Classifier != nil, tg.TPRBound != nil)
	}
	rep, err := (attacks.LossMIA{}).Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results["mia_members"] != float64(len(want)) || rep.Results["mia_nonmembers"] != float64(len(d.Holdout)) {
		t.Errorf("loss-mia: %v members, %v non-members", rep.Results["mia_members"], rep.Results["mia_nonmembers"])
	}

	ecfg := &experiments.Config{Method: "fedavg", Attacks: []string{"mink-mia"}}
	err = fedAttackStage(context.Background(), ecfg, m, &methods.Result{}, d, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "mink-mia needs a tinymllm; a federated run takes gia-upload, gia-round, loss-mia, maxrenyi-mia") {
		t.Errorf("mink-mia on a federated run: error %v", err)
	}
	tune, err := DataPart("fl-mm-tune", "smoke", 1, experiments.Partition{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fusionTarget(m, tune, results.Privacy{}); err == nil || !strings.Contains(err.Error(), "no holdout") {
		t.Errorf("fl-mm-tune (no holdout): error %v", err)
	}
}

// TestFusionTargetClientBound checks the TPR bound the membership attacks
// of a federated run are held to, against the closed form of a Gaussian
// mechanism: L releases of noise multiplier σ on sensitivity Δ are μ-GDP
// with μ = Δ·√L/σ, whose largest TPR at FPR α is Φ(Φ⁻¹(α) + μ) (Dong, Roth
// and Su, "Gaussian Differential Privacy", JRSS B 2022, Corollary 3.3).
// A member and a non-member differ in one example of a client that takes
// part either way, a change of the client's data of sensitivity 2C: under
// the client unit with add-remove (a record of Δ = 1) the bound is that
// of 2μ, not the record's μ; under replace-one (a record of Δ = 2) and
// under the record-level unit it is the record's own. The PLD's bound
// dominates the closed form and lies within 0.01 of it.
func TestFusionTargetClientBound(t *testing.T) {
	t.Parallel()
	d, err := DataPart("fl-mm", "smoke", 1, experiments.Partition{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const sigma, rounds = 4.0, 4
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	phiInv := func(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
	for _, tc := range []struct {
		name, neighbouring string
		sensitivity        float64
		caveats            []string
		mu                 float64 // of the bound the attacks are held to
	}{
		{"client unit, add-remove", "add-remove", 1, nil, 2 * 0.5},
		{"client unit, replace-one", "replace-one", 2, nil, 1},
		{"record-level unit", "add-remove", 1, []string{methods.ExampleUnitCaveat + " (add-remove)"}, 0.5},
	} {
		ev, err := privacy.MarshalEvent(privacy.SelfComposed{Event: privacy.Gaussian{Sigma: sigma, Sensitivity: tc.sensitivity}, Count: rounds})
		if err != nil {
			t.Fatal(err)
		}
		p := results.Privacy{Accountant: "pld", Epsilon: 1, Delta: 1e-5, Sigma: sigma, Steps: rounds,
			Sampling: "none", Neighbouring: tc.neighbouring, Events: ev, Caveats: tc.caveats}
		tg, err := fusionTarget(m, d, p)
		if err != nil {
			t.Fatal(err)
		}
		if tg.TPRBound == nil {
			t.Fatalf("%s: no TPR bound", tc.name)
		}
		for _, fpr := range []float64{0.001, 0.01, 0.1, 0.5} {
			got, err := tg.TPRBound(fpr)
			if err != nil {
				t.Fatal(err)
			}
			want := phi(phiInv(fpr) + tc.mu)
			if got < want-1e-9 || got > want+0.01 {
				t.Errorf("%s: TPR bound at FPR %v = %.5f, want Φ(Φ⁻¹(α) + %v) = %.5f (+ at most 0.01)", tc.name, fpr, got, tc.mu, want)
			}
		}
	}
}

// TestClientEventsBound checks the TPR bound of a record that lists its
// clients' mechanisms (Privacy.ClientEvents, a federated run at the
// record-level unit): at every FPR it is at least each client's own bound
// and equals the largest of them, taken from closed forms the test
// computes apart from the pipeline: the Gaussian mechanism's trade-off,
// Φ(Φ⁻¹(α) + μ) for μ = √L/σ (Dong, Roth and Su, "Gaussian Differential
// Privacy", JRSS B 2022, Corollary 3.3), and the (ε, δ) region's
// (privacy.EpsilonDeltaTPR, Kairouz, Oh and Viswanath, ICML 2015). When
// one client dominates (two Gaussians, μ = 1 and 0.5) the bound is the
// worst client's at every FPR; when the curves cross (μ = 1 against an
// (ε = 0.3, δ = 0.05) client, which is worse below FPR ≈ 0.01 and better
// above) it is neither client's alone, and a bound from the worst-ε client
// only (the (ε, δ) one: ε(10⁻⁵) = +∞) would be too low at FPR 0.5.
func TestClientEventsBound(t *testing.T) {
	t.Parallel()
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	phiInv := func(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
	gauss := func(sigma float64) (json []byte, tpr func(float64) float64) {
		ev, err := privacy.MarshalEvent(privacy.SelfComposed{Event: privacy.Gaussian{Sigma: sigma, Sensitivity: 1}, Count: 4})
		if err != nil {
			t.Fatal(err)
		}
		mu := 2 / sigma // √4/σ
		return ev, func(a float64) float64 { return phi(phiInv(a) + mu) }
	}
	ed := func(eps, delta float64) ([]byte, func(float64) float64) {
		ev, err := privacy.MarshalEvent(privacy.EpsilonDelta{Epsilon: eps, Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		return ev, func(a float64) float64 {
			v, err := privacy.EpsilonDeltaTPR(eps, delta, a)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	g1, tpr1 := gauss(2)   // μ = 1
	g05, tpr05 := gauss(4) // μ = 0.5
	e03, tprE := ed(0.3, 0.05)
	for _, tc := range []struct {
		name    string
		events  [][]byte
		clients []func(float64) float64
		// worst is the index of the client whose bound the record's is
		// at each FPR of fprs (-1: the clients' curves cross).
		worst int
	}{
		{"one client dominates", [][]byte{g05, g1}, []func(float64) float64{tpr05, tpr1}, 1},
		{"the curves cross", [][]byte{g1, e03}, []func(float64) float64{tpr1, tprE}, -1},
	} {
		p := results.Privacy{Accountant: "pld", Epsilon: 1, Delta: 1e-5, Sigma: 2, Neighbouring: "add-remove",
			Events: tc.events[len(tc.events)-1]}
		for _, e := range tc.events {
			p.ClientEvents = append(p.ClientEvents, e)
		}
		bound, err := tprBound(p)
		if err != nil {
			t.Fatal(err)
		}
		only, err := tprBound(results.Privacy{Events: p.Events, Sigma: 2})
		if err != nil {
			t.Fatal(err)
		}
		above := false // the record's bound is above the worst-ε client's somewhere
		for _, fpr := range []float64{0.001, 0.01, 0.1, 0.5} {
			got, err := bound(fpr)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for k, c := range tc.clients {
				v := c(fpr)
				// The PLD's bound dominates the closed form and lies
				// within 0.01 of it.
				if got < v-1e-9 {
					t.Errorf("%s: FPR %v: bound %.5f below client %d's %.5f", tc.name, fpr, got, k, v)
				}
				want = max(want, v)
			}
			if got > want+0.01 {
				t.Errorf("%s: FPR %v: bound %.5f, the largest client's %.5f (+ at most 0.01)", tc.name, fpr, got, want)
			}
			if tc.worst >= 0 {
				if w := tc.clients[tc.worst](fpr); got > w+0.01 {
					t.Errorf("%s: FPR %v: bound %.5f, the dominating client's %.5f", tc.name, fpr, got, w)
				}
			}
			o, err := only(fpr)
			if err != nil {
				t.Fatal(err)
			}
			above = above || got > o+0.05
		}
		if tc.worst < 0 && !above {
			t.Errorf("%s: the record's bound is the last client's at every FPR; want it above where the other client is worse", tc.name)
		}
	}
}

// TestEpsilonDeltaTarget checks the bound of a record with a stated (ε, δ)
// and no Gaussian noise multiplier (LDP-FL's randomised response). When
// its events are not pure ε-DP releases it is the (ε, δ) region at every
// FPR, against its closed form min(1, δ + e^ε·α, 1 − e^−ε·(1 − δ − α))
// written out here (Kairouz, Oh and Viswanath, ICML 2015, Theorem 2.1).
// When they are (four randomised responses at ε = 0.25, stated as (1,
// 10⁻⁵) by basic composition), it is their composition's trade-off,
// against the exact Neyman–Pearson test of the number K of ones released,
// Binomial(4, p) under P and Binomial(4, 1 − p) under Q with p =
// e^0.25/(1 + e^0.25), enumerated here: never below it, at most 10⁻⁶
// above, never above the region and below it by more than 0.05 at FPR
// 0.1. A non-private record (accountant none, or ε = +Inf) has none.
func TestEpsilonDeltaTarget(t *testing.T) {
	t.Parallel()
	d, err := DataPart("fl-mm", "smoke", 1, experiments.Partition{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const eps, delta = 1.0, 1e-5
	region := func(fpr float64) float64 { return math.Min(1, math.Min(delta+math.E*fpr, 1-(1-delta-fpr)/math.E)) }
	// exact is the Neyman–Pearson test of four randomised responses at
	// ε = 0.25: reject for the largest K first, randomising at the last.
	exact := func(fpr float64) float64 {
		p := 1 / (1 + math.Exp(-0.25))
		binom := [5]float64{1, 4, 6, 4, 1}
		tpr, used := 0.0, 0.0
		for k := 4; k >= 0; k-- {
			pk := binom[k] * math.Pow(p, float64(k)) * math.Pow(1-p, float64(4-k))
			qk := binom[k] * math.Pow(1-p, float64(k)) * math.Pow(p, float64(4-k))
			if used+qk <= fpr {
				used, tpr = used+qk, tpr+pk
				continue
			}
			return tpr + pk*(fpr-used)/qk
		}
		return math.Min(1, tpr)
	}
	mixed, err := privacy.MarshalEvent(privacy.EpsilonDelta{Epsilon: eps, Delta: delta})
	if err != nil {
		t.Fatal(err)
	}
	pure, err := privacy.MarshalEvent(privacy.SelfComposed{Event: privacy.EpsilonDelta{Epsilon: 0.25}, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		events []byte
		want   func(float64) float64
		tol    float64 // the bound lies in [want, want + tol]
		// tighter: below the region by more than 0.05 at FPR 0.1.
		tighter bool
	}{
		{"(ε, δ) events", mixed, region, 1e-12, false},
		{"pure releases", pure, exact, 1e-6, true},
	} {
		p := results.Privacy{Accountant: "rdp", EpsilonTarget: eps, Epsilon: eps, Delta: delta, Neighbouring: "replace-one", Events: tc.events}
		tg, err := fusionTarget(m, d, p)
		if err != nil {
			t.Fatal(err)
		}
		if tg.TPRBound == nil {
			t.Fatalf("%s: no TPR bound for an (ε, δ) record", tc.name)
		}
		for _, fpr := range []float64{0, 0.001, 0.01, 0.1, 0.5, 1} {
			got, err := tg.TPRBound(fpr)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want(fpr)
			if got < want-1e-12 || got > want+tc.tol {
				t.Errorf("%s: FPR %v: bound %.12g, want %.12g (+ at most %g)", tc.name, fpr, got, want, tc.tol)
			}
			if got > region(fpr)+1e-12 {
				t.Errorf("%s: FPR %v: bound %.12g above the (ε, δ) region's %.12g", tc.name, fpr, got, region(fpr))
			}
		}
		if b, _ := tg.TPRBound(0.1); tc.tighter && b > region(0.1)-0.05 {
			t.Errorf("%s: FPR 0.1: bound %.4f, the (ε, δ) region's %.4f; want it tighter by 0.05", tc.name, b, region(0.1))
		}
	}
	ev := mixed
	for _, q := range []results.Privacy{
		{Accountant: "none", Epsilon: results.Float(math.Inf(1)), Delta: delta, Events: ev},
		{Accountant: "rdp", Epsilon: results.Float(math.Inf(1)), Delta: delta, Events: ev},
	} {
		tg, err := fusionTarget(m, d, q)
		if err != nil {
			t.Fatal(err)
		}
		if tg.TPRBound != nil {
			t.Errorf("accountant %s, ε = %v: a TPR bound; want none", q.Accountant, q.Epsilon)
		}
	}
}
