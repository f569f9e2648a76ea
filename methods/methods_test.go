// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// tinyJob returns a job on the first n private examples of the smoke
// fashion-vqa task with a freshly initialised smoke TinyMLLM.
func tinyJob(t testing.TB, method string, n int, eps float64) *Job {
	t.Helper()
	return smokeJob(t, "fashion-vqa", method, n, eps, nil, 7)
}

// smokeJob returns a job of method at ε eps with params on the first n
// private examples of the smoke task (data seed 1) with a freshly
// initialised smoke TinyMLLM; seed is the job's.
func smokeJob(t testing.TB, task, method string, n int, eps float64, params map[string]any, seed uint64) *Job {
	t.Helper()
	d, err := datasets.Build(task, &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sub := *d
	sub.Private = d.Private[:n]
	h, err := ResolveAt(method, "smoke", eps, params)
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Model: m, Data: &sub, Hyper: h, Epsilon: eps, Delta: 1e-5, Seed: seed}
}

// methodJob returns a job of the registered method name at ε eps on the
// first n private examples of its architecture's smoke task (tinyJob's
// fashion-vqa, or vitJob's fashion-cls) that trains for epochs epochs.
func methodJob(t testing.TB, name string, n int, eps float64, epochs int) *Job {
	t.Helper()
	m, _ := Lookup(name)
	if m.Arch() == "vit" {
		// One scoring epoch and the rest sparse: at least 2.
		return classifierJob(t, name, n, eps, map[string]any{"epochs": max(epochs, 2), "warmup_epochs": 0})
	}
	job := tinyJob(t, name, n, eps)
	job.Hyper.Epochs = float64(epochs)
	return job
}

// lmOf returns the job's model as a TinyMLLM.
func lmOf(job *Job) *nn.TinyMLLM { return job.Model.(*nn.TinyMLLM) }

// trainOf returns the job's private examples as sequences.
func trainOf(job *Job) []nn.Sequence {
	var train []nn.Sequence
	for i := range job.Data.Private {
		train = append(train, Sequence(&job.Data.Private[i]))
	}
	return train
}

// testZO returns a zeroth-order estimator over d coordinates whose
// Privatizer clips to c, adds noise σ·c and normalises by b.
func testZO(t testing.TB, d int, phi, c, sigma, b float64, seed uint64) *zo {
	t.Helper()
	p, err := NewPrivatizer(nn.Flat(c), []float64{sigma}, b, seed)
	if err != nil {
		t.Fatal(err)
	}
	return newZO(d, phi, p, seed)
}

func TestRegistry(t *testing.T) {
	want := []string{"dpsgd", "dpzo", "nonprivate"}
	for _, name := range want {
		if !slices.Contains(Names(), name) {
			t.Errorf("Names() = %v, want it to contain %s", Names(), name)
		}
	}
	for _, name := range Names() {
		m, ok := Lookup(name)
		if !ok || m.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, m, ok)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "badtable: lr at smoke: ByEpsilon") {
				t.Errorf("Register of a method with a decreasing ByEpsilon table: panic %v, want one naming it", r)
			}
		}()
		Register(badTable{})
	}()
	if _, ok := Lookup("badtable"); ok {
		t.Error("a method with an invalid ByEpsilon table was registered")
	}
}

// badTable is DP-SGD with a decreasing ByEpsilon table of lr at smoke,
// which Register refuses.
type badTable struct{ DPSGD }

func (badTable) Name() string { return "badtable" }

func (badTable) Params() []Param {
	return withByEpsilon(dpsgdParams(), "lr", "smoke", PerEpsilon{{3, 1e-2}, {1, 2e-2}})
}

// inContext are the methods that answer in context without training
// (dpmtv_test.go).
var inContext = []string{"dpmtv", "mtv", "zeroshot", "fewshot"}

// lmMethods returns the registered methods that fine-tune the TinyMLLM
// or the ViT (the federated fusion methods have their own tests,
// secmmfl_test.go; the in-context ones theirs, dpmtv_test.go).
func lmMethods() []string {
	var out []string
	for _, name := range Names() {
		if m, _ := Lookup(name); m.Arch() != "fusion" && !slices.Contains(inContext, name) {
			out = append(out, name)
		}
	}
	return out
}

// TestEveryMethod fine-tunes with every registered method at ε = 3 and
// checks the result: finite losses, a privacy record whose ε does not
// exceed the target, and a model that changed.
func TestEveryMethod(t *testing.T) {
	for _, name := range lmMethods() {
		t.Run(name, func(t *testing.T) {
			eps := 3.0
			if name == "nonprivate" {
				eps = math.Inf(1)
			}
			job := methodJob(t, name, 64, eps, 2)
			m, _ := Lookup(name)
			// The per-token losses of a few training examples before and
			// after: fine-tuning must change the model's outputs.
			probe := trainOf(job)[:4]
			lossesOf := func() []float64 {
				var out []float64
				for i := range probe {
					l, _, err := lmOf(job).TokenLosses(&probe[i], nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, l...)
				}
				return out
			}
			var before []float64
			if m.Arch() == "tinymllm" {
				before = lossesOf()
			}
			res, err := m.FineTune(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if before != nil && slices.Equal(before, lossesOf()) {
				t.Errorf("%s: the model's losses on training examples are the same bits after fine-tuning: nothing changed", name)
			}
			steps, q := job.Hyper.steps(64)
			if res.Steps != steps || res.Privacy.Steps != int64(steps) || res.Privacy.SampleRate != q {
				t.Errorf("steps %d (record %d), q %v: want %d, %v", res.Steps, res.Privacy.Steps, res.Privacy.SampleRate, steps, q)
			}
			if float64(res.Privacy.Epsilon) > eps {
				t.Errorf("achieved ε = %v > target %v", res.Privacy.Epsilon, eps)
			}
			if name == "nonprivate" {
				if !math.IsInf(float64(res.Privacy.Epsilon), 1) || res.Privacy.Accountant != "none" {
					t.Errorf("nonprivate record: %+v", res.Privacy)
				}
			} else {
				// The calibrating accountant's ε meets the target; the PLD's
				// is never above the RDP's (SPARTA calibrates with the PLD,
				// whose σ the RDP bound charges more).
				if !(res.Privacy.Sigma > 0) || res.Privacy.Accountant == "rdp" && res.EpsilonRDP > 3 || res.EpsilonPLD > 3 {
					t.Errorf("%s record: %+v, ε RDP %v PLD %v", name, res.Privacy, res.EpsilonRDP, res.EpsilonPLD)
				}
				if len(res.Privacy.Events) == 0 {
					t.Error("no events in the privacy record")
				}
			}
			nloss := 0
			for _, mt := range res.Metrics {
				if math.IsNaN(mt.Value) || math.IsInf(mt.Value, 0) {
					t.Fatalf("metric %+v is not finite", mt)
				}
				if mt.Name == "loss" {
					nloss++
				}
			}
			if nloss == 0 {
				t.Error("no loss metric")
			}
			if res.StepTime <= 0 || res.PeakBytes <= 0 {
				t.Errorf("step time %v, peak bytes %d", res.StepTime, res.PeakBytes)
			}
			if m.Arch() == "tinymllm" && lmOf(job).Config.PEFT.Method != "lora" {
				t.Errorf("PEFT %q, want lora", lmOf(job).Config.PEFT.Method)
			}
		})
	}
}

// TestDeterminism checks that a run gives the same bits whatever GOMAXPROCS
// and Workers are.
func TestDeterminism(t *testing.T) {
	for _, name := range lmMethods() {
		t.Run(name, func(t *testing.T) {
			var ref []float32
			for _, procs := range []int{1, 4} {
				old := runtime.GOMAXPROCS(procs)
				eps := 8.0
				if name == "nonprivate" {
					eps = math.Inf(1)
				}
				job := methodJob(t, name, 48, eps, 1)
				m, _ := Lookup(name)
				_, err := m.FineTune(context.Background(), job)
				runtime.GOMAXPROCS(old)
				if err != nil {
					t.Fatal(err)
				}
				v := nn.NewLayout(job.Model.Params()).Values()
				if ref == nil {
					ref = v
					continue
				}
				for i := range v {
					if math.Float32bits(v[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("GOMAXPROCS %d: value %d = %v, want %v (GOMAXPROCS 1)", procs, i, v[i], ref[i])
					}
				}
			}
		})
	}
}

// TestTrainEmbeddings checks train_embeddings on the methods that declare
// it: off (the default), fine-tuning leaves the token embedding as it
// was; on, the embedding moves, and the DP methods still record a finite
// σ > 0 and ε ≤ the target.
func TestTrainEmbeddings(t *testing.T) {
	for _, name := range []string{"nonprivate", "dpsgd", "dpzo"} {
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v", name, on), func(t *testing.T) {
				eps := 3.0
				if name == "nonprivate" {
					eps = math.Inf(1)
				}
				job := tinyJob(t, name, 16, eps)
				job.Hyper.Epochs = 1
				if job.Hyper.Bool("train_embeddings") {
					t.Fatal("train_embeddings is on by default")
				}
				job.Hyper.values["train_embeddings"] = on
				before := slices.Clone(lmOf(job).Tok.Data)
				m, _ := Lookup(name)
				res, err := m.FineTune(context.Background(), job)
				if err != nil {
					t.Fatal(err)
				}
				if moved := !slices.Equal(before, lmOf(job).Tok.Data); moved != on {
					t.Errorf("train_embeddings %v: the embedding moved: %v", on, moved)
				}
				if name != "nonprivate" && (!(res.Privacy.Sigma > 0) || float64(res.Privacy.Epsilon) > eps) {
					t.Errorf("privacy record %+v", res.Privacy)
				}
			})
		}
	}
}

// TestClipNorm checks the non-private batch-gradient clip against its
// closed form: a 3-4-12 vector (norm 13) clipped to 6.5 is halved, one
// within the bound and c = 0 are unchanged.
func TestClipNorm(t *testing.T) {
	for _, tc := range []struct {
		c    float64
		want []float32
	}{
		{6.5, []float32{1.5, 2, 6}},
		{13, []float32{3, 4, 12}},
		{20, []float32{3, 4, 12}},
		{0, []float32{3, 4, 12}},
	} {
		g := []float32{3, 4, 12}
		clipNorm(g, tc.c)
		if !slices.Equal(g, tc.want) {
			t.Errorf("clipNorm([3 4 12], %v) = %v, want %v", tc.c, g, tc.want)
		}
	}
}
