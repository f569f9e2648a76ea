// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"errors"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// base is a small valid spec; tests append to it or replace lines.
const base = `name: t
description: a test spec
scale: smoke
delta: 1e-5
tasks: [fashion-vqa]
methods:
  - name: nonprivate
    sweep: {epsilon: [inf]}
  - name: dpsgd
    params: {lora_rank: 8}
params: {lr: 0.001, peft: lora}
sweep:
  epsilon: [1, 8, inf]
  seed: [1, 2]
attacks: [loss-mia]
tables:
  - {name: tab, rows: [epsilon_target], columns: [method], metrics: [acc], best: max}
plots:
  - {name: fig, x: epsilon_target, y: acc, series: method}
`

func TestParseValid(t *testing.T) {
	s, err := Parse("t.yaml", []byte(base), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := &Spec{
		FileName:    "t.yaml",
		Name:        "t",
		Description: "a test spec",
		Scale:       "smoke",
		Delta:       1e-5,
		Tasks:       []string{"fashion-vqa"},
		Methods: []Method{
			{Name: "nonprivate", Sweep: Sweep{Axes: []Axis{{Name: "epsilon", Values: []float64{math.Inf(1)}}}}},
			{Name: "dpsgd", Params: map[string]any{"lora_rank": int64(8)}},
		},
		Params: map[string]any{"lr": 0.001, "peft": "lora"},
		Sweep: Sweep{Axes: []Axis{
			{Name: "epsilon", Values: []float64{1, 8, math.Inf(1)}},
			{Name: "seed", Values: []float64{1, 2}},
		}},
		Attacks: []string{"loss-mia"},
		Tables:  []Table{{Name: "tab", Rows: []string{"epsilon_target"}, Columns: []string{"method"}, Metrics: []string{"acc"}, Best: "max"}},
		Plots:   []Plot{{Name: "fig", Kind: "line", X: "epsilon_target", Y: "acc", Series: "method", Band: "std"}},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		desc     string
		old, new string // replace old by new in base
		line     int
		msg      string
	}{
		{"unknown top key", "scale: smoke", "scale: smoke\ncolour: red", 4, `unknown key "colour"`},
		{"unknown method key", "    params: {lora_rank: 8}", "    parms: {lora_rank: 8}", 10, `unknown key "parms"`},
		{"unknown method", "  - name: dpsgd", "  - name: dpsgdd", 9, `unknown method "dpsgdd"`},
		{"unknown task", "tasks: [fashion-vqa]", "tasks: [fashion-vqa, mnist]", 5, `unknown task "mnist"`},
		{"unknown attack", "attacks: [loss-mia]", "attacks: [lira]", 15, `unknown attack "lira"`},
		{"unknown attack option", "attacks: [loss-mia]", "attacks:\n  - {name: mink-mia, kk: 5}", 16, `attack mink-mia has no option "kk" (known: k)`},
		{"attack option value", "attacks: [loss-mia]", "attacks:\n  - name: maxrenyi-mia\n    slices: [img, text]", 17, `attack maxrenyi-mia: unknown slice "text"`},
		{"attack option metric", "metrics: [acc]", "metrics: [acc, mink5_auc]", 17, `metric "mink5_auc" is a result of attack mink-mia, which the spec does not run`},
		{"unknown scale", "scale: smoke", "scale: huge", 3, `unknown scale "huge"`},
		{"unknown axis", "  seed: [1, 2]", "  seeds: [1, 2]", 14, `unknown axis "seeds"`},
		{"epsilon zero", "epsilon: [1, 8, inf]", "epsilon: [1, 0, inf]", 13, "epsilon is 0, must be > 0 or inf"},
		{"epsilon negative", "epsilon: [1, 8, inf]", "epsilon: [-1]", 13, "must be > 0 or inf"},
		{"epsilon nan", "epsilon: [1, 8, inf]", "epsilon: [.nan]", 13, "must be > 0 or inf"},
		{"epsilon string", "epsilon: [1, 8, inf]", "epsilon: [one]", 13, `must be a number, not "one"`},
		{"delta one", "delta: 1e-5", "delta: 1", 4, "delta is 1, must be in [0, 1)"},
		{"delta negative", "delta: 1e-5", "delta: -0.1", 4, "must be in [0, 1)"},
		{"delta inf", "delta: 1e-5", "delta: .inf", 4, "must be in [0, 1)"},
		{"delta list", "delta: 1e-5", "delta: [1e-5]", 4, "delta must be a single value"},
		{"name type", "name: t", "name: [t]", 1, "name must be a single value"},
		{"name path", "name: t", "name: ../etc", 1, "must match"},
		{"duplicate key", "scale: smoke", "scale: smoke\nscale: small", 4, `duplicate key "scale"`},
		{"duplicate method", "  - name: dpsgd", "  - name: nonprivate", 9, `duplicate method "nonprivate"`},
		{"duplicate value", "seed: [1, 2]", "seed: [1, 1]", 14, "duplicate value 1"},
		{"seed fraction", "seed: [1, 2]", "seed: [1.5]", 14, "not an integer"},
		{"seed negative", "seed: [1, 2]", "seed: [-1]", 14, "not in [0, 2⁵³]"},
		{"beta range", "seed: [1, 2]", "seed: [1]\n  beta: [1.5]", 15, "sweep.beta: 1.5 is not in [0, 1]"},
		{"alpha zero", "seed: [1, 2]", "seed: [1]\n  dirichlet_alpha: [0.5, 0]", 15, "sweep.dirichlet_alpha: 0 is not > 0"},
		{"clients zero", "seed: [1, 2]", "seed: [1]\n  clients: [0]", 15, "sweep.clients"},
		{"train_holdout two", "seed: [1, 2]", "seed: [1]\n  train_holdout: [0, 2]", 15, "sweep.train_holdout: 2 is not 0 or 1"},
		{"train_holdout in params", "params: {lr: 0.001, peft: lora}", "params: {train_holdout: 1}", 11, "train_holdout is a data param: sweep it as an axis"},
		{"data param in params", "params: {lr: 0.001, peft: lora}", "params: {clients: 4}", 11, "clients is a data param: sweep it as an axis"},
		{"base param in params", "params: {lr: 0.001, peft: lora}", "params: {vision_patch: 4}", 11, "vision_patch is a base param: sweep it as an axis"},
		{"patch not a divisor", "seed: [1, 2]", "seed: [1]\n  vision_patch: [4, 5]", 15, "sweep.vision_patch: 5 does not divide 28"},
		{"param also axis", "  seed: [1, 2]", "  seed: [1, 2]\n  lr: [0.1]", 11, "lr is both a hyperparameter and a sweep axis"},
		{"unknown top key late", "attacks: [loss-mia]", "attacks: [loss-mia]\nxx: 1", 16, `unknown key "xx"`},
		{"param list", "params: {lr: 0.001, peft: lora}", "params: {lr: [1]}", 11, "params.lr must be a single value"},
		{"param inf", "params: {lr: 0.001, peft: lora}", "params: {lr: .inf}", 11, "not a finite number"},
		{"param reserved", "params: {lr: 0.001, peft: lora}", "params: {sigma: 1}", 11, "reserved run column"},
		{"param epsilon", "params: {lr: 0.001, peft: lora}", "params: {epsilon: 1}", 11, "set by the sweep"},
		{"missing tasks", "tasks: [fashion-vqa]\n", "", 1, `missing key "tasks"`},
		{"empty tasks", "tasks: [fashion-vqa]", "tasks: []", 5, "the list is empty"},
		{"zip lengths", "seed: [1, 2]", "seed: [1, 2]\n  zip:\n    - {beta: [0.1, 0.2], chunks: [1]}", 16, "chunks has 1 values, beta has 2"},
		{"zip and axis", "seed: [1, 2]", "seed: [1, 2]\n  zip:\n    - {seed: [1, 2], chunks: [1, 2]}", 16, `axis "seed" appears twice`},
		{"best", "best: max", "best: biggest", 17, "best must be min or max"},
		{"plot kind", "x: epsilon_target", "kind: pie, x: epsilon_target", 19, "plot kind must be one of"},
		{"table column", "columns: [method]", "columns: [colour]", 17, `table tab: "colour" is not a run column`},
		{"table epsilon", "columns: [method]", "columns: [epsilon]", 17, `"epsilon" is not a run column`},
		{"table pool", "columns: [method]", "columns: [method], pool: [colour]", 17, `table tab: "colour" is not a run column`},
		{"table pool row", "columns: [method]", "columns: [method], pool: [method]", 17, "table tab: pooled column method is a row, a column or the seed"},
		{"table pool seed", "columns: [method]", "columns: [method], pool: [seed]", 17, "pooled column seed"},
		{"alias", "tasks: [fashion-vqa]", "tasks: &t [fashion-vqa]\nattack2: *t", 6, "aliases are not supported"},
		{"yaml syntax", "scale: smoke", "scale: smoke\n  - x: [", 4, ""},
		// A tab may separate a value from its key (line 3), not indent
		// one (line 4); yaml.v3 says line 3.
		{"tabs", "scale: smoke", "scale:\tsmoke\n\tdelta: 1", 4, "tab character"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			src := strings.Replace(base, tc.old, tc.new, 1)
			if src == base {
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

// TestParseYAMLLines checks the line of YAML syntax errors against the
// line a reader points at, derived by hand for each spec: the line of the
// unclosed bracket or quote, of the badly indented key, of the tab.
// yaml.v3 itself reports the 0-based line where the enclosing construct
// began (given beside each case), one or more lines too early.
func TestParseYAMLLines(t *testing.T) {
	for _, tc := range []struct {
		desc string
		src  string
		line int
		msg  string
	}{
		{"unclosed list", // yaml.v3: line 4
			"name: t\ndescription: x\nscale: smoke\ndelta: 1e-5\ntasks: [fashion-vqa\nmethods:\n  - name: dpsgd\nsweep:\n  epsilon: [1]\n",
			5, "did not find expected ',' or ']'"},
		{"unclosed mapping", // yaml.v3: line 4
			"name: t\ndescription: x\nscale: smoke\ndelta: 1e-5\nparams: {lr: 1, peft: lora\nmethods:\n  - name: dpsgd\n",
			5, "did not find expected ',' or '}'"},
		{"unclosed list on the first line", // yaml.v3: line 1
			"name: [t\nscale: smoke\n",
			1, ""},
		{"unclosed list in a nested mapping", // yaml.v3: line 2
			"methods:\n  - name: dpsgd\n    params: {lora_rank: 8}\nsweep:\n  epsilon: [1, 3, 8\n  seed: [1]\n",
			5, ""},
		{"unclosed list over several lines", // the line of the `[`
			"name: t\nsweep:\n  epsilon: [1,\n    3,\n    8\n  seed: [1]\n",
			3, ""},
		{"unclosed quote", // yaml.v3: line 2
			"name: t\ndescription: \"a spec\nscale: smoke\n",
			2, "end of stream"},
		{"key indented one too far", // yaml.v3: line 8
			"name: t\ndescription: x\nscale: smoke\ndelta: 1e-5\ntasks: [fashion-vqa]\nmethods:\n  - name: dpsgd\nsweep:\n  epsilon: [1]\n   seed: [1]\n",
			10, "did not find expected key"},
		{"key indented one too little", // yaml.v3: line 6
			"name: t\ndescription: x\nscale: smoke\ndelta: 1e-5\ntasks: [fashion-vqa]\nmethods:\n  - name: dpsgd\n    params:\n      lr: 1\n     lora_rank: 2\nattacks: [loss-mia]\n",
			10, ""},
		{"list item indented one too little", // yaml.v3: line 3
			"name: t\nmethods:\n  - name: nonprivate\n - name: dpsgd\n",
			4, ""},
		{"tab indentation", // yaml.v3: line 3
			"name: t\nsweep:\n\tseed: [1]\n",
			3, "cannot start any token"},
		{"stray text after a list", // a line that is neither key nor item
			"name: t\ntasks:\n  - fashion-vqa\noops\nscale: smoke\n",
			4, ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src), nil)
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

func TestOverrides(t *testing.T) {
	for _, tc := range []struct {
		desc string
		set  []string
		want func(*Spec) any
		val  any
	}{
		{"scalar", []string{"scale=full"}, func(s *Spec) any { return s.Scale }, "full"},
		{"delta", []string{"delta=1e-6"}, func(s *Spec) any { return s.Delta }, 1e-6},
		{"list", []string{"sweep.seed=[7, 8, 9]"}, func(s *Spec) any { v, _ := s.Sweep.Lookup("seed"); return v }, []float64{7, 8, 9}},
		{"single", []string{"sweep.epsilon=inf"}, func(s *Spec) any { v, _ := s.Sweep.Lookup("epsilon"); return v }, []float64{math.Inf(1)}},
		{"new axis", []string{"sweep.beta=[0, 0.5]"}, func(s *Spec) any { v, _ := s.Sweep.Lookup("beta"); return v }, []float64{0, 0.5}},
		{"param", []string{"params.lr=0.1"}, func(s *Spec) any { return s.Params["lr"] }, 0.1},
		{"method by name", []string{"methods.dpsgd.params.lora_rank=4"}, func(s *Spec) any { return s.Methods[1].Params["lora_rank"] }, int64(4)},
		{"method by index", []string{"methods.1.params.alpha=16"}, func(s *Spec) any { return s.Methods[1].Params["alpha"] }, int64(16)},
		{"new section", []string{"methods.nonprivate.params.lr=0.5"}, func(s *Spec) any { return s.Methods[0].Params["lr"] }, 0.5},
		{"in order", []string{"scale=full", "scale=small"}, func(s *Spec) any { return s.Scale }, "small"},
		{"empty string", []string{"description="}, func(s *Spec) any { return s.Description }, ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(base), &Options{Overrides: tc.set})
			if err != nil {
				t.Fatalf("Parse with %q: %v", tc.set, err)
			}
			if diff := cmp.Diff(tc.val, tc.want(s)); diff != "" {
				t.Errorf("Parse with %q (-want +got):\n%s", tc.set, diff)
			}
		})
	}
}

func TestOverrideErrors(t *testing.T) {
	for _, tc := range []struct {
		set, msg string
	}{
		{"delta=2", "delta is 2, must be in [0, 1)"},
		{"delta=abc", `delta must be a number, not "abc"`},
		{"sweep.epsilon=[0]", "epsilon is 0"},
		{"colour=red", `unknown key "colour"`},
		{"methods.dpzo.params.x=1", `no element named "dpzo"`},
		{"methods.7=1", "index 7 out of range"},
		{"scale.x=1", "scale is not a mapping or a list"},
		{"novalue", "want key=value"},
		{"=1", "want key=value"},
		{"sweep..seed=1", "empty key element"},
		{"sweep.seed=[1, 2", "bad value"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(base), &Options{Overrides: []string{tc.set}})
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse with --set %s: got %v, want a *SyntaxError", tc.set, err)
			}
			if se.FileName != "--set "+tc.set || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Parse with --set %s: got %q, want \"--set %s: ...%s...\"", tc.set, err, tc.set, tc.msg)
			}
		})
	}
}

// TestOverrideSources checks that errors name an override by what the
// user typed when Sources says so, and by --set otherwise.
func TestOverrideSources(t *testing.T) {
	for _, tc := range []struct {
		desc     string
		set, src []string
		want     string
	}{
		{"decoded value", []string{"scale=bogus"}, []string{"--scale bogus"}, `--scale bogus: unknown scale "bogus"`},
		{"value in a list", []string{"sweep.seed=[1, 1]"}, []string{"--seeds 1,1"}, "--seeds 1,1: sweep.seed: duplicate value 1"},
		{"override itself", []string{"scale.x=1"}, []string{"--scale x"}, "--scale x: scale is not a mapping or a list"},
		{"second of two", []string{"scale=smoke", "delta=2"}, []string{"--scale smoke"}, "--set delta=2: delta is 2"},
		{"empty source", []string{"delta=2"}, []string{""}, "--set delta=2: delta is 2"},
	} {
		_, err := Parse("t.yaml", []byte(base), &Options{Overrides: tc.set, Sources: tc.src})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: Parse with %q from %q: got %v, want an error starting %q", tc.desc, tc.set, tc.src, err, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	names := &Names{Methods: []string{"mine"}, Tasks: []string{"fashion-vqa"}, Scales: []string{"smoke"}, Attacks: []string{"loss-mia"}}
	_, err := Parse("t.yaml", []byte(base), &Options{Names: names})
	if err == nil || !strings.Contains(err.Error(), `unknown method "nonprivate" (known: mine)`) {
		t.Errorf("Parse with custom names: got %v, want an unknown method error", err)
	}
}

func TestKnownParams(t *testing.T) {
	names := withParams(map[string][]string{
		"dpsgd":      {"lr", "peft", "lora_rank", "clip"},
		"nonprivate": {"lr", "peft", "clip"},
		"dpzo":       {"lr", "peft", "lora_rank"},
	})
	if _, err := Parse("t.yaml", []byte(base), &Options{Names: names}); err != nil {
		t.Errorf("Parse with known params: %v", err)
	}
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"methods.dpsgd.params.lora_rnak=8"}, `method dpsgd has no hyperparameter "lora_rnak" (known: lr, peft, lora_rank, clip)`},
		{[]string{"params.lora_rank=8"}, `method nonprivate has no hyperparameter "lora_rank"`},
		{[]string{"methods.nonprivate.params.lr=0.1"}, ""},
		// Sweep values reach the methods too, and are checked.
		{[]string{"sweep.clip=[0.5, 1]"}, ""},
		{[]string{"sweep.beta=[0.5]"}, `sweep axis beta: method nonprivate has no hyperparameter "beta"`},
		{[]string{"methods.1.params.lr=-1"}, `lr = -1: want a value ≥ 0`},
		// A method and a task of different architectures.
		{[]string{"methods.1.name=dpzo"}, ""},
		{[]string{"methods.1.name=dpzo", "tasks=[fashion-cls]"}, "method dpzo fine-tunes a tinymllm; task fashion-cls is posed to a vit"},
	} {
		_, err := Parse("t.yaml", []byte(base), &Options{Names: names, Overrides: tc.set})
		if tc.want == "" {
			if err != nil {
				t.Errorf("Parse with --set %s: %v", tc.set, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse with --set %s: got %v, want %q", tc.set, err, tc.want)
		}
	}
	// The error points at the offending key's line.
	src := strings.Replace(base, "params: {lora_rank: 8}", "params: {lora_rank: 8, alpha: 16}", 1)
	_, err := Parse("t.yaml", []byte(src), &Options{Names: names})
	if err == nil || err.Error() != `t.yaml:10: method dpsgd has no hyperparameter "alpha" (known: lr, peft, lora_rank, clip)` {
		t.Errorf("Parse with an unknown method param: got %v", err)
	}
	src = strings.Replace(base, "sweep:\n  epsilon", "sweep:\n  beta: [0.1]\n  epsilon", 1)
	_, err = Parse("t.yaml", []byte(src), &Options{Names: names})
	if err == nil || !strings.HasPrefix(err.Error(), `t.yaml:13: sweep axis beta: method nonprivate has no hyperparameter "beta"`) {
		t.Errorf("Parse with a sweep axis no method declares: got %v", err)
	}
}

func TestEmbedded(t *testing.T) {
	infos, err := List(nil)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var got []string
	for _, in := range infos {
		got = append(got, in.Name)
		if in.Description == "" {
			t.Errorf("spec %s has no description", in.Name)
		}
	}
	for _, want := range []string{"fig1", "table1"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("List: got %q, want it to include %s", got, want)
		}
	}
	if _, err := Load("nope", nil); err == nil || !strings.Contains(err.Error(), "table1") {
		t.Errorf("Load(nope): got %v, want an error listing the embedded specs", err)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		eps, delta float64
		epsOK      bool
		deltaOK    bool
	}{
		{1, 0, true, true},
		{math.Inf(1), 1e-5, true, true},
		{0, 1, false, false},
		{-1, -1e-9, false, false},
		{math.NaN(), math.NaN(), false, false},
		{math.Inf(-1), math.Inf(1), false, false},
		{1e-300, 0.999999, true, true},
	} {
		if got := CheckEpsilon(tc.eps) == nil; got != tc.epsOK {
			t.Errorf("CheckEpsilon(%v) ok = %v, want %v", tc.eps, got, tc.epsOK)
		}
		if got := CheckDelta(tc.delta) == nil; got != tc.deltaOK {
			t.Errorf("CheckDelta(%v) ok = %v, want %v", tc.delta, got, tc.deltaOK)
		}
	}
}

func TestDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want any // params["diagnostics"], nil for absent
		err  string
	}{
		{"", nil, ""},
		{"diagnostics=on", nil, ""},
		{"diagnostics=off", false, ""},
		{"diagnostics=maybe", nil, `diagnostics must be on or off, not "maybe"`},
	} {
		var opts Options
		if tc.set != "" {
			opts.Overrides = []string{tc.set}
		}
		s, err := Parse("t.yaml", []byte(base), &opts)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("--set %s: error %v, want %q", tc.set, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("--set %s: %v", tc.set, err)
		}
		if got := s.Params["diagnostics"]; got != tc.want {
			t.Errorf("--set %s: params.diagnostics = %v, want %v", tc.set, got, tc.want)
		}
	}
}

func TestVariants(t *testing.T) {
	src := strings.Replace(base, "  - name: dpsgd\n    params: {lora_rank: 8}\n",
		"  - name: dpsgd\n    params: {lora_rank: 8}\n  - {name: dpsgd, variant: no-clip, params: {lora_rank: 4}}\n", 1)
	s, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range s.Expand() {
		v, _ := c.Params[VariantParam].(string)
		got[c.Method+"/"+v]++
		if v == "no-clip" && c.Params["lora_rank"] != int64(4) {
			t.Errorf("variant run %v: lora_rank %v, want 4", &c, c.Params["lora_rank"])
		}
	}
	if want := map[string]int{"nonprivate/": 2, "dpsgd/": 6, "dpsgd/no-clip": 6}; !maps.Equal(got, want) {
		t.Errorf("runs by method/variant %v, want %v", got, want)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"  - name: dpsgd\n    params: {lora_rank: 8}\n", "  - name: dpsgd\n  - name: dpsgd\n", `duplicate method "dpsgd" (give each entry its own variant)`},
		{"  - name: dpsgd\n", "  - {name: dpsgd, variant: a}\n  - {name: dpsgd, variant: a}\n  - name: dpsgd\n", `duplicate method "dpsgd" variant "a"`},
		{"  - name: dpsgd\n", "  - {name: dpsgd, variant: Bad!}\n  - name: dpsgd\n", "method variant"},
	} {
		_, err := Parse("t.yaml", []byte(strings.Replace(base, tc.from, tc.to, 1)), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.to, err, tc.want)
		}
	}
}
