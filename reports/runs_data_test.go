// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"math"
)

// table1Rows returns a run table shaped like the table1 experiment: methods ×
// tasks × ε × 3 seeds, with made-up accuracies chosen so that every cell's
// mean and std are easy to compute by hand. Seed s adds (s−1)·spread to the
// cell's centre, so a full cell has mean = centre and sample std = spread
// (the deviations are −spread, 0, +spread: √((spread²+0+spread²)/2) = spread).
//
// The exceptions, which the tests rely on:
//   - nonprivate runs only at ε = ∞;
//   - dpzo, shapes-vqa, ε=1, seed 2 failed (status "failed", acc NaN), so the
//     cell holds seeds 0 and 1 only: mean = centre − spread/2, std = spread/√2;
//   - dpzo, shapes-vqa, ε=3 has no runs at all (a missing cell);
//   - dpsgd, fashion-vqa, ε=8, seed 1 has status "ok" but no acc.
func table1Rows() []Row {
	type cell struct {
		method, task string
		eps          float64
		centre       float64
		spread       float64
	}
	cells := []cell{
		{"nonprivate", "fashion-vqa", math.Inf(1), 0.84, 0.01},
		{"nonprivate", "shapes-vqa", math.Inf(1), 0.91, 0.02},
		{"dpsgd", "fashion-vqa", 1, 0.52, 0.03},
		{"dpsgd", "fashion-vqa", 3, 0.63, 0.02},
		{"dpsgd", "fashion-vqa", 8, 0.70, 0.01},
		{"dpsgd", "shapes-vqa", 1, 0.40, 0.04},
		{"dpsgd", "shapes-vqa", 3, 0.55, 0.03},
		{"dpsgd", "shapes-vqa", 8, 0.66, 0.02},
		{"dpzo", "fashion-vqa", 1, 0.45, 0.02},
		{"dpzo", "fashion-vqa", 3, 0.47, 0.02},
		{"dpzo", "fashion-vqa", 8, 0.50, 0.01},
		{"dpzo", "shapes-vqa", 1, 0.33, 0.02},
		{"dpzo", "shapes-vqa", 8, 0.36, 0.01},
	}
	var rows []Row
	for _, c := range cells {
		for seed := range 3 {
			status, acc := "ok", c.centre+float64(seed-1)*c.spread
			switch {
			case c.method == "dpzo" && c.task == "shapes-vqa" && c.eps == 1 && seed == 2:
				status, acc = "failed", math.NaN()
			case c.method == "dpsgd" && c.task == "fashion-vqa" && c.eps == 8 && seed == 1:
				acc = math.NaN()
			}
			eps, sigma := c.eps, 0.0
			if !math.IsInf(c.eps, 1) {
				eps = c.eps * 0.98
				sigma = 1 / c.eps
			}
			rows = append(rows, Row{
				"run_id":         fmt.Sprintf("%s-%s-%g-%d", c.method, c.task, c.eps, seed),
				"status":         status,
				"method":         c.method,
				"task":           c.task,
				"scale":          "small",
				"seed":           int64(seed),
				"epsilon_target": c.eps,
				"epsilon":        eps,
				"delta":          1e-5,
				"sigma":          sigma,
				"acc":            acc,
				// img: accuracy on the questions that need the image.
				"img": acc - 0.1,
			})
		}
	}
	return rows
}
