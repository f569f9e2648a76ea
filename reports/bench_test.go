// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// benchRows returns n runs: 5 methods × 2 tasks × 4 ε × n/40 seeds, with
// random accuracies from a fixed seed.
func benchRows(n int) []Row {
	rnd := rand.New(rand.NewPCG(1, 2))
	methods := []string{"nonprivate", "dpsgd", "dpzo", "dualpriv", "sparta"}
	tasks := []string{"fashion-vqa", "shapes-vqa"}
	eps := []float64{1, 3, 8, 16}
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{
			"run_id": fmt.Sprintf("run%06d", i), "status": "ok",
			"method": methods[i%5], "task": tasks[i/5%2], "epsilon_target": eps[i/10%4],
			"seed": int64(i / 40), "acc": rnd.Float64(), "mia_auc": 0.5 + rnd.Float64()/2,
		}
	}
	return rows
}

func BenchmarkReadRuns10k(b *testing.B) {
	rows := benchRows(10000)
	data := make([]parquetRun, len(rows))
	for i, r := range rows {
		acc := r["acc"].(float64)
		data[i] = parquetRun{RunID: r["run_id"].(string), Status: "ok", Method: r["method"].(string),
			Task: r["task"].(string), Seed: r["seed"].(int64), EpsilonTarget: r["epsilon_target"].(float64), Acc: &acc}
	}
	path := filepath.Join(b.TempDir(), "runs.parquet")
	if err := parquet.WriteFile(path, data); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ReadRuns(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTable10k(b *testing.B) {
	runs, err := NewRuns(benchRows(10000))
	if err != nil {
		b.Fatal(err)
	}
	t := &Table{Rows: []string{"method"}, Cols: []string{"task", "epsilon_target"}, Metric: "acc", Best: Max}
	for b.Loop() {
		g, err := t.Build(runs)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Write(io.Discard, LaTeX); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlotPNG(b *testing.B) {
	runs, err := NewRuns(benchRows(1000))
	if err != nil {
		b.Fatal(err)
	}
	p := &Plot{X: "epsilon_target", Y: "acc", Series: []string{"method"}, LogX: true}
	for b.Loop() {
		fig, err := p.Build(runs)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fig.WriteTo(&buf, "png"); err != nil {
			b.Fatal(err)
		}
	}
}
