// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// This file holds the interaction claims of repro verify: a difference of
// differences, "the gain of a over b is larger at x1 than at x2",
//
//	effect = (mean(a|x1) − mean(b|x1)) − (mean(a|x2) − mean(b|x2)),
//
// the interaction contrast of a two-way layout (side × x). Its interval is
// the percentile bootstrap of the same statistic over seeds, or over seeds
// and examples where the runs have predictions. Its test uses
// the pairing the seeds allow: one-sample on the per-seed interaction
// dᵢ = (a₁ᵢ − b₁ᵢ) − (a₂ᵢ − b₂ᵢ) when the four cells have the same seeds;
// Welch's test of the paired gains (a₁ᵢ − b₁ᵢ) against (a₂ⱼ − b₂ⱼ) when
// each x pairs its own two sides; else the contrast of four independent
// cells with Welch–Satterthwaite degrees of freedom.
//
// References:
//   - F. E. Satterthwaite, "An approximate distribution of estimates of
//     variance components", Biometrics Bulletin 2(6), 1946 (the degrees of
//     freedom of a linear contrast of independent means).
//   - D. C. Montgomery, "Design and Analysis of Experiments", 8th ed.,
//     Wiley 2013, §5.3 (the interaction of a two-factor design).

// interaction reports whether c is an interaction claim, or an error when
// its X1 and X2 do not make one.
func (c Claim) interaction() (bool, error) {
	switch {
	case c.X1 == nil && c.X2 == nil:
		return false, nil
	case c.X1 == nil || c.X2 == nil:
		return false, fmt.Errorf("reports: claim %s: an interaction needs both x1 and x2", c.Name)
	case c.B == nil:
		return false, fmt.Errorf("reports: claim %s: an interaction needs b", c.Name)
	case !slices.Equal(slices.Sorted(maps.Keys(c.X1)), slices.Sorted(maps.Keys(c.X2))):
		return false, fmt.Errorf("reports: claim %s: x1 and x2 must name the same columns", c.Name)
	case maps.Equal(c.X1, c.X2):
		return false, fmt.Errorf("reports: claim %s: x1 and x2 select the same runs", c.Name)
	}
	for col := range c.X1 {
		_, inA := c.A[col]
		_, inB := c.B[col]
		if inA || inB || slices.Contains(c.Each, col) {
			return false, fmt.Errorf("reports: claim %s: x1's column %s is also in a, b or each", c.Name, col)
		}
	}
	return true, nil
}

// with returns the selector sel with the entries of x added.
func with(sel, x map[string]string) map[string]string {
	out := maps.Clone(sel)
	if out == nil {
		out = make(map[string]string)
	}
	maps.Copy(out, x)
	return out
}

// xText names the x of an interaction for the expect text: "task=echr".
func xText(x map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		v := x[k]
		if v == NoValue {
			v = "null"
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// interactionChecks returns the checks of the interaction claim c, one per
// value of its Each columns, their p-values not yet adjusted. runs hold
// the metric on the claim's scale, orig as recorded.
func interactionChecks(orig, runs *Runs, c Claim, o VerifyOptions) []Check {
	notRun := func(reason string) []Check {
		ch := newCheck(c, "")
		ch.Verdict, ch.Reason = NotRun, reason
		return []Check{ch}
	}
	sel := func(side, x map[string]string) []int { s, _ := selectRuns(runs, with(side, x)); return s }
	a1, b1, a2, b2 := sel(c.A, c.X1), sel(c.B, c.X1), sel(c.A, c.X2), sel(c.B, c.X2)
	union := slices.Compact(slices.Sorted(slices.Values(slices.Concat(a1, b1, a2, b2))))
	if len(union) == 0 {
		return notRun("no run matches a or b at x1 or x2")
	}
	k, _ := newKeyer(runs, "each", c.Each)
	gs, _ := k.groups(union)
	var out []Check
	for _, g := range gs {
		at := strings.Join(k.header(nil, g.first), " ")
		ch := newCheck(c, at)
		in := func(sel []int) []int { return intersect(sel, g.runs) }
		cells := [4][]int{in(a1), in(b1), in(a2), in(b2)}
		ch.evaluateInteraction(runs, c, cells, o, seedOf(c.Name, at))
		ch.paper(runs, k, g.first, c)
		if c.Scale == "log" {
			ch.logLoss(orig, runs, c, cells[:], []string{"a at x1", "b at x1", "a at x2", "b at x2"})
		}
		out = append(out, ch)
	}
	return out
}

// evaluateInteraction runs the test of the interaction check ch on the
// runs of its four cells: a and b at x1, a and b at x2.
func (ch *Check) evaluateInteraction(runs *Runs, c Claim, cells [4][]int, o VerifyOptions, seed uint64) {
	var vals, seeds [4][]float64
	for i, cell := range cells {
		vals[i], seeds[i] = values(runs, c.Metric, cell)
	}
	ch.NA, ch.NB, ch.NA2, ch.NB2 = len(vals[0]), len(vals[1]), len(vals[2]), len(vals[3])
	ch.MeanA, _ = meanStd(vals[0])
	ch.MeanB, _ = meanStd(vals[1])
	ch.MeanA2, _ = meanStd(vals[2])
	ch.MeanB2, _ = meanStd(vals[3])
	minSeeds := max(c.MinSeeds, 2)
	for i, name := range []string{"a at x1", "b at x1", "a at x2", "b at x2"} {
		if n := seedCount(runs, c.Metric, cells[i]); n < minSeeds {
			ch.Verdict, ch.Reason = NotRun, fmt.Sprintf("%s has %d distinct seeds with %s, want ≥ %d", name, n, c.Metric, minSeeds)
			return
		}
	}
	same := func(i, j int) bool { return seeds[i] != nil && slices.Equal(seeds[i], seeds[j]) }
	auto := c.Test == "" || c.Test == "auto"
	allPaired := c.Test == "paired" || (auto || c.Test == "exact") && same(0, 1) && same(0, 2) && same(0, 3)
	xPaired := auto && same(0, 1) && same(2, 3)
	if c.Test == "exact" || auto && slices.Contains(DeterministicMetrics, c.Metric) {
		var d []float64
		if allPaired {
			d = interactionDiffs(runs, c.Metric, cells)
		} else {
			for _, w := range vals[0] {
				for _, x := range vals[1] {
					for _, y := range vals[2] {
						for _, z := range vals[3] {
							d = append(d, (w-x)-(y-z))
						}
					}
				}
			}
		}
		ch.judgeExact(c, d, allPaired)
		return
	}
	rng := rand.New(rand.NewPCG(seed, 0x766572696679))
	switch {
	case allPaired:
		d := interactionDiffs(runs, c.Metric, cells)
		if len(d) < minSeeds {
			ch.Verdict, ch.Reason = NotRun, fmt.Sprintf("the four cells share %d seeds with %s, want ≥ %d for a paired test", len(d), c.Metric, minSeeds)
			return
		}
		ch.Test = oneSample(d, "paired")
		ch.Lo, ch.Hi = bootstrapCI(rng, d, nil, o.Alpha, o.Resamples)
		ch.degenerate = signTest(d)
	case xPaired:
		d1 := pairedDiffs(runs, c.Metric, cells[0], cells[1])
		d2 := pairedDiffs(runs, c.Metric, cells[2], cells[3])
		ch.Test = welch(d1, d2)
		ch.Lo, ch.Hi = bootstrapCI(rng, d1, d2, o.Alpha, o.Resamples)
		ch.degenerate = separationTest(d1, d2)
	default:
		ch.Test = contrast(vals[:], []float64{1, -1, -1, 1})
		ch.Lo, ch.Hi = bootstrapContrast(rng, vals[:], []float64{1, -1, -1, 1}, o.Alpha, o.Resamples)
		if ch.Test.SE == 0 {
			// Four cells without variance and without shared seeds: no
			// exact test of an interaction exists; nothing is significant.
			ch.degenerate = &degenerate{kind: "no", effect: ch.Test.Effect, p: 1}
		}
	}
	ch.Note = "interaction: " + map[bool]string{true: "per-seed (a−b)|x1 − (a−b)|x2", false: "gains at x1 and x2 compared"}[allPaired]
	if ch.degenerate != nil {
		ch.Note += "; " + ch.degenerate.note(c, o.Alpha)
	}
	if o.RunDirs != "" {
		ch.interactionExampleInterval(runs, c, cells, o)
	}
	ch.setP(c)
}

// interactionDiffs returns (a₁ − b₁) − (a₂ − b₂) of metric for each seed
// that the four cells all have once, in seed order.
func interactionDiffs(runs *Runs, metric string, cells [4][]int) []float64 {
	var vals, seeds [4][]float64
	for i, cell := range cells {
		vals[i], seeds[i] = values(runs, metric, cell)
		if seeds[i] == nil {
			return nil
		}
	}
	var d []float64
	for i, s := range seeds[0] {
		j, k, l := slices.Index(seeds[1], s), slices.Index(seeds[2], s), slices.Index(seeds[3], s)
		if j >= 0 && k >= 0 && l >= 0 {
			d = append(d, (vals[0][i]-vals[1][j])-(vals[2][k]-vals[3][l]))
		}
	}
	return d
}

// contrast returns the t-test of Σ cᵢ·mean(xᵢ) over independent samples
// xᵢ (each of at least two values): SE² = Σ cᵢ² sᵢ²/nᵢ, and the
// Welch–Satterthwaite degrees of freedom (Σ vᵢ)² / Σ vᵢ²/(nᵢ − 1) with
// vᵢ = cᵢ² sᵢ²/nᵢ; Σ(nᵢ − 1) when every variance is 0. With two samples
// and coefficients 1, −1 it is [welch].
func contrast(x [][]float64, coef []float64) TTest {
	t := TTest{Kind: "contrast"}
	var sv, sv2 float64
	df0 := 0.0
	for i, xi := range x {
		m, s := meanStd(xi)
		n := float64(len(xi))
		v := coef[i] * coef[i] * s * s / n
		t.Effect += float64(coef[i] * m)
		sv += v
		sv2 += v * v / (n - 1)
		df0 += n - 1
	}
	t.SE = math.Sqrt(sv)
	if sv == 0 {
		t.DF = df0
		return t
	}
	t.DF = sv * sv / sv2
	return t
}

// bootstrapContrast returns the percentile bootstrap interval at level
// 1−α of Σ cᵢ·mean(xᵢ), each xᵢ resampled independently, from n resamples
// drawn from rng (Efron and Tibshirani 1993, ch. 13, as [bootstrapCI]).
func bootstrapContrast(rng *rand.Rand, x [][]float64, coef []float64, alpha float64, n int) (lo, hi float64) {
	est := make([]float64, n)
	for r := range est {
		for i, xi := range x {
			var s float64
			for range xi {
				s += xi[rng.IntN(len(xi))]
			}
			est[r] += coef[i] * s / float64(len(xi))
		}
	}
	slices.Sort(est)
	return quantileSorted(est, alpha/2), quantileSorted(est, 1-float64(alpha/2))
}
