// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"math/rand/v2"
	"slices"
)

// mcnemarMidP returns the two-sided mid-p-value of McNemar's exact
// conditional test of b discordant pairs one way and c the other: with
// X ~ Binomial(b+c, ½) and k = min(b, c), 2·P(X < k) + P(X = k), capped
// at 1. It is 1 when there is no discordant pair. The mid-p keeps the
// exact test's conservatism (it never rejects at α more often than α in
// the tables of the reference) from hiding a real change on few pairs.
//
// References:
//   - Q. McNemar, "Note on the sampling error of the difference between
//     correlated proportions or percentages", Psychometrika 12(2), 1947.
//   - M. W. Fagerland, S. Lydersen, P. Laake, "The McNemar test for binary
//     matched-pairs data: mid-p and asymptotic are better than exact
//     conditional", BMC Medical Research Methodology 13:91, 2013, eq. 3.
func mcnemarMidP(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// P(X = i) = C(n, i) / 2ⁿ, in logs so that large n does not overflow.
	lp := func(i int) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
		return lg(n) - lg(i) - lg(n-i) - float64(float64(n)*math.Ln2)
	}
	var below float64
	for i := 0; i < k; i++ {
		below += math.Exp(lp(i))
	}
	return math.Min(1, 2*below+math.Exp(lp(k)))
}

// A pairedExamples holds the examples two sides of a comparison share,
// per shared seed: 1 where the example is correct, 0 where not.
type pairedExamples struct {
	seeds    []float64
	old, new [][]float64 // per seed, per shared example
}

// discordant returns the pairs the old side has right and the new one
// wrong (b), and the other way round (c), over every seed.
func (p *pairedExamples) discordant() (b, c int) {
	for s := range p.old {
		for i, o := range p.old[s] {
			switch n := p.new[s][i]; {
			case o > n:
				b++
			case o < n:
				c++
			}
		}
	}
	return b, c
}

// effect returns the mean over seeds of 100·(accuracy new − accuracy
// old) on the shared examples: the change of an accuracy in points.
func (p *pairedExamples) effect() float64 {
	var sum float64
	for s := range p.old {
		sum += float64(100 * (mean(p.new[s]) - mean(p.old[s])))
	}
	return sum / float64(len(p.old))
}

// bootstrap returns the percentile interval at level 1−α of effect under
// a two-stage bootstrap over seeds and examples: each resample draws the
// seeds with replacement, then within each drawn seed its shared examples
// with replacement (pairs kept together), so that both the seed-to-seed
// and the example-to-example variation widen the interval. With one seed
// only the examples vary.
//
// References:
//   - A. C. Davison, D. V. Hinkley, "Bootstrap Methods and their
//     Application", Cambridge University Press 1997, §3.8 (resampling
//     both stages of a hierarchical sample).
func (p *pairedExamples) bootstrap(rng *rand.Rand, alpha float64, n int) (lo, hi float64) {
	est := make([]float64, n)
	for r := range est {
		var sum float64
		for range p.old {
			s := rng.IntN(len(p.old))
			o, nw := p.old[s], p.new[s]
			var d float64
			for range o {
				i := rng.IntN(len(o))
				d += nw[i] - o[i]
			}
			sum += 100 * d / float64(len(o))
		}
		est[r] = sum / float64(len(p.old))
	}
	slices.Sort(est)
	return quantileSorted(est, alpha/2), quantileSorted(est, 1-float64(alpha/2))
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
