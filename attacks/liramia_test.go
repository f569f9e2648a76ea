// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAuditRuns checks the multi-run audit's bound against the closed
// forms of the Clopper–Pearson limits at k = 0 and k = n (hi = 1 − α^(1/n),
// lo = α^(1/n); Clopper & Pearson 1934) and its verdicts.
func TestAuditRuns(t *testing.T) {
	const delta = 1e-5
	level := (1 - AuditConfidence) / 4
	perfect := func(n int) ([]float64, []bool) {
		conf, in := make([]float64, 2*n), make([]bool, 2*n)
		for j := range conf {
			in[j] = j%2 == 0
			conf[j] = -3
			if in[j] {
				conf[j] = 3
			}
		}
		return conf, in
	}
	for _, n := range []int{8, 16} {
		conf, in := perfect(n)
		a := AuditRuns(conf, in, 0.1, delta)
		lo := math.Pow(level, 1/float64(n))
		want := math.Log((lo - delta) / (1 - lo))
		if a.In != n || a.Out != n || a.TruePos != n || a.FalsePos != 0 || math.Abs(a.Lower-want) > 1e-9 {
			t.Errorf("perfect guesses over %d+%d runs: %+v, want lower bound %v", n, n, a, want)
		}
		if a.Pass != (want <= 0.1) {
			t.Errorf("perfect guesses over %d+%d runs at ε = 0.1: pass %v, want %v", n, n, a.Pass, want <= 0.1)
		}
	}
	// 16+16 perfect guesses: ε ≥ 1.153 (the closed form above), so a run
	// accounted at ε = 8 passes and one at ε = 1 fails.
	conf, in := perfect(16)
	if a := AuditRuns(conf, in, 8, delta); !a.Pass {
		t.Errorf("ε = 8: %+v, want a pass", a)
	}
	if a := AuditRuns(conf, in, 1, delta); a.Pass {
		t.Errorf("ε = 1: %+v, want a failure", a)
	}
	// The guess is in exactly above the threshold.
	for j := range conf {
		conf[j] = math.Nextafter(AuditRunsThreshold, math.Inf(-1))
		if in[j] {
			conf[j] = math.Nextafter(AuditRunsThreshold, math.Inf(1))
		}
	}
	if a := AuditRuns(conf, in, 1, delta); a.TruePos != 16 || a.FalsePos != 0 {
		t.Errorf("confidences either side of the threshold: %+v, want 16 true and 0 false positives", a)
	}
	// Guesses that ignore membership give no bound.
	for j := range conf {
		conf[j] = 1
	}
	if a := AuditRuns(conf, in, 0.1, delta); a.Lower != 0 || !a.Pass {
		t.Errorf("constant guesses: %+v, want lower bound 0 and a pass", a)
	}
}

// TestLiRAScores checks LiRAScores against the test's own evaluation of
// the Gaussian log-likelihood ratio from the shadows' explicit means and
// divide-by-n deviations, and that LiRAGroup separates members from
// non-members when members' confidences are higher.
func TestLiRAScores(t *testing.T) {
	models := []LiRAModel{
		{Conf: []float64{1.0, -1.0}, In: []bool{true, false}}, // target
		{Conf: []float64{2.0, -2.0}, In: []bool{true, false}},
		{Conf: []float64{1.5, 0.5}, In: []bool{true, true}},
		{Conf: []float64{-1.0, -1.5}, In: []bool{false, false}},
		{Conf: []float64{0.0, 1.0}, In: []bool{false, true}},
	}
	online, offline := LiRAScores(models, 0, false)
	logpdf := func(x, mu, s float64) float64 {
		return -(x-mu)*(x-mu)/(2*s*s) - math.Log(s*math.Sqrt(2*math.Pi))
	}
	// Example 0: in {2, 1.5}: μ 1.75, σ 0.25; out {−1, 0}: μ −0.5, σ 0.5.
	// Example 1: in {0.5, 1}: μ 0.75, σ 0.25; out {−2, −1.5}: μ −1.75, σ 0.25.
	want := []float64{logpdf(1, 1.75, 0.25) - logpdf(1, -0.5, 0.5), logpdf(-1, 0.75, 0.25) - logpdf(-1, -1.75, 0.25)}
	wantOff := []float64{math.Log(0.5 * math.Erfc(-(1+0.5)/0.5/math.Sqrt2)), math.Log(0.5 * math.Erfc(-(-1+1.75)/0.25/math.Sqrt2))}
	for i := range want {
		if math.Abs(online[i]-want[i]) > 1e-9 || math.Abs(offline[i]-wantOff[i]) > 1e-9 {
			t.Errorf("example %d: online %v offline %v, want %v and %v", i, online[i], offline[i], want[i], wantOff[i])
		}
	}

	// 17 models over a pool of 200: members' confidence is higher by 2
	// on top of a per-example difficulty; LiRA must see it.
	const k = 17
	models = synthModels(rand.New(rand.NewPCG(1, 2)), 200, k, 3, 0.3, 2)
	rep := &Report{}
	if err := LiRAGroup(rep, models, 0, nil); err != nil {
		t.Fatal(err)
	}
	if auc := rep.Results["lira_online_auc"]; auc < 0.95 {
		t.Errorf("LiRA online AUC %v on well-separated synthetic confidences, want ≥ 0.95", auc)
	}
	if auc := rep.Results["lira_offline_auc"]; auc < 0.9 {
		t.Errorf("LiRA offline AUC %v, want ≥ 0.9", auc)
	}
	if rep.Results["lira_shadows"] != k-1 {
		t.Errorf("lira_shadows %v, want %d", rep.Results["lira_shadows"], k-1)
	}
	if err := LiRAGroup(&Report{}, models[:2], 0, nil); err == nil {
		t.Error("LiRA with one shadow: no error")
	}

	// An example that no shadow trained on has no online score, fixed or
	// per-example variance (its offline one is defined): one undefined
	// example, counted once.
	undef := []LiRAModel{
		{Conf: []float64{1.0, -1.0, 0.3}, In: []bool{true, false, false}}, // target
		{Conf: []float64{2.0, -2.0, 0.1}, In: []bool{true, false, false}},
		{Conf: []float64{1.5, 0.5, 0.2}, In: []bool{true, true, false}},
		{Conf: []float64{-1.0, -1.5, -0.1}, In: []bool{false, false, false}},
		{Conf: []float64{0.0, 1.0, 0.0}, In: []bool{false, true, false}},
	}
	rep = &Report{}
	if err := LiRAGroup(rep, undef, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := rep.Results["lira_undefined"]; got != 1 {
		t.Errorf("lira_undefined %v, want 1 (example 2, undefined in two of the three scores)", got)
	}
}

// TestLiRAPooled checks the pooled ROC over all targets of a group
// against the test's own pooling of each target's scores (LiRAScores,
// checked above), with the pairwise Mann–Whitney AUC and the brute-force
// TPR at 1% FPR (slowRates), and that a per-run pool too small for 1% FPR
// gives a TPR there once pooled.
func TestLiRAPooled(t *testing.T) {
	// 9 models over a pool of 60: about 30 non-members a run, so 1% FPR
	// needs pooling.
	models := synthModels(rand.New(rand.NewPCG(3, 4)), 60, 9, 2, 0.5, 0.8)
	models[0].Conf[1] = math.NaN() // an unscored example is left out
	rep := &Report{}
	if err := LiRAPooled(rep, models); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix string
		fixed  bool
		online bool
	}{{"lira_pooled_online_", true, true}, {"lira_pooled_offline_", true, false}, {"lira_pooled_online_pe_", false, true}} {
		var mem, non []float64
		for target, m := range models {
			on, off := LiRAScores(models, target, c.fixed)
			s := off
			if c.online {
				s = on
			}
			for i, v := range s {
				switch {
				case math.IsNaN(v):
				case m.In[i]:
					mem = append(mem, v)
				default:
					non = append(non, v)
				}
			}
		}
		res := rep.Results
		if res[c.prefix+"members"] != float64(len(mem)) || res[c.prefix+"nonmembers"] != float64(len(non)) {
			t.Errorf("%s: %v members, %v non-members, want %d and %d", c.prefix, res[c.prefix+"members"], res[c.prefix+"nonmembers"], len(mem), len(non))
		}
		if got, want := res[c.prefix+"auc"], slowAUC(mem, non); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: AUC %v, pairwise %v", c.prefix, got, want)
		}
		tprs, fprs := slowRates(mem, non)
		best := 0.0
		for i := range tprs {
			if fprs[i] <= 0.01 {
				best = max(best, tprs[i])
			}
		}
		t.Logf("%s: AUC %.3f, TPR at 1%% FPR %.3f over %d members, %d non-members", c.prefix, res[c.prefix+"auc"], best, len(mem), len(non))
		if got := res[c.prefix+"tpr_at_fpr_0_01"]; math.IsNaN(got) || math.Abs(got-best) > 1e-12 {
			t.Errorf("%s: TPR at 1%% FPR %v, brute force %v", c.prefix, got, best)
		}
	}
	// One target alone has about 30 non-members: 1% FPR is out of reach.
	single := &Report{}
	if err := LiRAGroup(single, models, 1, nil); err != nil {
		t.Fatal(err)
	}
	if v := single.Results["lira_online_tpr_at_fpr_0_01"]; !math.IsNaN(v) {
		t.Errorf("one target's TPR at 1%% FPR %v from %v non-members, want missing", v, single.Results["lira_online_nonmembers"])
	}
	if err := LiRAPooled(&Report{}, models[:2]); err == nil {
		t.Error("pooled LiRA over two models: no error")
	}
}

// synthModels returns k synthetic LiRA models over a pool of n: each
// example has a difficulty drawn with standard deviation spread, each model
// trains on it by a fair coin, and its confidence is the difficulty plus
// noise of standard deviation noise, plus shift when it trained on it.
func synthModels(rng *rand.Rand, n, k int, spread, noise, shift float64) []LiRAModel {
	difficulty := make([]float64, n)
	for i := range difficulty {
		difficulty[i] = spread * rng.NormFloat64()
	}
	models := make([]LiRAModel, k)
	for j := range models {
		m := LiRAModel{Conf: make([]float64, n), In: make([]bool, n)}
		for i := range m.Conf {
			m.In[i] = rng.IntN(2) == 1
			m.Conf[i] = difficulty[i] + noise*rng.NormFloat64()
			if m.In[i] {
				m.Conf[i] += shift
			}
		}
		models[j] = m
	}
	return models
}
