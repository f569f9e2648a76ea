// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/results"
)

// TestScoreKinds checks the per-kind counts of repro kinds against counts
// made by hand: two kinds, a majority answer with a tie broken to the
// lowest answer, a canary left out of the majority, and a prediction of
// another split ignored.
func TestScoreKinds(t *testing.T) {
	ex := func(id, kind string, answer ...int) datasets.Example {
		return datasets.Example{ID: id, Kind: kind, Answer: answer, Canary: -1}
	}
	train := []datasets.Example{
		ex("t1", "count", 3), ex("t2", "count", 3), ex("t3", "count", 4),
		ex("t4", "colour-at", 7), ex("t5", "colour-at", 5), // a tie: [5] < [7]
	}
	canary := ex("t6", "colour-at", 7)
	canary.Canary = 0
	train = append(train, canary, canary)
	test := []datasets.Example{
		ex("a", "count", 3), ex("b", "count", 4), ex("c", "count", 3),
		ex("d", "colour-at", 5), ex("e", "colour-at", 7),
	}
	preds := []results.Prediction{
		{Split: "test", ExampleID: "a", Correct: true},
		{Split: "test", ExampleID: "b", Correct: true},
		{Split: "test", ExampleID: "c", Correct: false},
		{Split: "test", ExampleID: "d", Correct: false},
		{Split: "test", ExampleID: "e", Correct: true},
		{Split: "train", ExampleID: "d", Correct: true},
	}
	got, err := scoreKinds(test, train, preds)
	if err != nil {
		t.Fatal(err)
	}
	// count: 3 examples, a and b right, a and c answer the majority [3];
	// colour-at: 2 examples, e right, d answers the majority [5].
	want := map[string]kindScore{"count": {n: 3, hit: 2, majority: 2}, "colour-at": {n: 2, hit: 1, majority: 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(kindScore{})); diff != "" {
		t.Errorf("scoreKinds (-want +got):\n%s", diff)
	}
	if _, err := scoreKinds(test, train, preds[:4]); err == nil {
		t.Error("scoreKinds with a test example without a prediction: no error")
	}
}

// TestMeanStd checks the formatting of repro kinds' mean ± std against
// values worked by hand: hits 1/2, 2/4 and 3/4 are 50, 50 and 75 %, mean
// 58.33, sample variance ((−8.33)² + (−8.33)² + 16.67²)/2 = 208.33, std
// 14.43.
func TestMeanStd(t *testing.T) {
	s := []kindScore{{n: 2, hit: 1, majority: 2}, {n: 4, hit: 2, majority: 4}, {n: 4, hit: 3, majority: 4}}
	if got, want := meanStd(s, false), "58.3 ± 14.4"; got != want {
		t.Errorf("meanStd(hits) = %q, want %q", got, want)
	}
	if got, want := meanStd(s, true), "100.0 ± 0.0"; got != want {
		t.Errorf("meanStd(majority) = %q, want %q", got, want)
	}
	if got, want := meanStd(s[:1], false), "50.0"; got != want {
		t.Errorf("meanStd of one run = %q, want %q", got, want)
	}
}
