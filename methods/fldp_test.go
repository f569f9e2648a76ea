// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/privacy"
)

// TestNbAFLDownlink checks NbAFL's downlink σ_D (Wei et al., IEEE TIFS
// 2020, Theorem 2) against the closed form evaluated by hand.
func TestNbAFLDownlink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc                  string
		eps                   float64
		rounds, part, clients int
		want                  float64
	}{
		// 2·√(2 ln(1.25/1e-5))·√(10² − 2²·4)/(10·4·1), computed in Python.
		{"T > L√N", 1, 10, 2, 4, 2.22016868432096},
		{"T = L√N", 1, 8, 4, 4, 0},
		{"full participation", 1, 10, 10, 4, 0},
		{"ε = ∞", math.Inf(1), 10, 2, 4, 0},
	} {
		got := nbaflDownlink(tc.eps, 1e-5, 1, tc.rounds, tc.part, tc.clients, 10)
		if math.Abs(got-tc.want) > 1e-12*max(1, tc.want) {
			t.Errorf("%s: σ_D = %v, want %v", tc.desc, got, tc.want)
		}
	}
}

// TestLDPFLPerturb checks LDP-FL's randomised response: the mean of many
// responses is the clipped input (unbiased, within 5 standard errors), the
// two outputs are ±r(e^ε+1)/(e^ε−1), and the probability of + stays in
// [1, e^ε]/(e^ε+1) at the ends of the range (the ε-DP ratio).
func TestLDPFLPerturb(t *testing.T) {
	t.Parallel()
	const r, eps, n = 0.5, 0.8, 200000
	out := r * (math.Exp(eps) + 1) / (math.Exp(eps) - 1)
	for _, x := range []float64{-0.7, -0.5, 0.1, 0.5, 2} {
		want := max(-r, min(r, x))
		u := make([]float32, n)
		for j := range u {
			u[j] = float32(x)
		}
		ldpflPerturb(u, r, eps, rand.New(rand.NewPCG(1, uint64(x*100+1000))))
		s, plus := 0.0, 0
		for _, v := range u {
			if math.Abs(math.Abs(float64(v))-out) > 1e-6*out {
				t.Fatalf("x = %v: output %v, want ±%v", x, v, out)
			}
			s += float64(v)
			if v > 0 {
				plus++
			}
		}
		mean, se := s/n, out/math.Sqrt(n)
		if math.Abs(mean-want) > 5*se {
			t.Errorf("x = %v: mean response %v, want %v ± %v", x, mean, want, 5*se)
		}
		p := float64(plus) / n
		lo, hi := 1/(math.Exp(eps)+1), math.Exp(eps)/(math.Exp(eps)+1)
		if p < lo-0.005 || p > hi+0.005 {
			t.Errorf("x = %v: P(+) = %v outside [%v, %v]", x, p, lo, hi)
		}
	}
	u := []float32{-3, 0.2, 3}
	ldpflPerturb(u, r, math.Inf(1), nil)
	if !slices.Equal(u, []float32{-r, 0.2, r}) {
		t.Errorf("ε = ∞: %v, want the clipped input", u)
	}
}

// TestLDPFLEpsilon checks the calibration of ε_w: n releases compose to at
// most the target under RDP, and the accountant beats basic composition
// (n·ε_w > ε) while every release is at most the target.
func TestLDPFLEpsilon(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 1000, 400000} {
		epsW, err := ldpflEpsilon(1, 1e-5, n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mmEpsilon("rdp", mmRelations["replace-one"], 1e-5, ldpflEvent(epsW, n))
		if err != nil {
			t.Fatal(err)
		}
		if got > 1 || got < 0.99 {
			t.Errorf("n = %d: ε_w = %v composes to ε = %v, want in [0.99, 1]", n, epsW, got)
		}
		if n > 1 && !(float64(n)*epsW > 1) {
			t.Errorf("n = %d: n·ε_w = %v, want above the target (RDP beats basic composition)", n, float64(n)*epsW)
		}
	}
}

// TestFederatedBaselines runs nbafl, ldpfl and fedmm-dp on a few clients'
// data: the recorded ε never exceeds the target under either accountant,
// the record marshals, the model moves, and the run is the same on 1
// and 2 workers.
func TestFederatedBaselines(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"nbafl", "ldpfl", "fedmm-dp"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var runs [][]float32
			for _, workers := range []int{1, 2} {
				// One client a round over 24 rounds: nbafl's downlink is on
				// (T = 24 > L√N = 2L while L < 12).
				job := fusionJob(t, name, 6, 2, map[string]any{"rounds": 24, "clients_per_round": 1, "local_steps": 1, "local_batch": 4, "server_step": 0.5})
				job.Workers = workers
				before := values(job)
				m, _ := Lookup(name)
				res, err := m.FineTune(context.Background(), job)
				if err != nil {
					t.Fatal(err)
				}
				if !(res.EpsilonRDP <= 2) || !(res.EpsilonPLD <= 2+1e-9) || !(float64(res.Privacy.Epsilon) <= 2) {
					t.Errorf("ε RDP %v, PLD %v, record %v; want ≤ 2", res.EpsilonRDP, res.EpsilonPLD, res.Privacy.Epsilon)
				}
				if _, err := json.Marshal(res.Privacy); err != nil {
					t.Errorf("the privacy record does not marshal: %v", err)
				}
				after := values(job)
				if slices.Equal(after, before) {
					t.Error("the model did not change")
				}
				if name == "nbafl" && !(res.Values["sigma_download"] > 0) {
					t.Errorf("nbafl downlink σ_D = %v (L = %v of %v rounds, %v clients), want > 0 with one client a round", res.Values["sigma_download"], res.Values["max_participations"], res.Values["fl_rounds"], res.Values["fl_clients"])
				}
				runs = append(runs, after)
			}
			if !slices.Equal(runs[0], runs[1]) {
				t.Error("1 and 2 workers differ")
			}
		})
	}
}

// TestFederatedBaselineSteps checks that the server steps chosen on
// fl-mm-tune (tune-secmmfl) resolve per ε at smoke, and that small keeps
// the untuned default.
func TestFederatedBaselineSteps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method string
		eps    float64
		want   float64
	}{
		{"nbafl", 1, 1}, {"nbafl", 8, 1}, {"nbafl", math.Inf(1), 1},
		{"fedmm-dp", 0.5, 0.01}, {"fedmm-dp", 8, 1e-4},
		{"ldpfl", 1, 1e-4}, {"ldpfl", 4, 1e-4}, {"ldpfl", 8, 1e-5},
	} {
		h, err := ResolveAt(c.method, "smoke", c.eps, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Float("server_step"); got != c.want {
			t.Errorf("%s at smoke, ε = %v: server_step %v, want %v", c.method, c.eps, got, c.want)
		}
	}
	h, err := ResolveAt("ldpfl", "small", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Float("server_step"); got != secmmflStep {
		t.Errorf("ldpfl at small: server_step %v, want the untuned %v", got, secmmflStep)
	}
}

// exactRREpsilon returns the exact ε at delta of n composed randomised
// responses at epsW: the smallest ε with δ(ε) = Σ_k P(k)·(1 − e^(ε − L_k))₊
// ≤ delta, K ~ Binomial(n, e^ε_w/(1 + e^ε_w)) the count of responses that
// favour the true input and L_k = (2k − n)·ε_w the privacy loss of a count
// (the hockey-stick divergence of the binomial pair, the same exact
// reference as the binomial Neyman–Pearson test of privacy's
// TestPureIntervalTPR), solved by bisection to 10⁻¹².
func exactRREpsilon(epsW float64, n int, delta float64) float64 {
	nf := float64(n)
	lp, lq := -math.Log1p(math.Exp(-epsW)), -math.Log1p(math.Exp(epsW)) // log p, log(1 − p)
	lgn, _ := math.Lgamma(nf + 1)
	w := int(40*math.Sqrt(nf)/2) + 40
	lo, hi := max(0, n/2-w), min(n, n/2+w)
	pk := make([]float64, hi-lo+1)
	for k := lo; k <= hi; k++ {
		kf := float64(k)
		l1, _ := math.Lgamma(kf + 1)
		l2, _ := math.Lgamma(nf - kf + 1)
		pk[k-lo] = math.Exp(lgn - l1 - l2 + kf*lp + (nf-kf)*lq)
	}
	deltaAt := func(eps float64) float64 {
		d := 0.0
		for k := hi; k >= lo; k-- {
			l := float64(2*k-n) * epsW
			if l <= eps {
				break
			}
			d += pk[k-lo] * -math.Expm1(eps-l)
		}
		return d
	}
	a, b := 0.0, nf*epsW
	for b-a > 1e-12 {
		if m := (a + b) / 2; deltaAt(m) > delta {
			a = m
		} else {
			b = m
		}
	}
	return b
}

// TestLDPFLEpsilonPLD checks the ε that ldpfl's record gives under the PLD
// accountant (epsilon_pld) against the exact ε of its composed randomised
// responses (exactRREpsilon), at ldpfl's ε_w in secmmfl-mia-leak (d·L =
// 104 458 · 50 releases, calibrated by the RDP accountant at ε = 1 and 8,
// δ = 10⁻⁵) and at 400 releases: never below the exact ε (the PLD's
// discretisation is pessimistic), at most 10⁻⁴ (relative) above it, never
// above the default grid's ε nor above the target; at ldpfl's ε_w the
// default grid must be further from the exact ε, or the aligned grid
// would change nothing.
func TestLDPFLEpsilonPLD(t *testing.T) {
	t.Parallel()
	const delta = 1e-5
	rel := mmRelations["replace-one"]
	for _, tc := range []struct {
		eps   float64
		n     int
		gains bool // the default grid must be looser
	}{
		{1, 400, false},
		{1, 104458 * 50, true},
		{8, 104458 * 50, true},
	} {
		if testing.Short() && tc.n > 400 {
			continue
		}
		epsW, err := ldpflEpsilon(tc.eps, delta, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		ev := ldpflEvent(epsW, tc.n)
		got, err := mmEpsilon("pld", rel, delta, ev)
		if err != nil {
			t.Fatal(err)
		}
		def, err := privacy.NewPLD(&privacy.PLDOptions{Relation: rel.Relation})
		if err != nil {
			t.Fatal(err)
		}
		if err := def.Compose(ev, 1); err != nil {
			t.Fatal(err)
		}
		coarse, err := def.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		exact := exactRREpsilon(epsW, tc.n, delta)
		t.Logf("ε = %v, n = %d, ε_w = %.6g: PLD (aligned) %.8f, default grid %.8f, exact %.8f", tc.eps, tc.n, epsW, got, coarse, exact)
		if got < exact-1e-9 || got > exact*(1+1e-4) {
			t.Errorf("ε = %v, n = %d: PLD ε %.8f, exact %.8f (want at most 1e-4 relative above)", tc.eps, tc.n, got, exact)
		}
		if got > coarse*(1+1e-9) || got > tc.eps {
			t.Errorf("ε = %v, n = %d: PLD ε %.8f above the default grid's %.8f or the target", tc.eps, tc.n, got, coarse)
		}
		if tc.gains && !(coarse-exact > 2*(got-exact)) {
			t.Errorf("ε = %v, n = %d: default grid %.8f is no further from the exact %.8f than the aligned %.8f", tc.eps, tc.n, coarse, exact, got)
		}
	}
}
