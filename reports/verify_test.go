// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/floats/scalar"
)

// claimRuns returns a run table of acc values: one row per (method, task,
// seed) of vals, seeds numbered from first[method] (1 by default).
func claimRuns(t *testing.T, vals map[string]map[string][]float64, first map[string]int, extra ...Row) *Runs {
	t.Helper()
	var rows []Row
	// Rows in sorted order: string keys are ordered by first appearance.
	for _, m := range slices.Sorted(maps.Keys(vals)) {
		byTask := vals[m]
		for _, task := range slices.Sorted(maps.Keys(byTask)) {
			for i, x := range byTask[task] {
				s := 1
				if f, ok := first[m]; ok {
					s = f
				}
				rows = append(rows, Row{"method": m, "task": task, "seed": s + i, "status": "ok", "acc": x, "epsilon_target": 1.0})
			}
		}
	}
	runs, err := NewRuns(append(rows, extra...))
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestVerifyVerdicts(t *testing.T) {
	t.Parallel()
	up := []float64{50.1, 51.3, 49.8, 50.6, 50.9, 49.7, 50.2, 51.0}
	down := []float64{40.3, 41.1, 40.0, 39.2, 40.8, 40.4, 39.9, 40.6}
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t1": up, "t2": {30, 31, 29}},
		"y": {"t1": down, "t2": {29.5, 30.0, 30.5}},
		"z": {"t1": {45}},
	}, nil)
	for _, tc := range []struct {
		desc  string
		claim Claim
		want  []string // verdicts, one per test
	}{
		{"pass", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t1"}, B: map[string]string{"method": "y", "task": "t1"}, Expect: "greater"}, []string{Pass}},
		{"fail", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t1"}, B: map[string]string{"method": "y", "task": "t1"}, Expect: "less"}, []string{Fail}},
		{"inconclusive", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t2"}, B: map[string]string{"method": "y", "task": "t2"}, Expect: "greater"}, []string{Inconclusive}},
		{"each", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x"}, B: map[string]string{"method": "y"}, Each: []string{"task"}, Expect: "greater"}, []string{Pass, Inconclusive}},
		{"not run: one seed", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "z"}, B: map[string]string{"method": "y", "task": "t1"}, Expect: "greater"}, []string{NotRun}},
		{"not run: min seeds", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t2"}, B: map[string]string{"method": "y", "task": "t2"}, Expect: "greater", MinSeeds: 4}, []string{NotRun}},
		{"not run: no column", Claim{Name: "c", Metric: "img", A: map[string]string{"method": "x"}, B: map[string]string{"method": "y"}, Expect: "greater"}, []string{NotRun}},
		{"not run: no runs", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "w"}, B: map[string]string{"method": "v"}, Expect: "greater"}, []string{NotRun}},
		{"value inside", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t1"}, Expect: "value", Value: 50, Tolerance: 2}, []string{Pass}},
		{"value outside", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t1"}, Expect: "value", Value: 60, Tolerance: 2}, []string{Fail}},
		{"value effect", Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "x", "task": "t1"}, B: map[string]string{"method": "y", "task": "t1"}, Expect: "value", Value: 10, Tolerance: 1.5}, []string{Pass}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			v, err := Verify(runs, []Claim{tc.claim}, &VerifyOptions{Resamples: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range v.Checks {
				got = append(got, c.Verdict)
				if c.Verdict == NotRun && c.Reason == "" {
					t.Errorf("NOT RUN without a reason: %+v", c)
				}
			}
			if !cmp.Equal(got, tc.want) {
				t.Errorf("verdicts %q, want %q (checks %+v)", got, tc.want, v.Checks)
			}
		})
	}
}

// TestVerifyStatistics checks the p-values Verify reports against scipy
// on the same data, and that the Holm adjustment is applied across claims.
func TestVerifyStatistics(t *testing.T) {
	t.Parallel()
	// Welch: a = [25.1, 27.3, 23.8, 26.0] (seeds 1–4) against b = [22.4,
	// 21.9, 24.5] (seeds 5–7), different seeds. Paired: [31.2, 28.4, 35.0]
	// against [25.0, 27.1, 30.3] on seeds 1–3. scipy 1.10.1:
	// ttest_ind(a, b, equal_var=False).pvalue = 0.06486293111564169,
	// ttest_rel(c, d).pvalue = 0.10703548731484717.
	runs := claimRuns(t, map[string]map[string][]float64{
		"a": {"t": {25.1, 27.3, 23.8, 26.0}},
		"b": {"t": {22.4, 21.9, 24.5}},
		"c": {"t": {31.2, 28.4, 35.0}},
		"d": {"t": {25.0, 27.1, 30.3}},
	}, map[string]int{"b": 5})
	claims := []Claim{
		{Name: "welch", Metric: "acc", A: map[string]string{"method": "a"}, B: map[string]string{"method": "b"}, Expect: "greater",
			Paper: []PaperValue{{A: 3, B: 1}}},
		{Name: "paired", Metric: "acc", A: map[string]string{"method": "c"}, B: map[string]string{"method": "d"}, Expect: "greater", MinEffect: 4},
		{Name: "forced-welch", Metric: "acc", A: map[string]string{"method": "c"}, B: map[string]string{"method": "d"}, Expect: "greater", Test: "welch"},
	}
	v, err := Verify(runs, claims, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Tests != 3 || len(v.Checks) != 3 {
		t.Fatalf("got %d tests in %d checks, want 3 and 3", v.Tests, len(v.Checks))
	}
	for i, want := range []struct {
		kind string
		p    float64
	}{{"welch", 0.06486293111564169}, {"paired", 0.10703548731484717}, {"welch", math.NaN()}} {
		c := v.Checks[i]
		if c.Test.Kind != want.kind {
			t.Errorf("%s: test %q, want %q", c.Claim, c.Test.Kind, want.kind)
		}
		if !math.IsNaN(want.p) && !scalar.EqualWithinAbs(c.P, want.p, 1e-9) {
			t.Errorf("%s: p = %v, want %v (scipy)", c.Claim, c.P, want.p)
		}
	}
	adj := holm([]float64{v.Checks[0].P, v.Checks[1].P, v.Checks[2].P})
	for i, c := range v.Checks {
		if c.PHolm != adj[i] {
			t.Errorf("%s: p Holm = %v, want %v", c.Claim, c.PHolm, adj[i])
		}
		if c.Verdict != Inconclusive {
			t.Errorf("%s: verdict %s, want INCONCLUSIVE", c.Claim, c.Verdict)
		}
	}
	// Power at the paper's effect (3 − 1 = 2) and at min_effect 4, at the
	// Holm level of the rank: the welch test has the smallest p (level
	// α/3), the paired test the middle one (α/2).
	if want := v.Checks[0].Test.power(2, 0.05/3); v.Checks[0].Power != want || !(want > 0 && want < 1) {
		t.Errorf("welch power = %v, want %v in (0, 1)", v.Checks[0].Power, want)
	}
	if want := v.Checks[1].Test.power(4, 0.05/2); v.Checks[1].Power != want {
		t.Errorf("paired power = %v, want %v", v.Checks[1].Power, want)
	}
	if !math.IsNaN(v.Checks[2].Power) {
		t.Errorf("power without a paper value or min_effect = %v, want NaN", v.Checks[2].Power)
	}
	// Reproducible: the bootstrap is seeded by the claim.
	v2, _ := Verify(runs, claims, nil)
	if v2.Checks[0].Lo != v.Checks[0].Lo || v2.Checks[0].Hi != v.Checks[0].Hi {
		t.Errorf("bootstrap interval not reproducible: [%v, %v] then [%v, %v]", v.Checks[0].Lo, v.Checks[0].Hi, v2.Checks[0].Lo, v2.Checks[0].Hi)
	}
	if !(v.Checks[1].Lo <= v.Checks[1].Test.Effect && v.Checks[1].Test.Effect <= v.Checks[1].Hi) {
		t.Errorf("paired effect %v outside its interval [%v, %v]", v.Checks[1].Test.Effect, v.Checks[1].Lo, v.Checks[1].Hi)
	}
}

// TestVerifyHolmDecides checks that a test significant on its own becomes
// INCONCLUSIVE when many claims share the family: p ≈ 0.04 passes alone
// and not among six (scipy 1.10.1: ttest_rel(a, b).pvalue =
// 0.03996752319346879 on the data below).
func TestVerifyHolmDecides(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{
		"a": {"t": {10.5, 11.9, 10.2, 12.1, 11.0}},
		"b": {"t": {10.0, 10.9, 9.9, 11.9, 9.6}},
	}, nil)
	c := Claim{Name: "c", Metric: "acc", A: map[string]string{"method": "a"}, B: map[string]string{"method": "b"}, Expect: "greater"}
	alone, err := Verify(runs, []Claim{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := alone.Checks[0].P
	if !scalar.EqualWithinAbs(p, 0.03996752319346879, 1e-9) || alone.Checks[0].Verdict != Pass {
		t.Fatalf("alone: p = %v verdict %s, want 0.03996752319346879 and PASS", p, alone.Checks[0].Verdict)
	}
	var six []Claim
	for range 6 {
		six = append(six, c)
	}
	many, _ := Verify(runs, six, nil)
	for _, ch := range many.Checks {
		if ch.Verdict != Inconclusive || !scalar.EqualWithinAbs(ch.PHolm, math.Min(1, 6*p), 1e-12) {
			t.Errorf("among six: verdict %s p Holm %v, want INCONCLUSIVE and %v", ch.Verdict, ch.PHolm, math.Min(1, 6*p))
		}
	}
}

func TestVerifyExcludesFailedRuns(t *testing.T) {
	t.Parallel()
	// Two failed runs of b with huge values would reverse the verdict.
	failed := []Row{
		{"method": "y", "task": "t", "seed": 9, "status": "failed", "acc": 1000.0, "epsilon_target": 1.0},
		{"method": "y", "task": "t", "seed": 10, "status": "failed", "acc": 1000.0, "epsilon_target": 1.0},
	}
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t": {50.1, 51.3, 49.8, 50.6}},
		"y": {"t": {40.3, 41.1, 40.0, 39.2}},
	}, nil, failed...)
	v, err := Verify(runs, []Claim{{Name: "c", Metric: "acc", A: map[string]string{"method": "x"}, B: map[string]string{"method": "y"}, Expect: "greater"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Checks[0]; c.NB != 4 || c.Verdict != Pass || c.Test.Kind != "paired" {
		t.Errorf("got n_b %d verdict %s test %s, want 4, PASS, paired", c.NB, c.Verdict, c.Test.Kind)
	}
}

func TestVerifyOutput(t *testing.T) {
	t.Parallel()
	runs := claimRuns(t, map[string]map[string][]float64{
		"x": {"t1": {50.1, 51.3, 49.8}},
		"y": {"t1": {40.3, 41.1, 40.0}},
	}, nil)
	claims := []Claim{
		{Name: "up", Metric: "acc", A: map[string]string{"method": "x"}, B: map[string]string{"method": "y"}, Each: []string{"epsilon_target"}, Expect: "greater", Required: true,
			Source: "paper Table 1", Paper: []PaperValue{{At: map[string]string{"epsilon_target": "1"}, A: 84.2, B: 81.54}}},
		{Name: "gone", Metric: "acc", A: map[string]string{"method": "w"}, B: map[string]string{"method": "y"}, Expect: "greater"},
	}
	v, err := Verify(runs, claims, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := v.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"up  ", "ε=1", "84.20 / 81.54 (+2.66)", "PASS (required)", "NOT RUN", "1 PASS, 0 FAIL, 0 CONTRADICTED, 0 INCONCLUSIVE, 1 NOT RUN.",
		"Holm correction over the 1 tests", "source: paper Table 1", "gone: not run: a has 0 distinct seeds with acc, want ≥ 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	var back struct {
		Checks []map[string]any `json:"checks"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Checks[1]["p"]; got != nil {
		t.Errorf("JSON p of a test not run = %v, want null", got)
	}
	if got := back.Checks[0]["paper_a"]; got != 84.2 {
		t.Errorf("JSON paper_a = %v, want 84.2", got)
	}
}

// TestVerifyNoValue checks that the selector value NoValue keeps exactly
// the runs without a value in its column (a String column's "", a Float
// column's NaN), in a claim's sides as in selectRuns: the plain DP-SGD
// runs have no variant, the tuned ones variant "tuned", and the means
// of the sides are those of the hand-listed rows.
func TestVerifyNoValue(t *testing.T) {
	t.Parallel()
	var rows []Row
	for seed, acc := range []float64{60, 61, 62} {
		rows = append(rows, Row{"method": "dpsgd", "variant": nil, "lr": 0.01, "seed": seed + 1, "status": "ok", "acc": acc})
	}
	for seed, acc := range []float64{70, 71, 72} {
		rows = append(rows, Row{"method": "dpsgd", "variant": "tuned", "lr": nil, "seed": seed + 1, "status": "ok", "acc": acc})
	}
	rows = append(rows, Row{"method": "dualpriv", "variant": "full", "lr": 0.01, "seed": 1, "status": "ok", "acc": 65.0})
	runs, err := NewRuns(rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		where map[string]string
		want  []int
	}{
		{map[string]string{"variant": NoValue}, []int{0, 1, 2}},
		{map[string]string{"method": "dpsgd", "variant": NoValue}, []int{0, 1, 2}},
		{map[string]string{"lr": NoValue}, []int{3, 4, 5}},
		{map[string]string{"variant": "tuned"}, []int{3, 4, 5}},
		// A run with a variant is not one without.
		{map[string]string{"method": "dualpriv", "variant": NoValue}, nil},
	} {
		got, err := selectRuns(runs, tc.where)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("selectRuns(%v) = %v, want %v", tc.where, got, tc.want)
		}
	}
	c := Claim{Name: "tuned-helps", Metric: "acc", A: map[string]string{"method": "dpsgd", "variant": "tuned"},
		B: map[string]string{"method": "dpsgd", "variant": NoValue}, Expect: "greater"}
	v, err := Verify(runs, []Claim{c}, &VerifyOptions{Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Checks) != 1 {
		t.Fatalf("%d checks, want 1", len(v.Checks))
	}
	if ch := v.Checks[0]; ch.MeanA != 71 || ch.MeanB != 61 || ch.NA != 3 || ch.NB != 3 {
		t.Errorf("means %v / %v over %d / %d runs, want 71 / 61 over 3 / 3 (check %+v)", ch.MeanA, ch.MeanB, ch.NA, ch.NB, ch)
	}
}
