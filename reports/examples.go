// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/repro-dp/repro/internal/results"
)

// ExampleMetrics maps each run-table metric that is an accuracy over the
// rows of predictions.parquet to the split of those rows: 100 times the
// share of the split's rows that are correct. Only these metrics are
// compared at the example level.
var ExampleMetrics = map[string]string{"acc": "test"}

// exampleTolerance is how far (in points) a run table's accuracy may be
// from the one its predictions give: float rounding only.
const exampleTolerance = 1e-9

// runExamples returns, for each run idx of r (ok, with metric m), the
// correctness of each example of split in the run's predictions.parquet
// under dir (dir/RUN-ID/predictions.parquet), keyed by seed. It returns
// nil and no error if r has no run_id or seed column, or a run has no
// predictions file (a table of runs from before predictions were
// recorded); an error if a file does not read, a seed repeats, or the
// predictions do not give the run table's value of m.
func runExamples(r *Runs, dir, m, split string, idx []int) (map[float64]map[string]float64, error) {
	ids, ok1 := r.Column("run_id")
	seeds, ok2 := r.Column("seed")
	col, _ := r.Column(m)
	if dir == "" || !ok1 || !ok2 || ids.Kind != String || seeds.Kind != Float {
		return nil, nil
	}
	out := make(map[float64]map[string]float64)
	for _, i := range idx {
		if math.IsNaN(col.Floats[i]) {
			continue
		}
		rows, err := results.ReadPredictions(filepath.Join(dir, ids.Strings[i], results.PredictionsFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s := seeds.Floats[i]
		if _, dup := out[s]; dup {
			return nil, fmt.Errorf("reports: seed %v appears twice in one configuration", s)
		}
		ex := make(map[string]float64)
		hit := 0
		for _, p := range rows {
			if p.Split != split {
				continue
			}
			if _, dup := ex[p.ExampleID]; dup {
				return nil, fmt.Errorf("reports: run %s: %s example %q predicted twice", ids.Strings[i], split, p.ExampleID)
			}
			ex[p.ExampleID] = 0
			if p.Correct {
				ex[p.ExampleID], hit = 1, hit+1
			}
		}
		if len(ex) == 0 {
			return nil, nil
		}
		if got := 100 * float64(hit) / float64(len(ex)); math.Abs(got-col.Floats[i]) > exampleTolerance {
			return nil, fmt.Errorf("reports: run %s: its predictions give %s = %v, the run table %v", ids.Strings[i], m, got, col.Floats[i])
		}
		out[s] = ex
	}
	return out, nil
}

// pairExamples pairs the examples of old and new (from runExamples) by
// seed and example id: the seeds both have, in order, and in each the
// examples both have, in id order. It returns nil if no seed is shared.
func pairExamples(old, new map[float64]map[string]float64) *pairedExamples {
	p := &pairedExamples{}
	for _, s := range slices.Sorted(maps.Keys(old)) {
		n, ok := new[s]
		if !ok {
			continue
		}
		o := old[s]
		var vo, vn []float64
		for _, id := range slices.Sorted(maps.Keys(o)) {
			if y, ok := n[id]; ok {
				vo, vn = append(vo, o[id]), append(vn, y)
			}
		}
		if len(vo) == 0 {
			continue
		}
		p.seeds = append(p.seeds, s)
		p.old, p.new = append(p.old, vo), append(p.new, vn)
	}
	if len(p.seeds) == 0 {
		return nil
	}
	return p
}

// exampleInterval replaces the interval of ch's effect by the two-stage
// bootstrap over seeds and examples of the runs' predictions (see
// [pairedExamples.bootstrap]), when the metric is one of ExampleMetrics
// and every run of both sides has predictions; paired sides keep each
// (seed, example) pair together, unpaired sides are resampled apart.
func (ch *Check) exampleInterval(runs *Runs, c Claim, a, b []int, paired bool, o VerifyOptions) {
	split, ok := ExampleMetrics[c.Metric]
	if !ok {
		return
	}
	ea, err := runExamples(runs, o.RunDirs, c.Metric, split, a)
	if err != nil || ea == nil {
		return
	}
	rng := rand.New(rand.NewPCG(seedOf(c.Name, ch.At), 0x6578616d706c6573))
	if c.B == nil {
		ch.Lo, ch.Hi = sideBootstrap(rng, ea, nil, o.Alpha, o.Resamples)
		ch.Note = "interval over seeds and examples"
		return
	}
	eb, err := runExamples(runs, o.RunDirs, c.Metric, split, b)
	if err != nil || eb == nil {
		return
	}
	if p := pairExamples(eb, ea); paired && p != nil {
		ch.Lo, ch.Hi = p.bootstrap(rng, o.Alpha, o.Resamples)
	} else {
		ch.Lo, ch.Hi = sideBootstrap(rng, ea, eb, o.Alpha, o.Resamples)
	}
	ch.Note = "interval over seeds and examples"
}

// sideBootstrap returns the percentile interval at level 1−α of the
// accuracy (points) of a, or of a's minus b's when b is not nil, each
// side resampled apart: its seeds with replacement, then the examples of
// each drawn seed.
func sideBootstrap(rng *rand.Rand, a, b map[float64]map[string]float64, alpha float64, n int) (lo, hi float64) {
	if b == nil {
		return cellBootstrap(rng, []map[float64]map[string]float64{a}, []float64{1}, alpha, n)
	}
	return cellBootstrap(rng, []map[float64]map[string]float64{a, b}, []float64{1, -1}, alpha, n)
}

// cellBootstrap returns the percentile interval at level 1−α of Σ cᵢ·accᵢ
// (points), the accuracy of each cell resampled apart: its seeds with
// replacement, then the examples of each drawn seed.
func cellBootstrap(rng *rand.Rand, cells []map[float64]map[string]float64, coef []float64, alpha float64, n int) (lo, hi float64) {
	flat := func(m map[float64]map[string]float64) [][]float64 {
		var out [][]float64
		for _, s := range slices.Sorted(maps.Keys(m)) {
			var v []float64
			for _, id := range slices.Sorted(maps.Keys(m[s])) {
				v = append(v, m[s][id])
			}
			out = append(out, v)
		}
		return out
	}
	draw := func(x [][]float64) float64 {
		var sum float64
		for range x {
			v := x[rng.IntN(len(x))]
			var h float64
			for range v {
				h += v[rng.IntN(len(v))]
			}
			sum += 100 * h / float64(len(v))
		}
		return sum / float64(len(x))
	}
	fs := make([][][]float64, len(cells))
	for i, c := range cells {
		fs[i] = flat(c)
	}
	est := make([]float64, n)
	for r := range est {
		for i, f := range fs {
			est[r] += float64(coef[i] * draw(f))
		}
	}
	slices.Sort(est)
	return quantileSorted(est, alpha/2), quantileSorted(est, 1-float64(alpha/2))
}

// interactionExampleInterval replaces the interval of the interaction
// check ch by the two-stage bootstrap over seeds and examples of its four
// cells (a and b at x1 and x2), each resampled apart: the examples of x1
// and x2 need not be the same (two tasks), so no pairing is kept, and the
// interval is the wider for it. It does nothing unless the metric is one
// of ExampleMetrics and every run of the four cells has predictions.
func (ch *Check) interactionExampleInterval(runs *Runs, c Claim, cells [4][]int, o VerifyOptions) {
	split, ok := ExampleMetrics[c.Metric]
	if !ok {
		return
	}
	var ex []map[float64]map[string]float64
	for _, cell := range cells {
		e, err := runExamples(runs, o.RunDirs, c.Metric, split, cell)
		if err != nil || e == nil {
			return
		}
		ex = append(ex, e)
	}
	rng := rand.New(rand.NewPCG(seedOf(c.Name, ch.At), 0x6578616d706c6573))
	ch.Lo, ch.Hi = cellBootstrap(rng, ex, []float64{1, -1, -1, 1}, o.Alpha, o.Resamples)
	ch.Note += "; interval over seeds and examples, the four cells resampled apart"
}
