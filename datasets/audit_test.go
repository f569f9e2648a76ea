// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestMIAVariant checks the -mia tasks: the member set is cut to
// miaSizes' Members, every audit canary with Reps 1 is in private train
// exactly once and those with Reps 0 never, and the fair coins give about
// half in. With 64 canaries the count in is Binomial(64, ½); outside
// 32 ± 14 has probability below 1e-3. The canaries come from the holdout
// split, which loses them, and are mislabelled: no canary keeps the answer
// of its holdout example.
func TestMIAVariant(t *testing.T) {
	for _, task := range []string{"shapes-vqa-mia", "fashion-vqa-mia"} {
		d, err := Build(task, &Options{Scale: Smoke, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := Arch(task); a != "tinymllm" {
			t.Errorf("%s: arch %q", task, a)
		}
		sz := miaSizes[Smoke]
		copies := map[int]int{}
		regular := 0
		for _, ex := range d.Private {
			if ex.Canary < 0 {
				regular++
				continue
			}
			if ex.Kind != AuditCanaryKind {
				t.Errorf("%s: private canary copy of kind %q", task, ex.Kind)
			}
			copies[ex.Canary]++
		}
		if regular != sz.Members {
			t.Errorf("%s: %d members, want %d", task, regular, sz.Members)
		}
		if len(d.Canaries) != sz.AuditCanaries {
			t.Fatalf("%s: %d canaries, want %d", task, len(d.Canaries), sz.AuditCanaries)
		}
		in := 0
		for c, can := range d.Canaries {
			if copies[c] != can.Reps || can.Reps > 1 || can.Example.Kind != AuditCanaryKind {
				t.Errorf("%s: canary %d: %d copies, Reps %d, kind %q", task, c, copies[c], can.Reps, can.Example.Kind)
			}
			in += can.Reps
		}
		if math.Abs(float64(in)-32) > 14 {
			t.Errorf("%s: %d of 64 canaries in, want about half", task, in)
		}
		base, err := Build(task[:len(task)-4], &Options{Scale: Smoke, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if task+strings.TrimPrefix(base.Holdout[sz.AuditCanaries+5].ID, task[:len(task)-4]) != d.Holdout[5].ID || len(d.Holdout) != len(base.Holdout)-sz.AuditCanaries || base.Fingerprint() == d.Fingerprint() {
			t.Errorf("%s: holdout is not the base's less the canaries, or fingerprints agree", task)
		}
		same := 0
		for c, can := range d.Canaries {
			if slices.Equal(can.Example.Answer, base.Holdout[c].Answer) {
				same++
			}
		}
		if same > 0 {
			t.Errorf("%s: %d canaries keep their answer, want every one mislabelled", task, same)
		}
	}
}
