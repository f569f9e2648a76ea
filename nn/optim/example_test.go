// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim_test

import (
	"fmt"

	"github.com/repro-dp/repro/nn/optim"
)

// ExampleNew minimises f(w) = (w₀ − 3)² + (w₁ + 1)² with AdamW and a cosine
// schedule, then takes one masked step that leaves w₁ and its moments alone.
func ExampleNew() {
	params := []optim.Param{{Name: "w", Data: []float32{0, 0}, Grad: make([]float32, 2)}}
	opt, err := optim.New("adamw", params, &optim.Settings{WeightDecay: 1e-4})
	if err != nil {
		fmt.Println(err)
		return
	}
	sched, err := optim.NewSchedule("cosine", &optim.ScheduleSettings{LR: 0.1, Warmup: 10, Steps: 500})
	if err != nil {
		fmt.Println(err)
		return
	}
	grad := func() {
		w, g := params[0].Data, params[0].Grad
		g[0], g[1] = 2*(w[0]-3), 2*(w[1]+1)
	}
	for step := range 500 {
		grad()
		opt.Step(params, sched.LR(step), nil)
	}
	fmt.Printf("w = (%.3f, %.3f)\n", params[0].Data[0], params[0].Data[1])

	before := params[0].Data[1]
	grad()
	params[0].Grad[1] = 100 // would move w₁ if it took part
	opt.Step(params, 0.1, &optim.Mask{Elems: [][]bool{{true, false}}})
	fmt.Println("w₁ unchanged:", params[0].Data[1] == before)
	// Output:
	// w = (3.000, -1.000)
	// w₁ unchanged: true
}
