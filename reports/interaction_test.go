// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// A cell of an interaction test table: method × task, values by seed.
type cell struct {
	method, task string
	seeds        []int
	vals         []float64
}

// cellRuns returns a run table of acc over cells.
func cellRuns(t *testing.T, metric string, cells ...cell) *Runs {
	t.Helper()
	var rows []Row
	for _, c := range cells {
		for i, x := range c.vals {
			rows = append(rows, Row{"method": c.method, "task": c.task, "seed": c.seeds[i], "status": "ok", metric: x})
		}
	}
	r, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// interactionClaim is "the gain of x over y is larger on t1 than on t2".
func interactionClaim() Claim {
	return Claim{Name: "c", Metric: "acc", A: sideX, B: sideY,
		X1: map[string]string{"task": "t1"}, X2: map[string]string{"task": "t2"}, Expect: "greater"}
}

// tCDF2 and tCDF4 are the closed forms of Student's t CDF with 2 and 4
// degrees of freedom (N. L. Johnson, S. Kotz, N. Balakrishnan,
// "Continuous Univariate Distributions", vol. 2, 2nd ed., Wiley 1995,
// ch. 28, eq. 28.4): F₂(t) = ½ + t / (2√(2 + t²)) and
// F₄(t) = ½ + (3/8)·u·(1 − u²/12) with u = t / √(1 + t²/4).
func tCDF2(t float64) float64 { return 0.5 + t/(2*math.Sqrt(2+t*t)) }
func tCDF4(t float64) float64 {
	u := t / math.Sqrt(1+t*t/4)
	return 0.5 + 3.0/8*u*(1-u*u/12)
}

// TestInteractionStatistics checks the three tests of an interaction
// against hand-computed values: the effect, its standard error, degrees
// of freedom and two-sided p-value (from the closed-form t CDFs above).
func TestInteractionStatistics(t *testing.T) {
	t.Parallel()
	s12, s34 := []int{1, 2}, []int{3, 4}
	for _, tc := range []struct {
		desc        string
		cells       []cell
		test        string
		kind        string
		effect, se  float64
		df, p, stat float64
	}{
		{
			// Gains at t1 (seeds 1–3): 5, 6, 8; at t2: 4, 4, 5; per-seed
			// interaction d = 1, 2, 3: mean 2, sd 1, SE 1/√3, t = 2√3 on 2
			// degrees of freedom.
			desc: "paired per seed",
			cells: []cell{
				{"x", "t1", []int{1, 2, 3}, []float64{10, 20, 30}}, {"y", "t1", []int{1, 2, 3}, []float64{5, 14, 22}},
				{"x", "t2", []int{1, 2, 3}, []float64{7, 8, 9}}, {"y", "t2", []int{1, 2, 3}, []float64{3, 4, 4}},
			},
			kind: "paired", effect: 2, se: 1 / math.Sqrt(3), df: 2, stat: 2 * math.Sqrt(3),
		},
		{
			// Each task pairs its own sides (seeds 1, 2 on t1; 3, 4 on t2):
			// gains 3, 5 against 0, 2: effect 3, variances 2 and 2, SE √2,
			// Welch–Satterthwaite df (1 + 1)² / (1/1 + 1/1) = 2.
			desc: "paired within x",
			cells: []cell{
				{"x", "t1", s12, []float64{10, 12}}, {"y", "t1", s12, []float64{7, 7}},
				{"x", "t2", s34, []float64{5, 8}}, {"y", "t2", s34, []float64{5, 6}},
			},
			kind: "welch", effect: 3, se: math.Sqrt2, df: 2, stat: 3 / math.Sqrt2,
		},
		{
			// Four independent cells of variance 2 (n = 2): effect
			// 11 − 7 − 5 + 4 = 3, SE² = 4·(2/2) = 4, df = 4² / (4·1²/1) = 4.
			desc: "four independent cells",
			cells: []cell{
				{"x", "t1", []int{1, 2}, []float64{10, 12}}, {"y", "t1", []int{3, 4}, []float64{6, 8}},
				{"x", "t2", []int{5, 6}, []float64{4, 6}}, {"y", "t2", []int{7, 8}, []float64{3, 5}},
			},
			kind: "contrast", effect: 3, se: 2, df: 4, stat: 1.5,
		},
		{
			// The same seeds, a Welch test forced: the four-cell contrast.
			desc: "forced welch",
			cells: []cell{
				{"x", "t1", s12, []float64{10, 12}}, {"y", "t1", s12, []float64{6, 8}},
				{"x", "t2", s12, []float64{4, 6}}, {"y", "t2", s12, []float64{3, 5}},
			},
			test: "welch", kind: "contrast", effect: 3, se: 2, df: 4, stat: 1.5,
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			c := interactionClaim()
			c.Test = tc.test
			ch := verifyOne(t, cellRuns(t, "acc", tc.cells...), c)
			if ch.Test.Kind != tc.kind {
				t.Fatalf("test %q, want %q (%+v)", ch.Test.Kind, tc.kind, ch)
			}
			if !scalar.EqualWithinAbs(ch.Test.Effect, tc.effect, 1e-12) || !scalar.EqualWithinAbs(ch.Test.SE, tc.se, 1e-12) ||
				!scalar.EqualWithinAbs(ch.Test.DF, tc.df, 1e-12) {
				t.Errorf("effect %v SE %v df %v, want %v, %v, %v", ch.Test.Effect, ch.Test.SE, ch.Test.DF, tc.effect, tc.se, tc.df)
			}
			cdf := tCDF2
			if tc.df == 4 {
				cdf = tCDF4
			}
			if want := 2 * (1 - cdf(tc.stat)); !scalar.EqualWithinAbs(ch.P, want, 1e-9) {
				t.Errorf("p = %v, want %v (closed-form t CDF)", ch.P, want)
			}
			if ch.Verdict != Inconclusive || !(ch.Lo <= ch.Test.Effect && ch.Test.Effect <= ch.Hi) {
				t.Errorf("verdict %s, interval [%v, %v]; want INCONCLUSIVE around %v", ch.Verdict, ch.Lo, ch.Hi, ch.Test.Effect)
			}
			if ch.X1 != "task=t1" || ch.X2 != "task=t2" || ch.Expect != "(a − b | task=t1) > (a − b | task=t2)" {
				t.Errorf("x1 %q x2 %q expect %q", ch.X1, ch.X2, ch.Expect)
			}
		})
	}
	// The p-values of the closed forms themselves: 1 − 2√3/√14 and
	// 1 − 3/√13 (ν = 2), and 2·(1 − 0.896) = 0.208 (ν = 4, t = 1.5).
	for _, x := range []struct{ got, want float64 }{
		{2 * (1 - tCDF2(2*math.Sqrt(3))), 1 - 2*math.Sqrt(3)/math.Sqrt(14)},
		{2 * (1 - tCDF2(3/math.Sqrt2)), 1 - 3/math.Sqrt(13)},
		{2 * (1 - tCDF4(1.5)), 0.208},
	} {
		if !scalar.EqualWithinAbs(x.got, x.want, 1e-12) {
			t.Errorf("closed form %v, want %v", x.got, x.want)
		}
	}
}

// TestContrastIsWelch: a contrast of two samples with coefficients 1 and
// −1 is Welch's test (checked against scipy in TestVerifyStatistics).
func TestContrastIsWelch(t *testing.T) {
	t.Parallel()
	a, b := []float64{25.1, 27.3, 23.8, 26.0}, []float64{22.4, 21.9, 24.5}
	got, want := contrast([][]float64{a, b}, []float64{1, -1}), welch(a, b)
	if !scalar.EqualWithinAbs(got.Effect, want.Effect, 1e-12) || !scalar.EqualWithinAbs(got.SE, want.SE, 1e-12) ||
		!scalar.EqualWithinAbs(got.DF, want.DF, 1e-12) {
		t.Errorf("contrast %+v, welch %+v", got, want)
	}
}

// TestInteractionVerdicts checks the verdicts of interaction claims: a
// clear interaction passes, one of the wrong sign fails, one near 0 rules
// out the paper's, a paper effect of the wrong sign gets no power, a cell
// with one seed is not run, and a deterministic metric is compared exactly.
func TestInteractionVerdicts(t *testing.T) {
	t.Parallel()
	seeds := []int{1, 2, 3, 4, 5}
	// Gains at t2 are 0 on every seed; at t1 they are d.
	table := func(d []float64) *Runs {
		x1 := make([]float64, len(d))
		for i := range d {
			x1[i] = 50 + d[i]
		}
		return cellRuns(t, "acc",
			cell{"x", "t1", seeds, x1}, cell{"y", "t1", seeds, []float64{50, 50, 50, 50, 50}},
			cell{"x", "t2", seeds, []float64{40, 41, 42, 43, 44}}, cell{"y", "t2", seeds, []float64{40, 41, 42, 43, 44}})
	}
	clear := []float64{5.1, 4.9, 5.0, 5.2, 4.8}
	small := []float64{0.1, -0.1, 0.0, 0.05, -0.05}
	paper := func(g1, g2 float64) []PaperValue { return []PaperValue{{A: 50 + g1, B: 50, A2: 40 + g2, B2: 40}} }
	for _, tc := range []struct {
		desc    string
		d       []float64
		expect  string
		paper   []PaperValue
		verdict string
	}{
		{"pass", clear, "greater", nil, Pass},
		{"fail", clear, "less", nil, Fail},
		{"contradicted", small, "greater", paper(5, 0), Contradicted},
		{"inconclusive", small, "greater", paper(0.05, 0), Inconclusive},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			c := interactionClaim()
			c.Expect, c.Paper = tc.expect, tc.paper
			ch := verifyOne(t, table(tc.d), c)
			if ch.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%+v)", ch.Verdict, tc.verdict, ch)
			}
			if ch.Test.Kind != "paired" || ch.NA != 5 || ch.NB2 != 5 {
				t.Errorf("test %s n %d/%d, want paired over 5 seeds", ch.Test.Kind, ch.NA, ch.NB2)
			}
			if tc.paper != nil && math.IsNaN(ch.PContra) {
				t.Errorf("no test against the paper's effect")
			}
		})
	}

	// A stated size: the interaction is 5 ± 1 (TOST), and not 8 ± 1.
	for _, tc := range []struct {
		value   float64
		verdict string
	}{{5, Pass}, {8, Fail}} {
		c := interactionClaim()
		c.Expect, c.Value, c.Tolerance = "value", tc.value, 1
		ch := verifyOne(t, table(clear), c)
		if ch.Verdict != tc.verdict || ch.Expect != "(a − b | task=t1) − (a − b | task=t2) = "+formatKeyFloat(tc.value)+" ± 1" {
			t.Errorf("value %v ± 1: verdict %s expect %q, want %s", tc.value, ch.Verdict, ch.Expect, tc.verdict)
		}
	}

	// The paper's interaction has the wrong sign: no power, no CONTRADICTED.
	c := interactionClaim()
	c.Paper = paper(1, 2)
	ch := verifyOne(t, table(small), c)
	if !math.IsNaN(ch.Power) || !math.IsNaN(ch.PContra) || !strings.Contains(ch.Note, "do not show the claimed direction") {
		t.Errorf("wrong-sign paper: power %v p contra %v note %q", ch.Power, ch.PContra, ch.Note)
	}
	// Power at the paper's effect (5 − 0) is the t-test's at that effect.
	c.Paper = paper(5, 0)
	c.Expect = "greater"
	ch = verifyOne(t, table([]float64{4, 6, 3, 7, 5}), c)
	if want := ch.Test.power(5, 0.05); ch.Power != want || !(want > 0 && want <= 1) {
		t.Errorf("power %v, want %v in (0, 1]", ch.Power, want)
	}

	// A cell with one seed: NOT RUN, naming the cell.
	one := cellRuns(t, "acc",
		cell{"x", "t1", seeds[:3], []float64{1, 2, 3}}, cell{"y", "t1", seeds[:3], []float64{1, 2, 3}},
		cell{"x", "t2", seeds[:1], []float64{1}}, cell{"y", "t2", seeds[:3], []float64{1, 2, 3}})
	if ch := verifyOne(t, one, interactionClaim()); ch.Verdict != NotRun || ch.Reason != "a at x2 has 1 distinct seeds with acc, want ≥ 2" {
		t.Errorf("one seed: verdict %s reason %q", ch.Verdict, ch.Reason)
	}

	// A deterministic metric: per-seed interactions 1, 1 hold the claim.
	det := cellRuns(t, "trainable_params",
		cell{"x", "t1", seeds[:2], []float64{30, 40}}, cell{"y", "t1", seeds[:2], []float64{10, 20}},
		cell{"x", "t2", seeds[:2], []float64{29, 39}}, cell{"y", "t2", seeds[:2], []float64{10, 20}})
	c = interactionClaim()
	c.Metric = "trainable_params"
	if ch := verifyOne(t, det, c); ch.Verdict != Pass || ch.Test.Kind != "exact" || ch.Test.Effect != 1 || !math.IsNaN(ch.P) {
		t.Errorf("exact: verdict %s test %s effect %v p %v, want PASS exact 1 NaN", ch.Verdict, ch.Test.Kind, ch.Test.Effect, ch.P)
	}
}

// TestInteractionHolm: an interaction test is one of the Holm family.
func TestInteractionHolm(t *testing.T) {
	t.Parallel()
	seeds := []int{1, 2, 3}
	runs := cellRuns(t, "acc",
		cell{"x", "t1", seeds, []float64{10, 20, 30}}, cell{"y", "t1", seeds, []float64{5, 14, 22}},
		cell{"x", "t2", seeds, []float64{7, 8, 9}}, cell{"y", "t2", seeds, []float64{3, 4, 4}})
	plain := Claim{Name: "plain", Metric: "acc", A: sideX, B: sideY, Each: []string{"task"}, Expect: "greater"}
	v, err := Verify(runs, []Claim{interactionClaim(), plain}, &VerifyOptions{Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if v.Tests != 3 {
		t.Fatalf("%d tests, want 3", v.Tests)
	}
	adj := holm([]float64{v.Checks[0].P, v.Checks[1].P, v.Checks[2].P})
	for i, c := range v.Checks {
		if c.PHolm != adj[i] {
			t.Errorf("%s %s: p Holm %v, want %v", c.Claim, c.At, c.PHolm, adj[i])
		}
	}
	var buf bytes.Buffer
	if err := v.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gain 6.33 / 4.33", "interaction: ours and paper are the gains"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	b, _ := json.Marshal(v.Checks[0])
	for _, want := range []string{`"x1":"task=t1"`, `"mean_a2":8`, `"n_b2":3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	if b, _ := json.Marshal(v.Checks[1]); strings.Contains(string(b), "mean_a2") {
		t.Errorf("JSON of a plain claim has interaction fields: %s", b)
	}
}

// TestInteractionMalformed: x1 without x2, or x1's column in a, is an
// error.
func TestInteractionMalformed(t *testing.T) {
	t.Parallel()
	runs := cellRuns(t, "acc", cell{"x", "t1", []int{1}, []float64{1}})
	for _, c := range []Claim{
		{Name: "c", Metric: "acc", A: sideX, B: sideY, X1: map[string]string{"task": "t1"}, Expect: "greater"},
		{Name: "c", Metric: "acc", A: sideX, B: sideY, X1: sideX, X2: sideY, Expect: "greater"},
		{Name: "c", Metric: "acc", A: sideX, X1: map[string]string{"task": "t1"}, X2: map[string]string{"task": "t2"}, Expect: "value"},
	} {
		if _, err := Verify(runs, []Claim{c}, nil); err == nil {
			t.Errorf("claim %+v: no error", c)
		}
	}
}

// TestInteractionExampleInterval: with predictions, the interval of an
// interaction's accuracy effect resamples each cell's seeds and then its
// examples, as TestVerifyExampleInterval's does for two sides.
func TestInteractionExampleInterval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var rows []Row
	// Accuracy by cell (of 100 examples): x and y on t1 50% and 40%, on
	// t2 45% and 45%: every seed's interaction is exactly 10 points.
	right := map[string]int{"x t1": 50, "y t1": 40, "x t2": 45, "y t2": 45}
	for s := 1; s <= 3; s++ {
		for _, m := range []string{"x", "y"} {
			for _, task := range []string{"t1", "t2"} {
				hit := make([]int, 100)
				for i := range right[m+" "+task] {
					hit[(i+7*s)%100] = 1
				}
				id := m + task + string(rune('0'+s))
				rows = append(rows, Row{"method": m, "task": task, "seed": s, "status": "ok", "run_id": id,
					"acc": writePredictions(t, dir, id, hit)})
			}
		}
	}
	runs, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	c := interactionClaim()
	plain, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 2000})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 2000, RunDirs: dir})
	if err != nil {
		t.Fatal(err)
	}
	p, e := plain.Checks[0], ex.Checks[0]
	// Over seeds alone the interval is [10, 10]. Over examples the SE of
	// a sum of four independent proportions near ½ on 3×100 examples each
	// is about √(4·0.25/300)·100 ≈ 5.8 points: the 95% interval is more
	// than ten points wide and holds 10.
	if p.Lo != 10 || p.Hi != 10 || !(e.Lo < 3 && e.Hi > 17 && e.Lo < 10 && 10 < e.Hi) || !strings.Contains(e.Note, "seeds and examples") {
		t.Errorf("interval over seeds [%v, %v], over examples [%v, %v] (note %q); want [10, 10] and a wide one around 10", p.Lo, p.Hi, e.Lo, e.Hi, e.Note)
	}
	if e.P != p.P || e.Test != p.Test {
		t.Errorf("the predictions changed the test: p %v and %v", p.P, e.P)
	}
}

// TestInteractionPaperAtX2Missing: an interaction whose paper values lack
// the gain at x2 (A2 or B2 NaN) has no paper interaction: its power comes
// from min_effect, as for a claim without paper values, and it is not
// said to go against the claim.
func TestInteractionPaperAtX2Missing(t *testing.T) {
	t.Parallel()
	seeds := []int{1, 2, 3, 4, 5}
	runs := cellRuns(t, "acc",
		cell{"x", "t1", seeds, []float64{45, 65, 50, 60, 55}}, cell{"y", "t1", seeds, []float64{50, 50, 50, 50, 50}},
		cell{"x", "t2", seeds, []float64{40, 41, 42, 43, 44}}, cell{"y", "t2", seeds, []float64{40, 41, 42, 43, 44}})
	c := interactionClaim()
	c.MinEffect = 5
	c.Paper = []PaperValue{{A: 55, B: 50, A2: math.NaN(), B2: math.NaN()}}
	ch := verifyOne(t, runs, c)
	if ch.Verdict != Inconclusive {
		t.Fatalf("verdict %s, want INCONCLUSIVE (%+v)", ch.Verdict, ch)
	}
	if want := ch.Test.power(5, 0.05); ch.Power != want || strings.Contains(ch.Note, "do not show the claimed direction") || !math.IsNaN(ch.PContra) {
		t.Errorf("power %v (want %v at min_effect 5), p contra %v (want NaN), note %q", ch.Power, want, ch.PContra, ch.Note)
	}
	if got := ch.PaperText(); got != "—" {
		t.Errorf("paper text %q, want —", got)
	}
}
