// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"strings"
)

// Scale is a size preset: Smoke, Small or Full.
type Scale string

// The presets. Smoke is for CI (a fine-tuning run takes seconds), Small is
// the default (trends visible with 3 seeds on a laptop), Full is closest to
// the papers and needs the full Fashion-MNIST release for the image tasks.
const (
	Smoke Scale = "smoke"
	Small Scale = "small"
	Full  Scale = "full"
)

// Scales lists the presets in increasing size.
var Scales = []Scale{Smoke, Small, Full}

// ParseScale returns the preset named s; the empty string means Small.
func ParseScale(s string) (Scale, error) {
	switch Scale(s) {
	case "":
		return Small, nil
	case Smoke, Small, Full:
		return Scale(s), nil
	}
	return "", fmt.Errorf("datasets: unknown scale %q: want one of %s", s, scaleList())
}

func scaleList() string {
	names := make([]string, len(Scales))
	for i, s := range Scales {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Sizes are the numbers of regular examples per split of a task at a scale;
// canary copies come on top of Private. For icl they count episodes.
type Sizes struct {
	Public, Private, Holdout, Test int
	// CanariesPerLevel is the number of distinct canaries at each repetition
	// level (1, 4, 16), and also the number of reference canaries that are
	// drawn the same way but not inserted.
	CanariesPerLevel int
}

// sizes per task family and scale.
var (
	imageSizes = map[Scale]Sizes{
		Smoke: {512, 256, 256, 256, 1},
		Small: {2000, 2000, 1000, 1000, 4},
		Full:  {20000, 20000, 10000, 10000, 16},
	}
	recordSizes = map[Scale]Sizes{
		Smoke: {512, 256, 256, 256, 1},
		Small: {4000, 2000, 1000, 1000, 4},
		Full:  {40000, 20000, 10000, 10000, 16},
	}
	episodeSizes = map[Scale]Sizes{
		Smoke: {256, 32, 16, 32, 1},
		Small: {2000, 96, 48, 80, 4},
		Full:  {20000, 1000, 400, 800, 16},
	}
	// Public queries of the icl task (Dataset.Selection), at most.
	selectionSizes = map[Scale]int{Smoke: 96, Small: 200, Full: 1000}
	// Demonstrations per icl episode (DP-MTV uses 8 demos + 1 query).
	episodeShots = map[Scale]int{Smoke: 4, Small: 8, Full: 8}
	// Classes per icl episode ("ways"); the private task has this many
	// fixed classes, whose private-side images bound the episode counts.
	episodeWays = map[Scale]int{Smoke: 3, Small: 5, Full: 5}
	// Clients of fl-mm.
	scaleClients = map[Scale]int{Smoke: 4, Small: 10, Full: 20}
)

// CanaryRepetitions are the numbers of times a canary is inserted into
// private train; 0 marks a reference canary that is not inserted.
var CanaryRepetitions = []int{1, 4, 16}

// ICLShots returns the demonstrations per icl episode at scale.
func ICLShots(scale Scale) int { return episodeShots[scale] }

// TaskSizes returns the split sizes of task at scale (episodes for icl).
func TaskSizes(task string, scale Scale) (Sizes, error) {
	if _, ok := tasks[task]; !ok {
		return Sizes{}, fmt.Errorf("datasets: unknown task %q: want one of %s", task, strings.Join(Tasks(), ", "))
	}
	if _, err := ParseScale(string(scale)); err != nil || scale == "" {
		return Sizes{}, fmt.Errorf("datasets: unknown scale %q: want one of %s", scale, scaleList())
	}
	switch task {
	case "records", "records-e2e", "records-echr":
		return recordSizes[scale], nil
	case "icl":
		return episodeSizes[scale], nil
	case "fashion-upper":
		return upperSizes[scale], nil
	}
	return imageSizes[scale], nil
}

// PrivateSize returns the number of examples of task's private split at
// scale, canary copies included, and true; false for an unknown task or
// scale, for the -lira and -mia tasks, whose private split is drawn from a
// pool or cut to a member set, and for fl-mm-tune, whose private split is
// as large as fl-mm's public split. The other -tune tasks train on
// tuneSizes' Train examples and have no canaries.
func PrivateSize(task string, scale Scale) (int, bool) {
	if strings.HasSuffix(task, "-lira") || strings.HasSuffix(task, "-mia") || task == "fl-mm"+TuneSuffix {
		return 0, false
	}
	sz, err := TaskSizes(task, scale)
	if err != nil {
		return 0, false
	}
	if strings.HasSuffix(task, TuneSuffix) {
		return tuneSizeOf(task, scale).Train, true
	}
	n := sz.Private
	for _, r := range CanaryRepetitions {
		n += sz.CanariesPerLevel * r
	}
	return n, true
}
