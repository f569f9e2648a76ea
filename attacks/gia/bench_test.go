// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"testing"
)

// BenchmarkPatchRecovery times the ViT attack (APRIL closed form) on the
// raw update of one smoke image.
func BenchmarkPatchRecovery(b *testing.B) {
	m, l := smokeViT(b)
	bt, mean := smokeBatch(b, 1)
	g, err := Release(l, vitGrads(b, m, l, bt), Mechanism{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := AttackViT(m, l, g, bt, mean); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvMatchObjective times one evaluation of the Inverting
// Gradients objective and its gradient on the smoke fusion classifier:
// an attack costs Iterations·Restarts of them.
func BenchmarkConvMatchObjective(b *testing.B) {
	m, l := smokeFusion(b)
	bt, _ := smokeBatch(b, 1)
	g, err := Release(l, fusionGrads(b, m, l, bt), Mechanism{})
	if err != nil {
		b.Fatal(err)
	}
	cm, err := NewConvMatch(m, l, g)
	if err != nil {
		b.Fatal(err)
	}
	x := bt.Images[0]
	grad := make([]float32, len(x))
	for b.Loop() {
		cm.Objective(x, grad)
	}
}
