// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"errors"
	"testing"
)

// FuzzParse checks that no spec and no override makes Parse panic, that
// every error is a *SyntaxError, and that every valid spec expands into
// configs with distinct, encodable ids. The seed corpus is in
// testdata/fuzz/FuzzParse plus the embedded specs.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base), "sweep.seed=[1, 2]")
	f.Add([]byte(withAttacks("attacks:\n  - loss-mia\n  - {name: maxrenyi-mia, slices: [img], orders: [0.5, inf], k: 10}\n  - mink-mia\n")),
		"attacks.mink-mia.k=[5, 50]")
	for _, name := range []string{"table1.yaml", "fig1.yaml"} {
		b, err := embedded.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "scale=smoke")
	}
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		s, err := Parse("f.yaml", data, &Options{Overrides: []string{set}})
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse: got %T %v, want a *SyntaxError", err, err)
			}
			return
		}
		cs := s.Expand()
		if len(cs) > 1e5 {
			return
		}
		seen := make(map[string]bool)
		for _, c := range cs {
			id := c.ID(Inputs{})
			if seen[id] {
				t.Fatalf("duplicate id %s for %v", id, &c)
			}
			seen[id] = true
		}
	})
}
