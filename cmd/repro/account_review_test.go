// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestAccountNeverPrintsNaN checks the printer's guard: a NaN or −Inf
// result is an error with nothing printed, in text and in JSON.
func TestAccountNeverPrintsNaN(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(-1)} {
		for _, asJSON := range []bool{false, true} {
			var b bytes.Buffer
			r := accountResult{fields: []field{{"sigma", 1.0}, {"epsilon", v}}}
			if err := r.print(&b, asJSON); err == nil || b.Len() != 0 {
				t.Errorf("print(epsilon=%v, json=%v) = %v, printed %q", v, asJSON, err, b.String())
			}
		}
	}
}

// TestAccountDeltaNearOne runs the PLD at δ just below 1, where its ε(δ)
// used to be NaN: ε is 0.
func TestAccountDeltaNearOne(t *testing.T) {
	for _, acct := range []string{"pld", "rdp"} {
		out, _, err := run(t, "account", "--accountant", acct, "--sigma", "1", "--sample-rate", "0.01", "--steps", "10", "--delta", "0.9999999999999999")
		if err != nil || strings.Contains(out, "NaN") {
			t.Errorf("%s: %v, printed %q", acct, err, out)
		}
	}
	m := accountJSON(t, "--accountant", "pld", "--sigma", "1", "--sample-rate", "0.01", "--steps", "10", "--delta", "0.9999999999999999")
	if e, ok := m["epsilon"].(float64); !ok || e != 0 {
		t.Errorf("epsilon = %v, want 0", m["epsilon"])
	}
}

// TestAccountTinyDeltaWarning checks the warning for δ below the PLD's
// noise floor.
func TestAccountTinyDeltaWarning(t *testing.T) {
	m := accountJSON(t, "--accountant", "pld", "--sigma", "1", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-13")
	ws, _ := m["warnings"].([]any)
	if len(ws) != 1 || !strings.Contains(ws[0].(string), "noise floor") {
		t.Errorf("warnings = %v", m["warnings"])
	}
	m = accountJSON(t, "--accountant", "pld", "--sigma", "1", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-6")
	if _, ok := m["warnings"]; ok {
		t.Errorf("δ = 1e-6: warnings %v", m["warnings"])
	}
}
