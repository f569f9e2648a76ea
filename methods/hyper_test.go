// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// epsilonsChecked are target budgets at which the tests read defaults:
// table1's, table10's strict ones and values between them.
var epsilonsChecked = []float64{0.1, 0.5, 1, 2, 3, 5, 8, 20, math.Inf(1)}

// TestParamTables checks every method's declaration: unique names, a
// default of the declared kind at every scale (and every ε where it
// depends on ε) that passes its own check.
func TestParamTables(t *testing.T) {
	for _, method := range Names() {
		m, _ := Lookup(method)
		seen := map[string]bool{}
		for _, p := range m.Params() {
			if seen[p.Name] {
				t.Errorf("%s declares %s twice", method, p.Name)
			}
			seen[p.Name] = true
			if p.Doc == "" {
				t.Errorf("%s.%s has no doc", method, p.Name)
			}
			for _, scale := range Scales {
				checkDefault(t, method, p, scale, p.Default(scale))
				tab, ok := p.ByEpsilon[scale]
				if !ok {
					continue
				}
				if err := tab.check(); err != nil {
					t.Errorf("%s.%s at %s: ByEpsilon: %v", method, p.Name, scale, err)
					continue
				}
				for _, d := range tab {
					checkDefault(t, method, p, scale, d.Value)
				}
				if got, want := p.Default(scale), tab.At(ReferenceEpsilon); got != want {
					t.Errorf("%s.%s at %s: Default %v, want the value at ε = %v, %v", method, p.Name, scale, got, ReferenceEpsilon, want)
				}
			}
			for scale := range p.ByEpsilon {
				if !slices.Contains(Scales, scale) {
					t.Errorf("%s.%s: ByEpsilon at unknown scale %q", method, p.Name, scale)
				}
			}
		}
		for _, scale := range Scales {
			if _, err := Defaults(method, scale); err != nil {
				t.Errorf("Defaults(%s, %s): %v", method, scale, err)
			}
		}
	}
	if _, err := Defaults("dpsgd", "huge"); err == nil {
		t.Error("Defaults with an unknown scale: no error")
	}
	for _, eps := range []float64{math.NaN(), 0, -1, math.Inf(-1)} {
		if _, err := DefaultsAt("dpsgd", "smoke", eps); err == nil || !strings.Contains(err.Error(), "epsilon") {
			t.Errorf("DefaultsAt(dpsgd, smoke, %v): error %v, want one about epsilon", eps, err)
		}
	}
}

// checkDefault checks that v, a default of p at scale, has p's kind and
// passes p's check.
func checkDefault(t *testing.T, method string, p Param, scale string, v any) {
	t.Helper()
	if kindOf(v) != p.Kind {
		t.Errorf("%s.%s at %s: default %v (%T) is not %v", method, p.Name, scale, v, v, p.Kind)
		return
	}
	if p.Check != nil {
		if err := p.Check(v); err != nil {
			t.Errorf("%s.%s at %s: default %v fails its check: %v", method, p.Name, scale, v, err)
		}
	}
}

// TestPerEpsilon checks the rule that maps a run's ε to a tuned budget
// (the nearest at or below it, the smallest below them all), ResolveAt's
// reading of a param's defaults (Param.defaultAt) and the table checks,
// through Register's path (checkTables).
func TestPerEpsilon(t *testing.T) {
	inf := math.Inf(1)
	tab := PerEpsilon{{1, "a"}, {3, "b"}, {8, "c"}, {inf, "d"}}
	for _, tc := range []struct {
		eps  float64
		want string
	}{
		{0.1, "a"}, {0.999, "a"}, {1, "a"}, {2.9, "a"}, {3, "b"}, {5, "b"}, {8, "c"}, {1e9, "c"}, {inf, "d"},
	} {
		if got := tab.At(tc.eps); got != tc.want {
			t.Errorf("At(%v) = %v, want %v", tc.eps, got, tc.want)
		}
	}
	if got := (PerEpsilon{{3, 1.0}}).At(inf); got != 1.0 {
		t.Errorf("one budget: At(inf) = %v, want 1", got)
	}
	if got := (PerEpsilon{{1, "a"}, {3, "b"}}).At(inf); got != "b" {
		t.Errorf("without inf: At(inf) = %v, want the largest budget's b", got)
	}
	p := Param{Name: "x", Kind: String, Default: same("other")}
	for _, tc := range []struct {
		desc string
		tab  PerEpsilon
		want string
	}{
		{"empty", PerEpsilon{}, "no budget"},
		{"decreasing", PerEpsilon{{3, "b"}, {1, "a"}}, "increasing"},
		{"repeated", PerEpsilon{{3, "b"}, {3, "a"}}, "increasing"},
		{"zero", PerEpsilon{{0, "a"}}, "epsilon"},
		{"NaN", PerEpsilon{{math.NaN(), "a"}}, "epsilon"},
	} {
		p.ByEpsilon = map[string]PerEpsilon{"smoke": tc.tab}
		if err := checkTables([]Param{p}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s table: error %v, want one containing %q", tc.desc, err, tc.want)
		}
		if v := p.defaultAt("small", 3); v != "other" {
			t.Errorf("%s table at smoke, read at small: %v; want Default's value", tc.desc, v)
		}
	}
	p.ByEpsilon = map[string]PerEpsilon{"smoke": tab}
	if err := checkTables([]Param{p}); err != nil {
		t.Errorf("valid table: %v", err)
	}
	if v := p.defaultAt("smoke", 5); v != "b" {
		t.Errorf("defaultAt(smoke, 5) = %v, want the table's b", v)
	}
}

func TestResolve(t *testing.T) {
	got, err := Resolve("dpzo", "smoke", map[string]any{
		"lr": 0.01, "batch_size": int64(16), "epochs": int64(3), "lora_targets": "q, v",
		"accountant": "pld", "phi": 0.1, "diagnostics": "off",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.LR != 0.01 || got.BatchSize != 16 || got.Epochs != 3 || !slices.Equal(got.LoRATargets, []string{"q", "v"}) ||
		got.Accountant != "pld" || got.Float("phi") != 0.1 || got.Diagnostics || got.Int("batch_size") != 16 {
		t.Errorf("Resolve: got %+v", got)
	}
	if len(got.Caveats) != 0 {
		t.Errorf("lr given: caveats %v, want none", got.Caveats)
	}
	if h, _ := Resolve("dpsgd", "smoke", map[string]any{"lora_rank": int64(64)}); h.LoRAAlpha != 128 {
		t.Errorf("lora_rank 64 without lora_alpha: α = %v, want 2r = 128", h.LoRAAlpha)
	}
	if h, _ := Resolve("dpsgd", "smoke", map[string]any{"lora_rank": int64(64), "lora_alpha": 3.0}); h.LoRAAlpha != 3 {
		t.Errorf("lora_alpha 3: α = %v", h.LoRAAlpha)
	}
	// Every registered method's lr is now chosen on public data at smoke
	// and small (TestTunedDefaults); the caveat is for one that is not.
	if !untuned(loraParams(), "lr", "small") {
		t.Error("the plain LoRA recipe's lr counts as tuned at small; want untuned (the test-accuracy caveat)")
	}
	if untuned(withTuned(loraParams(), "lr", same(0.01), "small"), "lr", "small") {
		t.Error("an lr tuned at small counts as untuned")
	}
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"dpsgd", map[string]any{"lr": "fast"}, "lr = fast: want a number"},
		{"dpsgd", map[string]any{"lrr": 0.1}, `method dpsgd has no hyperparameter "lrr"`},
		{"dpsgd", map[string]any{"phi": 0.1}, `no hyperparameter "phi"`}, // dpzo's, not dpsgd's
		{"dpsgd", map[string]any{"lr": -1.0}, "lr"},
		{"dpsgd", map[string]any{"batch_size": 2.5}, "batch_size"},
		{"dpsgd", map[string]any{"batch_size": int64(0)}, "batch_size"},
		{"dpsgd", map[string]any{"optimizer": "lion"}, "optimizer"},
		{"dpsgd", map[string]any{"accountant": "gdp"}, "accountant"},
		{"dpsgd", map[string]any{"schedule": "linear"}, "schedule"},
		{"dpsgd", map[string]any{"warmup": 2.0}, "warmup"},
		{"dpsgd", map[string]any{"clip": 0.0}, "clip"},
		{"dpsgd", map[string]any{"lora_targets": " , "}, "lora_targets"},
		{"dpsgd", map[string]any{"epochs": true}, "epochs"},
		{"dpsgd", map[string]any{"diagnostics": "maybe"}, "diagnostics"},
		{"dpsgd", map[string]any{"epochs": 1e300}, "epochs = 1e+300: want a value in (0, 1e+06]"},
		{"dpsgd", map[string]any{"lora_targets": "q, qq"}, `"qq" is not one of q, k, v, o, fc1, fc2`},
		{"dpsgd", map[string]any{"lora_parts": "brain"}, `"brain" is not one of lm, projector, vision`},
		{"dualpriv", map[string]any{"update_ratio": 0.0}, "update_ratio"},
		{"dualpriv", map[string]any{"tokens": "all"}, "tokens"},
		{"dpzo", map[string]any{"phi": 0.0}, "phi"},
		{"nosuch", nil, "unknown method"},
	} {
		if _, err := Resolve(tc.method, "smoke", tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%s, %v): error %v, want one containing %q", tc.method, tc.params, err, tc.want)
		}
	}
}

func TestSteps(t *testing.T) {
	h := Hyper{Epochs: 4, BatchSize: 32}
	if s, q := h.steps(277); s != 35 || q != 32.0/277 {
		t.Errorf("steps(277) = %d, %v; want 35 (⌈4·277/32⌉), 32/277", s, q)
	}
	h = Hyper{Epochs: 1, BatchSize: 64}
	if s, q := h.steps(10); s != 1 || q != 1 {
		t.Errorf("steps(10) with B = 64: %d, %v; want 1, 1", s, q)
	}
}

// TestTunedDefaults checks the defaults chosen on public validation data
// (experiments tune-baselines): their values, that runs keeping them carry
// no test-accuracy caveat at the scales tuned, and that runs keeping an
// untuned learning rate still do.
func TestTunedDefaults(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		method, scale string
		eps           float64
		lr, epochs    float64
		caveat        bool
	}{
		{"nonprivate", "smoke", 3, 5e-3, 8, false},
		{"dpsgd", "smoke", 3, 2e-2, 4, false},
		{"dualpriv", "smoke", 3, 2e-2, 4, false}, // DP-SGD's recipe
		{"dpzo", "smoke", 3, 3e-3, 512, false},
		{"dpzo", "smoke", inf, 3e-3, 512, false},
		// dpzo at smoke: chosen at ε = 3, again at ε = 1 (fewer steps),
		// and at table10's budgets.
		{"dpzo", "smoke", 1, 3e-3, 128, false},
		{"dpzo", "smoke", 0.5, 3e-3, 128, false},
		{"dpzo", "smoke", 0.1, 1e-4, 8, false},
		{"dpzo", "smoke", 0.3, 1e-4, 8, false},
		{"dpzo", "smoke", 0.05, 1e-4, 8, false},
		{"dpzo", "smoke", 0.01, 1e-4, 8, false},
		{"dpzo", "smoke", 2, 3e-3, 128, false},
		{"dpzo", "smoke", 8, 3e-3, 512, false},
		{"nonprivate", "small", 3, 5e-3, 8, false},
		{"dpsgd", "small", 3, 1e-2, 8, false},
		{"dpzo", "small", 3, 1e-2, 128, false},
		{"dpzo", "small", 1, 1e-2, 128, false},
		{"dpzo", "small", inf, 1e-2, 128, false},
		{"dpzo", "small", 0.5, 1e-2, 32, false},
		{"dpzo", "small", 0.1, 1e-3, 8, false},
		{"dpzo", "small", 0.05, 1e-3, 8, false},
		{"rapft", "smoke", 3, 2e-2, 4, false}, // DP-SGD's recipe
		{"dpsgd", "full", 3, 2e-4, 1, false},  // the paper's values
		// At small the ε = 3 choice at every ε ≥ 1, and table10's below.
		{"dpsgd", "small", 1, 1e-2, 8, false},
		{"dpsgd", "small", inf, 1e-2, 8, false},
		{"dpsgd", "small", 0.5, 1e-2, 2, false},
		{"dpsgd", "small", 0.7, 1e-2, 2, false},
		{"dpsgd", "small", 0.1, 5e-4, 2, false},
		{"dpsgd", "small", 0.01, 5e-4, 2, false},
		{"dualpriv", "small", 0.05, 5e-4, 2, false},
		// One choice at full (the paper's), used at every ε.
		{"dpsgd", "full", 1, 2e-4, 1, false},
		{"nonprivate", "smoke", inf, 5e-3, 8, false},
		// dpsgd at smoke, chosen at each ε of table1 and table10, and
		// between them the choice at the nearest tuned ε at or below.
		{"dpsgd", "smoke", 0.01, 5e-4, 8, false},
		{"dpsgd", "smoke", 0.1, 5e-4, 8, false},
		{"dpsgd", "smoke", 0.5, 1e-2, 8, false},
		{"dpsgd", "smoke", 1, 1e-2, 8, false},
		{"dualpriv", "smoke", 1, 1e-2, 8, false},
		{"rapft", "smoke", 1, 1e-2, 8, false},
		{"dpsgd", "smoke", 2, 1e-2, 8, false},
		{"dpsgd", "smoke", 5, 2e-2, 4, false},
		{"dpsgd", "smoke", 8, 1e-2, 8, false},
		{"dpsgd", "smoke", 100, 1e-2, 8, false},
		{"dpsgd", "smoke", inf, 2e-2, 4, false},
	} {
		h, err := DefaultsAt(tc.method, tc.scale, tc.eps)
		if err != nil {
			t.Fatal(err)
		}
		caveat := slices.ContainsFunc(h.Caveats, func(c string) bool { return strings.Contains(c, "test accuracy") })
		if h.LR != tc.lr || h.Epochs != tc.epochs || caveat != tc.caveat {
			t.Errorf("%s at %s, ε = %v: lr %v, epochs %v, test-accuracy caveat %v; want %v, %v, %v", tc.method, tc.scale, tc.eps, h.LR, h.Epochs, caveat, tc.lr, tc.epochs, tc.caveat)
		}
	}
	if h, _ := Defaults("dpzo", "smoke"); h.String("clip_scope") != "derivative" || h.Float("phi") != 1e-3 {
		t.Errorf("dpzo at smoke: clip_scope %s, φ %v; want derivative, 0.001", h.String("clip_scope"), h.Float("phi"))
	}
	if h, _ := Defaults("dpzo", "small"); h.String("clip_scope") != "derivative" || h.Float("phi") != 1e-3 {
		t.Errorf("dpzo at small: clip_scope %s, φ %v; want derivative, 0.001", h.String("clip_scope"), h.Float("phi"))
	}
	for _, name := range Names() {
		m, _ := Lookup(name)
		for _, p := range m.Params() {
			for _, s := range p.Tuned {
				if !slices.Contains(Scales, s) {
					t.Errorf("%s: %s tuned at unknown scale %q", name, p.Name, s)
				}
			}
		}
	}
}

// TestSharedRecipe checks that Dual-Priv and Rap-FT take DP-SGD's recipe
// at every scale and ε, so that they differ from it by their mechanisms
// alone.
func TestSharedRecipe(t *testing.T) {
	for _, scale := range Scales {
		for _, eps := range epsilonsChecked {
			want, err := DefaultsAt("dpsgd", scale, eps)
			if err != nil {
				t.Fatal(err)
			}
			for _, method := range []string{"dualpriv", "rapft"} {
				h, err := DefaultsAt(method, scale, eps)
				if err != nil {
					t.Fatal(err)
				}
				got := h.Values()
				for name, v := range want.Values() {
					if name == "train_embeddings" { // dpsgd's alone
						continue
					}
					if !reflect.DeepEqual(got[name], v) {
						t.Errorf("%s at %s, ε = %v: %s = %v, want DP-SGD's %v", method, scale, eps, name, got[name], v)
					}
				}
			}
		}
	}
}
