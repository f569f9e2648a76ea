// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A Claim is a checkable claim of a paper, stated as a comparison over
// the runs of a spec: the metric of the runs that A selects against the
// runs that B selects, over seeds. `repro verify` evaluates it (package
// reports, [reports.Verify]).
//
//	claims:
//	  - name: dpsgd-beats-dpzo
//	    text: "DP-SGD beats DPZO at every ε"
//	    metric: acc
//	    a: {method: dpsgd}
//	    b: {method: dpzo}
//	    each: [epsilon_target, task]     # one test per distinct value pair
//	    expect: greater                  # greater, less, or {value: V, tolerance: T}
//	    min_seeds: 3                     # default 2
//	    test: auto                       # auto (paired when the seeds match), paired, welch or exact
//	    scale: log                       # compare log(metric): the effect is log(a/b), a ratio
//	    min_effect: 1                    # the effect the power is computed at, without paper values
//	    required: true                   # a FAIL makes repro verify exit non-zero
//	    gate: true                       # tested first; the other claims only if it passes
//	    source: "Dual-Priv Table 1"
//	    paper:
//	      - {at: {epsilon_target: 1, task: fashion-vqa}, a: 81.54, b: 23.30}
//
// A claim with x1 and x2 is an interaction, a difference of differences:
// "the gain of a over b is larger at x1 than at x2", the effect
// (mean(a|x1) − mean(b|x1)) − (mean(a|x2) − mean(b|x2)), paired by seed
// when the four cells share seeds. Its paper values give a and b at x1
// and a2 and b2 at x2:
//
//	claims:
//	  - name: gain-larger-on-echr
//	    metric: ppl
//	    a: {method: dpsgd}
//	    b: {method: rapft}
//	    x1: {task: records-echr}
//	    x2: {task: records-e2e}
//	    each: [variant]
//	    expect: greater
//	    paper:
//	      - {at: {variant: lora}, a: 18.15, b: 17.73, a2: 4.54, b2: 4.39}
//
// A claim may list metrics (metrics: [m1, m2, …]) in place of metric: it
// stands for one claim per metric, named <name>-<metric>, with the same
// sides and settings and no paper values (those are per metric).
//
// [reports.Verify]: https://pkg.go.dev/github.com/repro-dp/repro/reports#Verify
type Claim struct {
	// Name identifies the claim: [a-z0-9][a-z0-9_-]*, unique in the spec.
	Name string `json:"name"`
	// Text is the claim in words, as the paper makes it.
	Text string `json:"text,omitempty"`
	// Metric is the run-table column compared.
	Metric string `json:"metric"`
	// A and B select the runs of each side: run column → value, formatted
	// as in a table reference (epsilon_target 1 or "inf"); NoValue (a
	// spec's null) selects the runs without a value in the column, and
	// "lo..hi" the runs whose numeric value lies in that closed range
	// (seed "9..20"; a value that tries to be a range and is not one,
	// such as "9.." or "20..9", is an error). B is nil for a
	// claim about the value of A alone: Expect "value", or "greater" and
	// "less" against Value (a one-sided claim mean(A) > Value or < Value).
	A map[string]string `json:"a"`
	B map[string]string `json:"b,omitempty"`
	// Each are run columns; the claim is one test per distinct value
	// (combination) among the runs that A or B selects, each side
	// restricted to it. Empty means one test.
	Each []string `json:"each,omitempty"`
	// X1 and X2, when given (both, and B), make the claim an interaction:
	// the effect is (mean(A) − mean(B)) over the runs X1 also selects
	// minus the same over the runs X2 selects. They name the same run
	// columns, none of them in A, B or Each, and select different runs.
	X1 map[string]string `json:"x1,omitempty"`
	X2 map[string]string `json:"x2,omitempty"`
	// Expect is "greater" (the effect mean(A) − mean(B) is positive;
	// without B, mean(A) is above Value), "less" (negative; below Value),
	// or "value": the effect (or the mean of A when B is nil) lies within
	// Value ± Tolerance.
	Expect    string  `json:"expect"`
	Value     float64 `json:"value,omitempty"`
	Tolerance float64 `json:"tolerance,omitempty"`
	// MinEffect is the size of effect at which the power of a directional
	// test is computed when the paper gives no values for a test; 0 means
	// no power is computed for it.
	MinEffect float64 `json:"min_effect,omitempty"`
	// MinSeeds is the fewest distinct seeds with the metric each side
	// needs; a test with fewer is not run. Default 2, the fewest a
	// t-test takes.
	MinSeeds int `json:"min_seeds"`
	// Test is "auto" (exact for a deterministic metric such as ε or a
	// parameter count, else paired by seed when both sides have the
	// same seeds, else Welch), "paired", "welch" or "exact" (the values
	// compared as they are, seed by seed, for a metric that does not
	// depend on training noise). Default auto.
	Test string `json:"test"`
	// Scale is "" (the metric as it is) or "log": the claim compares the
	// natural log of the metric, so the effect mean(log A) − mean(log B)
	// is the log of a ratio (paired: the mean of log(a/b) over seeds),
	// and the paper's values give the paper's ratio A/B. For a metric
	// whose changes are relative, such as a time. A value ≤ 0 counts as
	// missing, and the verdict's note says how many and which side.
	Scale string `json:"scale,omitempty"`
	// Premise names other claims of the spec that must PASS for this one
	// to be tested (a control that must show the effect before a defence
	// against it means anything); otherwise its verdict is NOT RUN.
	Premise []string `json:"premise,omitempty"`
	// Gate makes the claim a gatekeeper (gate: true), a serial
	// gatekeeping order: the gate claims' tests are tested first, Holm
	// among themselves at the full α, and the tests of every other claim
	// of the spec (Holm among themselves, at the full α) only when every
	// gate check passes; otherwise they are NOT RUN, "not tested: gate failed"
	// (see [reports.Verify]). A gate claim's premises are gate claims.
	// Declare a gate with a new trial only, before any of its runs:
	// gating claims already judged would choose the family after seeing
	// its p-values.
	Gate bool `json:"gate,omitempty"`
	// Required claims make repro verify fail when they FAIL.
	Required bool `json:"required,omitempty"`
	// Source names where the paper makes the claim (section, table).
	Source string `json:"source"`
	// Paper holds the paper's numbers for the tests of the claim.
	Paper []PaperValue `json:"paper,omitempty"`
	// Line is the line of the claim's entry in the spec file (0 when
	// unknown), which reports cite beside the claim's verdict.
	Line int `json:"-"`
}

// A PaperValue is the paper's number for one test of a claim.
type PaperValue struct {
	// At holds a value of every Each column of the claim (empty when the
	// claim has no Each).
	At map[string]string `json:"at,omitempty"`
	// A and B are the paper's values of the two sides; B is NaN for a
	// claim without B.
	A float64 `json:"a"`
	B float64 `json:"b"`
	// A2 and B2 are the paper's values at X2 of an interaction claim (A
	// and B are at X1); NaN for any other claim.
	A2 float64 `json:"a2"`
	B2 float64 `json:"b2"`
}

// MarshalJSON implements json.Marshaler: a NaN B is left out.
func (p PaperValue) MarshalJSON() ([]byte, error) {
	out := struct {
		At map[string]string `json:"at,omitempty"`
		A  float64           `json:"a"`
		B  *float64          `json:"b,omitempty"`
		A2 *float64          `json:"a2,omitempty"`
		B2 *float64          `json:"b2,omitempty"`
	}{At: p.At, A: p.A}
	if !math.IsNaN(p.B) {
		out.B = &p.B
	}
	if !math.IsNaN(p.A2) {
		out.A2, out.B2 = &p.A2, &p.B2
	}
	return json.Marshal(out)
}

// A Regression is the threshold beyond which `repro compare` calls a
// change of a metric a regression.
type Regression struct {
	// Metric is the run-table column.
	Metric string `json:"metric"`
	// Better is "max" (larger is better) or "min".
	Better string `json:"better"`
	// Threshold is the change for the worse, in the metric's units, from
	// which a significant change is a regression (a change of exactly
	// the threshold is one): ≥ 0.
	Threshold float64 `json:"threshold"`
}

// NoValue is a selector's value for the runs that have no value in a
// run column: null in a spec. {method: dpsgd, variant: null} selects
// DP-SGD's runs listed without a variant, and none of its variants. A
// run table prints such a value as "—", which a selector does not take:
// that is how a table shows the value, not the value.
const NoValue = ""

// claimTests are the values of a claim's test key.
var claimTests = []string{"auto", "paired", "welch", "exact"}

// claims decodes the claims list.
func (d *decoder) claims(n *yaml.Node) ([]Claim, error) {
	var cs []Claim
	err := d.list(n, "claims", func(e *yaml.Node) error {
		each, err := d.claim(e)
		if err != nil {
			return err
		}
		for _, c := range each {
			if slices.ContainsFunc(cs, func(o Claim) bool { return o.Name == c.Name }) {
				return d.errorf(e, "duplicate claim %q", c.Name)
			}
			cs = append(cs, c)
		}
		return nil
	})
	return cs, err
}

// claim decodes one entry of the claims list: one claim, or one per metric
// of its metrics key.
func (d *decoder) claim(n *yaml.Node) ([]Claim, error) {
	c := Claim{MinSeeds: 2, Test: "auto", Line: n.Line}
	var expectNode, paperNode, metricsNode, valueNode *yaml.Node
	var metrics []string
	err := d.fields(n, "claim", map[string]func(*yaml.Node) error{
		"name":   func(v *yaml.Node) error { return d.fileName(v, "claim name", &c.Name) },
		"text":   func(v *yaml.Node) error { return d.str(v, "claim text", &c.Text) },
		"metric": func(v *yaml.Node) error { return d.ident(v, "claim metric", &c.Metric) },
		"metrics": func(v *yaml.Node) (err error) {
			metricsNode = v
			metrics, err = d.identList(v, "claim metrics")
			return err
		},
		"a":      func(v *yaml.Node) (err error) { c.A, err = d.selector(v, "claim a"); return err },
		"b":      func(v *yaml.Node) (err error) { c.B, err = d.selector(v, "claim b"); return err },
		"each":   func(v *yaml.Node) (err error) { c.Each, err = d.identList(v, "claim each"); return err },
		"x1":     func(v *yaml.Node) (err error) { c.X1, err = d.selector(v, "claim x1"); return err },
		"x2":     func(v *yaml.Node) (err error) { c.X2, err = d.selector(v, "claim x2"); return err },
		"expect": func(v *yaml.Node) error { expectNode = v; return d.expect(v, &c) },
		"value": func(v *yaml.Node) (err error) {
			valueNode = v
			c.Value, err = d.finite(v, "claim value", math.Inf(-1))
			return err
		},
		"premise": func(v *yaml.Node) (err error) { c.Premise, err = d.premise(v); return err },
		"min_effect": func(v *yaml.Node) (err error) {
			c.MinEffect, err = d.finite(v, "claim min_effect", 0)
			return err
		},
		"min_seeds": func(v *yaml.Node) error {
			x, err := d.number(v, "claim min_seeds")
			if err == nil && (x != math.Trunc(x) || x < 2 || x > 1000) {
				err = d.errorf(v, "claim min_seeds must be an integer in [2, 1000], not %s", v.Value)
			}
			c.MinSeeds = int(x)
			return err
		},
		"test": func(v *yaml.Node) error {
			if err := d.str(v, "claim test", &c.Test); err != nil {
				return err
			}
			if !has(claimTests, c.Test) {
				return d.errorf(v, "claim test must be one of %s, not %q", strings.Join(claimTests, ", "), c.Test)
			}
			return nil
		},
		"scale": func(v *yaml.Node) error {
			if err := d.str(v, "claim scale", &c.Scale); err != nil {
				return err
			}
			if c.Scale != "log" {
				return d.errorf(v, "claim scale must be log (or left out), not %q", c.Scale)
			}
			return nil
		},
		"required": func(v *yaml.Node) error { return d.boolean(v, "claim required", &c.Required) },
		"gate":     func(v *yaml.Node) error { return d.boolean(v, "claim gate", &c.Gate) },
		"source":   func(v *yaml.Node) error { return d.str(v, "claim source", &c.Source) },
		"paper":    func(v *yaml.Node) error { paperNode = v; return nil },
	}, "name", "a", "expect", "source")
	if err != nil {
		return nil, err
	}
	switch {
	case c.Metric == "" && metricsNode == nil:
		return nil, d.errorf(n, "claim %s: missing key \"metric\" (or \"metrics\")", c.Name)
	case c.Metric != "" && metricsNode != nil:
		return nil, d.errorf(metricsNode, "claim %s: metric and metrics both given", c.Name)
	case metricsNode != nil && paperNode != nil:
		return nil, d.errorf(paperNode, "claim %s: paper values are per metric; give each metric its own claim", c.Name)
	}
	switch {
	case valueNode != nil && (c.B != nil || c.Expect == "value"):
		return nil, d.errorf(valueNode, "claim %s: value is the bound of a one-sided claim without b (expect greater or less)", c.Name)
	case valueNode == nil && c.B == nil && c.Expect != "value":
		return nil, d.errorf(expectNode, "claim %s: expect %s without b compares a with a value: give value", c.Name, c.Expect)
	}
	if err := d.claimShape(n, expectNode, &c); err != nil {
		return nil, err
	}
	if metricsNode == nil {
		if paperNode != nil {
			c.Paper, err = d.paperValues(paperNode, &c)
		}
		return []Claim{c}, err
	}
	out := make([]Claim, len(metrics))
	for i, m := range metrics {
		out[i] = c
		out[i].Name, out[i].Metric = c.Name+"-"+m, m
		if c.Text != "" {
			out[i].Text = c.Text + " (" + m + ")"
		}
	}
	return out, nil
}

// premise decodes a claim's premise key: names of other claims of the
// spec, each once (that they exist and form no cycle is checked once the
// whole list is read).
func (d *decoder) premise(v *yaml.Node) ([]string, error) {
	var names []string
	err := d.list(v, "claim premise", func(e *yaml.Node) error {
		var name string
		if err := d.fileName(e, "claim premise", &name); err != nil {
			return err
		}
		if has(names, name) {
			return d.errorf(e, "duplicate claim premise %q", name)
		}
		names = append(names, name)
		return nil
	})
	return names, err
}

// claimShape checks what ties a claim's keys together.
func (d *decoder) claimShape(n, expectNode *yaml.Node, c *Claim) error {
	switch {
	case c.B != nil && maps.Equal(c.A, c.B):
		return d.errorf(n, "claim %s: a and b select the same runs", c.Name)
	case c.Test == "paired" && c.B == nil:
		return d.errorf(n, "claim %s: a paired test needs b", c.Name)
	}
	for _, e := range c.Each {
		_, inA := c.A[e]
		_, inB := c.B[e]
		if inA || inB {
			return d.errorf(n, "claim %s: %s is both in each and a selector", c.Name, e)
		}
	}
	switch {
	case c.X1 == nil && c.X2 == nil:
		return nil
	case c.X1 == nil || c.X2 == nil:
		return d.errorf(n, "claim %s: an interaction needs both x1 and x2", c.Name)
	case c.B == nil:
		return d.errorf(n, "claim %s: an interaction compares a with b, and the claim has no b", c.Name)
	case !slices.Equal(slices.Sorted(maps.Keys(c.X1)), slices.Sorted(maps.Keys(c.X2))):
		return d.errorf(n, "claim %s: x1 and x2 must name the same columns", c.Name)
	case maps.Equal(c.X1, c.X2):
		return d.errorf(n, "claim %s: x1 and x2 select the same runs", c.Name)
	}
	for col := range c.X1 {
		_, inA := c.A[col]
		_, inB := c.B[col]
		if inA || inB || slices.Contains(c.Each, col) {
			return d.errorf(n, "claim %s: %s is both in x1 and in a, b or each", c.Name, col)
		}
	}
	return nil
}

// expect decodes a claim's expect: greater, less, or {value, tolerance}.
func (d *decoder) expect(v *yaml.Node, c *Claim) error {
	if v.Kind == yaml.ScalarNode {
		if err := d.str(v, "claim expect", &c.Expect); err != nil {
			return err
		}
		if c.Expect != "greater" && c.Expect != "less" {
			return d.errorf(v, "claim expect must be greater, less or {value: V, tolerance: T}, not %q", c.Expect)
		}
		return nil
	}
	c.Expect = "value"
	return d.fields(v, "claim expect", map[string]func(*yaml.Node) error{
		"value": func(v *yaml.Node) (err error) {
			c.Value, err = d.finite(v, "claim expect value", math.Inf(-1))
			return err
		},
		"tolerance": func(v *yaml.Node) (err error) {
			c.Tolerance, err = d.finite(v, "claim expect tolerance", 0)
			return err
		},
	}, "value", "tolerance")
}

// finite decodes a finite number not below lo.
func (d *decoder) finite(v *yaml.Node, what string, lo float64) (float64, error) {
	x, err := d.number(v, what)
	if err != nil {
		return 0, err
	}
	if math.IsInf(x, 0) || x < lo {
		if lo == 0 {
			return 0, d.errorf(v, "%s must be finite and ≥ 0, not %s", what, v.Value)
		}
		return 0, d.errorf(v, "%s must be finite, not %s", what, v.Value)
	}
	return x, nil
}

// selector decodes a mapping of run columns to values, formatted as a
// table reference's at: numbers as FormatFloat prints them.
func (d *decoder) selector(v *yaml.Node, what string) (map[string]string, error) {
	if v.Kind != yaml.MappingNode {
		return nil, d.errorf(v, "%s must be a mapping of run columns to values", what)
	}
	out := make(map[string]string)
	for i := 0; i+1 < len(v.Content); i += 2 {
		var k string
		if err := d.ident(v.Content[i], what+" column", &k); err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, d.errorf(v.Content[i], "%s: duplicate key %q", what, k)
		}
		vn := v.Content[i+1]
		if err := d.scalar(vn, what+"."+k); err != nil {
			return nil, err
		}
		if vn.ShortTag() == "!!null" {
			out[k] = NoValue
			continue
		}
		val := vn.Value
		if val == NoValue || val == "—" {
			return nil, d.errorf(vn, "%s.%s: %q is not a value; null selects the runs without a value", what, k, val)
		}
		if x, err := d.number(vn, k); err == nil {
			val = FormatFloat(x)
		} else if badRange(val) {
			return nil, d.errorf(vn, "%s.%s: %q is not a range lo..hi of two finite numbers with lo ≤ hi (it would select no run)", what, k, val)
		}
		out[k] = val
	}
	return out, nil
}

// badRange reports whether s tries to be a numeric range "lo..hi", one
// side of its first ".." a number (or empty beside one), and is not a
// valid one: two finite numbers with lo ≤ hi, as package reports reads
// it. A text with ".." whose sides are no numbers ("../x") is no range.
func badRange(s string) bool {
	a, b, found := strings.Cut(s, "..")
	if !found {
		return false
	}
	num := func(x string) (float64, bool) {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return v, err == nil
	}
	lo, okA := num(a)
	hi, okB := num(b)
	if !okA && !okB {
		return false
	}
	return !(okA && okB && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && !math.IsNaN(lo) && !math.IsNaN(hi) && lo <= hi)
}

// checkSelectors checks the methods and variants that the sides of claim
// c select against the methods of s: each value names a method (a
// variant, or null for none) that s lists, and a method with a variant
// names a pair that s lists, so that a misspelt value is an error at
// parse time rather than a side that selects no run. n is the claim's
// node.
func (d *decoder) checkSelectors(s *Spec, c Claim, n *yaml.Node) error {
	var methods, variants []string
	for _, m := range s.Methods {
		methods = append(methods, m.Name)
		variants = append(variants, m.Variant)
	}
	spell := func(v string) string {
		if v == NoValue {
			return "null"
		}
		return strconv.Quote(v)
	}
	sides := []struct {
		name string
		sel  map[string]string
	}{{"a", c.A}, {"b", c.B}, {"x1", c.X1}, {"x2", c.X2}}
	for _, side := range sides {
		for _, col := range []string{"method", VariantParam} {
			v, ok := side.sel[col]
			if !ok {
				continue
			}
			known := methods
			if col == VariantParam {
				known = variants
			}
			if has(known, v) {
				continue
			}
			var have []string
			for _, k := range sortedUnique(known) {
				have = append(have, spell(k))
			}
			msg := fmt.Sprintf("claim %s: %s selects %s %s, which no method of the spec has (have: %s)", c.Name, side.name, col, spell(v), strings.Join(have, ", "))
			if near, ok := nearest(v, slices.DeleteFunc(slices.Clone(known), func(k string) bool { return k == NoValue })); ok && v != NoValue {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return d.errorf(n, "%s", msg)
		}
		m, okM := side.sel["method"]
		vr, okV := side.sel[VariantParam]
		if okM && okV && !slices.ContainsFunc(s.Methods, func(x Method) bool { return x.Name == m && x.Variant == vr }) {
			return d.errorf(n, "claim %s: %s selects method %s with variant %s, which the spec does not list", c.Name, side.name, m, spell(vr))
		}
	}
	return nil
}

// paperValues decodes a claim's paper list: one entry per test, its at
// naming a value of every each column.
func (d *decoder) paperValues(n *yaml.Node, c *Claim) ([]PaperValue, error) {
	var out []PaperValue
	err := d.list(n, "claim paper", func(e *yaml.Node) error {
		p := PaperValue{B: math.NaN(), A2: math.NaN(), B2: math.NaN()}
		var hasB, hasA2, hasB2 bool
		err := d.fields(e, "claim paper", map[string]func(*yaml.Node) error{
			"at": func(v *yaml.Node) (err error) { p.At, err = d.selector(v, "claim paper at"); return err },
			"a":  func(v *yaml.Node) (err error) { p.A, err = d.finite(v, "claim paper a", math.Inf(-1)); return err },
			"b": func(v *yaml.Node) (err error) {
				hasB = true
				p.B, err = d.finite(v, "claim paper b", math.Inf(-1))
				return err
			},
			"a2": func(v *yaml.Node) (err error) {
				hasA2 = true
				p.A2, err = d.finite(v, "claim paper a2", math.Inf(-1))
				return err
			},
			"b2": func(v *yaml.Node) (err error) {
				hasB2 = true
				p.B2, err = d.finite(v, "claim paper b2", math.Inf(-1))
				return err
			},
		}, "a")
		if err != nil {
			return err
		}
		switch {
		case hasB != (c.B != nil):
			return d.errorf(e, "claim %s: paper b is given exactly when the claim has b", c.Name)
		case hasA2 != (c.X1 != nil) || hasB2 != (c.X1 != nil):
			return d.errorf(e, "claim %s: paper a2 and b2 (the values at x2) are given exactly when the claim has x1 and x2", c.Name)
		case !slices.Equal(slices.Sorted(maps.Keys(p.At)), slices.Sorted(slices.Values(c.Each))):
			return d.errorf(e, "claim %s: paper at must name each column of each (%s) and nothing else", c.Name, strings.Join(c.Each, ", "))
		case slices.ContainsFunc(out, func(o PaperValue) bool { return maps.Equal(o.At, p.At) }):
			return d.errorf(e, "claim %s: two paper values at the same point", c.Name)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// regressions decodes the regression thresholds of repro compare.
func (d *decoder) regressions(n *yaml.Node) ([]Regression, error) {
	var out []Regression
	err := d.list(n, "regression", func(e *yaml.Node) error {
		var r Regression
		err := d.fields(e, "regression", map[string]func(*yaml.Node) error{
			"metric": func(v *yaml.Node) error { return d.ident(v, "regression metric", &r.Metric) },
			"better": func(v *yaml.Node) error {
				if err := d.str(v, "regression better", &r.Better); err != nil {
					return err
				}
				if r.Better != "max" && r.Better != "min" {
					return d.errorf(v, "regression better must be max or min, not %q", r.Better)
				}
				return nil
			},
			"threshold": func(v *yaml.Node) (err error) {
				r.Threshold, err = d.finite(v, "regression threshold", 0)
				return err
			},
		}, "metric", "better", "threshold")
		if err == nil && slices.ContainsFunc(out, func(o Regression) bool { return o.Metric == r.Metric }) {
			err = d.errorf(e, "regression: metric %q listed twice", r.Metric)
		}
		out = append(out, r)
		return err
	})
	return out, err
}

// checkClaims checks that the claims name run columns; claim metrics are
// whatever the runs record, as a table's metrics are.
func (d *decoder) checkClaims(s *Spec, columns []string, at func(string) *yaml.Node) error {
	list := at("claims")
	for i, c := range s.Claims {
		cn := list
		if list.Kind == yaml.SequenceNode && i < len(list.Content) {
			cn = list.Content[i]
		}
		for _, p := range c.Premise {
			i := slices.IndexFunc(s.Claims, func(o Claim) bool { return o.Name == p })
			if i < 0 {
				return &SyntaxError{FileName: d.file, Line: c.Line, Msg: fmt.Sprintf("claim %s: premise %q is not a claim of the spec", c.Name, p)}
			}
			if c.Gate && !s.Claims[i].Gate {
				return &SyntaxError{FileName: d.file, Line: c.Line, Msg: fmt.Sprintf("gate claim %s: premise %q is behind the gate (a gate claim's premises must be gate claims)", c.Name, p)}
			}
		}
		cols := slices.Concat(slices.Collect(maps.Keys(c.A)), slices.Collect(maps.Keys(c.B)), slices.Collect(maps.Keys(c.X1)), c.Each)
		for _, col := range cols {
			if !has(columns, col) {
				return d.errorf(cn, "claim %s: %q is not a run column (have: %s)", c.Name, col, strings.Join(sortedUnique(columns), ", "))
			}
		}
		if err := d.checkSelectors(s, c, cn); err != nil {
			return err
		}
	}
	return d.premiseCycle(s)
}

// premiseCycle returns an error naming a cycle of claim premises, nil when
// there is none.
func (d *decoder) premiseCycle(s *Spec) error {
	const (
		unseen = iota
		open
		done
	)
	state := make(map[string]int, len(s.Claims))
	byName := make(map[string]Claim, len(s.Claims))
	for _, c := range s.Claims {
		byName[c.Name] = c
	}
	var path []string
	var visit func(c Claim) error
	visit = func(c Claim) error {
		switch state[c.Name] {
		case done:
			return nil
		case open:
			i := slices.Index(path, c.Name)
			cycle := strings.Join(append(slices.Clone(path[i:]), c.Name), " → ")
			return &SyntaxError{FileName: d.file, Line: c.Line, Msg: fmt.Sprintf("claim %s: premises form a cycle: %s", c.Name, cycle)}
		}
		state[c.Name] = open
		path = append(path, c.Name)
		for _, p := range c.Premise {
			if err := visit(byName[p]); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[c.Name] = done
		return nil
	}
	for _, c := range s.Claims {
		if err := visit(c); err != nil {
			return err
		}
	}
	return nil
}
