// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// BenchmarkSweepOverhead measures what the runner adds to each run: the
// folder, two manifest writes (each with fsync), metrics.parquet,
// scores.parquet and the sweep's runs.parquet, for the 18 runs of the test
// spec with an executor that only records.
func BenchmarkSweepOverhead(b *testing.B) {
	s, err := experiments.Parse("exp.yaml", []byte(testSpec), nil)
	if err != nil {
		b.Fatal(err)
	}
	exec := func(ctx context.Context, r *Run, rec *Recorder) error {
		rec.Stage("fine-tune")
		for step := range int64(100) {
			rec.Metric(step, "train", "loss", 1/float64(step+1))
		}
		scores := make([]results.Score, 1000)
		for i := range scores {
			scores[i] = results.Score{ExampleID: int64(i), Member: i%2 == 0, Score: float64(i)}
		}
		rec.Scores("loss-mia", scores)
		rec.Result("acc", 0.5)
		rec.Privacy(results.Privacy{Accountant: "rdp", Epsilon: results.Float(r.Config.Epsilon), Sigma: 1})
		return nil
	}
	root := b.TempDir()
	for b.Loop() {
		if _, err := Sweep(b.Context(), s, &Options{Root: root, Jobs: 1, Executor: exec, Fresh: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*18)/1000, "ms/run")
}
