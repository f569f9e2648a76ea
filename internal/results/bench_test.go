// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkWriteRuns writes a runs.parquet of 1000 runs with 4 params and
// 8 results.
func BenchmarkWriteRuns(b *testing.B) {
	rows := make([]Run, 1000)
	for i := range rows {
		rows[i] = Run{RunID: fmt.Sprintf("%016x", i), Experiment: "e", Status: OK, Method: "dpsgd", Task: "t", Scale: "small",
			Seed: int64(i % 3), EpsilonTarget: 8, Epsilon: 7.9, Delta: 1e-5, Sigma: 0.8, SampleRate: 0.01, Steps: 100, Seconds: 10,
			Params: map[string]any{"beta": 0.5, "chunks": int64(i % 4), "peft": "lora", "flag": i%2 == 0}, Results: map[string]float64{}}
		for j := range 8 {
			rows[i].Results[fmt.Sprintf("m%d", j)] = float64(i * j)
		}
	}
	name := filepath.Join(b.TempDir(), RunsFile)
	for b.Loop() {
		if err := WriteRuns(name, rows); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadRuns(b *testing.B) {
	rows := []Run{{RunID: "a", Params: map[string]any{"x": 1.0}, Results: map[string]float64{"acc": 1}}}
	for range 10 {
		rows = append(rows, rows...)
	}
	name := filepath.Join(b.TempDir(), RunsFile)
	if err := WriteRuns(name, rows); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ReadRuns(name); err != nil {
			b.Fatal(err)
		}
	}
}
