// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, method := range Names() {
		for _, scale := range []string{"smoke", "small", "full"} {
			h, err := Defaults(method, scale)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("Defaults(%s, %s) invalid: %v", method, scale, err)
			}
		}
	}
	if _, err := Defaults("dpsgd", "huge"); err == nil {
		t.Error("Defaults with an unknown scale: no error")
	}
	h, _ := Defaults("dpsgd", "smoke")
	got, ignored, err := h.Parse(map[string]any{
		"lr": 0.01, "batch_size": int64(16), "epochs": int64(3), "lora_targets": "q, v",
		"accountant": "pld", "retention": 0.4, "phi": 0.1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.LR != 0.01 || got.BatchSize != 16 || got.Epochs != 3 || !slices.Equal(got.LoRATargets, []string{"q", "v"}) || got.Accountant != "pld" || got.Phi != 0.1 {
		t.Errorf("Parse: got %+v", got)
	}
	if !slices.Equal(ignored, []string{"retention"}) {
		t.Errorf("ignored = %v, want [retention]", ignored)
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"lr": "fast"}, "lr"},
		{map[string]any{"lr": -1.0}, "lr"},
		{map[string]any{"batch_size": 2.5}, "batch_size"},
		{map[string]any{"batch_size": int64(0)}, "batch_size"},
		{map[string]any{"optimizer": "lion"}, "optimizer"},
		{map[string]any{"accountant": "gdp"}, "accountant"},
		{map[string]any{"schedule": "linear"}, "schedule"},
		{map[string]any{"warmup": 2.0}, "warmup"},
		{map[string]any{"clip": 0.0}, "clip"},
		{map[string]any{"lora_targets": " , "}, "lora_targets"},
		{map[string]any{"epochs": true}, "epochs"},
	} {
		if _, _, err := h.Parse(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%v): error %v, want one naming %s", tc.params, err, tc.want)
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
