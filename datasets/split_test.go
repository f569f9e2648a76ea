// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"strings"
	"testing"
)

// TestBuildSplits checks that buildSplits fills each named split with its
// size, calling mk in split order and index order, and leaves the other
// splits alone.
func TestBuildSplits(t *testing.T) {
	t.Parallel()
	sizes := Sizes{Public: 3, Private: 2, Holdout: 1, Test: 2}
	for _, tc := range []struct {
		desc  string
		names []string
		want  string // every split, then the order of the calls
	}{
		{"all", SplitNames, "3 2 1 2: public/0 public/1 public/2 private/0 private/1 holdout/0 test/0 test/1"},
		{"private side", privateSide, "0 2 1 2: private/0 private/1 holdout/0 test/0 test/1"},
		{"public", []string{"public"}, "3 0 0 0: public/0 public/1 public/2"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			b := &buildCtx{sizes: sizes}
			d := &Dataset{}
			var calls []string
			b.buildSplits(d, tc.names, func(split string, i int) Example {
				calls = append(calls, fmt.Sprintf("%s/%d", split, i))
				return newExample(exampleID("t", split, i))
			})
			got := fmt.Sprintf("%d %d %d %d: %s", len(d.Public), len(d.Private), len(d.Holdout), len(d.Test), strings.Join(calls, " "))
			if got != tc.want {
				t.Errorf("buildSplits(%v) = %q, want %q", tc.names, got, tc.want)
			}
			for _, name := range SplitNames {
				for i, ex := range d.Split(name) {
					if want := exampleID("t", name, i); ex.ID != want {
						t.Errorf("split %s example %d has ID %s, want %s", name, i, ex.ID, want)
					}
				}
			}
		})
	}
}

// TestBuildPoolSplits checks that the public split takes the first public
// images, that the private side takes consecutive runs of the private
// images, and that too small a pool is an error before any example is made.
func TestBuildPoolSplits(t *testing.T) {
	t.Parallel()
	f, err := LoadFashion("")
	if err != nil {
		t.Fatal(err)
	}
	sizes := Sizes{Public: 2, Private: 2, Holdout: 1, Test: 1}
	pub, priv := []int{10, 11, 12}, []int{20, 21, 22, 23, 24}
	b := &buildCtx{sizes: sizes}
	d := &Dataset{Scale: Smoke}
	got := map[string][]int{}
	err = b.buildPoolSplits(d, "t", f, pub, priv, func(split string, i, idx int) Example {
		got[split] = append(got[split], idx)
		return newExample(exampleID("t", split, i))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"public": {10, 11}, "private": {20, 21}, "holdout": {22}, "test": {23}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pool images by split = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		desc      string
		pub, priv []int
		want      string
	}{
		{"public", pub[:1], priv, "needs 2 public"},
		{"private side", pub, priv[:3], "needs 4 private-side"},
	} {
		called := false
		err := b.buildPoolSplits(&Dataset{Scale: Smoke}, "t", f, tc.pub, tc.priv, func(split string, i, idx int) Example {
			called = true
			return newExample("")
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) || called {
			t.Errorf("%s: too few images gave %v (mk called: %v), want an error containing %q before any call", tc.desc, err, called, tc.want)
		}
	}
}
