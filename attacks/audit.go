// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/repro-dp/repro/internal/results"
	"gonum.org/v1/gonum/mathext"
)

func init() { Register(AuditOneRun{}) }

// AuditConfidence is the confidence of the audit's ε lower bound.
const AuditConfidence = 0.95

// AuditGuessFractions are the numbers of guesses r, as fractions of the m
// canaries, at which AuditOneRun evaluates the bound: r/2 canaries with
// the highest scores guessed in, r/2 with the lowest guessed out. Each is
// evaluated at level (1 − AuditConfidence)/len(AuditGuessFractions) and
// the largest bound reported (Bonferroni), so the reported bound holds
// with probability AuditConfidence although r is chosen after seeing the
// scores.
var AuditGuessFractions = []float64{0.125, 0.25, 0.5, 1}

// OneRunPValue returns the p-value of the one-run audit of Steinke, Nasr &
// Jagielski (2023): the largest probability, under (ε, δ)-DP, that an
// auditor who guesses on r of m canaries (each included with probability
// ½) makes at least v correct guesses. With q = e^ε/(1 + e^ε),
//
//	p = P[Bin(r, q) ≥ v] + 2·m·δ · max_{i=1..v} (1/i)·P[v−i ≤ Bin(r, q) < v],
//
// capped at 1: the bound of their main theorem for (ε, δ)-DP, as their
// Appendix D computes it. The binomial tail is the regularised
// incomplete beta function: P[Bin(r, q) ≥ v] = I_q(v, r−v+1).
//
// OneRunPValue panics unless 0 ≤ v ≤ r ≤ m, ε ≥ 0 and δ in [0, 1].
//
// References:
//   - T. Steinke, M. Nasr, M. Jagielski, Privacy auditing with one (1)
//     training run, NeurIPS 2023, arXiv:2305.08846.
func OneRunPValue(m, r, v int, eps, delta float64) float64 {
	if v < 0 || v > r || r > m || !(eps >= 0) || !(delta >= 0 && delta <= 1) {
		panic("attacks: one-run p-value needs 0 ≤ v ≤ r ≤ m, ε ≥ 0, δ in [0, 1]")
	}
	if v == 0 {
		return 1
	}
	q := 1 / (1 + math.Exp(-eps))
	p := mathext.RegIncBeta(float64(v), float64(r-v+1), q)
	if delta > 0 {
		a, s := 0.0, 0.0
		for i := 1; i <= v; i++ {
			s += binomPMF(r, v-i, q)
			a = max(a, s/float64(i))
		}
		p += float64(float64(a*delta) * 2 * float64(m))
	}
	return min(p, 1)
}

// binomPMF returns P[Bin(n, q) = k].
func binomPMF(n, k int, q float64) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	switch {
	case q == 0:
		return b2f(k == 0)
	case q == 1:
		return b2f(k == n)
	}
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(float64(k)*math.Log(q)) + float64(float64(n-k)*math.Log1p(-q)))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// OneRunEpsilon returns the one-run audit's lower bound on ε at confidence
// 1 − p: the largest ε whose OneRunPValue is below p (0 if none), found by
// bisection to 1e-6 (the p-value increases with ε). No (ε', δ)-DP
// mechanism with ε' below it produces v correct of r guesses except with
// probability p.
//
// OneRunEpsilon panics as OneRunPValue does, or if p is not in (0, 1).
func OneRunEpsilon(m, r, v int, delta, p float64) float64 {
	if !(p > 0 && p < 1) {
		panic("attacks: one-run audit level not in (0, 1)")
	}
	if OneRunPValue(m, r, v, 0, delta) >= p {
		return 0
	}
	lo, hi := 0.0, 1.0
	for OneRunPValue(m, r, v, hi, delta) < p {
		lo, hi = hi, 2*hi
		if hi > 1e3 {
			return math.Inf(1)
		}
	}
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if OneRunPValue(m, r, v, mid, delta) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// An Audit is the outcome of a one-run audit.
type Audit struct {
	// Canaries is m; Guesses r and Correct v are those of the number of
	// guesses that gave the largest bound.
	Canaries, Guesses, Correct int
	// Epsilon is the accounted ε; Lower the ε lower bound at
	// AuditConfidence and Median the ε at which the p-value is ½ (a central
	// estimate). Pass is Lower ≤ Epsilon.
	Epsilon, Lower, Median float64
	Pass                   bool
}

// OneRun audits a mechanism accounted at (eps, delta) from the scores of m
// canaries (higher: more likely in) and whether each was in: for each of
// AuditGuessFractions it guesses the top r/2 in and the bottom r/2 out and
// takes the bound at level (1 − AuditConfidence)/len(AuditGuessFractions);
// it returns the largest. It panics if the lengths differ or m < 2.
func OneRun(scores []float64, in []bool, eps, delta float64) Audit {
	m := len(scores)
	if m != len(in) || m < 2 {
		panic("attacks: one-run audit needs as many memberships as scores, at least 2")
	}
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	level := (1 - AuditConfidence) / float64(len(AuditGuessFractions))
	a := Audit{Canaries: m, Epsilon: eps, Lower: -1}
	for _, f := range AuditGuessFractions {
		k := max(1, int(f*float64(m))/2)
		v := 0
		for _, i := range idx[:k] {
			v += int(b2f(in[i]))
		}
		for _, i := range idx[m-k:] {
			v += int(b2f(!in[i]))
		}
		if lb := OneRunEpsilon(m, 2*k, v, delta, level); lb > a.Lower {
			a.Lower, a.Guesses, a.Correct = lb, 2*k, v
			a.Median = OneRunEpsilon(m, 2*k, v, delta, 0.5)
		}
	}
	a.Pass = !(a.Lower > eps)
	return a
}

// AuditOneRun is the one-run privacy audit of Steinke, Nasr & Jagielski
// (2023) on the run's audit canaries (Target.Canaries, drawn before
// training, each inserted with probability ½): a canary's score is minus
// its loss (one forward pass each), guesses and bound as OneRun, against
// the run's accounted ε and δ (Target.Epsilon, Target.Delta). Results:
// audit_canaries, audit_guesses, audit_correct, audit_epsilon (accounted),
// audit_epsilon_lb (the bound at AuditConfidence), audit_epsilon_median
// and audit_pass (1 or 0). A bound above the accounted ε is a violation.
// A run without audit canaries is an error that says so.
//
// References:
//   - T. Steinke, M. Nasr, M. Jagielski, Privacy auditing with one (1)
//     training run, NeurIPS 2023, arXiv:2305.08846.
type AuditOneRun struct{}

// Name implements Attack.
func (AuditOneRun) Name() string { return "audit-one-run" }

// Run implements Attack.
func (a AuditOneRun) Run(ctx context.Context, t *Target) (*Report, error) {
	if t.Model == nil {
		return nil, fmt.Errorf("attacks: %s: no model", a.Name())
	}
	if len(t.Canaries) < 2 {
		return nil, fmt.Errorf("attacks: %s: the run has %d audit canaries, needs many (a task with audit canaries, such as shapes-vqa-mia)", a.Name(), len(t.Canaries))
	}
	exs := make([]Example, len(t.Canaries))
	in := make([]bool, len(t.Canaries))
	for i, c := range t.Canaries {
		exs[i], in[i] = c.Example, c.In
	}
	ps, err := passes(ctx, t.Model, t.Visual, exs, nil, t.Workers) // losses only: no entropies
	if err != nil {
		return nil, fmt.Errorf("attacks: %s: %w", a.Name(), err)
	}
	scores := make([]float64, len(ps))
	for i, p := range ps {
		scores[i] = -meanLoss(p)
	}
	rep := &Report{Results: map[string]float64{}}
	for i := range scores {
		rep.Scores = append(rep.Scores, results.Score{ExampleID: exs[i].ID, Member: in[i], Score: scores[i]})
	}
	eps := t.Epsilon
	if eps == 0 {
		eps = math.Inf(1)
	}
	au := OneRun(scores, in, eps, t.Delta)
	r := rep.Results
	r["audit_canaries"], r["audit_guesses"], r["audit_correct"] = float64(au.Canaries), float64(au.Guesses), float64(au.Correct)
	r["audit_epsilon"], r["audit_epsilon_lb"], r["audit_epsilon_median"] = au.Epsilon, au.Lower, au.Median
	r["audit_pass"] = b2f(au.Pass)
	if !au.Pass {
		rep.Violations = append(rep.Violations, fmt.Sprintf(
			"%s: the empirical lower bound ε ≥ %.4g (%.0f%% confidence; %d of %d guesses correct on %d canaries) exceeds the accounted ε = %.4g: the privacy guarantee does not hold",
			a.Name(), au.Lower, 100*AuditConfidence, au.Correct, au.Guesses, au.Canaries, au.Epsilon))
	}
	return rep, nil
}
