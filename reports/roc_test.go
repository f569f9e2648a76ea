// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"math"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

// TestROC checks curves worked out by hand. The AUC is the probability
// that a member outscores a non-member, ties counting one half
// (Mann–Whitney U / (n₊ n₋)).
func TestROC(t *testing.T) {
	score := func(member bool, s float64) results.Score { return results.Score{Member: member, Score: s} }
	for _, tc := range []struct {
		desc   string
		scores []results.Score
		auc    float64
		at     map[float64]float64 // FPR → TPR
	}{
		{
			// Members 3, 2; non-members 2.5, 1: 3 of the 4 pairs are won.
			desc:   "no ties",
			scores: []results.Score{score(true, 3), score(false, 2.5), score(true, 2), score(false, 1)},
			auc:    0.75,
			at:     map[float64]float64{0: 0.5, 0.25: 0.5, 0.5: 1, 1: 1},
		},
		{
			desc:   "one tie",
			scores: []results.Score{score(true, 1), score(false, 1)},
			auc:    0.5,
			at:     map[float64]float64{0: 0, 0.5: 0, 1: 1},
		},
		{
			desc:   "perfect",
			scores: []results.Score{score(true, 5), score(true, 4), score(false, 1), score(false, 0)},
			auc:    1,
			at:     map[float64]float64{0: 1, 0.001: 1},
		},
	} {
		c, err := newROC(tc.scores)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		if math.Abs(c.auc-tc.auc) > 1e-12 {
			t.Errorf("%s: AUC %v, want %v", tc.desc, c.auc, tc.auc)
		}
		for f, want := range tc.at {
			if got := c.at(f); got != want {
				t.Errorf("%s: TPR at FPR %v = %v, want %v", tc.desc, f, got, want)
			}
		}
	}
	if _, err := newROC([]results.Score{score(true, 1)}); err == nil {
		t.Error("no non-members: got nil error")
	}
	// The FPR grid runs from lo to 1, log-spaced.
	g := rocGrid(1e-2)
	if len(g) != 2*rocGridPoints+1 || math.Abs(g[0]-1e-2) > 1e-15 || g[len(g)-1] != 1 {
		t.Errorf("rocGrid(1e-2) = %v, want %d points from 0.01 to 1", g, 2*rocGridPoints+1)
	}
}
