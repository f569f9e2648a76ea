// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package optim

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func close(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestOneCycleTorch compares OneCycle with PyTorch. Values computed with
// Debian's python3-torch 1.13 by
//
//	opt = torch.optim.SGD([p], lr=1.0, momentum=0.9)
//	s = torch.optim.lr_scheduler.OneCycleLR(opt, total_steps=T, <kwargs>)
//	for t in range(T):
//	    record(t, opt.param_groups[0]['lr'], opt.param_groups[0]['momentum'])
//	    opt.step(); s.step()
func TestOneCycleTorch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc  string
		sched OneCycle
		want  [][3]float64 // step, lr, momentum
	}{
		{
			desc:  "defaults", // T=100, max_lr=0.1
			sched: OneCycle{Max: 0.1, Steps: 100},
			want: [][3]float64{
				{0, 0.0040000000000000036, 0.95},
				{1, 0.004281378056590748, 0.9497068978577179},
				{15, 0.05459866761210004, 0.897293054570729},
				{28, 0.09971862194340926, 0.850293102142282},
				{29, 0.1, 0.85},
				{30, 0.09994965352845243, 0.8500503466729342},
				{50, 0.0793893450575732, 0.8706107373853763},
				{98, 5.07464715475788e-05, 0.9499496533270657},
				{99, 4e-07, 0.95},
			},
		},
		{
			desc:  "sparta", // T=6000, max_lr=0.01, pct_start=0.02 (SPARTA's code)
			sched: OneCycle{Max: 0.01, Steps: 6000, PctStart: 0.02},
			want: [][3]float64{
				{0, 0.0003999999999999993, 0.95},
				{60, 0.005263358011891642, 0.8993400207094621},
				{119, 0.01, 0.85},
				{120, 0.009999999286353149, 0.850000007136497},
				{3000, 0.005157607184969479, 0.8984241218467925},
				{5999, 4e-08, 0.95},
			},
		},
		{
			// T=10, max_lr=2.0, pct_start=0.25, div_factor=10.0, final_div_factor=100.0,
			// base_momentum=0.8, max_momentum=0.9
			desc:  "custom",
			sched: OneCycle{Max: 2, Steps: 10, PctStart: 0.25, DivFactor: 10, FinalDivFactor: 100, BaseMomentum: 0.8, MaxMomentum: 0.9},
			want: [][3]float64{
				{0, 0.19999999999999996, 0.9},
				{1, 1.5499999999999998, 0.8250000000000001},
				{2, 1.9781694531330718, 0.8010926199633097},
				{5, 1.105423934804386, 0.8447735768366174},
				{9, 0.002, 0.9},
			},
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			for _, w := range tc.want {
				step := int(w[0])
				if got := tc.sched.LR(step); !close(got, w[1], 1e-14) {
					t.Errorf("LR(%d) = %.17g, want %.17g", step, got, w[1])
				}
				if got := tc.sched.Momentum(step); !close(got, w[2], 1e-14) {
					t.Errorf("Momentum(%d) = %.17g, want %.17g", step, got, w[2])
				}
			}
			final := tc.sched.LR(tc.sched.Steps - 1)
			if got := tc.sched.LR(tc.sched.Steps + 5); got != final {
				t.Errorf("LR past the end = %v, want the final %v", got, final)
			}
		})
	}
}

// TestCosine checks Cosine against its definition at hand-picked steps:
// Peak 1, Min 0.1, W = 4, T = 12, so the decay has 8 steps and
// LR(4 + k) = 0.1 + 0.9·(1 + cos(πk/8))/2.
func TestCosine(t *testing.T) {
	t.Parallel()
	c := Cosine{Peak: 1, Min: 0.1, Warmup: 4, Steps: 12}
	for _, tc := range []struct {
		step int
		want float64
	}{
		{0, 0.25}, {1, 0.5}, {3, 1}, // warm-up (t+1)/W
		{4, 1},                             // k = 0
		{6, 0.1 + 0.9*(1+math.Sqrt2/2)/2},  // k = 2: cos(π/4) = √2/2
		{8, 0.55},                          // k = 4: cos(π/2) = 0
		{10, 0.1 + 0.9*(1-math.Sqrt2/2)/2}, // k = 6: cos(3π/4) = −√2/2
		{11, 0.1 + 0.9*(1+math.Cos(7*math.Pi/8))/2}, // last step
		{12, 0.1}, {1000, 0.1}, // past the end
	} {
		if got := c.LR(tc.step); !close(got, tc.want, 1e-15) {
			t.Errorf("LR(%d) = %.17g, want %.17g", tc.step, got, tc.want)
		}
	}
	// Without warm-up the first step has the peak.
	if got := (Cosine{Peak: 0.3, Steps: 5}).LR(0); got != 0.3 {
		t.Errorf("LR(0) without warm-up = %v, want 0.3", got)
	}
	// All warm-up.
	if got := (Cosine{Peak: 0.3, Warmup: 5, Steps: 5}).LR(4); got != 0.3 {
		t.Errorf("LR(4) at the end of a warm-up-only schedule = %v, want 0.3", got)
	}
}

// TestScheduleRegistry checks every registered schedule: it is built from
// settings, gives finite non-negative rates, is a pure function of the step
// (same value whatever the order of the calls) and, for the decaying ones,
// never exceeds its peak.
func TestScheduleRegistry(t *testing.T) {
	t.Parallel()
	if got := ScheduleNames(); !slices.Equal(got, []string{"constant", "cosine", "onecycle"}) {
		t.Errorf("ScheduleNames() = %v", got)
	}
	set := &ScheduleSettings{LR: 0.1, Steps: 50, Warmup: 5, MinLR: 0.001, PctStart: 0.2}
	for _, name := range ScheduleNames() {
		s, err := NewSchedule(name, set)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		forward := make([]float64, 60)
		for step := range forward {
			forward[step] = s.LR(step)
			if v := forward[step]; !(v >= 0 && v <= set.LR) || math.IsInf(v, 0) {
				t.Errorf("%s: LR(%d) = %v, want in [0, %v]", name, step, v, set.LR)
			}
		}
		for step := len(forward) - 1; step >= 0; step-- {
			if got := s.LR(step); got != forward[step] {
				t.Errorf("%s: LR(%d) = %v backwards, %v forwards", name, step, got, forward[step])
			}
		}
		if ok, msg := panics(func() { s.LR(-1) }); !ok || msg != "optim: negative step" {
			t.Errorf("%s: LR(-1): got panic %v %q", name, ok, msg)
		}
	}
	if _, err := NewSchedule("step", set); err == nil || !strings.Contains(err.Error(), "constant, cosine, onecycle") {
		t.Errorf("unknown schedule: got %v, want an error listing the known names", err)
	}
}

func TestScheduleErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  ScheduleSettings
		msg  string
	}{
		{"constant", ScheduleSettings{LR: -1}, "learning rate is -1"},
		{"constant", ScheduleSettings{LR: math.Inf(1)}, "learning rate is +Inf"},
		{"cosine", ScheduleSettings{LR: 0, Steps: 10}, "must be positive"},
		{"cosine", ScheduleSettings{LR: 1}, "0 steps"},
		{"cosine", ScheduleSettings{LR: 1, Steps: 10, Warmup: 11}, "11 warm-up steps"},
		{"cosine", ScheduleSettings{LR: 1, Steps: 10, MinLR: 2}, "final learning rate is 2"},
		{"onecycle", ScheduleSettings{LR: math.NaN(), Steps: 10}, "is NaN"},
		{"onecycle", ScheduleSettings{LR: 1, Steps: 0}, "0 steps"},
		{"onecycle", ScheduleSettings{LR: 1, Steps: 10, PctStart: 1.5}, "pct_start is 1.5"},
		{"onecycle", ScheduleSettings{LR: 1, Steps: 10, DivFactor: 0.5}, "div factor is 0.5"},
		{"onecycle", ScheduleSettings{LR: 1, Steps: 10, FinalDivFactor: -1}, "final div factor is -1"},
		{"onecycle", ScheduleSettings{LR: 1, Steps: 10, MaxMomentum: 1}, "max momentum is 1"},
		{"onecycle", ScheduleSettings{LR: 1, Steps: 10, BaseMomentum: 0.99}, "base momentum is 0.99"},
	} {
		_, err := NewSchedule(tc.name, &tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || strings.Count(err.Error(), "optim:") != 1 {
			t.Errorf("%s %+v: got %v, want an error containing %q", tc.name, tc.set, err, tc.msg)
		}
	}
	if ok, msg := panics(func() { Cosine{}.LR(0) }); !ok || msg != "optim: invalid schedule" {
		t.Errorf("LR of an invalid Cosine: got panic %v %q", ok, msg)
	}
}

// TestOneCycleEdges checks the degenerate phases: PctStart·T = 1 makes
// phase 1 empty (PyTorch divides by zero), and a run shorter than the
// warm-up starts in phase 2.
func TestOneCycleEdges(t *testing.T) {
	t.Parallel()
	c := OneCycle{Max: 1, Steps: 10, PctStart: 0.1}
	if got := c.LR(0); got != 1 {
		t.Errorf("empty phase 1: LR(0) = %v, want the peak 1", got)
	}
	// T = 10, PctStart 0.05: e₁ = −0.5, so step 0 is in phase 2 at
	// p = 0.5/9.5; value from the formula by hand.
	c = OneCycle{Max: 1, Steps: 10, PctStart: 0.05}
	want := 1e-4/25*1 + (1-1.0/25/1e4)/2*(math.Cos(math.Pi*0.5/9.5)+1)
	if got := c.LR(0); !close(got, want, 1e-15) {
		t.Errorf("short run: LR(0) = %v, want %v", got, want)
	}
	c = OneCycle{Max: 1, Steps: 1}
	if got := c.LR(0); !close(got, 1.0/25/1e4, 1e-15) {
		t.Errorf("one-step run: LR(0) = %v, want the final 4e-6", got)
	}
}

// TestOneCycleTrainingTorch runs 200 steps of AdamW and of Nesterov SGD under
// OneCycle with momentum cycling (β₁ for AdamW, μ for SGD), as PyTorch's
// OneCycleLR does by default, and compares the final parameters with
// Debian's python3-torch 1.13:
//
//	p = torch.nn.Parameter(torch.tensor([0.5, -1.0, 2.0, 0.0, -0.25]))
//	opt = torch.optim.AdamW([p], lr=0.05, weight_decay=0.05)
//	  (or torch.optim.SGD([p], lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01))
//	s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=200, pct_start=0.1)
//	for t in range(200):
//	    p.grad = torch.tensor([math.sin(0.7*t + j) * (1 + 0.1*j) for j in range(5)])
//	    opt.step(); s.step()
func TestOneCycleTrainingTorch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  *Settings
		want []float64
	}{
		{"adamw", &Settings{WeightDecay: 0.05}, []float64{0.36348485946655273, -0.8012441396713257, 1.5564730167388916, 0.02285398170351982, -0.17033249139785767}},
		{"sgd", &Settings{Momentum: 0.9, Nesterov: true, WeightDecay: 0.01}, []float64{0.15959130227565765, -0.8159556984901428, 1.3540500402450562, 0.21167252957820892, 0.04899587482213974}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := []Param{{Name: "p", Data: []float32{0.5, -1, 2, 0, -0.25}, Grad: make([]float32, 5)}}
			opt, err := New(tc.name, params, tc.set)
			if err != nil {
				t.Fatal(err)
			}
			sched, err := NewSchedule("onecycle", &ScheduleSettings{LR: 0.05, Steps: 200, PctStart: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			for step := range 200 {
				if ms, ok := sched.(MomentumSchedule); ok {
					opt.(Momentumer).SetMomentum(ms.Momentum(step))
				}
				for j := range params[0].Grad {
					params[0].Grad[j] = float32(math.Sin(0.7*float64(step)+float64(j)) * (1 + 0.1*float64(j)))
				}
				opt.Step(params, sched.LR(step), nil)
			}
			for j, w := range tc.want {
				if got := float64(params[0].Data[j]); !close(got, w, 1e-5) {
					t.Errorf("element %d: got %.9g, want %.9g", j, got, w)
				}
			}
		})
	}
}
