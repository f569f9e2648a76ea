// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/optim"
)

// TestMaskHook checks the loop's mask hook, where Dual-Priv's top-K% block
// update and SPARTA's row mask go: a mask that keeps every block gives
// DP-SGD bit for bit, and a mask that keeps half the blocks leaves the
// others' values exactly at their initialisation and their Adam moments
// zero (untouched).
func TestMaskHook(t *testing.T) {
	run := func(keep func(i int) bool) (*loop, []float32) {
		job := tinyJob(t, "dpsgd", 24, 4)
		job.Hyper.Epochs = 2
		l, acc, err := newDPSGDLoop(context.Background(), "dpsgd", job)
		if err != nil {
			t.Fatal(err)
		}
		init := l.layout.Values()
		if keep != nil {
			l.mask = func(step int, g []float32) *optim.Mask {
				m := &optim.Mask{Params: make([]bool, len(l.params))}
				for i := range m.Params {
					m.Params[i] = keep(i)
				}
				return m
			}
		}
		if _, err := l.run(context.Background(), acc); err != nil {
			t.Fatal(err)
		}
		return l, init
	}
	ref, init := run(nil)
	all, _ := run(func(int) bool { return true })
	if !slices.Equal(ref.layout.Values(), all.layout.Values()) {
		t.Error("a mask that keeps every block changed DP-SGD's result")
	}
	half, _ := run(func(i int) bool { return i%2 == 0 })
	got := half.layout.Values()
	st := half.opt.State()
	moved := 0
	for i := range half.params {
		lo, hi := half.layout.Offsets[i], half.layout.Offsets[i+1]
		if i%2 == 1 {
			if !slices.Equal(got[lo:hi], init[lo:hi]) {
				t.Errorf("masked block %s changed", half.params[i].Name)
			}
			ps := st.Params[i]
			if ps.Step != 0 {
				t.Errorf("masked block %s took %d optimizer steps", ps.Name, ps.Step)
			}
			for _, b := range ps.Buffers {
				if slices.ContainsFunc(b.Data, func(v float32) bool { return v != 0 }) {
					t.Errorf("masked block %s has non-zero optimizer state %s", ps.Name, b.Name)
				}
			}
		} else if !slices.Equal(got[lo:hi], init[lo:hi]) {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no kept block moved")
	}
}

// TestDiagnostics checks that the per-step diagnostics are labelled in the
// privacy record when recorded, and that diagnostics off drops them.
func TestDiagnostics(t *testing.T) {
	for _, on := range []bool{true, false} {
		job := tinyJob(t, "dpsgd", 16, 4)
		job.Hyper.Epochs, job.Hyper.Diagnostics = 1, on
		res, err := (DPSGD{}).FineTune(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		caveat := slices.ContainsFunc(res.Privacy.Caveats, func(c string) bool { return strings.Contains(c, "outside the guarantee") })
		if caveat != on || (len(res.Metrics) > 0) != on {
			t.Errorf("diagnostics %v: %d metrics, caveat %v (%q)", on, len(res.Metrics), caveat, res.Privacy.Caveats)
		}
	}
}

// TestJobChecks checks the job errors a method returns before any step.
func TestJobChecks(t *testing.T) {
	job := tinyJob(t, "dpsgd", 4, 1)
	cfg := lmOf(job).Config
	cfg.Classes = 3
	vit, err := nn.NewViT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	job.Model = vit
	if _, err := (DPSGD{}).FineTune(context.Background(), job); err == nil || !strings.Contains(err.Error(), "fine-tunes a tinymllm, not a vit") {
		t.Errorf("DPSGD on a ViT: %v", err)
	}
	for _, tc := range []struct {
		eps, delta float64
		want       string
	}{{math.NaN(), 1e-5, "epsilon"}, {0, 1e-5, "epsilon"}, {1, 1, "delta"}, {1, -1, "delta"}} {
		// Defaults at a valid ε (DefaultsAt rejects a bad one itself).
		job := tinyJob(t, "dpsgd", 4, 1)
		job.Epsilon, job.Delta = tc.eps, tc.delta
		if _, err := (DPSGD{}).FineTune(context.Background(), job); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ε = %v, δ = %v: error %v, want one naming %s", tc.eps, tc.delta, err, tc.want)
		}
	}
	job = tinyJob(t, "dpsgd", 4, 1)
	job.Data = nil
	if _, err := (DPSGD{}).FineTune(context.Background(), job); err == nil || !strings.Contains(err.Error(), "empty training set") {
		t.Errorf("no data: %v", err)
	}
}
