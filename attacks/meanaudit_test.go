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

	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/privacy"
)

// gaussianMean returns a MeanRelease of K random chunks of L layers of
// width D, each layer clipped to c, released with the analytic Gaussian
// mechanism's σ for (eps, δ) at sensitivity √L·c/K times scale (scale < 1
// plants an under-noised release): a reference written here, apart from
// package methods.
func gaussianMean(t *testing.T, K, L, D int, c, eps, scale float64) *methods.MeanRelease {
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
	sigma, err := privacy.AnalyticGaussianSigma(eps, 1e-5, math.Sqrt(float64(L))*c/float64(K))
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
	return &methods.MeanRelease{Chunks: chunks, Clip: c, Epsilon: eps, Delta: 1e-5, Relation: "add-remove", Release: release}
}

// TestMeanAudit checks the release audit: a release calibrated at ε = 4
// gives a lower bound in (0, 4] (the audit has power, and holds); the
// same release with a quarter of the noise, a planted control, gives a
// bound above 4 and a violation; ε = 1 with 2 × 2000 trials has little
// power but never exceeds 1; a run without a mean release has nothing to
// audit.
func TestMeanAudit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		eps, scale float64
		lo, hi     float64
		violation  bool
	}{
		{"calibrated ε = 4", 4, 1, 0.5, 4, false},
		{"planted ε = 4", 4, 0.25, 4, math.Inf(1), true},
		{"calibrated ε = 1", 1, 1, 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{Mean: gaussianMean(t, 40, 3, 24, 1, tc.eps, tc.scale)}
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
