// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestLiRAPool checks the -lira variants: the pool is the same for every
// seed, the seed only decides membership, members and non-members
// partition the pool in pool order, and pool example 0 is mislabelled.
func TestLiRAPool(t *testing.T) {
	for _, task := range []string{"shapes-vqa-lira", "fashion-vqa-lira", "shapes-vqa-tune-lira", "fashion-cls-lira"} {
		pools := map[uint64][]Example{}
		var ins [][]bool
		for _, seed := range []uint64{1, 2, 3} {
			d, err := Build(task, &Options{Scale: Smoke, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			n := liraPool[Smoke]
			if len(d.Pool) != n || len(d.Private)+len(d.Holdout) != n || len(d.Canaries) != 0 {
				t.Fatalf("%s seed %d: pool %d, private %d, holdout %d, canaries %d; want a pool of %d split between private and holdout", task, seed, len(d.Pool), len(d.Private), len(d.Holdout), len(d.Canaries), n)
			}
			pool := make([]Example, n)
			pi, hi := 0, 0
			for i, in := range d.Pool {
				var ex Example
				if in {
					ex, pi = d.Private[pi], pi+1
				} else {
					ex, hi = d.Holdout[hi], hi+1
				}
				if want := fmt.Sprintf("%s/pool/%d", task, i); ex.ID != want {
					t.Fatalf("%s seed %d: pool example %d has id %s, want %s", task, seed, i, ex.ID, want)
				}
				pool[i] = ex
			}
			pools[seed] = pool
			ins = append(ins, d.Pool)
		}
		for _, seed := range []uint64{2, 3} {
			for i := range pools[1] {
				a, b := pools[1][i], pools[seed][i]
				if !slices.Equal(a.Prompt, b.Prompt) || !slices.Equal(a.Answer, b.Answer) || a.Label != b.Label || !slices.Equal(a.Images[0], b.Images[0]) {
					t.Fatalf("%s: pool example %d differs between seeds 1 and %d", task, i, seed)
				}
			}
		}
		if slices.Equal(ins[0], ins[1]) || slices.Equal(ins[1], ins[2]) {
			t.Errorf("%s: seeds 1, 2, 3 draw the same members", task)
		}
		base, err := Build(task[:len(task)-len("-lira")], &Options{Scale: Smoke, Seed: LiRAPoolSeed})
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(task, &Options{Scale: Smoke, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Test) != len(base.Test) || d.Test[0].ID != task+strings.TrimPrefix(base.Test[0].ID, base.Task) {
			t.Errorf("%s: the test split is not the base's (for -tune, its validation split)", task)
		}
		i := slices.IndexFunc(base.Private, func(ex Example) bool { return ex.Canary < 0 })
		c, b := pools[1][0], base.Private[i]
		if b.Answer == nil { // a classification task: another label
			if c.Label == b.Label || !slices.Equal(c.Images[0], b.Images[0]) || c.Label < 0 || c.Label >= len(d.Classes) {
				t.Errorf("%s: pool example 0 is not the base's first private example with another label (%d, base %d)", task, c.Label, b.Label)
			}
		} else if slices.Equal(c.Answer, b.Answer) || !slices.Equal(c.Prompt, b.Prompt) {
			t.Errorf("%s: pool example 0 is not the base's first private example with another answer", task)
		}
	}
}
