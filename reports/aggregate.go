// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// This file holds the one aggregation step that tables and every kind of
// plot share: select the runs (Where, then status ok), group them by keys,
// and reduce the runs of each group to the mean ± std over seeds.

// selection is the runs a table or plot keeps.
type selection struct {
	// all are the runs that Where keeps, failed ones included.
	all []int
	// ok are the runs of all whose status is ok.
	ok []int
	// warnings count the runs of all that are not ok.
	warnings []error
}

// selectOK returns the runs that where keeps and those of them that are ok.
// It is an error if where names a missing column or keeps no run.
func selectOK(runs *Runs, where map[string]string) (selection, error) {
	idx, err := selectRuns(runs, where)
	if err != nil {
		return selection{}, err
	}
	if len(idx) == 0 {
		return selection{}, errors.New("reports: no runs left after the where filter")
	}
	ok, warnings := okRuns(runs, idx)
	return selection{all: idx, ok: ok, warnings: warnings}, nil
}

// aggregator reduces groups of runs to samples: the mean, the sample
// standard deviation and the count of one metric over the runs (seeds) of a
// table cell or a plot point. It remembers the smallest and largest count
// and the groups that hold two runs of one seed, for the warnings.
type aggregator struct {
	seed  *Column // the seed column, or nil if the run table has none
	scale float64 // multiplies every value; never 0

	minN, maxN int
	dups       []error // one per group with a repeated seed
}

// newAggregator returns an aggregator over runs that multiplies every
// value by scale (1 if scale is 0).
func newAggregator(runs *Runs, scale float64) *aggregator {
	a := &aggregator{scale: scale, minN: math.MaxInt}
	if a.scale == 0 {
		a.scale = 1
	}
	if c, ok := runs.Column("seed"); ok && c.Kind == Float {
		a.seed = c
	}
	return a
}

// repeatsSeed reports whether two of the runs idx share a seed; false
// when the run table has no seed column.
func (a *aggregator) repeatsSeed(idx []int) bool {
	if a.seed == nil {
		return false
	}
	seen := make(map[float64]bool, len(idx))
	for _, i := range idx {
		s := a.seed.Floats[i]
		if seen[s] {
			return true
		}
		seen[s] = true
	}
	return false
}

// sample is one aggregated group.
type sample struct {
	// N is the number of runs with a value; Mean and Std are the mean and
	// sample standard deviation of their scaled values (Std is 0 when N = 1,
	// both are NaN when N = 0).
	N         int
	Mean, Std float64
}

// add reduces the values of metric over the runs idx, skipping NaN values.
// If two of the runs with a value share a seed, add records a warning
// "<what> has several runs of seed s: <why>", where what names the group
// ("cell (…)", "point (…)") and why explains it.
func (a *aggregator) add(metric *Column, idx []int, where func() (what, why string)) sample {
	ys := make([]float64, 0, len(idx))
	var seeds []float64
	for _, i := range idx {
		v := metric.Floats[i]
		if math.IsNaN(v) {
			continue
		}
		ys = append(ys, v*a.scale)
		if a.seed != nil {
			seeds = append(seeds, a.seed.Floats[i])
		}
	}
	if dup, ok := duplicate(seeds); ok {
		what, why := where()
		a.dups = append(a.dups, fmt.Errorf("%s has several runs of seed %s: %s", what, formatKeyFloat(dup), why))
	}
	mean, std := meanStd(ys)
	if len(ys) > 0 {
		a.minN, a.maxN = min(a.minN, len(ys)), max(a.maxN, len(ys))
	}
	return sample{N: len(ys), Mean: mean, Std: std}
}

// addPooled reduces the values of metric over the runs idx as add does,
// after averaging the runs of each seed: the runs of one seed that differ
// in pool's columns (a table's Pool, such as the task) count as one value,
// their mean, so a group holds one value per seed and its std is over
// seeds. Runs with a NaN value are skipped. Two runs of one seed with the
// same pool key are recorded as add records them; seeds that pool
// different numbers of runs are recorded as
// "<what> pools 1–2 runs a seed: <uneven>" (a seed missing a task
// averages fewer).
func (a *aggregator) addPooled(metric *Column, idx []int, pool *keyer, where func() (what, why, uneven string)) sample {
	bySeed := map[float64][]float64{}
	var seeds []float64 // in first-seen order
	keys := map[float64]map[string]bool{}
	dup := false
	for _, i := range idx {
		v := metric.Floats[i]
		if math.IsNaN(v) {
			continue
		}
		s := 0.0
		if a.seed != nil {
			s = a.seed.Floats[i]
		}
		if _, ok := bySeed[s]; !ok {
			seeds = append(seeds, s)
			keys[s] = map[string]bool{}
		}
		bySeed[s] = append(bySeed[s], v*a.scale)
		k := pool.id(i)
		if keys[s][k] && !dup {
			dup = true
			what, why, _ := where()
			a.dups = append(a.dups, fmt.Errorf("%s has several runs of seed %s: %s", what, formatKeyFloat(s), why))
		}
		keys[s][k] = true
	}
	ys := make([]float64, 0, len(seeds))
	lo, hi := math.MaxInt, 0
	for _, s := range seeds {
		vs := bySeed[s]
		sum := 0.0
		for _, v := range vs {
			sum += v
		}
		ys = append(ys, sum/float64(len(vs)))
		lo, hi = min(lo, len(vs)), max(hi, len(vs))
	}
	if lo < hi {
		what, _, uneven := where()
		a.dups = append(a.dups, fmt.Errorf("%s pools %d–%d runs a seed: %s", what, lo, hi, uneven))
	}
	mean, std := meanStd(ys)
	if len(ys) > 0 {
		a.minN, a.maxN = min(a.minN, len(ys)), max(a.maxN, len(ys))
	}
	return sample{N: len(ys), Mean: mean, Std: std}
}

// warnings returns the warnings of the groups added so far: repeated seeds,
// then "n=… seeds < minSeeds" if a group with values has fewer than
// minSeeds runs (never when minSeeds ≤ 0).
func (a *aggregator) warnings(minSeeds int) []error {
	ws := a.dups
	if a.maxN > 0 && minSeeds > 0 && a.minN < minSeeds {
		n := strconv.Itoa(a.minN)
		if a.minN != a.maxN {
			n += "–" + strconv.Itoa(a.maxN)
		}
		ws = append(ws, fmt.Errorf("n=%s seeds < %d", n, minSeeds))
	}
	return ws
}

// defaultMinSeeds returns m, or 10 when m is 0.
func defaultMinSeeds(m int) int {
	if m == 0 {
		return 10
	}
	return m
}

// countMissing returns a warning "n runs have no name" for the runs of idx
// whose value in c is NaN, or nil if there are none.
func countMissing(c *Column, idx []int, name string) error {
	n := 0
	for _, i := range idx {
		if math.IsNaN(c.Floats[i]) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d %s no %s", n, plural(n, "run has", "runs have"), name)
}
