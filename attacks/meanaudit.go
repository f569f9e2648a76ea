// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/internal/parallel"
)

func init() { Register(MeanAudit{}) }

// MeanAuditTrials is the number of releases the mean audit draws in each
// of its two worlds.
const MeanAuditTrials = 20000

// MeanAudit audits a release of a clipped mean with Gaussian noise
// (methods.MeanRelease: DP-MTV's task vector) by running the release
// again on neighbouring inputs, as a distinguishing game (Jagielski,
// Ullman & Oprea, "Auditing Differentially Private Machine Learning: How
// Private is Private SGD?", NeurIPS 2020; Nasr et al., "Adversary
// Instantiation: Lower Bounds for Differentially Private Machine
// Learning", IEEE S&P 2021): the first chunk of the run's chunks is a
// canary whose every layer slice has ℓ₂ norm C (world in), or contributes
// zero (world out: zero-out neighbours, K fixed; for replace-one the
// canary's negation, the farthest record). The attacker knows every other chunk
// and scores a release by its inner product with the canary, the most
// powerful test for a Gaussian shift. MeanAuditTrials releases a world:
// the first half chooses the threshold, the second half counts, and
// Clopper–Pearson bounds at 95% (2.5% each side) give the lower bound
// ε_lb = ln((TPR_lo − δ)/FPR_hi) of any (ε, δ) the release satisfies.
// An ε_lb above the accounted ε is a violation (an honest release fails
// with probability at most 5%). The releases' noise and the canary come
// from streams of the run's seed of their own, never the run's release's:
// the audit measures the mechanism's calibration and its neighbouring
// worlds, the same for every run of a configuration, on a fresh draw per
// run.
type MeanAudit struct{}

// Name implements Attack.
func (MeanAudit) Name() string { return "mean-audit" }

// Run implements Attack: results mean_audit_epsilon_lb (0 when the test
// finds nothing), mean_audit_epsilon (the accounted ε of the release),
// mean_audit_tpr and mean_audit_fpr at the chosen threshold on the second
// half, and mean_audit_trials.
func (MeanAudit) Run(ctx context.Context, t *Target) (*Report, error) {
	r := t.Mean
	if r == nil {
		return &Report{Warnings: []string{"mean-audit: the run releases no clipped mean with noise (the attack audits DP-MTV's task vector): nothing to audit"}}, nil
	}
	if len(r.Chunks) == 0 || !(r.Clip > 0) || math.IsInf(r.Clip, 1) {
		return nil, fmt.Errorf("attacks: mean-audit: a release of %d chunks clipped to %v cannot be audited", len(r.Chunks), r.Clip)
	}
	canary := meanCanary(r.Chunks[0], r.Clip, r.Seed)
	// The releases' noise seeds: base + i, base drawn from a stream of the
	// run's seed of the audit's own (never the seed of the run's release).
	base := rand.New(rand.NewPCG(r.Seed, meanAuditStream)).Uint64()
	out := make([][]float32, len(canary))
	for l := range out {
		out[l] = make([]float32, len(canary[l]))
		if r.Relation == "replace-one" {
			for j, v := range canary[l] {
				out[l][j] = -v
			}
		}
	}
	n := MeanAuditTrials
	scores := make([]float64, 2*n) // in: [0, n), out: [n, 2n)
	err := parallel.For(2*n, t.Workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunks := slices.Clone(r.Chunks)
		chunks[0] = out
		if i < n {
			chunks[0] = canary
		}
		mu := r.Release(chunks, base+uint64(i))
		for l := range mu {
			for j, v := range mu[l] {
				scores[i] += float64(v * float64(canary[l][j]))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return meanAuditReport(scores[:n], scores[n:], r.Epsilon, r.Delta), nil
}

// The audit's random streams of the run's seed: the releases' noise seeds
// and the canary's direction.
const (
	meanAuditStream  = 0x6d65616e61756469 // "meanaudi"
	meanCanaryStream = 0x6d65616e63616e61 // "meancana"
)

// meanCanary returns a canary like chunk: per layer slice a random
// direction (the run seed's canary stream) scaled to norm c.
func meanCanary(chunk [][]float32, c float64, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, meanCanaryStream))
	out := make([][]float32, len(chunk))
	for l := range chunk {
		v := make([]float64, len(chunk[l]))
		var n float64
		for j := range v {
			v[j] = rng.NormFloat64()
			n += float64(v[j] * v[j])
		}
		out[l] = make([]float32, len(v))
		for j := range v {
			out[l][j] = float32(c * v[j] / math.Sqrt(n))
		}
	}
	return out
}

// meanAuditReport chooses the threshold on the first half of the in and
// out scores (the one that maximises the point estimate ln((TPR − δ)/FPR)
// with FPR at least one false positive) and bounds ε on the second halves.
func meanAuditReport(in, out []float64, eps, delta float64) *Report {
	h := len(in) / 2
	tau := bestThreshold(in[:h], out[:h], delta)
	tp, fp := countAbove(in[h:], tau), countAbove(out[h:], tau)
	m := len(in) - h
	tprLo, _ := ClopperPearson(tp, m, 0.025)
	_, fprHi := ClopperPearson(fp, len(out)-h, 0.025)
	lb := 0.0
	if tprLo > delta && fprHi > 0 {
		lb = math.Max(0, math.Log((tprLo-delta)/fprHi))
	}
	rep := &Report{Results: map[string]float64{
		"mean_audit_epsilon_lb": lb, "mean_audit_epsilon": eps,
		"mean_audit_tpr": float64(tp) / float64(m), "mean_audit_fpr": float64(fp) / float64(len(out)-h),
		"mean_audit_trials": float64(len(in)),
	}}
	if lb > eps {
		rep.Violations = append(rep.Violations, fmt.Sprintf("mean-audit: empirical ε lower bound %.3f exceeds the release's accounted ε = %v", lb, eps))
	}
	return rep
}

// bestThreshold returns the score threshold τ (a member is guessed when
// its score is above τ) with the largest ln((TPR − δ)/FPR) on in and out,
// FPR counted as at least one false positive; every score is a candidate,
// and the counts come from sorted copies by binary search.
func bestThreshold(in, out []float64, delta float64) float64 {
	si, so := slices.Sorted(slices.Values(in)), slices.Sorted(slices.Values(out))
	above := func(s []float64, tau float64) int {
		i, _ := slices.BinarySearch(s, math.Nextafter(tau, math.Inf(1)))
		return len(s) - i
	}
	best, bestV := math.Inf(1), math.Inf(-1)
	for _, tau := range slices.Concat(si, so) {
		tpr := float64(above(si, tau)) / float64(len(in))
		if tpr <= delta {
			continue
		}
		fpr := float64(max(above(so, tau), 1)) / float64(len(out))
		if v := math.Log((tpr - delta) / fpr); v > bestV {
			best, bestV = tau, v
		}
	}
	return best
}

func countAbove(x []float64, tau float64) int {
	n := 0
	for _, v := range x {
		if v > tau {
			n++
		}
	}
	return n
}
