// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func accountJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, _, err := run(t, append([]string{"account", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("repro account %v: %v", args, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("repro account %v printed %q: %v", args, out, err)
	}
	return m
}

func TestAccountRDP(t *testing.T) {
	// Opacus accountants_test.py: ε = 7.32911117143 (7 places).
	m := accountJSON(t, "--accountant", "rdp", "--sigma", "1.5", "--sample-rate", "0.04", "--steps", "2250", "--delta", "1e-5")
	if e := m["epsilon"].(float64); math.Abs(e-7.32911117143) > 5e-8 {
		t.Errorf("epsilon = %v, want 7.32911117143", e)
	}
	for _, k := range []string{"epsilon", "delta", "sigma", "sample_rate", "steps", "accountant", "order"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %v", k, m)
		}
	}
	if m["accountant"] != "rdp" || m["sigma"] != 1.5 || m["steps"] != 2250.0 || m["sample_rate"] != 0.04 || m["delta"] != 1e-5 {
		t.Errorf("JSON echoes wrong inputs: %v", m)
	}
}

func TestAccountPLD(t *testing.T) {
	// Opacus accountants_test.py PRV value 6.777395712150674 (an upper
	// bound with ε error 0.01); the issue asks for agreement within 0.03.
	m := accountJSON(t, "--accountant", "pld", "--sigma", "1.5", "--sample-rate", "0.04", "--steps", "2250", "--delta", "1e-5", "--tpr-at-fpr", "0.01")
	if e := m["epsilon"].(float64); math.Abs(e-6.777395712150674) > 0.03 {
		t.Errorf("epsilon = %v, want 6.7774 ± 0.03", e)
	}
	if _, ok := m["order"]; ok || m["accountant"] != "pld" {
		t.Errorf("pld JSON: %v", m)
	}
	// Any (ε, δ)-DP mechanism has TPR ≤ e^ε·FPR + δ.
	tpr := m["tpr_bound"].(float64)
	if e := m["epsilon"].(float64); tpr <= 0.01 || tpr > math.Exp(e)*0.01+1e-5 {
		t.Errorf("tpr_bound = %v at FPR 0.01, ε = %v", tpr, e)
	}
	// Calibration: Opacus get_noise_multiplier with the PRV accountant
	// gives σ = 1.34765625 for ε = 8, δ = 1e-5, q = 0.04, 90 epochs; the
	// issue asks for agreement within 2–3%.
	m = accountJSON(t, "--accountant", "pld", "--epsilon", "8", "--sample-rate", "0.04", "--steps", "2250", "--delta", "1e-5")
	if s, e := m["sigma"].(float64), m["epsilon"].(float64); math.Abs(s/1.34765625-1) > 0.02 || e > 8 {
		t.Errorf("pld calibration: σ = %v, ε = %v, want σ ≈ 1.34765625 and ε ≤ 8", s, e)
	}
}

func TestAccountCalibrate(t *testing.T) {
	// Opacus get_noise_multiplier (RDP): σ = 1.416 for ε=8, δ=1e-5,
	// q=0.04, 2250 steps.
	m := accountJSON(t, "--epsilon", "8", "--sample-rate", "0.04", "--steps", "2250", "--delta", "1e-5")
	s, e := m["sigma"].(float64), m["epsilon"].(float64)
	if s > 1.416*1.001 || s < 1.416*0.995 || e > 8 || m["target_epsilon"] != 8.0 {
		t.Errorf("calibration gave %v", m)
	}
}

func TestAccountAGM(t *testing.T) {
	// DP-MTV note §1.1: σ/Δ = 3.731 at ε=1, δ=1e-5.
	m := accountJSON(t, "--mechanism", "agm", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "2")
	if s := m["sigma"].(float64); math.Abs(s/2-3.731) > 5e-4 {
		t.Errorf("sigma = %v, want 2×3.731", s)
	}
	m = accountJSON(t, "--mechanism", "agm", "--sigma", "7.462", "--delta", "1e-5", "--sensitivity", "2")
	if e := m["epsilon"].(float64); math.Abs(e-1) > 1e-3 {
		t.Errorf("epsilon = %v, want 1", e)
	}
}

func TestAccountText(t *testing.T) {
	out, _, err := run(t, "account", "--sigma", "0", "--sample-rate", "0.1", "--steps", "10")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "epsilon      +Inf") || strings.Contains(out, "NaN") {
		t.Errorf("σ = 0 printed %q, want epsilon +Inf and no NaN", out)
	}
	m := accountJSON(t, "--sigma", "0", "--sample-rate", "0.1", "--steps", "10")
	if v, ok := m["epsilon"]; !ok || v != nil {
		t.Errorf("σ = 0 JSON epsilon = %v, want null", v)
	}
	m = accountJSON(t, "--sigma", "1", "--sample-rate", "0", "--steps", "10")
	if m["epsilon"] != 0.0 {
		t.Errorf("q = 0: epsilon = %v, want 0", m["epsilon"])
	}
}

// TestAccountBadInput checks that bad input fails with one line that names
// the flag and its allowed range, and never prints NaN.
func TestAccountBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // substrings of the error
	}{
		{[]string{"--sigma", "1", "--sample-rate", "0.1", "--steps", "10", "--delta", "1"}, []string{"--delta", "[0, 1)"}},
		{[]string{"--sigma", "1", "--sample-rate", "0.1", "--steps", "10", "--delta", "NaN"}, []string{"--delta", "[0, 1)"}},
		{[]string{"--sigma", "-1", "--sample-rate", "0.1", "--steps", "10"}, []string{"--sigma", "≥ 0"}},
		{[]string{"--sigma", "Inf", "--sample-rate", "0.1", "--steps", "10"}, []string{"--sigma", "finite"}},
		{[]string{"--sigma", "NaN", "--sample-rate", "0.1", "--steps", "10"}, []string{"--sigma", "finite"}},
		{[]string{"--sigma", "1", "--sample-rate", "1.5", "--steps", "10"}, []string{"--sample-rate", "[0, 1]"}},
		{[]string{"--sigma", "1", "--sample-rate", "NaN", "--steps", "10"}, []string{"--sample-rate", "[0, 1]"}},
		{[]string{"--sigma", "1", "--sample-rate", "0.1", "--steps", "-3"}, []string{"--steps", "≥ 0"}},
		{[]string{"--epsilon", "0", "--sample-rate", "0.1", "--steps", "10"}, []string{"--epsilon", "> 0"}},
		{[]string{"--epsilon", "-Inf", "--sample-rate", "0.1", "--steps", "10"}, []string{"--epsilon", "> 0"}},
		{[]string{"--sigma", "1", "--sample-rate", "0.1"}, []string{"--steps", "required"}},
		{[]string{"--sigma", "1", "--steps", "10"}, []string{"--sample-rate", "required"}},
		{[]string{"--sample-rate", "0.1", "--steps", "10"}, []string{"--sigma", "--epsilon"}},
		{[]string{"--sigma", "1", "--epsilon", "1", "--sample-rate", "0.1", "--steps", "10"}, []string{"--sigma", "--epsilon"}},
		{[]string{"--accountant", "gdp", "--sigma", "1", "--sample-rate", "0.1", "--steps", "10"}, []string{"--accountant", "rdp or pld"}},
		{[]string{"--mechanism", "laplace", "--sigma", "1"}, []string{"--mechanism", "sgm or agm"}},
		{[]string{"--mechanism", "agm", "--epsilon", "1", "--sensitivity", "-1"}, []string{"--sensitivity", "> 0"}},
		{[]string{"--mechanism", "agm", "--epsilon", "1", "--delta", "0"}, []string{"--delta", "(0, 1)"}},
		{[]string{"--sigma", "1", "--sample-rate", "0.1", "--steps", "10", "--tpr-at-fpr", "2"}, []string{"--tpr-at-fpr", "[0, 1]"}},
		{[]string{"--sigma", "abc", "--sample-rate", "0.1", "--steps", "10"}, []string{"--sigma", "≥ 0"}},
		{[]string{"--sigma", "1", "--sample-rate", "0.1", "--steps", "1.5"}, []string{"--steps", "integer ≥ 0"}},
		{[]string{"--sigma", "1", "--sample-rate", "0.1", "--steps", "10", "--bogus"}, []string{"bogus"}},
	} {
		out, errOut, err := run(t, append([]string{"account"}, tc.args...)...)
		if out != "" || errOut != "" {
			t.Errorf("repro account %v printed %q and %q, want nothing (main prints the error)", tc.args, out, errOut)
		}
		if err == nil {
			t.Errorf("repro account %v: got nil error, printed %q", tc.args, out)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || strings.Contains(out, "NaN") {
			t.Errorf("repro account %v: error %q is not one line, or NaN printed: %q", tc.args, msg, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("repro account %v: error %q lacks %q", tc.args, msg, w)
			}
		}
	}
}

// TestAccountWarnings checks that an optimal RDP order at the edge of the
// grid is reported, on stderr in text mode and in the JSON object.
func TestAccountWarnings(t *testing.T) {
	args := []string{"account", "--sigma", "10000", "--sample-rate", "1", "--steps", "1"}
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "edge") || !strings.Contains(out, "order        1024") {
		t.Errorf("repro %v printed %q and %q, want order 1024 and an edge warning", args, out, errOut)
	}
	m := accountJSON(t, args[1:]...)
	if w, ok := m["warnings"].([]any); !ok || len(w) != 1 {
		t.Errorf("JSON warnings = %v", m["warnings"])
	}
}

// TestAccountWideLossRange checks that a run whose loss range is too wide
// for the default PLD grid falls back to a coarser grid with a warning, and
// that its ε stays between the PLD's lower bound and RDP's.
func TestAccountWideLossRange(t *testing.T) {
	args := []string{"--accountant", "pld", "--sigma", "0.6", "--sample-rate", "0.1", "--steps", "10000"}
	m := accountJSON(t, args...)
	if w, ok := m["warnings"].([]any); !ok || len(w) != 1 || m["pld_interval"] != 1e-3 {
		t.Errorf("wide range: %v", m)
	}
	r := accountJSON(t, "--accountant", "rdp", "--sigma", "0.6", "--sample-rate", "0.1", "--steps", "10000")
	if e, lo, re := m["epsilon"].(float64), m["epsilon_lower"].(float64), r["epsilon"].(float64); e > re || lo > e {
		t.Errorf("PLD ε %v (lower %v), RDP ε %v", e, lo, re)
	}
}

// TestAccountHugeEpsilonGrid: at q = ½, σ = 0.0142 over 20 steps one step's
// loss spans ~5·10⁴, too wide for grids up to 1e-2; the command falls back
// to a 0.1 grid, as the runs' cross-check does, and its ε stays an upper
// bound close to RDP's (RDP's ε upper-bounds the true ε too, so a PLD ε far
// below it would be the loss-range cap the accountant had before).
func TestAccountHugeEpsilonGrid(t *testing.T) {
	args := []string{"--sigma", "0.014204", "--sample-rate", "0.5", "--steps", "20"}
	pld := accountJSON(t, append([]string{"--accountant", "pld"}, args...)...)
	rdp := accountJSON(t, append([]string{"--accountant", "rdp"}, args...)...)
	ep, er := pld["epsilon"].(float64), rdp["epsilon"].(float64)
	if h := pld["pld_interval"].(float64); h != 0.1 {
		t.Errorf("pld_interval = %v, want the 0.1 fallback", h)
	}
	if !(ep <= er && ep >= 0.8*er) {
		t.Errorf("PLD ε = %v, want within [0.8, 1]× RDP's %v", ep, er)
	}
}
