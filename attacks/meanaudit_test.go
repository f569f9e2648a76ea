// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// gaussianMean returns a MeanRelease of K random chunks of L layers of
// width D, each layer clipped to c, released with the analytic Gaussian
// mechanism's σ for (eps, δ) at sensitivity √L·c/K (twice that for
// replace-one) times scale (scale < 1 plants an under-noised release): a
// reference written here, apart from package methods.
func gaussianMean(t *testing.T, K, L, D int, c, eps, scale float64, relation string) *methods.MeanRelease {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	chunks := make([][][]float32, K)
	for k := range chunks {
		chunks[k] = make([][]float32, L)
		for l := range chunks[k] {
			chunks[k][l] = make([]float32, D)
			for j := range chunks[k][l] {
				chunks[k][l][j] = float32(rng.NormFloat64())
			}
		}
	}
	sens := math.Sqrt(float64(L)) * c / float64(K)
	if relation == "replace-one" {
		sens *= 2
	}
	sigma, err := privacy.AnalyticGaussianSigma(eps, 1e-5, sens)
	if err != nil {
		t.Fatal(err)
	}
	release := func(ch [][][]float32, seed uint64) [][]float64 {
		noise := rand.New(rand.NewPCG(seed, 3))
		mu := make([][]float64, L)
		for l := range mu {
			mu[l] = make([]float64, D)
			for _, chunk := range ch {
				var n float64
				for _, v := range chunk[l] {
					n += float64(v) * float64(v)
				}
				s := math.Min(1, c/math.Sqrt(n)) / float64(K)
				for j, v := range chunk[l] {
					mu[l][j] += s * float64(v)
				}
			}
			for j := range mu[l] {
				mu[l][j] += scale * sigma * noise.NormFloat64()
			}
		}
		return mu
	}
	return &methods.MeanRelease{Chunks: chunks, Clip: c, Epsilon: eps, Delta: 1e-5, Relation: relation, Release: release, Seed: 9}
}

// TestMeanAudit checks the release audit: a release calibrated at ε = 4
// gives a lower bound in [0, 4] (it holds); the
// same release with a quarter of the noise, a planted control, gives a
// bound above 4 and a violation; ε = 1 never exceeds 1; replace-one's
// worlds (the canary against its negation) hold for a release calibrated
// for them and catch one calibrated for zero-out (the paper's sensitivity
// under the relation of its proof); a run without a mean release has
// nothing to audit.
func TestMeanAudit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		eps, scale float64
		relation   string
		lo, hi     float64
		violation  bool
	}{
		{"calibrated ε = 4", 4, 1, "zero-out", 0, 4, false},
		{"planted ε = 4", 4, 0.25, "zero-out", 4, math.Inf(1), true},
		{"calibrated ε = 1", 1, 1, "zero-out", 0, 1, false},
		{"replace-one ε = 4", 4, 1, "replace-one", 0, 4, false},
		// Zero-out's σ audited in replace-one's worlds (the paper's
		// sensitivity under the relation of its proof): the shift is twice
		// what the noise was calibrated for, a violation.
		{"replace-one under zero-out's σ, ε = 4", 4, 0.5, "replace-one", 4, math.Inf(1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{Mean: gaussianMean(t, 40, 3, 24, 1, tc.eps, tc.scale, tc.relation)}
			rep, err := MeanAudit{}.Run(context.Background(), tg)
			if err != nil {
				t.Fatal(err)
			}
			lb := rep.Results["mean_audit_epsilon_lb"]
			if !(lb >= tc.lo && lb <= tc.hi) {
				t.Errorf("ε lower bound %.3f, want in [%v, %v] (TPR %v, FPR %v)", lb, tc.lo, tc.hi, rep.Results["mean_audit_tpr"], rep.Results["mean_audit_fpr"])
			}
			if (len(rep.Violations) > 0) != tc.violation {
				t.Errorf("violations %v, want %v", rep.Violations, tc.violation)
			}
		})
	}
	rep, err := MeanAudit{}.Run(context.Background(), &Target{})
	if err != nil || len(rep.Results) != 0 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "nothing to audit") {
		t.Errorf("no release: %v, %+v", err, rep)
	}
}

// TestMeanAuditDPMTV runs the audit on DP-MTV's own release (the method's
// closure over its chunks, clip, σ and noise scale) at smoke scale: the
// honest release at ε = 4 holds; its planted control (a quarter of the
// noise) is a violation.
func TestMeanAuditDPMTV(t *testing.T) {
	d, err := datasets.Build("icl", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scale     float64
		violation bool
	}{{1, false}, {0.25, true}} {
		m, err := nn.NewTinyMLLM(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h, err := methods.ResolveAt("dpmtv", "smoke", 4, map[string]any{"reinforce_steps": 4, "reinforce_masks": 2, "noise_scale": tc.scale})
		if err != nil {
			t.Fatal(err)
		}
		res, err := methods.DPMTV{}.FineTune(context.Background(), &methods.Job{Model: m, Data: d, Hyper: h, Epsilon: 4, Delta: 1e-5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := MeanAudit{}.Run(context.Background(), &Target{Mean: res.Mean})
		if err != nil {
			t.Fatal(err)
		}
		if lb := rep.Results["mean_audit_epsilon_lb"]; (len(rep.Violations) > 0) != tc.violation || !tc.violation && lb > 4 {
			t.Errorf("noise scale %v: ε lower bound %v, violations %v", tc.scale, lb, rep.Violations)
		}
	}
}

// TestMeanAuditDeterminism checks that the audit gives the same bound
// whatever the number of workers, and another one for another run seed.
func TestMeanAuditDeterminism(t *testing.T) {
	r := gaussianMean(t, 40, 3, 24, 1, 4, 1, "zero-out")
	var got []float64
	for _, w := range []int{1, 4} {
		rep, err := MeanAudit{}.Run(context.Background(), &Target{Mean: r, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rep.Results["mean_audit_tpr"], rep.Results["mean_audit_fpr"])
	}
	if got[0] != got[2] || got[1] != got[3] {
		t.Errorf("1 and 4 workers: TPR, FPR %v", got)
	}
	r.Seed++
	rep, _ := MeanAudit{}.Run(context.Background(), &Target{Mean: r})
	if rep.Results["mean_audit_tpr"] == got[0] && rep.Results["mean_audit_fpr"] == got[1] {
		t.Error("another run seed gives the same draw")
	}
}
