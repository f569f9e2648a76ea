// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// recordsJob returns a job on the first n private examples of the smoke
// records task with a freshly initialised smoke TinyMLLM.
func recordsJob(t testing.TB, method string, n int, eps float64, params map[string]any) *Job {
	t.Helper()
	return smokeJob(t, "records", method, n, eps, params, 11)
}

// TestRapFTBetaOneIsDPSGD checks the paper's sanity identity (Rap-FT with
// β = 1 is DP-FT) bit for bit for every PEFT family at ε = 3, and for LoRA
// at ε = 1 with the default recipe (its own learning rate and epochs at
// smoke): same trained tensors, same ε, same per-step losses.
func TestRapFTBetaOneIsDPSGD(t *testing.T) {
	for _, tc := range []struct {
		family string
		eps    float64
		params map[string]any
	}{
		{"lora", 3, map[string]any{"epochs": 2.0}},
		{"adapter", 3, map[string]any{"epochs": 2.0}},
		{"bitfit", 3, map[string]any{"epochs": 2.0}},
		{"lora", 1, map[string]any{}}, // the default recipe at ε = 1 (dpsgdSmoke)
	} {
		family, params := tc.family, tc.params
		params["peft"] = family
		dp := recordsJob(t, "dpsgd", 24, tc.eps, params)
		params["beta"] = 1.0
		rf := recordsJob(t, "rapft", 24, tc.eps, params)
		a, err := DPSGD{}.FineTune(context.Background(), dp)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RapFT{}.FineTune(context.Background(), rf)
		if err != nil {
			t.Fatal(err)
		}
		pa, pb := lmOf(dp).Params(), lmOf(rf).Params()
		for i := range pa {
			if !slices.Equal(pa[i].Data, pb[i].Data) {
				t.Errorf("%s: tensor %s differs between dpsgd and rapft β = 1", family, pa[i].Name)
			}
		}
		if a.Privacy.Epsilon != b.Privacy.Epsilon || a.Privacy.Sigma != b.Privacy.Sigma || *b.Privacy.EpsilonNominal != a.Privacy.Epsilon {
			t.Errorf("%s: ε %v σ %v (dpsgd) vs ε %v σ %v nominal %v (rapft β = 1)", family,
				a.Privacy.Epsilon, a.Privacy.Sigma, b.Privacy.Epsilon, b.Privacy.Sigma, *b.Privacy.EpsilonNominal)
		}
		if !slices.Equal(a.Metrics, b.Metrics) {
			t.Errorf("%s: per-step metrics differ", family)
		}
		if !reflect.DeepEqual(a.Release, b.Release) || b.Release == nil {
			t.Errorf("%s: release %+v (dpsgd) vs %+v (rapft β = 1)", family, a.Release, b.Release)
		}
	}
}

// TestRapFTPartitionClosedForm checks the two-partition clip and noise
// against their closed forms (Algorithm 1 lines 15–21): without noise a
// per-sample gradient's weak part is clipped to C·r_w² and its strong part
// to C·r_s²; with an empty batch the noise on a weak coordinate has
// standard deviation σ√r_w·C/B and on a strong one σ√r_s·C/B.
func TestRapFTPartitionClosedForm(t *testing.T) {
	const n, c, sigma, batch = 40000, 2.0, 0.6, 4.0
	p := &rapftPartition{mask: make([]float32, n)}
	for i := range n {
		if i%10 < 7 {
			p.mask[i] = 1
		}
	}
	p.rw, p.rs = 0.7, 0.3
	rule, sig := p.privatizer(c, 0)
	priv, err := NewPrivatizer(rule, sig, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float32, n)
	for i := range g {
		g[i] = 1 // weak norm √28000, strong √12000: both above their clips
	}
	out := make([]float32, n)
	rep := priv.Privatize(out, [][]float32{g})
	var nw, ns float64
	for i, v := range out {
		if p.mask[i] == 1 {
			nw += float64(v) * float64(v)
		} else {
			ns += float64(v) * float64(v)
		}
	}
	if math.Abs(math.Sqrt(nw)-c*0.49) > 1e-5 || math.Abs(math.Sqrt(ns)-c*0.09) > 1e-5 {
		t.Errorf("clipped norms %v, %v; want C·r_w² = %v, C·r_s² = %v", math.Sqrt(nw), math.Sqrt(ns), c*0.49, c*0.09)
	}
	if rep.GroupClipped[0] != 1 || rep.GroupClipped[1] != 1 || math.Abs(rep.GroupMeanNorm[0]-math.Sqrt(28000)) > 1e-6 {
		t.Errorf("report %+v", rep)
	}

	rule, sig = p.privatizer(c, sigma)
	priv, err = NewPrivatizer(rule, sig, batch, 5)
	if err != nil {
		t.Fatal(err)
	}
	priv.Privatize(out, nil)
	var sw, ss float64
	for i, v := range out {
		if p.mask[i] == 1 {
			sw += float64(v) * float64(v)
		} else {
			ss += float64(v) * float64(v)
		}
	}
	sw, ss = math.Sqrt(sw/(0.7*n)), math.Sqrt(ss/(0.3*n))
	ww, ws := sigma*math.Sqrt(0.7)*c/batch, sigma*math.Sqrt(0.3)*c/batch
	// Relative standard error of a std estimate from m draws: 1/√(2m) ≤ 0.7%.
	if math.Abs(sw/ww-1) > 0.03 || math.Abs(ss/ws-1) > 0.03 {
		t.Errorf("noise std weak %v strong %v; want σ√r_w·C/B = %v, σ√r_s·C/B = %v", sw, ss, ww, ws)
	}
	// σ_eff = σ/√(r_w³ + r_s³): 0.6/√0.37 = 0.98639 (Rap-FT note's table).
	if got := p.sigmaEff(0.6); math.Abs(got-0.6/math.Sqrt(0.37)) > 1e-12 || math.Abs(got-0.98639) > 1e-5 {
		t.Errorf("σ_eff = %v, want 0.98639", got)
	}

	// clip_power 1: clips C·r, the same noise std, σ_eff = σ.
	p.power = 1
	rule, sig = p.privatizer(c, sigma)
	if math.Abs(rule.C[0]-c*0.7) > 1e-12 || math.Abs(rule.C[1]-c*0.3) > 1e-12 ||
		math.Abs(sig[0]*rule.C[0]-sigma*math.Sqrt(0.7)*c) > 1e-12 || math.Abs(sig[1]*rule.C[1]-sigma*math.Sqrt(0.3)*c) > 1e-12 {
		t.Errorf("clip power 1: clips %v, noise stds %v, %v", rule.C, sig[0]*rule.C[0], sig[1]*rule.C[1])
	}
	if got := p.sigmaEff(0.6); math.Abs(got-0.6) > 1e-12 {
		t.Errorf("clip power 1: σ_eff = %v, want σ = 0.6", got)
	}
}

// TestRapFTMask checks the mask: Σ mask / dim θ = ⌈β·n⌉/n up to ties, the
// analysis leaves the PEFT tensors as they were, ε_tight ≤ ε_nominal, and
// the run records both and the analysis's memory.
func TestRapFTMask(t *testing.T) {
	for _, family := range []string{"lora", "adapter", "bitfit"} {
		job := recordsJob(t, "rapft", 24, 3, map[string]any{"peft": family, "epochs": 1.0, "relevance_examples": int64(8)})
		var part *rapftPartition
		var before [][]float32
		l, _, err := newPrivateLoop(context.Background(), "rapft", job, func(l *loop, acc accounting, train []nn.Sequence) (*Privatizer, error) {
			for _, p := range l.layout.Params {
				before = append(before, slices.Clone(p.Data))
			}
			var err error
			part, err = rapftMask(context.Background(), job, l, train)
			if err != nil {
				return nil, err
			}
			rule, sig := part.privatizer(1, acc.Sigma)
			return NewPrivatizer(rule, sig, l.expectedBatch(), 1)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range l.layout.Params {
			if !slices.Equal(p.Data, before[i]) {
				t.Errorf("%s: the analysis changed %s", family, p.Name)
			}
		}
		n := float64(len(part.mask))
		want := math.Ceil(0.7*n) / n
		if part.rw < want || part.rw > want+0.05 {
			t.Errorf("%s: weak share %v, want ⌈0.7·%v⌉/%v = %v (ties may add a little)", family, part.rw, n, n, want)
		}
		res, err := RapFT{}.FineTune(context.Background(), recordsJob(t, "rapft", 24, 3, map[string]any{"peft": family, "epochs": 1.0, "relevance_examples": int64(8)}))
		if err != nil {
			t.Fatal(err)
		}
		// The run records the analysis's memory (the same job: the same
		// examples, so the same bytes as the mask computed above).
		if b, ok := res.Values["rapft_analysis_peak_bytes"]; !ok || b != float64(part.analysisBytes) || !(b > 0) {
			t.Errorf("%s: rapft_analysis_peak_bytes %v (recorded %v), want %d > 0", family, b, ok, part.analysisBytes)
		}
		if e := res.Values["rapft_lrp_split_error"]; !(e < 1e-9) {
			t.Errorf("%s: LRP split conservation error %g", family, e)
		}
		nom, tight := res.Values["epsilon_nominal"], res.Values["epsilon_tight"]
		if !(tight < nom) || float64(*res.Privacy.EpsilonNominal) != nom || float64(res.Privacy.Epsilon) != tight {
			t.Errorf("%s: ε_tight %v, ε_nominal %v, record %v / %v", family, tight, nom, res.Privacy.Epsilon, *res.Privacy.EpsilonNominal)
		}
	}
}

// TestRandomMask checks the control mask: exactly ⌈β·n⌉ weak elements
// (no ties among distinct ranks).
func TestRandomMask(t *testing.T) {
	p := randomMask(&rapftPartition{mask: make([]float32, 1000)}, 0.7, 3)
	n := 0
	for _, v := range p.mask {
		n += int(v)
	}
	if n != 700 || p.rw != 0.7 || math.Abs(p.rs-0.3) > 1e-15 {
		t.Errorf("random mask: %d weak, r_w %v, r_s %v", n, p.rw, p.rs)
	}
}

// TestThreshold checks ⌈β·n⌉ with a product that is an integer up to
// rounding.
func TestThreshold(t *testing.T) {
	rel := []float64{9, 1, 8, 2, 7, 3, 6, 4, 5, 0}
	if got := threshold(rel, 0.7); got != 6 { // 0.7·10 = 7.000000000000001: the 7th smallest
		t.Errorf("threshold(β = 0.7) = %v, want 6", got)
	}
	if got := threshold(rel, 1); got != 9 {
		t.Errorf("threshold(β = 1) = %v, want 9", got)
	}
	if got := threshold(rel, 0.01); got != 0 {
		t.Errorf("threshold(β = 0.01) = %v, want 0", got)
	}
}

// TestRapFTCalibrateTight checks calibrate = tight: the executed
// mechanism's σ_eff is DP-SGD's σ, so the run's ε equals DP-SGD's, and the
// paper's ε (for the smaller σ = σ_eff·√(r_w³ + r_s³)) is larger.
func TestRapFTCalibrateTight(t *testing.T) {
	dp := recordsJob(t, "dpsgd", 24, 3, map[string]any{"epochs": 1.0})
	a, err := DPSGD{}.FineTune(context.Background(), dp)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"epochs": 1.0, "relevance_examples": int64(4), "calibrate": "tight"}
	b, err := RapFT{}.FineTune(context.Background(), recordsJob(t, "rapft", 24, 3, params))
	if err != nil {
		t.Fatal(err)
	}
	if b.Privacy.Epsilon != a.Privacy.Epsilon || b.Privacy.Sigma != a.Privacy.Sigma || b.Values["sigma_eff"] != a.Privacy.Sigma {
		t.Errorf("ε %v σ %v (rapft tight) vs ε %v σ %v (dpsgd)", b.Privacy.Epsilon, b.Privacy.Sigma, a.Privacy.Epsilon, a.Privacy.Sigma)
	}
	rw := b.Values["rapft_weak_share"]
	want := a.Privacy.Sigma * math.Sqrt(rw*rw*rw+(1-rw)*(1-rw)*(1-rw))
	if s := b.Values["sigma_nominal"]; math.Abs(s-want) > 1e-12*want {
		t.Errorf("σ = %v, want σ_eff·√(r_w³ + r_s³) = %v", s, want)
	}
	if !(float64(*b.Privacy.EpsilonNominal) > float64(b.Privacy.Epsilon)) || b.Values["epsilon_nominal"] != float64(*b.Privacy.EpsilonNominal) {
		t.Errorf("ε nominal %v, tight %v", *b.Privacy.EpsilonNominal, b.Privacy.Epsilon)
	}
}
