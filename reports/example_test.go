// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports_test

import (
	"fmt"
	"log"
	"math"
	"os"

	"github.com/repro-dp/repro/reports"
)

func ExampleTable_Build() {
	// Two methods, ε ∈ {1, ∞}, two seeds each; one run failed. In a real
	// report the runs come from reports.ReadRuns("results/table1/runs.parquet").
	runs, err := reports.NewRuns([]reports.Row{
		{"status": "ok", "method": "dpsgd", "epsilon_target": 1.0, "seed": 0, "acc": 0.61},
		{"status": "ok", "method": "dpsgd", "epsilon_target": 1.0, "seed": 1, "acc": 0.65},
		{"status": "ok", "method": "dpzo", "epsilon_target": 1.0, "seed": 0, "acc": 0.40},
		{"status": "failed", "method": "dpzo", "epsilon_target": 1.0, "seed": 1},
		{"status": "ok", "method": "nonprivate", "epsilon_target": math.Inf(1), "seed": 0, "acc": 0.80},
		{"status": "ok", "method": "nonprivate", "epsilon_target": math.Inf(1), "seed": 1, "acc": 0.84},
	})
	if err != nil {
		log.Fatal(err)
	}
	t := reports.Table{
		Rows:      []string{"method"},
		Cols:      []string{"epsilon_target"},
		Metric:    "acc",
		Best:      reports.Max,
		Scale:     100,
		Precision: 1,
		References: []reports.Reference{
			{At: map[string]string{"method": "dpsgd", "epsilon_target": "1"}, Value: 66.0, Source: "made up"},
		},
	}
	g, err := t.Build(runs)
	if err != nil {
		log.Fatal(err)
	}
	if err := g.Write(os.Stdout, reports.Markdown); err != nil {
		log.Fatal(err)
	}
	// The warnings are for the terminal, not for the table.
	for _, w := range g.Warnings {
		fmt.Printf("warning: %v\n", w)
	}
	c := g.Cells[0][0]
	fmt.Printf("\ndpsgd at ε=1: n=%d mean=%.6f std=%.6f\n", c.N, c.Mean, c.Std)
	// Output:
	// acc (mean ± std over 1–2 runs)
	//
	// | method     |                   ε=1 |        ε=∞ |
	// | :--------- | --------------------: | ---------: |
	// | dpsgd      | **63.0 ± 2.8** [66.0] |          — |
	// | dpzo       |            40.0 (n=1) |          — |
	// | nonprivate |                     — | 82.0 ± 2.8 |
	//
	// - **bold**: best in column (max)
	// - \[x\]: value reported in the paper (made up)
	// warning: 1 run failed
	// warning: n=1–2 seeds < 10
	//
	// dpsgd at ε=1: n=2 mean=63.000000 std=2.828427
}

func ExamplePlot_Build() {
	var rows []reports.Row
	for _, eps := range []float64{1, 4, 16, math.Inf(1)} {
		for seed := range 3 {
			rows = append(rows, reports.Row{
				"status": "ok", "method": "dpsgd", "epsilon_target": eps, "seed": seed,
				"acc": 0.9 - 0.3/math.Sqrt(eps) + 0.01*float64(seed),
			})
		}
	}
	runs, err := reports.NewRuns(rows)
	if err != nil {
		log.Fatal(err)
	}
	p := reports.Plot{X: "epsilon_target", Y: "acc", Series: []string{"method"}, LogX: true, MinSeeds: 3}
	fig, err := p.Build(runs)
	if err != nil {
		log.Fatal(err)
	}
	// fig.Save("fig1") would write fig1.png, fig1.svg and fig1.pdf.
	for _, s := range fig.Panels[0].Series {
		for _, pt := range s.Points {
			fmt.Printf("%s ε=%g: %.6f ± %.6f (n=%d)\n", s.Name, pt.X, pt.Mean, pt.Std, pt.N)
		}
		fmt.Printf("%s ε=∞: %.6f ± %.6f (n=%d), a dashed line\n", s.Name, s.Inf.Mean, s.Inf.Std, s.Inf.N)
	}
	// Output:
	// dpsgd ε=1: 0.610000 ± 0.010000 (n=3)
	// dpsgd ε=4: 0.760000 ± 0.010000 (n=3)
	// dpsgd ε=16: 0.835000 ± 0.010000 (n=3)
	// dpsgd ε=∞: 0.910000 ± 0.010000 (n=3), a dashed line
}
