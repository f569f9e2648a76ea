// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

func twoSided(t TTest) float64 { return math.Min(1, 2*math.Min(t.PAbove(0), t.PBelow(0))) }

func TestTTest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc         string
		got          TTest
		wantT, wantP float64
		wantDF       float64
		tol          float64
		wantKind     string
	}{
		{
			// scipy 1.10.1: stats.ttest_ind(a, b, equal_var=False) with
			// a=[25.1, 27.3, 23.8, 26.0], b=[22.4, 21.9, 24.5]; the df is
			// (va+vb)²/(va²/3+vb²/2) with va, vb = np.var(·, ddof=1)/n.
			desc:  "welch",
			got:   welch([]float64{25.1, 27.3, 23.8, 26.0}, []float64{22.4, 21.9, 24.5}),
			wantT: 2.4102557995138745, wantP: 0.06486293111564169, wantDF: 4.630943870890571,
			tol: 1e-10, wantKind: "welch",
		},
		{
			// scipy 1.10.1: stats.ttest_rel([31.2, 28.4, 35.0], [25.0, 27.1, 30.3]).
			desc:  "paired",
			got:   oneSample([]float64{31.2 - 25.0, 28.4 - 27.1, 35.0 - 30.3}, "paired"),
			wantT: 2.8055245038914687, wantP: 0.10703548731484717, wantDF: 2,
			tol: 1e-10, wantKind: "paired",
		},
		{
			// scipy 1.10.1: stats.ttest_1samp([2.1, 2.9, 2.4, 3.3, 2.6], 2.0),
			// shifted by 2 so the test is of the mean against 0.
			desc:  "one-sample",
			got:   oneSample([]float64{0.1, 0.9, 0.4, 1.3, 0.6}, "one-sample"),
			wantT: 3.19771044853596, wantP: 0.032972713346558345, wantDF: 4,
			tol: 1e-10, wantKind: "one-sample",
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			if got := tc.got.Effect / tc.got.SE; !scalar.EqualWithinAbsOrRel(got, tc.wantT, tc.tol, tc.tol) {
				t.Errorf("t = %v, want %v", got, tc.wantT)
			}
			if !scalar.EqualWithinAbsOrRel(tc.got.DF, tc.wantDF, tc.tol, tc.tol) {
				t.Errorf("df = %v, want %v", tc.got.DF, tc.wantDF)
			}
			if got := twoSided(tc.got); !scalar.EqualWithinAbsOrRel(got, tc.wantP, 1e-8, 1e-8) {
				t.Errorf("two-sided p = %v, want %v", got, tc.wantP)
			}
			if tc.got.Kind != tc.wantKind {
				t.Errorf("kind = %q, want %q", tc.got.Kind, tc.wantKind)
			}
		})
	}
}

func TestTTestExact(t *testing.T) {
	t.Parallel()
	// Equal samples: no evidence either way.
	eq := welch([]float64{1, 1, 1}, []float64{1, 1, 1})
	if p := twoSided(eq); p != 1 {
		t.Errorf("identical constant samples: p = %v, want 1", p)
	}
	// Constant samples that differ: the difference is known exactly.
	d := welch([]float64{2, 2, 2}, []float64{1, 1, 1})
	if d.PAbove(0) != 0 || d.PBelow(0) != 1 {
		t.Errorf("constant samples 2 vs 1: PAbove(0) = %v, PBelow(0) = %v, want 0, 1", d.PAbove(0), d.PBelow(0))
	}
	if d.DF != 4 {
		t.Errorf("constant samples: df = %v, want 4", d.DF)
	}
}

func TestHolm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		p    []float64
		want []float64
	}{
		{
			// By hand from Holm (1979): sorted p times m−i+1 is 0.05,
			// 0.08, 0.09, 0.08, 0.05; the running maximum gives 0.05,
			// 0.08, 0.09, 0.09, 0.09 (R: p.adjust(p, "holm") agrees).
			desc: "sorted",
			p:    []float64{0.01, 0.02, 0.03, 0.04, 0.05},
			want: []float64{0.05, 0.08, 0.09, 0.09, 0.09},
		},
		{
			// The same values shuffled keep their adjusted values.
			desc: "shuffled",
			p:    []float64{0.04, 0.01, 0.05, 0.03, 0.02},
			want: []float64{0.09, 0.05, 0.09, 0.09, 0.08},
		},
		{
			// Capped at 1: 3·0.5 = 1.5 → 1; 2·0.6 = 1.2 → 1; 0.7 → max(1, 0.7) = 1.
			desc: "capped",
			p:    []float64{0.6, 0.5, 0.7},
			want: []float64{1, 1, 1},
		},
		{
			// By hand, m = 6: 6·0.010 = 0.060, 5·0.013 = 0.065, 4·0.014 =
			// 0.056 → 0.065, 3·0.190 = 0.570, 2·0.350 = 0.700, 0.500 →
			// 0.700.
			desc: "six",
			p:    []float64{0.010, 0.013, 0.014, 0.190, 0.350, 0.500},
			want: []float64{0.060, 0.065, 0.065, 0.570, 0.700, 0.700},
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			got := holm(tc.p)
			for i := range got {
				if !scalar.EqualWithinAbs(got[i], tc.want[i], 1e-12) {
					t.Errorf("holm(%v) = %v, want %v", tc.p, got, tc.want)
					break
				}
			}
		})
	}
}

func TestNctCDF(t *testing.T) {
	t.Parallel()
	// scipy 1.10.1: stats.nct.cdf(x, df, nc).
	for _, tc := range []struct {
		x, df, nc, want float64
	}{
		{2.0, 4, 1.5, 0.6189289251396548},
		{1.0, 1, 2.0, 0.15111344691562298},
		{3.182, 3, 4.0, 0.24492314761138353},
		{-0.5, 2.7, 1.0, 0.07663848169986398},
		{2.5, 10.3, 0.0, 0.9845892264051361},
		{1.96, 30, 3.0, 0.1528621770353577},
	} {
		if got := nctCDF(tc.x, tc.df, tc.nc); !scalar.EqualWithinAbs(got, tc.want, 1e-7) {
			t.Errorf("nctCDF(%v, %v, %v) = %v, want %v", tc.x, tc.df, tc.nc, got, tc.want)
		}
	}
}

func TestPower(t *testing.T) {
	t.Parallel()
	// The power of the two-sided test at α = 0.05 with df = 4 and an
	// effect of 1.5 standard errors: 1 − nct.cdf(t.ppf(0.975, 4), 4, 1.5)
	// (scipy 1.10.1: t.ppf(0.975, 4) = 2.7764451051977987 and
	// nct.cdf(2.7764451051977987, 4, 1.5) = 0.7873787666147263).
	tt := TTest{Effect: 0, SE: 2, DF: 4}
	want := 1 - 0.7873787666147263
	if got := tt.power(3, 0.05); !scalar.EqualWithinAbs(got, want, 1e-6) {
		t.Errorf("power = %v, want %v", got, want)
	}
	if got := (TTest{SE: 0, DF: 4}).power(3, 0.05); !math.IsNaN(got) {
		t.Errorf("power with SE 0 = %v, want NaN", got)
	}
}

// TestBootstrapCoverage checks the percentile interval's coverage on
// synthetic normal data: 2000 samples of n = 20 from N(1, 2²) (one-sample)
// and of 20 and 15 from N(1, 1) and N(0, 3²) (two samples). Theory puts the
// coverage of a nominal 95% percentile interval of a mean at n = 20 a little
// under 95% (about 93–94%: it behaves like a z interval with the n rather
// than n−1 variance). The test accepts [0.91, 0.97]: with 2000 draws the
// standard error of a coverage near 0.935 is 0.0055, so the band is more
// than 4 standard errors wide on each side (false-reject rate < 1e-4).
func TestBootstrapCoverage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("bootstrap coverage takes a second")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	norm := func(n int, mu, sigma float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = mu + sigma*rng.NormFloat64()
		}
		return x
	}
	const trials = 2000
	for _, tc := range []struct {
		desc  string
		draw  func() (a, b []float64)
		truth float64
	}{
		{"one-sample", func() ([]float64, []float64) { return norm(20, 1, 2), nil }, 1},
		{"two-sample", func() ([]float64, []float64) { return norm(20, 1, 1), norm(15, 0, 3) }, 1},
	} {
		covered := 0
		for range trials {
			a, b := tc.draw()
			lo, hi := bootstrapCI(rng, a, b, 0.05, 1000)
			if lo <= tc.truth && tc.truth <= hi {
				covered++
			}
		}
		if c := float64(covered) / trials; c < 0.91 || c > 0.97 {
			t.Errorf("%s: coverage %v of the 95%% percentile interval, want in [0.91, 0.97]", tc.desc, c)
		}
	}
}

func TestQuantileSorted(t *testing.T) {
	t.Parallel()
	// R: quantile(c(1, 2, 4, 8), c(0, 0.25, 0.5, 0.9, 1), type = 7)
	// = 1, 1.75, 3, 6.8, 8.
	x := []float64{1, 2, 4, 8}
	for i, p := range []float64{0, 0.25, 0.5, 0.9, 1} {
		want := []float64{1, 1.75, 3, 6.8, 8}[i]
		if got := quantileSorted(x, p); !scalar.EqualWithinAbs(got, want, 1e-12) {
			t.Errorf("quantile(%v) = %v, want %v", p, got, want)
		}
	}
}
