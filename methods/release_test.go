// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods_test

import (
	"math"
	"slices"
	"testing"

	"github.com/repro-dp/repro/attacks/gia"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// releaseJob returns a job of method on the first 8 private examples of
// the smoke fashion-vqa task (the gia experiment's task) with a freshly
// initialised smoke TinyMLLM, batch size 4 (q = 1/2, so the expected
// batch q·N is 4 exactly), and the training sequences.
func releaseJob(t *testing.T, method string, eps float64, params map[string]any) (*methods.Job, []nn.Sequence) {
	t.Helper()
	params["batch_size"] = int64(4)
	job := methods.SmokeJob(t, "fashion-vqa", method, 8, eps, params, 7)
	job.Workers = 1
	return job, methods.TrainOf(job)
}

// TestRapFTRelease checks Rap-FT's declared release against its training
// step on fashion-vqa (the relevance analysis runs on its answers): the
// release attacks/gia builds from it (gia.MechanismOf, gia.Release) on the
// per-example gradients of the step's batch, with the step's noise draw
// (the run's seed, first draw), equals the privatised update of Rap-FT's
// first training step bit for bit; it has two groups, the weak one the
// mask's share. With β = 1 the release is DP-SGD's.
func TestRapFTRelease(t *testing.T) {
	job, train := releaseJob(t, "rapft", 8, map[string]any{"relevance_examples": int64(4)})
	idx := []int{0, 2, 5, 7}
	g, l, rel, err := methods.RapFTFirstStep(job, idx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.Rule.C) != 2 || len(rel.Sigmas) != 2 || len(rel.Rule.Part) != l.Size || rel.ZO != nil {
		t.Fatalf("release %d clips, %d σ, partition of %d (layout %d): want two groups over the layout", len(rel.Rule.C), len(rel.Sigmas), len(rel.Rule.Part), l.Size)
	}
	weak := 0
	for _, p := range rel.Rule.Part {
		if p == 0 {
			weak++
		}
	}
	// r_w ≥ β (ties at the threshold join the weak part); clips C·r², noise
	// σ√r·C.
	rw := float64(weak) / float64(l.Size)
	c := job.Hyper.Clip
	if rw < 0.7 || rw == 1 || math.Abs(rel.Rule.C[0]-c*rw*rw) > 1e-12 || math.Abs(rel.Rule.C[1]-c*(1-rw)*(1-rw)) > 1e-12 {
		t.Errorf("weak share %v, clips %v: want r_w ≥ β = 0.7 and C·r² = %v, %v", rw, rel.Rule.C, c*rw*rw, c*(1-rw)*(1-rw))
	}
	if s0, s1 := rel.Sigmas[0]*rel.Rule.C[0], rel.Sigmas[1]*rel.Rule.C[1]; !(s0 > 0) || math.Abs(s0/s1-math.Sqrt(rw/(1-rw))) > 1e-9 {
		t.Errorf("noise stds %v, %v: want the ratio √(r_w/r_s) = %v", s0, s1, math.Sqrt(rw/(1-rw)))
	}
	m := job.Model.(*nn.TinyMLLM)
	var batch []nn.Sequence
	for _, i := range idx {
		batch = append(batch, train[i])
	}
	r, err := m.PerSample(l, batch, nil, nil, &nn.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := gia.Release(l, r.Grads, gia.MechanismOf(rel, job.Seed))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, g) {
		t.Errorf("gia's release differs from Rap-FT's training step (relative error %.3g)", relDiff(got, g))
	}
	// The same gradients under DP-SGD's joint clip differ: the test sees
	// the partitions.
	flat, err := gia.Release(l, r.Grads, gia.Mechanism{Rule: nn.Flat(c), Sigma: []float64{rel.Sigmas[0] * rel.Rule.C[0] / c}, Seed: job.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(flat, g) {
		t.Error("a joint clip gives Rap-FT's update too")
	}

	job1, _ := releaseJob(t, "rapft", 8, map[string]any{"beta": 1.0})
	_, _, rel1, err := methods.RapFTFirstStep(job1, idx)
	if err != nil {
		t.Fatal(err)
	}
	jobDP, _ := releaseJob(t, "dpsgd", 8, map[string]any{})
	resDP, err := methods.DPSGD{}.FineTune(t.Context(), jobDP)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rel1.Rule.C, resDP.Release.Rule.C) || rel1.Rule.Part != nil || len(rel1.Rule.C) != 1 || !slices.Equal(rel1.Sigmas, resDP.Release.Sigmas) || rel1.Keep != 0 {
		t.Errorf("β = 1: release %+v, DP-SGD's %+v", rel1, resDP.Release)
	}
}

// TestDPZORelease checks DPZO's declared release against its training
// step: the method's release step (methods.ZORelease.Step, which the gia
// attack calls) at the same weights on the step's batch with the run's
// seed gives the step's direction and scalar, s·z/(2φ) equal to the
// step's update bit for bit, and leaves the weights as they were; for
// both clip scopes.
func TestDPZORelease(t *testing.T) {
	for _, scope := range []string{"derivative", "difference"} {
		job, train := releaseJob(t, "dpzo", 8, map[string]any{"clip_scope": scope})
		idx := []int{1, 2, 4, 6}
		g, l, rel, err := methods.DPZOFirstStep(job, idx)
		if err != nil {
			t.Fatal(err)
		}
		zr := rel.ZO
		if zr == nil || !(zr.Sigma > 0) || zr.Phi != job.Hyper.Float("phi") || zr.Derivative != (scope == "derivative") {
			t.Fatalf("%s: release %+v", scope, zr)
		}
		m := job.Model.(*nn.TinyMLLM)
		var batch []nn.Sequence
		for _, i := range idx {
			batch = append(batch, train[i])
		}
		before := l.Values()
		s, z, err := zr.Step(m, l, batch, job.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.Values(), before) {
			t.Errorf("%s: the release step changed the weights", scope)
		}
		c := s / (2 * zr.Phi)
		want := make([]float32, len(z))
		for j, zj := range z {
			want[j] = float32(c * float64(zj))
		}
		if !slices.Equal(want, g) {
			t.Errorf("%s: s·z/(2φ) differs from DPZO's training step (relative error %.3g)", scope, relDiff(want, g))
		}
		// Another seed draws another direction: the test sees z.
		if _, z2, err := zr.Step(m, l, batch, job.Seed+1); err != nil || slices.Equal(z2, z) {
			t.Errorf("%s: seed+1 gives the same direction (err %v)", scope, err)
		}
	}
}

func relDiff(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den)
}
