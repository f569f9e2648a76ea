// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// metricRuns returns a run table of one metric: one row per value of
// vals[method], seeds from seeds[method] (1, 2, … by default).
func metricRuns(t *testing.T, metric string, vals map[string][]float64, seeds map[string][]int) *Runs {
	t.Helper()
	var rows []Row
	for m, vs := range vals {
		for i, x := range vs {
			s := i + 1
			if ss, ok := seeds[m]; ok {
				s = ss[i]
			}
			rows = append(rows, Row{"method": m, "seed": s, "status": "ok", metric: x})
		}
	}
	r, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func verifyOne(t *testing.T, runs *Runs, c Claim) Check {
	t.Helper()
	v, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Checks) != 1 {
		t.Fatalf("got %d checks, want 1", len(v.Checks))
	}
	return v.Checks[0]
}

var (
	sideX = map[string]string{"method": "x"}
	sideY = map[string]string{"method": "y"}
)

// TestVerifyContradicted: an effect near 0 over three seeds is neither
// PASS nor FAIL, but it rules out the paper's 30-point effect.
func TestVerifyContradicted(t *testing.T) {
	t.Parallel()
	runs := metricRuns(t, "acc", map[string][]float64{"x": {30, 31, 29}, "y": {29.5, 30, 30.5}}, nil)
	c := Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater", Paper: []PaperValue{{A: 84, B: 54}}}
	ch := verifyOne(t, runs, c)
	// Paired differences 0.5, 1, −1.5: mean 0, SE √(1.75/3). The p of
	// "effect ≥ 30" is the Student t CDF with 2 df at t = −30/SE, in
	// closed form ½ + t/(2√(2 + t²)) (the t distribution with 2 df).
	tt := -30 / math.Sqrt(1.75/3)
	want := 0.5 + tt/(2*math.Sqrt(2+tt*tt))
	if ch.Verdict != Contradicted || !scalar.EqualWithinAbsOrRel(ch.PContra, want, 1e-9, 1e-6) {
		t.Errorf("got %s with p_contradicted %v, want %s with %v", ch.Verdict, ch.PContra, Contradicted, want)
	}
	// A paper effect inside our interval is not ruled out.
	c.Paper = []PaperValue{{A: 50, B: 49.5}}
	if ch := verifyOne(t, runs, c); ch.Verdict != Inconclusive {
		t.Errorf("paper effect 0.5: got %s, want %s", ch.Verdict, Inconclusive)
	}
}

// TestVerifyWrongSignPaper: a paper whose numbers go against its claim
// gives no power and nothing to rule out.
func TestVerifyWrongSignPaper(t *testing.T) {
	t.Parallel()
	runs := metricRuns(t, "acc", map[string][]float64{"x": {30, 31, 29}, "y": {29.5, 30, 30.5}}, nil)
	ch := verifyOne(t, runs, Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater", Paper: []PaperValue{{A: 50, B: 60}}})
	if ch.Verdict != Inconclusive || !math.IsNaN(ch.Power) || !math.IsNaN(ch.PContra) || !strings.Contains(ch.Note, "do not show the claimed direction") {
		t.Errorf("got %s, power %v, p_contradicted %v, note %q; want INCONCLUSIVE, no power, no contradiction, a note", ch.Verdict, ch.Power, ch.PContra, ch.Note)
	}
}

// TestVerifyZeroVariance: a noisy metric that does not vary over three
// seeds gets the exact sign or permutation test, never p = 0.
func TestVerifyZeroVariance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc  string
		seeds map[string][]int
		want  float64 // two-sided p
	}{
		// Paired, 3 equal differences: sign test, 2·2⁻³.
		{"paired", nil, 0.25},
		// Disjoint seeds: permutation test of complete separation,
		// 2/C(6, 3) = 2/20.
		{"welch", map[string][]int{"x": {1, 2, 3}, "y": {4, 5, 6}}, 0.1},
	} {
		runs := metricRuns(t, "acc", map[string][]float64{"x": {50, 50, 50}, "y": {40, 40, 40}}, tc.seeds)
		ch := verifyOne(t, runs, Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater"})
		if ch.Verdict != Inconclusive || !scalar.EqualWithinAbsOrRel(ch.P, tc.want, 1e-12, 1e-12) || ch.Note == "" {
			t.Errorf("%s: got %s with p %v (note %q), want INCONCLUSIVE with p %v", tc.desc, ch.Verdict, ch.P, ch.Note, tc.want)
		}
	}
	// Six seeds are enough for the sign test at 0.05: 2·2⁻⁶ (five give 2·2⁻⁵ = 0.0625).
	runs := metricRuns(t, "acc", map[string][]float64{"x": {50, 50, 50, 50, 50, 50}, "y": {40, 40, 40, 40, 40, 40}}, nil)
	if ch := verifyOne(t, runs, Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater"}); ch.Verdict != Pass || ch.P != 2.0/64 {
		t.Errorf("six seeds: got %s with p %v, want PASS with p %v", ch.Verdict, ch.P, 2.0/64)
	}
}

// TestVerifyTies: differences that are all exactly 0 are ties, which
// the sign test drops (W. J. Conover, "Practical Nonparametric
// Statistics", 3rd ed., §3.4): the direction is undecidable at any
// number of seeds and the note says so, while the paper's effect, from
// which every difference is away, is ruled out by the sign test once
// 2⁻ⁿ ≤ α (n ≥ 5 at α = 0.05; one test, so Holm changes nothing).
func TestVerifyTies(t *testing.T) {
	t.Parallel()
	trr := []float64{0, 0, 1.0 / 18, 0, 1.0 / 18, 0}
	for _, tc := range []struct {
		n      int
		want   string
		contra float64 // the sign test's p of "the effect is at most −0.30": 2⁻ⁿ
	}{
		{3, Inconclusive, 1.0 / 8},
		{6, Contradicted, 1.0 / 64},
	} {
		runs := metricRuns(t, "gia_upload_trr", map[string][]float64{"x": trr[:tc.n], "y": trr[:tc.n]}, nil)
		c := Claim{Name: "c", Metric: "gia_upload_trr", A: sideX, B: sideY, Expect: "less", Paper: []PaperValue{{A: 0.61, B: 0.91}}}
		ch := verifyOne(t, runs, c)
		if ch.Verdict != tc.want || ch.P != 1 || ch.PContra != tc.contra || !strings.HasPrefix(ch.Note, "undecidable: all") {
			t.Errorf("n=%d: got %s, p %v, p_contradicted %v, note %q; want %s, p 1, p_contradicted %v, an undecidable note",
				tc.n, ch.Verdict, ch.P, ch.PContra, ch.Note, tc.want, tc.contra)
		}
	}
	// Two constant samples, equal, on disjoint seeds: the permutation
	// test's ties.
	runs := metricRuns(t, "acc", map[string][]float64{"x": {5, 5, 5}, "y": {5, 5, 5}}, map[string][]int{"x": {1, 2, 3}, "y": {4, 5, 6}})
	if ch := verifyOne(t, runs, Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater"}); ch.Verdict != Inconclusive || ch.P != 1 ||
		!strings.Contains(ch.Note, "undecidable") || !strings.Contains(ch.Note, "permutation") {
		t.Errorf("permutation ties: got %s, p %v, note %q; want INCONCLUSIVE, p 1, an undecidable note", ch.Verdict, ch.P, ch.Note)
	}
	// No ties, but three seeds: the note names the six seeds needed
	// (2·2⁻⁶ ≤ 0.05 < 2·2⁻⁵).
	runs = metricRuns(t, "acc", map[string][]float64{"x": {50, 50, 50}, "y": {40, 40, 40}}, nil)
	if ch := verifyOne(t, runs, Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater"}); strings.Contains(ch.Note, "undecidable") ||
		!strings.Contains(ch.Note, "6 such seeds are needed") {
		t.Errorf("no ties: note %q, want the seeds needed and no undecidable", ch.Note)
	}
}

// TestVerifyExact: a deterministic metric is compared value by value.
func TestVerifyExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		x, y []float64
		want string
	}{
		{"every seed holds", []float64{3.1, 3.2, 3.0}, []float64{2.9, 3.1, 2.8}, Pass},
		{"no seed holds", []float64{2.1, 2.2, 2.0}, []float64{2.9, 3.1, 2.8}, Fail},
		{"seeds disagree", []float64{3.1, 3.0, 3.0}, []float64{2.9, 3.1, 2.8}, Inconclusive},
		{"constant", []float64{3, 3, 3}, []float64{2, 2, 2}, Pass},
	} {
		runs := metricRuns(t, "epsilon_tight", map[string][]float64{"x": tc.x, "y": tc.y}, nil)
		v, err := Verify(runs, []Claim{{Name: "c", Metric: "epsilon_tight", A: sideX, B: sideY, Expect: "greater"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ch := v.Checks[0]
		if ch.Verdict != tc.want || ch.Test.Kind != "exact" || !math.IsNaN(ch.P) || v.Tests != 0 {
			t.Errorf("%s: got %s (%s, p %v, %d tests), want %s, exact, no p, no test in the Holm family", tc.desc, ch.Verdict, ch.Test.Kind, ch.P, v.Tests, tc.want)
		}
	}
}

// TestVerifyMinSeedsDistinct: three runs of one seed are one seed.
func TestVerifyMinSeedsDistinct(t *testing.T) {
	t.Parallel()
	runs := metricRuns(t, "acc", map[string][]float64{"x": {50, 51, 52}, "y": {40, 41, 42}}, map[string][]int{"x": {1, 1, 1}})
	ch := verifyOne(t, runs, Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater"})
	if ch.Verdict != NotRun || !strings.Contains(ch.Reason, "1 distinct seeds") {
		t.Errorf("got %s (%q), want NOT RUN for 1 distinct seed", ch.Verdict, ch.Reason)
	}
}

// TestVerifyExampleInterval: with predictions, the interval of an
// accuracy effect resamples seeds and then examples, so that two seeds
// that happen to agree still get an interval as wide as the examples
// allow.
func TestVerifyExampleInterval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var rows []Row
	for s := 1; s <= 3; s++ {
		x := make([]int, 100)
		y := make([]int, 100)
		for i := range x {
			x[i] = (i + s) % 2 // 50% right
			if i < 40 {
				y[i] = 1 // 40% right
			}
		}
		id := func(m string) string { return m + string(rune('0'+s)) }
		rows = append(rows,
			Row{"method": "x", "seed": s, "status": "ok", "acc": writePredictions(t, dir, id("x"), x), "run_id": id("x")},
			Row{"method": "y", "seed": s, "status": "ok", "acc": writePredictions(t, dir, id("y"), y), "run_id": id("y")})
	}
	runs, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	c := Claim{Name: "c", Metric: "acc", A: sideX, B: sideY, Expect: "greater"}
	plain, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 2000, RunDirs: dir})
	if err != nil {
		t.Fatal(err)
	}
	p, e := plain.Checks[0], ex.Checks[0]
	// Every seed's difference is exactly 10 points: over seeds alone the
	// interval is [10, 10]. Over examples, the SE of a difference of two
	// proportions near ½ on 3×100 pairs is about 4 points: the 95%
	// interval must be several points wide and hold 10.
	if p.Lo != 10 || p.Hi != 10 || !(e.Lo < 5 && e.Hi > 14 && e.Lo < 10 && 10 < e.Hi) || e.Note == "" {
		t.Errorf("interval over seeds [%v, %v], over examples [%v, %v] (note %q); want [10, 10] and a wide one around 10", p.Lo, p.Hi, e.Lo, e.Hi, e.Note)
	}
}
