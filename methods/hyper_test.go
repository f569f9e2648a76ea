// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"slices"
	"strings"
	"testing"
)

// TestParamTables checks every method's declaration: unique names, a
// default of the declared kind at every scale that passes its own check.
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
				v := p.Default(scale)
				if kindOf(v) != p.Kind {
					t.Errorf("%s.%s at %s: default %v (%T) is not %v", method, p.Name, scale, v, v, p.Kind)
					continue
				}
				if p.Check != nil {
					if err := p.Check(v); err != nil {
						t.Errorf("%s.%s at %s: default %v fails its check: %v", method, p.Name, scale, v, err)
					}
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
	def, _ := Defaults("dpzo", "small")
	if len(def.Caveats) != 1 || !strings.Contains(def.Caveats[0], "test accuracy") {
		t.Errorf("dpzo's default lr at small: caveats %q, want one about test accuracy", def.Caveats)
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
	for _, tc := range []struct {
		method, scale string
		lr, epochs    float64
		caveat        bool
	}{
		{"nonprivate", "smoke", 5e-3, 8, false},
		{"dpsgd", "smoke", 2e-2, 4, false},
		{"dualpriv", "smoke", 2e-2, 4, false}, // DP-SGD's recipe
		{"dpzo", "smoke", 1e-3, 4, false},
		{"nonprivate", "small", 5e-3, 8, false},
		{"dpsgd", "small", 1e-2, 8, false},
		{"dpzo", "small", 5e-4, 4, true},   // not tuned at small
		{"rapft", "smoke", 2e-2, 4, false}, // DP-SGD's recipe
		{"dpsgd", "full", 2e-4, 1, false},  // the paper's values
	} {
		h, err := Defaults(tc.method, tc.scale)
		if err != nil {
			t.Fatal(err)
		}
		caveat := slices.ContainsFunc(h.Caveats, func(c string) bool { return strings.Contains(c, "test accuracy") })
		if h.LR != tc.lr || h.Epochs != tc.epochs || caveat != tc.caveat {
			t.Errorf("%s at %s: lr %v, epochs %v, test-accuracy caveat %v; want %v, %v, %v", tc.method, tc.scale, h.LR, h.Epochs, caveat, tc.lr, tc.epochs, tc.caveat)
		}
	}
	if h, _ := Defaults("dpzo", "smoke"); h.String("clip_scope") != "derivative" || h.Float("phi") != 0.15 {
		t.Errorf("dpzo at smoke: clip_scope %s, φ %v; want derivative, 0.15", h.String("clip_scope"), h.Float("phi"))
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
