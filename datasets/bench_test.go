// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"testing"
)

// BenchmarkBuild builds each task's small preset from the embedded data.
// Target: well under 2 s per task.
func BenchmarkBuild(b *testing.B) {
	if _, err := LoadFashion(""); err != nil {
		b.Fatal(err)
	}
	for _, task := range Tasks() {
		b.Run(task, func(b *testing.B) {
			for b.Loop() {
				if _, err := Build(task, &Options{Scale: Small}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeFashion decodes the four files of the full release (without
// the per-directory cache). Target: under 1 s. It is skipped when
// Debian's dataset-fashion-mnist is not installed.
func BenchmarkDecodeFashion(b *testing.B) {
	if !FashionDirPresent(DefaultFashionDir) {
		b.Skip("full Fashion-MNIST not installed in " + DefaultFashionDir)
	}
	for b.Loop() {
		f, err := loadFashionDir(DefaultFashionDir)
		if err != nil {
			b.Fatal(err)
		}
		if f.Len() != FashionTrainLen+FashionTestLen {
			b.Fatalf("decoded %d images, want 70000", f.Len())
		}
	}
}

// BenchmarkDecodeEmbedded decodes the embedded subset.
func BenchmarkDecodeEmbedded(b *testing.B) {
	for b.Loop() {
		if _, err := loadEmbeddedFashion(); err != nil {
			b.Fatal(err)
		}
	}
}
