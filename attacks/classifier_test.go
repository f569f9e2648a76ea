// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// classifierExamples returns the first n examples of exs as a classifier
// target's examples: the image and the class.
func classifierExamples(exs []datasets.Example, n int) []Example {
	var out []Example
	for i, ex := range exs[:n] {
		out = append(out, Example{ID: int64(i), Seq: nn.Sequence{Images: ex.Images}, Label: ex.Label})
	}
	return out
}

// TestClassifierMembership checks the membership attacks on a classifier
// target (a smoke ViT on fashion-cls): loss-mia's score of every example
// is minus its cross-entropy as nn.ViT.Loss computes it (the reference:
// the model's own loss on a tape), lira-mia's score is the
// logit-scaled confidence of the same probability, and maxrenyi-mia's
// desp slice at α = 1 is the Shannon entropy of the class distribution
// computed here from nn.ViT.Predict's probabilities.
func TestClassifierMembership(t *testing.T) {
	t.Parallel()
	d, err := datasets.Build("fashion-cls", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewViT(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{Classifier: m, Members: classifierExamples(d.Private, 6), NonMembers: classifierExamples(d.Holdout, 5), Pool: true}
	all := append(append([]Example(nil), tg.Members...), tg.NonMembers...)
	loss := func(ex Example) float64 {
		tp := nn.NewTape(nil, nil)
		l, err := m.Loss(tp, ex.Seq.Images[0], ex.Label, nil)
		if err != nil {
			t.Fatal(err)
		}
		return float64(l.Value.Data[0])
	}
	check := func(a Attack, label string, want func(ex Example) float64, tol float64) {
		t.Helper()
		rep, err := a.Run(context.Background(), tg)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range rep.Scores {
			if s.Attack != label {
				continue
			}
			var ex Example
			if s.Member {
				ex = tg.Members[s.ExampleID]
			} else {
				ex = tg.NonMembers[s.ExampleID]
			}
			if w := want(ex); math.Abs(s.Score-w) > tol*max(1, math.Abs(w)) {
				t.Errorf("%s: example %d (member %v): score %v, want %v", a.Name(), s.ExampleID, s.Member, s.Score, w)
			}
			n++
		}
		if n != len(all) {
			t.Errorf("%s: %d scores labelled %q, want %d", a.Name(), n, label, len(all))
		}
	}
	check(LossMIA{}, "", func(ex Example) float64 { return -loss(ex) }, 1e-6)
	check(LiRAMIA{}, LiRAConfLabel, func(ex Example) float64 { return LogitConfidence([]float64{loss(ex)}) }, 1e-4)
	check(MaxRenyiMIA{Slices: []string{SliceDesp}, Orders: []float64{1}, K: []float64{0}}, "renyi_desp_a1_k0", func(ex Example) float64 {
		_, p, err := m.Predict(ex.Seq.Images[0])
		if err != nil {
			t.Fatal(err)
		}
		h := 0.0
		for _, v := range p {
			if v > 0 {
				h -= v * math.Log(v)
			}
		}
		return -h
	}, 1e-5)
}

// TestFusionMembership checks the membership attacks on a pair classifier
// target (Target.Fusion: a smoke nn.Fusion on fl-mm's image + caption
// pairs): loss-mia's score of every example is minus its cross-entropy as
// nn.Fusion.Loss computes it on the same image and caption (the
// reference: the model's own loss on a tape), maxrenyi-mia's desp slice
// at α = 1 is minus the Shannon entropy of nn.Fusion.Predict's class
// probabilities, and the scores and AUC are the same on 1 and 3 workers.
func TestFusionMembership(t *testing.T) {
	t.Parallel()
	d, err := datasets.Build("fl-mm", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Classes = len(d.Classes)
	m, err := nn.NewFusion(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pairs := func(exs []datasets.Example, n int) []Example {
		var out []Example
		for i, ex := range exs[:n] {
			out = append(out, Example{ID: int64(i), Seq: nn.Sequence{Tokens: ex.Prompt, Images: ex.Images}, Label: ex.Label})
		}
		return out
	}
	target := func(workers int) *Target {
		return &Target{Fusion: m, Members: pairs(d.Private, 7), NonMembers: pairs(d.Holdout, 6), Workers: workers}
	}
	tg := target(1)
	loss := func(ex Example) float64 {
		l, err := m.Loss(nn.NewTape(nil, nil), ex.Seq.Images[0], ex.Seq.Tokens, ex.Label, nil)
		if err != nil {
			t.Fatal(err)
		}
		return float64(l.Value.Data[0])
	}
	negEntropy := func(ex Example) float64 {
		_, p, err := m.Predict(ex.Seq.Images[0], ex.Seq.Tokens)
		if err != nil {
			t.Fatal(err)
		}
		h := 0.0
		for _, v := range p {
			if v > 0 {
				h -= v * math.Log(v)
			}
		}
		return -h
	}
	for _, tc := range []struct {
		a     Attack
		label string
		want  func(Example) float64
		tol   float64
	}{
		{LossMIA{}, "", func(ex Example) float64 { return -loss(ex) }, 1e-6},
		{MaxRenyiMIA{Slices: []string{SliceDesp}, Orders: []float64{1}, K: []float64{0}}, "renyi_desp_a1_k0", negEntropy, 1e-5},
	} {
		rep, err := tc.a.Run(context.Background(), tg)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range rep.Scores {
			if s.Attack != tc.label {
				continue
			}
			var ex Example
			if s.Member {
				ex = tg.Members[s.ExampleID]
			} else {
				ex = tg.NonMembers[s.ExampleID]
			}
			if w := tc.want(ex); math.Abs(s.Score-w) > tc.tol*max(1, math.Abs(w)) {
				t.Errorf("%s: example %d (member %v): score %v, want %v", tc.a.Name(), s.ExampleID, s.Member, s.Score, w)
			}
			n++
		}
		if n != 13 {
			t.Errorf("%s: %d scores labelled %q, want 13", tc.a.Name(), n, tc.label)
		}
		rep3, err := tc.a.Run(context.Background(), target(3))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep.Scores, rep3.Scores) || rep.Results["mia_auc"] != rep3.Results["mia_auc"] {
			t.Errorf("%s: 1 and 3 workers differ", tc.a.Name())
		}
	}
	tg.Fusion = nil
	if _, err := (LossMIA{}).Run(context.Background(), tg); err == nil {
		t.Error("loss-mia without a model: no error")
	}
}
