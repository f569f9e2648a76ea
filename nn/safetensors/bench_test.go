// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchTensors returns about 10 MB of F32 tensors: 20 matrices of 256×512.
func benchTensors() []Tensor {
	rng := rand.New(rand.NewPCG(1, 2))
	ts := make([]Tensor, 20)
	for i := range ts {
		d := make([]float32, 256*512)
		for j := range d {
			d[j] = float32(rng.NormFloat64())
		}
		ts[i] = Tensor{Name: fmt.Sprintf("layer%02d.w", i), Shape: []int{256, 512}, Data: d}
	}
	return ts
}

// BenchmarkWriteRead writes a 10 MB checkpoint to a file (without fsync)
// and reads it back.
func BenchmarkWriteRead(b *testing.B) {
	ts := benchTensors()
	path := filepath.Join(b.TempDir(), "bench.safetensors")
	b.SetBytes(20 * 256 * 512 * 4)
	for b.Loop() {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := Encode(f, ts, map[string]string{"config": "{}"}); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDecode is BenchmarkWriteRead in memory, without the file
// system.
func BenchmarkEncodeDecode(b *testing.B) {
	ts := benchTensors()
	var buf []byte
	b.SetBytes(20 * 256 * 512 * 4)
	for b.Loop() {
		w := bytesWriter{buf[:0]}
		if err := Encode(&w, ts, nil); err != nil {
			b.Fatal(err)
		}
		buf = w.b
		if _, err := Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
