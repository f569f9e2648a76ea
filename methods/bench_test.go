// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"testing"
)

// BenchmarkFineTune measures one epoch of each method on 64 smoke
// fashion-vqa examples (B = 32, two steps), calibration included; divide
// by Result.Steps for the time per step.
func BenchmarkFineTune(b *testing.B) {
	for _, name := range lmMethods() {
		b.Run(name, func(b *testing.B) {
			m, _ := Lookup(name)
			eps := 8.0
			if name == "nonprivate" {
				eps = math.Inf(1)
			}
			for b.Loop() {
				b.StopTimer()
				job := methodJob(b, name, 64, eps, 1)
				b.StartTimer()
				if _, err := m.FineTune(context.Background(), job); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
