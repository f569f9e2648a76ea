// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

// This file is a whole method, as a new method in package methods would
// be: a type, its hyperparameters and an init that registers it. A method
// in package methods gets its executor from this package's init; a test
// file registers it itself (the last line of init).

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/runners"
)

// toyFrozen releases the base model untouched. It reads no private data,
// but it records itself as a run without a guarantee (ε = ∞), as the
// non-private baseline does. Its one hyperparameter is checked like any
// other.
type toyFrozen struct{}

func (toyFrozen) Name() string { return "toy-frozen" }
func (toyFrozen) Arch() string { return "tinymllm" }
func (toyFrozen) Params() []methods.Param {
	return []methods.Param{{Name: "note", Kind: methods.Int, Doc: "an unused integer ≥ 0",
		Default: func(string) any { return 0 },
		Check: func(v any) error {
			if v.(int) < 0 {
				return fmt.Errorf("want ≥ 0")
			}
			return nil
		}}}
}
func (toyFrozen) FineTune(ctx context.Context, job *methods.Job) (*methods.Result, error) {
	if _, ok := job.Model.(*nn.TinyMLLM); !ok {
		return nil, fmt.Errorf("toy-frozen: not a tinymllm")
	}
	if !math.IsInf(job.Epsilon, 1) {
		return nil, fmt.Errorf("toy-frozen: runs at ε = inf only")
	}
	return &methods.Result{Privacy: results.Privacy{Accountant: "none", EpsilonTarget: results.Float(job.Epsilon),
		Epsilon: results.Float(math.Inf(1)), Delta: job.Delta, Sampling: "none", Neighbouring: "add-remove"},
		EpsilonRDP: math.Inf(1), EpsilonPLD: math.Inf(1)}, nil
}

func init() {
	methods.Register(toyFrozen{})
	runners.Register("toy-frozen", Execute)
}

const toySpec = `
name: toy
description: a method added in one file
scale: smoke
delta: 1e-5
tasks: [fashion-vqa]
methods:
  - name: toy-frozen
    params: {note: 3}
sweep:
  epsilon: [inf]
attacks: [loss-mia]
`

// TestToyMethod runs the one-file method through a spec: it is known to the
// spec checker (its hyperparameter is checked, its architecture matched to
// the task's), runs, and its model, the untouched base, is evaluated.
func TestToyMethod(t *testing.T) {
	freshBase(t)
	_, runs := sweepSpec(t, "toy.yaml", toySpec, 1, 1)
	if len(runs) != 1 || runs[0].Method != "toy-frozen" || math.IsNaN(runs[0].Results["acc"]) {
		t.Fatalf("runs %+v, want one toy-frozen run with an accuracy", runs)
	}
	// The frozen base's accuracy, computed directly.
	base, err := Base(context.Background(), "", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Data("fashion-vqa", "smoke", 1)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(context.Background(), base.TinyMLLM(), nil, d.Test, d.Private, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := runs[0].Results["acc"]; got != ev.Acc {
		t.Errorf("toy-frozen accuracy %v, want the base's %v", got, ev.Acc)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"note: 3", "note: -1", "toy.yaml:9: note = -1: want ≥ 0"},
		{"note: 3", "lr: 0.1", `toy.yaml:9: method toy-frozen has no hyperparameter "lr" (known: note)`},
		{"[fashion-vqa]", "[fashion-cls]", "toy.yaml:6: method toy-frozen fine-tunes a tinymllm; task fashion-cls is posed to a vit"},
	} {
		_, err := experiments.Parse("toy.yaml", []byte(strings.Replace(toySpec, tc.from, tc.to, 1)), nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("spec with %q: error %v, want %q", tc.to, err, tc.want)
		}
	}
}

// TestRegisteredNames checks that the spec checker's names are the
// registries' and that every embedded spec passes the full checks.
func TestRegisteredNames(t *testing.T) {
	n := experiments.Registered()
	if !strings.Contains(strings.Join(n.Methods, ","), "dpsgd") || len(n.Tasks) == 0 || len(n.Attacks) == 0 || n.CheckParam == nil {
		t.Fatalf("Registered() = %+v, want the registries' names and checks", n)
	}
	infos, err := experiments.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if _, err := experiments.Load(in.Name, nil); err != nil {
			t.Errorf("embedded spec %s: %v", in.Name, err)
		}
	}
}
