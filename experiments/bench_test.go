// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import "testing"

func BenchmarkParseTable1(b *testing.B) {
	data, err := embedded.ReadFile("table1.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("table1.yaml", data, &Options{Overrides: []string{"scale=smoke"}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExpandTable1IDs(b *testing.B) {
	s, err := Load("table1", nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, c := range s.Expand() {
			_ = c.ID(Inputs{Data: "d", Base: "b"})
		}
	}
}
