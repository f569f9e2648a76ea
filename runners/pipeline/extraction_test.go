// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// TestMemorisationControl is the extraction experiment's control at the
// smoke preset, on a freshly initialised model (as freshBase gives):
// fine-tuned on records for 20 epochs with a cosine decay (the
// extraction spec's recipe, shortened), with the token embedding trained
// beside LoRA (train_embeddings: at smoke, LoRA alone does not memorise
// names spelled with sub-word pieces; see docs/attacks.md), non-privately
// and by DP-SGD at ε = 1:
//   - the canary inserted 16 times must be exposed near the maximum
//     log₂10⁶ ≈ 19.93 bits by the non-private model (> 15; a
//     never-inserted canary has about 1 on average) and less by the DP
//     model. Only the 16× canary is attacked, to keep the test short (the
//     exposure of a low-rank secret needs a small part of the 10⁶
//     candidates; a reference canary needs them all). (DP at ε = 1 bounds
//     a canary inserted k times only by group privacy, e^{kε}: for k = 16
//     that allows any exposure, so the DP run is compared with the
//     non-private one, not with chance.)
//   - masked-name reconstruction (64 records, the true name among 10
//     private names, chance 0.1) must reach top-1 ≥ 0.25 for the
//     non-private model (it reached 0.36; at chance, 16 hits or more of 64
//     happen with probability 4.5·10⁻⁴, the binomial tail) and more than the DP model's.
func TestMemorisationControl(t *testing.T) {
	if testing.Short() {
		t.Skip("fine-tunes two models for 20 epochs")
	}
	d, err := Data("records", "smoke", 1)
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		method string
		eps    float64
	}{{"nonprivate", math.Inf(1)}, {"dpsgd", 1}}
	exposure, recon := make([]float64, len(runs)), make([]float64, len(runs))
	err = parallel.For(len(runs), 2, func(i int) error {
		return memorise(t, d, runs[i].method, runs[i].eps, &exposure[i], &recon[i])
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exposure of the 16× canary: non-private %.2f bits, DP-SGD ε = 1 %.2f bits", exposure[0], exposure[1])
	t.Logf("name reconstruction top-1: non-private %.3f, DP-SGD ε = 1 %.3f (chance 0.1)", recon[0], recon[1])
	if !(recon[0] >= 0.25 && recon[0] > recon[1]) {
		t.Errorf("name reconstruction top-1: non-private %.3f, DP ε = 1 %.3f; want non-private ≥ 0.25 and higher", recon[0], recon[1])
	}
	if !(exposure[0] > 15) {
		t.Errorf("non-private: exposure of the 16× canary %.2f, want > 15 bits", exposure[0])
	}
	if !(exposure[0] > exposure[1]) {
		t.Errorf("exposure of the 16× canary: non-private %.2f, DP ε = 1 %.2f; want non-private higher", exposure[0], exposure[1])
	}
}

// memorise fine-tunes a fresh smoke model on d with method at ε and sets
// *exposure to the exposure of the canaries inserted 16 times and *recon
// to the masked-name reconstruction top-1.
func memorise(t *testing.T, d *datasets.Dataset, method string, eps float64, exposure, recon *float64) error {
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		return err
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		return err
	}
	h, err := methods.Resolve(method, "smoke", map[string]any{"epochs": 20.0, "schedule": "cosine", "train_embeddings": true})
	if err != nil {
		return err
	}
	meth, _ := methods.Lookup(method)
	if _, err := meth.FineTune(t.Context(), &methods.Job{Model: m, Data: d, Hyper: h, Epsilon: eps, Delta: 1e-5, Seed: 1}); err != nil {
		return err
	}
	target := &attacks.Target{Model: m, Workers: 1}
	extractionTarget(target, d, nil)
	var keep []attacks.Secret
	for _, s := range target.Secrets {
		if s.Reps == 16 {
			keep = append(keep, s)
		}
	}
	target.Secrets = keep
	rep, err := attacks.CanaryExposure{}.Run(context.Background(), target)
	if err != nil {
		return err
	}
	*exposure = rep.Results["exposure_rep16"]
	rep, err = attacks.PIIReconstruction{}.Run(context.Background(), target)
	if err != nil {
		return err
	}
	*recon = rep.Results["recon_top1"]
	return nil
}

// TestExtractionTargetNames checks the name data extractionTarget gives
// the attacks on smoke records: every private record's name mention is
// found by the tagger at its span's start, spans the PII span's tokens
// exactly, is a private name (first name and surname from the private
// lists) and decodes to the span's text; the public and private lists are
// disjoint as names and as token sequences.
func TestExtractionTargetNames(t *testing.T) {
	t.Parallel()
	d, err := Data("records", "smoke", 1)
	if err != nil {
		t.Fatal(err)
	}
	target := &attacks.Target{}
	extractionTarget(target, d, nil)
	pii := target.PII
	if pii == nil || len(pii.Records) == 0 {
		t.Fatal("no PII data")
	}
	privF, privS := make(map[int]bool), make(map[int]bool)
	for _, i := range pii.PrivateFirst {
		privF[i] = true
	}
	for _, i := range pii.PrivateSurnames {
		privS[i] = true
	}
	seqs := make(map[string]bool)
	for i, s := range slices.Concat(pii.First, pii.Surnames) {
		k := fmt.Sprint(s)
		if len(s) < 2 || seqs[k] {
			t.Errorf("name %d: tokens %v: want two or more pieces, no repeat", i, s)
		}
		seqs[k] = true
	}
	tg := pii.Tagger()
	v := datasets.Vocab()
	mentions := 0
	for _, r := range pii.Records {
		ex := &d.Private[r.ID]
		var spans []datasets.Span
		for _, s := range ex.PII {
			if s.Type == datasets.PIIName {
				spans = append(spans, s)
			}
		}
		if len(spans) != len(r.Names) {
			t.Fatalf("record %d: %d name starts, %d name spans", r.ID, len(r.Names), len(spans))
		}
		for k, start := range r.Names {
			n, width, ok := tg.At(r.Tokens, start)
			if !ok || start != spans[k].Start || start+width != spans[k].End || !privF[n[0]] || !privS[n[1]] {
				t.Fatalf("record %d, mention at %d: name %v, width %d, found %v; span %+v", r.ID, start, n, width, ok, spans[k])
			}
			if got := v.Decode(r.Tokens[start : start+width]); got != spans[k].Text {
				t.Errorf("record %d: mention decodes to %q, want %q", r.ID, got, spans[k].Text)
			}
			mentions++
		}
	}
	if mentions < len(pii.Records) {
		t.Errorf("%d mentions in %d records, want at least one each", mentions, len(pii.Records))
	}
}

// TestTrainingDataHoldout checks the chance-level control's training data
// (train_holdout = 1) on smoke records: the method sees the holdout
// records as its private split, none of them a private record and none a
// canary, their names tagged from the private lists as the private
// records' are; the dataset the attacks target is unchanged; and without
// the param (or at 0) the method sees d itself.
func TestTrainingDataHoldout(t *testing.T) {
	t.Parallel()
	d, err := Data("records", "smoke", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, params := range []map[string]any{nil, {"train_holdout": int64(0)}} {
		if got := trainingData(&experiments.Config{Params: params}, d); got != d {
			t.Errorf("params %v: training data is not the dataset itself", params)
		}
	}
	nPriv, nHold := len(d.Private), len(d.Holdout)
	got := trainingData(&experiments.Config{Params: map[string]any{"train_holdout": int64(1)}}, d)
	if len(d.Private) != nPriv || len(d.Holdout) != nHold || got == d {
		t.Fatalf("the dataset changed: %d private, %d holdout, want %d and %d", len(d.Private), len(d.Holdout), nPriv, nHold)
	}
	if len(got.Private) != nHold {
		t.Fatalf("%d training examples, want the %d holdout ones", len(got.Private), nHold)
	}
	private := make(map[string]bool)
	for _, ex := range d.Private {
		private[ex.Items[0]] = true
	}
	target := &attacks.Target{}
	extractionTarget(target, got, nil) // the tagger of the name lists
	privF := make(map[int]bool)
	for _, i := range target.PII.PrivateFirst {
		privF[i] = true
	}
	tg := target.PII.Tagger()
	names := 0
	for _, ex := range got.Private {
		if ex.Canary >= 0 || private[ex.Items[0]] {
			t.Fatalf("training example %s is a canary or a private record", ex.ID)
		}
		toks, _ := ex.Sequence()
		for _, s := range ex.PII {
			if s.Type != datasets.PIIName {
				continue
			}
			if n, _, ok := tg.At(toks, s.Start); !ok || !privF[n[0]] {
				t.Fatalf("%s: name %q is not from the private lists", ex.ID, s.Text)
			}
			names++
		}
	}
	if names == 0 {
		t.Error("no name in the holdout records")
	}
}
