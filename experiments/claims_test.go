// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// claimsBase is base with claims and regression thresholds; the claims
// key is on line 20, so the first claim starts on line 21 and the second
// on line 33.
const claimsBase = base + `claims:
  - name: dpsgd-rises
    text: "utility increases with ε"
    metric: acc
    a: {method: dpsgd, epsilon_target: 8}
    b: {method: dpsgd, epsilon_target: 1}
    each: [task]
    expect: greater
    min_seeds: 3
    required: true
    source: "paper Table 1"
    paper:
      - {at: {task: fashion-vqa}, a: 82.52, b: 81.54}
  - name: dpsgd-level
    metric: acc
    a: {method: dpsgd, epsilon_target: inf}
    expect: {value: 80, tolerance: 5}
    test: welch
    min_effect: 2
    source: "paper §5"
regression:
  - {metric: acc, better: max, threshold: 5}
`

func TestParseClaims(t *testing.T) {
	s, err := Parse("t.yaml", []byte(claimsBase), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := []Claim{
		{
			Name: "dpsgd-rises", Text: "utility increases with ε", Metric: "acc",
			A: map[string]string{"method": "dpsgd", "epsilon_target": "8"}, B: map[string]string{"method": "dpsgd", "epsilon_target": "1"},
			Each: []string{"task"}, Expect: "greater", MinSeeds: 3, Test: "auto", Required: true, Source: "paper Table 1",
			Line:  21,
			Paper: []PaperValue{{At: map[string]string{"task": "fashion-vqa"}, A: 82.52, B: 81.54, A2: math.NaN(), B2: math.NaN()}},
		},
		{
			Name: "dpsgd-level", Metric: "acc", A: map[string]string{"method": "dpsgd", "epsilon_target": "inf"},
			Expect: "value", Value: 80, Tolerance: 5, Test: "welch", MinEffect: 2, MinSeeds: 2, Source: "paper §5",
			Line: 33,
		},
	}
	if diff := cmp.Diff(want, s.Claims, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("claims mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Regression{{Metric: "acc", Better: "max", Threshold: 5}}, s.Regression); diff != "" {
		t.Errorf("regression mismatch (-want +got):\n%s", diff)
	}
	// A one-sided claim without b against a value, with a premise.
	src1 := strings.Replace(claimsBase, "    expect: {value: 80, tolerance: 5}", "    expect: greater\n    value: 75\n    premise: [dpsgd-rises]", 1)
	s1, err := Parse("t.yaml", []byte(src1), nil)
	if err != nil {
		t.Fatalf("Parse one-sided: %v", err)
	}
	if c := s1.Claims[1]; c.Expect != "greater" || c.Value != 75 || c.B != nil || !cmp.Equal(c.Premise, []string{"dpsgd-rises"}) {
		t.Errorf("one-sided claim: got expect %s value %v b %v premise %q, want greater 75 nil [dpsgd-rises]", c.Expect, c.Value, c.B, c.Premise)
	}
	// A claim without b has NaN paper b values.
	src := strings.Replace(claimsBase, `    source: "paper §5"`, "    source: \"paper §5\"\n    paper: [{a: 81}]", 1)
	s, err = Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if p := s.Claims[1].Paper; len(p) != 1 || p[0].A != 81 || !math.IsNaN(p[0].B) {
		t.Errorf("paper values of a claim without b: got %+v, want [{A: 81, B: NaN}]", p)
	}
	// A claim of several metrics is one claim per metric.
	src = strings.Replace(claimsBase, "  - name: dpsgd-level\n    metric: acc\n", "  - name: dpsgd-level\n    metrics: [acc, img]\n", 1)
	many, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	acc, img := want[1], want[1]
	acc.Name, img.Name, img.Metric = "dpsgd-level-acc", "dpsgd-level-img", "img"
	if diff := cmp.Diff([]Claim{want[0], acc, img}, many.Claims, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("claim of two metrics (-want +got):\n%s", diff)
	}
	// An interaction: x1 and x2, paper values at both.
	src = strings.Replace(claimsBase, "    each: [task]\n    expect: greater\n", "    x1: {task: fashion-vqa}\n    x2: {task: clevr}\n    expect: greater\n", 1)
	src = strings.Replace(src, "{at: {task: fashion-vqa}, a: 82.52, b: 81.54}", "{a: 82.52, b: 81.54, a2: 60, b2: 59.5}", 1)
	inter, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	wantInter := want[0]
	wantInter.Each = nil
	wantInter.X1, wantInter.X2 = map[string]string{"task": "fashion-vqa"}, map[string]string{"task": "clevr"}
	wantInter.Paper = []PaperValue{{A: 82.52, B: 81.54, A2: 60, B2: 59.5}}
	if diff := cmp.Diff(wantInter, inter.Claims[0], cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("interaction claim (-want +got):\n%s", diff)
	}
	if b, err := json.Marshal(inter.Claims[0].Paper); err != nil || string(b) != `[{"a":82.52,"b":81.54,"a2":60,"b2":59.5}]` {
		t.Errorf("json.Marshal(interaction paper) = %s, %v", b, err)
	}
	// scale: log is kept.
	logSrc := strings.Replace(claimsBase, "    test: welch\n", "    test: welch\n    scale: log\n", 1)
	logSpec, err := Parse("t.yaml", []byte(logSrc), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := logSpec.Claims[1].Scale; got != "log" {
		t.Errorf("scale %q, want log", got)
	}
	// A selector value that is a range of a numeric column ("9..32":
	// package reports selects the runs of those seeds) is kept as text.
	rangeSrc := strings.Replace(claimsBase, "    a: {method: dpsgd, epsilon_target: inf}\n", "    a: {method: dpsgd, epsilon_target: inf, seed: \"9..32\"}\n", 1)
	rangeSpec, err := Parse("t.yaml", []byte(rangeSrc), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := rangeSpec.Claims[1].A["seed"]; got != "9..32" {
		t.Errorf("seed range %q, want 9..32", got)
	}
	// gate: true makes a claim a gate (package reports tests it first);
	// a gate's premise that is itself a gate is accepted.
	gateSrc := strings.Replace(claimsBase, "    test: welch\n", "    test: welch\n    gate: true\n", 1)
	gateSrc = strings.Replace(gateSrc, "    required: true\n", "    required: true\n    gate: true\n    premise: [dpsgd-level]\n", 1)
	gateSpec, err := Parse("t.yaml", []byte(gateSrc), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !gateSpec.Claims[0].Gate || !gateSpec.Claims[1].Gate || s.Claims[0].Gate || s.Claims[1].Gate {
		t.Errorf("gates %v %v (without the key %v %v), want true true (false false)", gateSpec.Claims[0].Gate, gateSpec.Claims[1].Gate, s.Claims[0].Gate, s.Claims[1].Gate)
	}
	// The claims marshal to JSON, the NaN left out.
	b, err := json.Marshal(s.Claims)
	if err != nil || !strings.Contains(string(b), `"paper":[{"a":81}]`) {
		t.Errorf("json.Marshal(spec) = %s, %v; want the paper value {\"a\":81}", b, err)
	}
}

func TestParseClaimErrors(t *testing.T) {
	for _, tc := range []struct {
		desc     string
		old, new string // replace old by new in claimsBase
		line     int
		msg      string
	}{
		{"unknown key", "    text: \"utility", "    txt: \"utility", 22, `unknown key "txt"`},
		{"missing source", "    source: \"paper Table 1\"\n", "", 21, `missing key "source"`},
		{"bad expect", "expect: greater", "expect: bigger", 27, "claim expect must be greater, less or"},
		{"expect value key", "tolerance: 5}", "tol: 5}", 36, `unknown key "tol"`},
		{"negative tolerance", "tolerance: 5}", "tolerance: -1}", 36, "tolerance must be finite and ≥ 0"},
		{"direction without b", "expect: {value: 80, tolerance: 5}", "expect: less", 36, "give value"},
		{"value with b", "expect: greater", "expect: greater\n    value: 3", 28, "value is the bound of a one-sided claim without b"},
		{"value with value", "    test: welch", "    value: 3\n    test: welch", 37, "value is the bound of a one-sided claim without b"},
		{"premise unknown", "    test: welch", "    premise: [dpsgd-falls]\n    test: welch", 33, `claim dpsgd-level: premise "dpsgd-falls" is not a claim of the spec`},
		{"premise self", "    test: welch", "    premise: [dpsgd-level]\n    test: welch", 33, "premises form a cycle: dpsgd-level → dpsgd-level"},
		{"premise cycle", "      - {at: {task: fashion-vqa}, a: 82.52, b: 81.54}\n  - name: dpsgd-level\n", "      - {at: {task: fashion-vqa}, a: 82.52, b: 81.54}\n    premise: [dpsgd-level]\n  - name: dpsgd-level\n    premise: [dpsgd-rises]\n", 21, "premises form a cycle: dpsgd-rises → dpsgd-level → dpsgd-rises"},
		{"gate not bool", "    test: welch", "    gate: first\n    test: welch", 37, `claim gate must be true or false, not "first"`},
		{"gate premise behind the gate", "    test: welch", "    gate: true\n    premise: [dpsgd-rises]\n    test: welch", 33, `gate claim dpsgd-level: premise "dpsgd-rises" is behind the gate`},
		{"premise twice", "    test: welch", "    premise: [dpsgd-rises, dpsgd-rises]\n    test: welch", 37, `duplicate claim premise "dpsgd-rises"`},
		{"same sides", "b: {method: dpsgd, epsilon_target: 1}", "b: {method: dpsgd, epsilon_target: 8}", 21, "a and b select the same runs"},
		{"min seeds", "min_seeds: 3", "min_seeds: 1", 28, "min_seeds must be an integer in [2, 1000]"},
		{"test", "test: welch", "test: wilcoxon", 37, "claim test must be one of"},
		{"paired without b", "test: welch", "test: paired", 33, "a paired test needs b"},
		{"scale", "test: welch", "test: welch\n    scale: ln", 38, "claim scale must be log"},
		{"each in selector", "each: [task]", "each: [method]", 21, "method is both in each and a selector"},
		{"paper at", "{at: {task: fashion-vqa}, a: 82.52", "{at: {method: dpsgd}, a: 82.52", 32, "paper at must name each column"},
		{"paper b", ", a: 82.52, b: 81.54}", ", a: 82.52}", 32, "paper b is given exactly when the claim has b"},
		{"paper twice", "      - {at: {task: fashion-vqa}, a: 82.52, b: 81.54}", "      - {at: {task: fashion-vqa}, a: 82.52, b: 81.54}\n      - {at: {task: fashion-vqa}, a: 1, b: 2}", 33, "two paper values at the same point"},
		{"metric and metrics", "  - name: dpsgd-level\n    metric: acc\n", "  - name: dpsgd-level\n    metric: acc\n    metrics: [acc, img]\n", 35, "metric and metrics both given"},
		{"empty metrics", "  - name: dpsgd-level\n    metric: acc\n", "  - name: dpsgd-level\n    metrics: []\n", 34, "claim metrics: the list is empty"},
		{"no metric", "  - name: dpsgd-level\n    metric: acc\n", "  - name: dpsgd-level\n", 33, `missing key "metric" (or "metrics")`},
		{"metrics with paper", "    metric: acc\n    a: {method: dpsgd, epsilon_target: 8}", "    metrics: [acc, img]\n    a: {method: dpsgd, epsilon_target: 8}", 32, "paper values are per metric"},
		{"duplicate", "name: dpsgd-level", "name: dpsgd-rises", 33, `duplicate claim "dpsgd-rises"`},
		{"column", "a: {method: dpsgd, epsilon_target: 8}", "a: {method: dpsgd, colour: 8}", 21, `claim dpsgd-rises: "colour" is not a run column`},
		{"selector list", "a: {method: dpsgd, epsilon_target: inf}", "a: [dpsgd]", 35, "claim a must be a mapping"},
		{"x1 without x2", "    each: [task]\n    expect: greater", "    x1: {task: clevr}\n    expect: greater", 21, "an interaction needs both x1 and x2"},
		{"x1 keys", "    each: [task]\n    expect: greater", "    x1: {task: clevr}\n    x2: {seed: 1}\n    expect: greater", 21, "x1 and x2 must name the same columns"},
		{"x1 same", "    each: [task]\n    expect: greater", "    x1: {task: clevr}\n    x2: {task: clevr}\n    expect: greater", 21, "x1 and x2 select the same runs"},
		{"x1 in a", "    each: [task]\n    expect: greater", "    x1: {method: dpsgd}\n    x2: {method: nonprivate}\n    expect: greater", 21, "method is both in x1 and in a, b or each"},
		{"x1 in each", "    expect: greater", "    x1: {task: clevr}\n    x2: {task: fashion-vqa}\n    expect: greater", 21, "task is both in x1 and in a, b or each"},
		{"x1 without b", "test: welch", "x1: {task: clevr}\n    x2: {task: fashion-vqa}", 33, "an interaction compares a with b"},
		{"paper a2", ", a: 82.52, b: 81.54}", ", a: 82.52, b: 81.54, a2: 1, b2: 2}", 32, "paper a2 and b2 (the values at x2) are given exactly when"},
		{"x1 column", "    each: [task]\n    expect: greater\n    min_seeds: 3\n    required: true\n    source: \"paper Table 1\"\n    paper:\n      - {at: {task: fashion-vqa}, a: 82.52, b: 81.54}",
			"    x1: {colour: red}\n    x2: {colour: blue}\n    expect: greater\n    source: \"paper Table 1\"\n    paper:\n      - {a: 82.52, b: 81.54, a2: 1, b2: 2}", 21, `"colour" is not a run column`},
		{"regression better", "better: max", "better: high", 41, "regression better must be max or min"},
		{"regression twice", "  - {metric: acc, better: max, threshold: 5}\n", "  - {metric: acc, better: max, threshold: 5}\n  - {metric: acc, better: min, threshold: 1}\n", 42, `metric "acc" listed twice`},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			src := strings.Replace(claimsBase, tc.old, tc.new, 1)
			if src == claimsBase {
				t.Fatalf("test case does not change the spec: %q not found", tc.old)
			}
			_, err := Parse("bad.yaml", []byte(src), nil)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse: got error %v (%T), want a *SyntaxError", err, err)
			}
			if se.FileName != "bad.yaml" || se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Parse: got %q, want bad.yaml:%d: ...%s...", err, tc.line, tc.msg)
			}
		})
	}
}

// variantsBase is base with DP-SGD listed again as a variant, tuned,
// and a claim of tuned against the plain DP-SGD (line 22 on, its b on
// line 25).
const variantsBase = `name: t
description: a test spec
scale: smoke
delta: 1e-5
tasks: [fashion-vqa]
methods:
  - name: nonprivate
    sweep: {epsilon: [inf]}
  - name: dpsgd
  - name: dpsgd
    variant: tuned
    params: {lr: 0.01}
  - name: dualpriv
    variant: full
params: {lr: 0.001, peft: lora}
sweep:
  epsilon: [1, 8]
  seed: [1, 2]
tables:
  - {name: tab, rows: [method, variant], columns: [epsilon_target], metrics: [acc], best: max}
claims:
  - name: tuned-helps
    metric: acc
    a: {method: dpsgd, variant: tuned}
    b: {method: dpsgd, variant: null}
    each: [epsilon_target]
    expect: greater
    source: "the tuning"
`

// TestClaimNoValue checks the selector value null (NoValue): it parses
// in either YAML spelling and selects exactly the runs listed without a
// variant; a run table's "—", an empty string and a misspelt or unlisted
// method or variant are errors at parse time, at the claim's line.
func TestClaimNoValue(t *testing.T) {
	for _, null := range []string{"null", "~", "Null"} {
		src := strings.Replace(variantsBase, "variant: null}", "variant: "+null+"}", 1)
		s, err := Parse("t.yaml", []byte(src), nil)
		if err != nil {
			t.Fatalf("Parse with variant %s: %v", null, err)
		}
		if got, want := s.Claims[0].B, map[string]string{"method": "dpsgd", "variant": NoValue}; !cmp.Equal(got, want) {
			t.Errorf("variant %s: b = %v, want %v", null, got, want)
		}
		// The runs that b selects, matched as reports matches a String
		// column: every plain DP-SGD run (2 ε × 2 seeds) and no other.
		var got []string
		for _, c := range s.Expand() {
			v, _ := c.Params[VariantParam].(string)
			if c.Method == "dpsgd" && v == NoValue {
				got = append(got, c.Epsilon.String()+"/"+FormatFloat(float64(c.Seed))+"/"+FormatFloat(c.Params["lr"].(float64)))
			}
		}
		if want := []string{"1/1/0.001", "1/2/0.001", "8/1/0.001", "8/2/0.001"}; !cmp.Equal(got, want, cmpopts.SortSlices(func(a, b string) bool { return a < b })) {
			t.Errorf("variant %s: b selects %q, want %q", null, got, want)
		}
	}
	for _, tc := range []struct {
		desc, old, new string
		line           int
		msg            string
	}{
		{"table's dash", "variant: null}", `variant: "—"}`, 25, `claim b.variant: "—" is not a value; null selects the runs without a value`},
		{"empty string", "variant: null}", `variant: ""}`, 25, `claim b.variant: "" is not a value`},
		{"misspelt variant", "variant: tuned}", "variant: tunned}", 22, `claim tuned-helps: a selects variant "tunned", which no method of the spec has (have: null, "full", "tuned"); did you mean "tuned"?`},
		{"misspelt null", "variant: null}", "variant: nul}", 22, `b selects variant "nul", which no method of the spec has`},
		{"misspelt method", "a: {method: dpsgd,", "a: {method: dpsdg,", 22, `a selects method "dpsdg", which no method of the spec has (have: "dpsgd", "dualpriv", "nonprivate"); did you mean "dpsgd"?`},
		{"method null", "b: {method: dpsgd, variant: null}", "b: {method: null, variant: tuned}", 22, `b selects method null, which no method of the spec has`},
		{"unlisted pair", "b: {method: dpsgd, variant: null}", "b: {method: dualpriv, variant: null}", 22, "b selects method dualpriv with variant null, which the spec does not list"},
		{"no method without variant", "  - name: nonprivate\n    sweep: {epsilon: [inf]}\n  - name: dpsgd\n", "  - name: dpsgd\n    variant: plain\n", 21, `b selects variant null, which no method of the spec has (have: "full", "plain", "tuned")`},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			src := strings.Replace(variantsBase, tc.old, tc.new, 1)
			if src == variantsBase {
				t.Fatalf("test case does not change the spec: %q not found", tc.old)
			}
			_, err := Parse("bad.yaml", []byte(src), nil)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse: got error %v (%T), want a *SyntaxError", err, err)
			}
			if se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Parse: got %q, want bad.yaml:%d: ...%s...", err, tc.line, tc.msg)
			}
		})
	}
}

// TestEmbeddedClaimsPairUp checks every comparative claim of the embedded
// specs against the spec's own runs: for each value of its Each columns
// among the runs A or B selects, both sides must select some run, or the
// claim would test nothing there (rapft-table6 once compared non-private
// runs at ε = ∞ with DP-SGD's at each ε under each: [epsilon_target]).
func TestEmbeddedClaimsPairUp(t *testing.T) {
	infos, err := List(nil)
	if err != nil {
		t.Fatal(err)
	}
	col := func(c *Config, name string) string {
		switch name {
		case "method":
			return c.Method
		case "task":
			return c.Task
		case "scale":
			return c.Scale
		case "seed":
			return FormatFloat(float64(c.Seed))
		case "epsilon_target":
			return c.Epsilon.String()
		}
		switch v := c.Params[name].(type) {
		case float64:
			return FormatFloat(v)
		case int64:
			return FormatFloat(float64(v))
		case nil:
			return ""
		default:
			return fmt.Sprint(v)
		}
	}
	selects := func(c *Config, sel map[string]string) bool {
		for k, v := range sel {
			// NoValue ("") selects the runs without a value; "lo..hi"
			// the runs whose numeric value lies in the closed range, as
			// package reports reads it.
			if lo, hi, ok := selectorRange(v); ok {
				x, err := strconv.ParseFloat(col(c, k), 64)
				if err != nil || x < lo || x > hi {
					return false
				}
				continue
			}
			if col(c, k) != v {
				return false
			}
		}
		return true
	}
	for _, info := range infos {
		s, err := Load(info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		runs := s.Expand()
		for _, cl := range s.Claims {
			if cl.B == nil {
				continue
			}
			if cl.X1 != nil {
				// An interaction pairs up at x1 and at x2.
				for _, x := range []map[string]string{cl.X1, cl.X2} {
					a, b := maps.Clone(cl.A), maps.Clone(cl.B)
					maps.Copy(a, x)
					maps.Copy(b, x)
					checkPairs(t, s.Name, cl.Name+" at "+fmt.Sprint(x), runs, cl.Each, a, b, col, selects)
				}
				continue
			}
			checkPairs(t, s.Name, cl.Name, runs, cl.Each, cl.A, cl.B, col, selects)
		}
	}
}

// selectorRange parses a claim selector's range "lo..hi" of two finite
// numbers, lo ≤ hi; ok is false for any other value.
func selectorRange(v string) (lo, hi float64, ok bool) {
	a, b, found := strings.Cut(v, "..")
	if !found {
		return 0, 0, false
	}
	lo, errA := strconv.ParseFloat(strings.TrimSpace(a), 64)
	hi, errB := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if errA != nil || errB != nil || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo <= hi) {
		return 0, 0, false
	}
	return lo, hi, true
}

// checkPairs checks that sides a and b of a claim both select runs at
// each value of its each columns among the runs either selects.
func checkPairs(t *testing.T, spec, claim string, runs []Config, each []string, ca, cb map[string]string,
	col func(*Config, string) string, selects func(*Config, map[string]string) bool) {
	t.Helper()
	{
		{
			sides := map[string][2]int{}
			for i := range runs {
				c := &runs[i]
				a, b := selects(c, ca), selects(c, cb)
				if !a && !b {
					continue
				}
				var key []string
				for _, e := range each {
					key = append(key, e+"="+col(c, e))
				}
				k := strings.Join(key, ",")
				n := sides[k]
				if a {
					n[0]++
				}
				if b {
					n[1]++
				}
				sides[k] = n
			}
			if len(sides) == 0 {
				t.Errorf("%s: claim %s selects no run", spec, claim)
			}
			for k, n := range sides {
				if n[0] == 0 || n[1] == 0 {
					t.Errorf("%s: claim %s at %q: %d runs on side a, %d on side b; want both", spec, claim, k, n[0], n[1])
				}
			}
		}
	}
}

// TestClaimRangeErrors checks that a selector value that tries to be a
// numeric range "lo..hi" and is not one ("9..", "..9", "32..9", "-inf..6",
// "1...2") is an error at parse time, at the value's line, rather than a
// side that selects no run (package reports selects nothing for it: the
// claim would be NOT RUN, a required one failing only as not run); a
// valid range, and a text with ".." in it that is no number ("../x",
// "v1..v2", matched as text), parse.
func TestClaimRangeErrors(t *testing.T) {
	const old = "    a: {method: dpsgd, epsilon_target: inf}\n"
	for _, v := range []string{"9..", "..9", "32..9", "-inf..6", "1..inf", "1...2", " 9 .. "} {
		src := strings.Replace(claimsBase, old, "    a: {method: dpsgd, epsilon_target: inf, seed: \""+v+"\"}\n", 1)
		_, err := Parse("bad.yaml", []byte(src), nil)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("seed %q: got error %v (%T), want a *SyntaxError", v, err, err)
			continue
		}
		if se.Line != 35 || !strings.Contains(se.Msg, "is not a range lo..hi") {
			t.Errorf("seed %q: got %q, want bad.yaml:35: ...is not a range lo..hi...", v, err)
		}
	}
	for _, v := range []string{"9..32", " 9 .. 32 ", "1..1", "-1..0.5", "1e3..1e5", "../x", "v1..v2"} {
		src := strings.Replace(claimsBase, old, "    a: {method: dpsgd, epsilon_target: inf, seed: \""+v+"\"}\n", 1)
		s, err := Parse("t.yaml", []byte(src), nil)
		if err != nil {
			t.Errorf("seed %q: %v", v, err)
			continue
		}
		if got := s.Claims[1].A["seed"]; got != v {
			t.Errorf("seed %q: kept as %q", v, got)
		}
	}
}
