// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math"
	"testing"
)

// TestRecordsKinds checks that records-e2e and records-echr hold records
// of their kind only, E2E-like prompts end at <sep> (the loss is on the
// text) and Echr-like prompts are <bos> alone (the loss is on the whole
// text).
func TestRecordsKinds(t *testing.T) {
	for _, kind := range []string{"e2e", "echr"} {
		d, err := Build("records-"+kind, &Options{Scale: Smoke, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		v := Vocab()
		for _, split := range [][]Example{d.Private, d.Test, d.Holdout} {
			for i := range split {
				ex := &split[i]
				if ex.Canary >= 0 {
					continue
				}
				if ex.Kind != kind {
					t.Fatalf("records-%s: example %s of kind %q", kind, ex.ID, ex.Kind)
				}
				p := v.Decode(ex.Prompt)
				if kind == "echr" && p != "<bos>" || kind == "e2e" && p[len(p)-5:] != "<sep>" {
					t.Fatalf("records-%s: prompt %q", kind, p)
				}
			}
		}
	}
}

// TestPerplexity checks the corpus perplexity against closed forms: a
// uniform model over V tokens has perplexity V, and the mean is taken
// over tokens, not examples.
func TestPerplexity(t *testing.T) {
	u := math.Log(50)
	if got := Perplexity([][]float64{{u, u}, {u}}); math.Abs(got-50) > 1e-9 {
		t.Errorf("uniform over 50: %v", got)
	}
	// Tokens 1, 2, 3 (one example) and 6: exp(12/4) = e³, not
	// exp((2 + 6)/2) = e⁴.
	if got := Perplexity([][]float64{{1, 2, 3}, {6}}); math.Abs(got-math.Exp(3)) > 1e-9 {
		t.Errorf("token mean: %v, want e³", got)
	}
	if !math.IsNaN(Perplexity(nil)) {
		t.Error("no tokens: want NaN")
	}
}
