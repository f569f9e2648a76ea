// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/repro-dp/repro"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
)

// eta predicts when a sweep's pending runs will have finished. It
// estimates each run's cost from its method, task and planned steps
// (experiments.Names.Steps): the seconds per step that the finished runs
// of the same method and task took in this invocation; until one has
// finished, the prior's (the runs of the same method, task and scale
// recorded in the run tables under the results folder, the checked-in
// ones included: see loadPrior), else the checked-in tables' that the
// binary embeds, at any scale, converted to this one (see
// checkedInPrior), each scaled by how much slower or faster this
// invocation's finished runs were than the prior said; then the finished
// runs of the method's cost class (the first-order DP-SGD loop,
// zeroth-order steps, ...), the prior's, and for a method of no known
// class, every finished run. A step of one class is never costed as a
// step of another: DPZO's steps cost a hundred times DP-SGD's, so until
// a zeroth-order step is known, from this invocation or the prior, there
// is no estimate. A run whose steps are not known before it runs costs
// the mean wall time of the finished runs of its method and task (else
// the prior's: of the runs of its experiment, method, task and variant
// at its scale, else of its method and task's with its hyperparameters,
// else of the nearest such recipe, else of every run of its method and
// task, see priorRun; else this
// invocation's runs of its method, else of every run). It then replays
// the pool: the running runs hold their workers for what they have left,
// and the queued ones go, in the order the pool starts them, to the
// worker that frees first.
//
// The old estimate, elapsed / done × left, assumed that every run costs
// the same; in table1 at smoke a DPZO run takes a hundred times a DP-SGD
// one, so the estimate climbed from a minute to the sweep's real length
// as the slow runs came (TestETA replays the checked-in table).
type eta struct {
	workers int
	plan    func(*Run) (steps int64, class string)
	queued  []*Run // not started, in start order
	running map[*Run]time.Time
	// Learnt from the finished runs, by method/task, method, class and
	// "" (every run): seconds and steps of the runs with known steps,
	// seconds and count of all.
	perStep map[string]*rate
	perRun  map[string]*rate
	peak    int // most runs running at once
	// priors are what runs recorded before this invocation tell, the
	// first that tells winning (nil ones tell nothing); speed sums, by
	// cost class, this invocation's finished runs' seconds and the
	// priors' prediction of them, whose ratio scales the priors' costs
	// of the class.
	priors []*etaPrior
	speed  map[string]*rate
}

// source says where an estimate comes from, from the best to the
// roughest: the progress line marks one that is not this invocation's
// own.
type source int

const (
	fromOwn       source = iota // this invocation's finished runs
	fromRecorded                // run tables of the same scale under the results folder
	fromCheckedIn               // the tables checked in with the code, converted to the scale
)

// mark returns what the progress line adds to an ETA from s: "" for
// this invocation's own runs.
func (s source) mark() string {
	switch s {
	case fromRecorded:
		return " (from recorded runs)"
	case fromCheckedIn:
		return " (from checked-in timings)"
	}
	return ""
}

// etaPrior holds the seconds per step and per run of runs recorded before
// an invocation, by the keys of eta's rates, as means: per step, the
// runs' seconds over their steps (Σ seconds / Σ steps, what a plan's
// total costs per step); per run, the mean of their seconds. A run's
// time is skewed to the right (a loaded machine makes some runs several
// times slower, never faster than quiet), and a sweep's length is the
// sum of its runs', which a median underestimates: left one seed out of
// the checked-in table1 smoke table, the other two seeds' medians
// predict 72% of the run-seconds its 26 runs recorded (1,141 s of 1,591
// over the three seeds, 65–82% per seed), their means 98% (1,555 s,
// 85–117% per seed; bench/load/loso.py, TestETALeaveOneSeedOut). A
// table's first run of a method may carry a pretraining of the base,
// which a mean spreads over the method's runs.
type etaPrior struct {
	perStep map[string]float64
	perRun  map[string]float64
	// recipes holds, by method/task, the seconds per run of the runs of
	// each set of hyperparameters (see recipe), sorted by key.
	recipes map[string][]recipe
	from    source // fromRecorded or fromCheckedIn
	// medStep and medRun hold the medians of what perStep and perRun
	// average, by the same keys, for the ratio of two scales' costs
	// (scaleRatios): a ratio of typical runs, not a sum.
	medStep, medRun map[string]float64
}

// A recipe is a set of hyperparameters recorded with a method and task
// (results.Run.Params, the values as fmt.Sprint prints them, none of
// the runs' columns: not the seed, not ε), and the mean seconds of its
// runs.
type recipe struct {
	key     string // the params, sorted, "name=value" joined by ","
	params  map[string]string
	seconds float64
}

// newRecipe returns the recipe of params, with no seconds; false when
// params is empty (a run with no hyperparameters tells only its method
// and task's seconds).
func newRecipe(params map[string]any) (recipe, bool) {
	if len(params) == 0 {
		return recipe{}, false
	}
	c := recipe{params: map[string]string{}}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		c.params[k] = fmt.Sprint(params[k])
		kv = append(kv, k+"="+c.params[k])
	}
	c.key = strings.Join(kv, ",")
	return c, true
}

// recipeRun returns the seconds of a run of method/task mt with params
// that p's recipes tell: those of the recipe of mt with the most
// hyperparameters, all of which params has with the same values (the
// first by key of those with as many); false for none.
func (p *etaPrior) recipeRun(mt string, params map[string]any) (float64, bool) {
	secs, n := 0.0, 0
	for _, c := range p.recipes[mt] {
		if len(c.params) > n && c.in(params) {
			secs, n = c.seconds, len(c.params)
		}
	}
	return secs, n > 0
}

// nearestRecipe returns the seconds of a run of method/task mt with
// params that p's nearest recipe tells, when none is a subset of params
// (see recipeRun): the recipe of mt with the most hyperparameters that
// params has with the same value, at least one; of those, the one with
// the fewest others (whose value differs or that params lacks); then the
// first by key. False when no recipe shares a hyperparameter with params.
// Its runs share more of r's setting than the mean of every run of the
// method and task, which mixes epochs, data and attacks (extraction's
// 30-epoch runs with extraction-control's 100).
func (p *etaPrior) nearestRecipe(mt string, params map[string]any) (float64, bool) {
	secs, common, other := 0.0, 0, 0
	for _, c := range p.recipes[mt] {
		n := 0
		for k, v := range c.params {
			if w, ok := params[k]; ok && fmt.Sprint(w) == v {
				n++
			}
		}
		if n > common || n == common && n > 0 && len(c.params)-n < other {
			secs, common, other = c.seconds, n, len(c.params)-n
		}
	}
	return secs, common > 0
}

// in reports whether params has each of c's hyperparameters, with the
// same value.
func (c recipe) in(params map[string]any) bool {
	for k, v := range c.params {
		if w, ok := params[k]; !ok || fmt.Sprint(w) != v {
			return false
		}
	}
	return true
}

// newPrior returns the prior of rows, the runs.parquet rows of runs of one
// scale, for runs at load today; plan gives a run's cost class. Runs that
// did not finish ok teach nothing. A row that recorded its load counts
// its seconds at today's (see atLoad: a run recorded at load 8 on 2
// cores took 2.5 times what it takes on a quiet machine). A row recorded
// before loads were is taken as run at the median share of the rows
// that recorded theirs (see typicalShare), and counts as they are when
// none did.
func newPrior(rows []results.Run, plan func(*Run) (int64, string), today load) *etaPrior {
	step, run := map[string]*costs{}, map[string]*costs{}
	recipes := map[string]map[string]*recipeRows{} // by method/task, by key
	typical, known := typicalShare(rows)
	for _, row := range rows {
		if row.Status != results.OK || !(row.Seconds > 0) {
			continue
		}
		// w is how much of an outlier's excess counts (see costs.mean):
		// all of it for a row taken as it is.
		w := 1.0
		if rec, ok := loadOf(row).share(); ok || known {
			if !ok {
				rec = typical
			}
			row.Seconds *= atShare(rec, today)
			w = excessWeight(rec, today)
		}
		r := &Run{Config: experiments.Config{Method: row.Method, Task: row.Task, Scale: row.Scale, Seed: row.Seed, Params: row.Params}}
		_, class := plan(r)
		mt := row.Method + "/" + row.Task
		run[mt] = run[mt].add(row.Seconds, 1, w)
		if k := expKey(row.Experiment, mt, row.Params); k != "" {
			run[k] = run[k].add(row.Seconds, 1, w)
		}
		if c, ok := newRecipe(row.Params); ok {
			if recipes[mt] == nil {
				recipes[mt] = map[string]*recipeRows{}
			}
			if recipes[mt][c.key] == nil {
				recipes[mt][c.key] = &recipeRows{recipe: c}
			}
			recipes[mt][c.key].all = recipes[mt][c.key].all.add(row.Seconds, 1, w)
		}
		if row.Steps > 0 {
			for _, k := range []string{mt, "class:" + class} {
				step[k] = step[k].add(row.Seconds, float64(row.Steps), w)
			}
		}
	}
	if len(run) == 0 {
		return nil
	}
	p := &etaPrior{perStep: map[string]float64{}, perRun: map[string]float64{}, recipes: map[string][]recipe{}, from: fromRecorded,
		medStep: map[string]float64{}, medRun: map[string]float64{}}
	for k, v := range step {
		p.perStep[k], p.medStep[k] = v.mean(), v.median()
	}
	for k, v := range run {
		p.perRun[k], p.medRun[k] = v.mean(), v.median()
	}
	for mt, byKey := range recipes {
		for _, k := range slices.Sorted(maps.Keys(byKey)) {
			c := byKey[k].recipe
			c.seconds = byKey[k].all.mean()
			p.recipes[mt] = append(p.recipes[mt], c)
		}
	}
	return p
}

// typicalShare returns the median share (see load.share) of the rows
// that finished ok and recorded their load, false when none did: the
// share a row of the same tables that recorded none is taken to have run
// at. The checked-in tables were recorded on the shared two-core
// development machine, whose rows with a load got 0.17–0.48 of their
// quiet speed (median 0.19). Taken as they are, the rows without a load
// and the quiet-equivalent rows with one, about five times faster, mixed
// in one median: adding 16 loaded
// runs of Dual-Priv on fashion-vqa-tune at small to its 12 load-less ones
// moved their median from 0.68 s a step to 0.18, under smoke's 0.19, and
// table1's rows, loaded at smoke and load-less at small, differed by
// 16–40 times between the scales where the other methods and tasks
// differ by 0.7–9 (the cross-scale check of the time, now
// TestCheckedInTimingsDrift).
func typicalShare(rows []results.Run) (float64, bool) {
	var shares []float64
	for _, r := range rows {
		if r.Status != results.OK || !(r.Seconds > 0) {
			continue
		}
		if s, ok := loadOf(r).share(); ok {
			shares = append(shares, s)
		}
	}
	if len(shares) == 0 {
		return 0, false
	}
	return median(shares), true
}

// recipeRows gathers the seconds of the runs of a recipe.
type recipeRows struct {
	recipe
	all *costs
}

// costs gathers recorded runs' seconds (counted at today's load), what
// they are over (steps, or 1 for a whole run) and how much of an
// outlier's excess counts today (see excessWeight).
type costs struct{ secs, n, w []float64 }

// add returns c (a new one for nil) with secs over n added, an outlier's
// excess counting w of itself.
func (c *costs) add(secs, n, w float64) *costs {
	if c == nil {
		c = &costs{}
	}
	c.secs, c.n, c.w = append(c.secs, secs), append(c.n, n), append(c.w, w)
	return c
}

// excessWeight returns how much of an outlier's excess (see costs.mean)
// counts for a run at load today, when it was recorded at share rec of
// its quiet speed: the load's slowdown today over the recorded one, both
// less the quiet machine's 1, (1/share(today) − 1) / (1/rec − 1), within
// [0, 1]; 0 for a run recorded at a quiet share. The excess of table1
// smoke's three slowest DPZO runs is the load's (see outlierMADs): the
// same runs on a quiet machine took their group's time.
func excessWeight(rec float64, today load) float64 {
	t, ok := today.share()
	if !ok {
		t = 1
	}
	if !(rec < 1) {
		return 0
	}
	return min(1, max(0, (1/t-1)/(1/rec-1)))
}

// The prior's outlier rule: a recorded run is left out of its group's
// mean when its seconds per unit exceed the group's median by more than
// outlierMADs robust standard deviations of the group's log seconds per
// unit (1.4826 × the median absolute deviation, MAD, of the logs: σ for
// normal data), by at least outlierMin times, and always beyond
// outlierMax times. It is Hampel's identifier (a median and MAD test,
// three scaled MADs: Hampel, "The influence curve and its role in robust
// estimation", JASA 1974; Leys et al., "Detecting outliers: Do not use
// standard deviation around the mean, use absolute deviation around the
// median", JESP 2013), on logs because load multiplies a run's time, and
// one-sided because load only ever slows a run.
//
//   - Why not a fixed multiple of the median (the rule before, 10×): how
//     far a slow run lies from its group depends on the group's spread.
//     Table1 smoke's DPZO runs on fashion-vqa, counted at their recorded
//     loads, lie within ×0.73–1.67 of their median but three of them at
//     2.8, 3.6 and 4.6 times (3.4–5.1 scaled MADs): they slowed 14.6–22.8
//     times at load 17–26 where their load says 4.2–5.5 times (paired with
//     the same runs on a quiet machine, bench/load/paired.py). Under 10×,
//     they made the quiet first ETA of table1 smoke 34% high. DP-SGD's
//     fashion-vqa runs spread ×0.34–2.35 with no run apart: there 2.35 is
//     the group's spread, not an outlier.
//   - outlierMin: with three runs, the usual at smoke, the MAD may be
//     tiny (table1 smoke's non-private fashion-vqa runs: 1.48, 0.95 and
//     1.00 times their median, 5.7 scaled MADs); a run under twice its
//     group's median is within what load does to one table's runs.
//   - outlierMax: beyond ten times the median a run carries work that is
//     not its own, whatever the spread, a base pretrained in a table's
//     first run (with it, the checked-in non-private fashion-vqa runs at
//     small average 0.71 s a step, nine times their median, 0.081 s).
//
// An outlier is not simply dropped: its slowness is the load's, which
// its load average did not tell (the paired quiet runs took their group's
// time), so it counts as its group's typical run plus its excess weighted
// by how loaded today is against its recording (excessWeight): none on a
// quiet machine, all of it at the load it was recorded at. The first
// estimate of a fresh table1 smoke sweep on two quiet cores goes from
// 332.8 s to 244.3 s with one job (the sweep took 247.6 s) and from 221.4
// s to 167.6 s with two (178 s); at the load the table was recorded at
// (16.6 when it started, one job) from 1,439.5 s to 1,376.3 s (it took
// 1,600 s). TestPriorOutliers and TestExcessWeight work the rule by hand;
// TestETAQuietJobs and TestETAQuietCheckedIn check it on the checked-in
// tables against bench/load/first.py and the measured sweeps.
const (
	outlierMADs = 3.0
	outlierMin  = 2.0
	outlierMax  = 10.0
)

// madScale is the factor that makes the median absolute deviation of
// normal data an estimate of its standard deviation, 1/Φ⁻¹(3/4)
// (Φ⁻¹(0.75) = 0.6744897501960817, scipy.stats.norm.ppf(0.75)).
const madScale = 1 / 0.6744897501960817

// median returns the median seconds per unit of c's runs.
func (c *costs) median() float64 {
	per := make([]float64, len(c.secs))
	for i := range per {
		per[i] = c.secs[i] / c.n[i]
	}
	return median(per)
}

// limit returns the most seconds per unit a run of c may take and still
// count in mean as it is (see outlierMADs): the median's exp(max(
// outlierMADs × madScale × MAD, ln outlierMin)) times, at most
// outlierMax times, and far, outlierMax times the median, beyond which
// mean leaves a run out; median and MAD of the runs' log seconds per
// unit. c holds at least one run.
func (c *costs) limit() (lim, far float64) {
	logs := make([]float64, len(c.secs))
	for i := range logs {
		logs[i] = math.Log(c.secs[i] / c.n[i])
	}
	m := median(logs)
	dev := make([]float64, len(logs))
	for i, x := range logs {
		dev[i] = math.Abs(x - m)
	}
	width := max(outlierMADs*madScale*median(dev), math.Log(outlierMin))
	return math.Exp(m + min(width, math.Log(outlierMax))), math.Exp(m + math.Log(outlierMax))
}

// mean returns Σ secs / Σ n over c's runs, an outlier's seconds (its
// seconds per unit beyond limit) counted as the others' mean per unit
// times its units, plus its excess over that times its weight w (see
// excessWeight): a load's slowdown past what its load average says is
// counted when today's load is like the one it was recorded at, and not
// on a quiet machine. A run beyond outlierMax times the median is left
// out. c holds at least one run.
func (c *costs) mean() float64 {
	lim, far := c.limit()
	s, n := 0.0, 0.0
	for i := range c.secs {
		if c.secs[i]/c.n[i] <= lim {
			s, n = s+c.secs[i], n+c.n[i]
		}
	}
	in := s / n
	for i := range c.secs {
		if per := c.secs[i] / c.n[i]; per > lim && per <= far {
			typical := float64(in * c.n[i])
			s += typical + float64(c.w[i]*(c.secs[i]-typical))
			n += c.n[i]
		}
	}
	return s / n
}

// loadPrior returns the prior of the runs at scale recorded under the
// results folder root, for runs at load today: the run tables of its
// experiments (root/EXP/runs.parquet) and the checked-in ones
// (root/baselines/EXP-scale.parquet); nil when there are none. Tables
// that do not read are skipped: the prior only refines an estimate.
func loadPrior(root, scale string, plan func(*Run) (int64, string), today load) *etaPrior {
	names, _ := filepath.Glob(filepath.Join(root, "*", results.RunsFile))
	base, _ := filepath.Glob(filepath.Join(root, "baselines", "*-"+scale+".parquet"))
	var rows []results.Run
	for _, name := range append(names, base...) {
		rs, err := results.ReadRuns(name)
		if err != nil {
			continue
		}
		for _, r := range rs {
			if r.Scale == scale {
				rows = append(rows, r)
			}
		}
	}
	return newPrior(rows, plan, today)
}

// checkedInPrior returns the prior that the run tables in fsys
// (EXP-SCALE.parquet files: the checked-in ones, see [repro.Baselines])
// give runs at scale, nil when they tell nothing. A method and task
// recorded at scale keep their seconds (means, see etaPrior); one
// recorded only at another scale takes that scale's median seconds (the
// nearest scale first: small before smoke for full), times the ratio of
// the two scales' costs: the median, over the other tasks of its method
// recorded at both, of the ratio of their median seconds per step (or per
// run, for a run whose steps are not known); with none, the same over
// every method and task recorded at both, which carries the model's size,
// the batch and the sequence lengths of the scales; with none recorded at
// both, the ratio of the presets' per-token multiply-adds of a
// transformer block (see modelCost), which knows only the model. A
// method's own tasks come first because how a step grows with the scale
// depends on what the method does in it: at smoke and small, DPZO's steps
// grow 9.7 times on both its tasks, DP-SGD's 3.9–8.1, while the
// non-private and Dual-Priv steps on the VQA tasks grow 1.2–2.0 times (their
// smoke runs are 35–70 steps, whose evaluation, attack and the methods'
// own per-step work that does not grow with the model weigh as much as the
// model) and non-private records not at all (0.85: its smoke runs carry
// their three attacks, a third of each run). Every method's median ratio,
// 4.42, predicted non-private records at small 5.2 times too slow and
// Dual-Priv's shapes-vqa 3.8 times; the method's own, 2.0 and 2.8 times
// (TestScaleRatioByMethod works them by hand; TestScaleConversionSnapshot
// tests the conversion on a fixed snapshot of the tables' timings: median
// factor 1.45 against 2.02).
// The runs' own planned steps then scale a step's cost as usual. An
// experiment's whole-run seconds and a recipe's (see priorRun) are kept
// at their own scale only: converted, they are no better than the method
// and task's (the ratio carries the scales' step counts, which differ by
// experiment: extraction-chance's smoke runs, times the median ratio,
// predict four times what extraction-control's same recipe took at
// small). A converted cost is a typical run's, the median's: the tables
// of one scale mix experiments whose steps cost differently, and their
// means convert no better (on the tables of an earlier revision, with
// every method's ratio: median factor 1.90 either way, 13 of 17 within ×3
// against the medians' 15). Seconds are counted at load today as in newPrior, each
// scale's rows without a load at the median share of its rows with one.
func checkedInPrior(fsys fs.FS, scale string, plan func(*Run) (int64, string), today load) *etaPrior {
	return convertPrior(readTables(fsys), scale, plan, today)
}

// convertPrior returns the prior of rows, runs of any scale, for runs at
// scale and load today (see checkedInPrior).
func convertPrior(rows []results.Run, scale string, plan func(*Run) (int64, string), today load) *etaPrior {
	byScale := map[string][]results.Run{}
	for _, r := range rows {
		byScale[r.Scale] = append(byScale[r.Scale], r)
	}
	priors := map[string]*etaPrior{}
	for sc, rs := range byScale {
		if p := newPrior(rs, plan, today); p != nil {
			priors[sc] = p
		}
	}
	out := &etaPrior{perStep: map[string]float64{}, perRun: map[string]float64{}, from: fromCheckedIn}
	out.medStep, out.medRun = map[string]float64{}, map[string]float64{}
	if p := priors[scale]; p != nil {
		maps.Copy(out.perStep, p.perStep)
		maps.Copy(out.perRun, p.perRun)
		maps.Copy(out.medStep, p.medStep)
		maps.Copy(out.medRun, p.medRun)
		out.recipes = p.recipes // the scale's only, as an experiment's runs
	}
	for _, sc := range nearestScales(scale, slices.Collect(maps.Keys(priors))) {
		step, run := scaleRatios(priors[sc], priors[scale], sc, scale, "")
		// own[m] is method m's own step and run ratios, computed once.
		own := map[string][2]float64{}
		ratio := func(k string, which int, all float64) float64 {
			m := methodOf(k)
			if m == "" {
				return all
			}
			r, ok := own[m]
			if !ok {
				r[0], r[1] = scaleRatios(priors[sc], priors[scale], sc, scale, m)
				own[m] = r
			}
			if r[which] > 0 {
				return r[which]
			}
			return all
		}
		convert := func(med, per, outMed map[string]float64, which int, all float64) {
			for k, v := range med {
				if _, ok := per[k]; ok || strings.HasPrefix(k, "exp:") && which == 1 {
					continue // exp: run means, see checkedInPrior
				}
				if r := ratio(k, which, all); r > 0 {
					per[k], outMed[k] = v*r, v*r
				}
			}
		}
		convert(priors[sc].medStep, out.perStep, out.medStep, 0, step)
		convert(priors[sc].medRun, out.perRun, out.medRun, 1, run)
	}
	if len(out.perStep) == 0 && len(out.perRun) == 0 {
		return nil
	}
	return out
}

// nearestScales returns the scales other than scale, the nearest preset
// first (ties: the smaller), then those that are no preset, by name.
func nearestScales(scale string, scales []string) []string {
	at := func(s string) int { return slices.Index(nn.PresetNames, s) }
	i := at(scale)
	out := slices.DeleteFunc(slices.Clone(scales), func(s string) bool { return s == scale })
	slices.SortFunc(out, func(a, b string) int {
		ka, kb := at(a), at(b)
		switch {
		case ka >= 0 && kb < 0:
			return -1
		case ka < 0 && kb >= 0:
			return 1
		case ka >= 0 && i >= 0:
			da, db := abs(ka-i), abs(kb-i)
			if da != db {
				return da - db
			}
			return ka - kb
		case ka >= 0:
			return ka - kb
		}
		return strings.Compare(a, b)
	})
	return out
}

func abs(x int) int { return max(x, -x) }

// methodOf returns the method of a prior's key "method/task", "" for
// the other keys (a cost class, an experiment's runs).
func methodOf(k string) string {
	if strings.Contains(k, ":") {
		return ""
	}
	m, _, _ := strings.Cut(k, "/")
	return m
}

// scaleRatios returns by how much a step and a whole run of from's
// scale, fromScale, are multiplied at scale toScale, whose prior to
// (nil: none) learnt from runs at it: medians over the methods and tasks
// both record of the ratios of their median costs; with none, the presets' ratio for a step (modelCost) and
// 0, unknown, for a run (its steps grow with the scale too). With a
// method, only that method's tasks count, and none gives 0 for both.
func scaleRatios(from, to *etaPrior, fromScale, toScale, method string) (step, run float64) {
	ratios := func(a, b map[string]float64) float64 {
		var rs []float64
		for k, v := range b {
			if strings.HasPrefix(k, "class:") || strings.HasPrefix(k, "exp:") {
				// A class mixes methods that differ by scale; an
				// experiment's runs count in their method and task's.
				continue
			}
			if method != "" && methodOf(k) != method {
				continue
			}
			if w, ok := a[k]; ok && w > 0 && v > 0 {
				rs = append(rs, w/v)
			}
		}
		if len(rs) == 0 {
			return 0
		}
		return median(rs)
	}
	if to != nil {
		step, run = ratios(to.medStep, from.medStep), ratios(to.medRun, from.medRun)
	}
	if step == 0 && method == "" {
		a, okA := modelCost(fromScale)
		b, okB := modelCost(toScale)
		if okA && okB {
			step = b / a
		}
	}
	return step, run
}

// modelCost returns the multiply-adds per token of the transformer blocks
// of preset scale's TinyMLLM, vision encoder and language model: (4 + 2m)
// w² per block of width w and MLP ratio m (the four attention projections
// and the MLP's two maps). False for a scale that is no preset.
func modelCost(scale string) (float64, bool) {
	c, err := nn.Preset(scale, 0)
	if err != nil {
		return 0, false
	}
	block := func(w, layers int) float64 {
		return float64(float64(4+2*c.MLPRatio) * float64(w) * float64(w) * float64(layers))
	}
	return block(c.Width, c.Layers) + block(c.VisionWidth, c.VisionLayers), true
}

// readTables returns the rows of the run tables (*.parquet) in fsys;
// tables that do not read are skipped, as in loadPrior.
func readTables(fsys fs.FS) []results.Run {
	if fsys == nil {
		return nil
	}
	names, _ := fs.Glob(fsys, "*.parquet")
	var rows []results.Run
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			continue
		}
		rs, err := results.ReadRunsAt(bytes.NewReader(b), int64(len(b)), name)
		if err != nil {
			continue
		}
		rows = append(rows, rs...)
	}
	return rows
}

// embeddedRows returns the rows of the checked-in run tables the binary
// embeds, read once.
var embeddedRows = sync.OnceValue(func() []results.Run { return readTables(repro.Baselines()) })

// median returns the median of xs, which it sorts; xs is not empty.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// rate sums seconds over a count (steps or runs).
type rate struct{ seconds, n float64 }

func (r *rate) mean() (float64, bool) {
	if r == nil || r.n == 0 {
		return 0, false
	}
	return r.seconds / r.n, true
}

// newETA returns the predictor of the runs pending, which workers run in
// that order (0 workers: as many as run at once). plan gives a run's
// planned steps and cost class (nil: the registered names' Steps); priors
// are what earlier runs tell, the first that tells winning (nil ones:
// nothing).
func newETA(pending []*Run, workers int, plan func(*Run) (int64, string), priors ...*etaPrior) *eta {
	if plan == nil {
		plan = registeredPlan()
	}
	var ps []*etaPrior
	for _, p := range priors {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return &eta{workers: workers, plan: plan, queued: slices.Clone(pending), priors: ps, speed: map[string]*rate{},
		running: map[*Run]time.Time{}, perStep: map[string]*rate{}, perRun: map[string]*rate{}}
}

// registeredPlan returns the plan of the names registered with the
// experiments package; no steps where none are registered.
func registeredPlan() func(*Run) (int64, string) {
	steps := experiments.Registered().Steps
	return func(r *Run) (int64, string) {
		if steps == nil {
			return 0, ""
		}
		return steps(&r.Config)
	}
}

func (e *eta) start(r *Run, now time.Time) {
	if i := slices.Index(e.queued, r); i >= 0 {
		e.queued = slices.Delete(e.queued, i, i+1)
	}
	e.running[r] = now
	e.peak = max(e.peak, len(e.running))
}

// skip removes r, which does not run here, from the queue.
func (e *eta) skip(r *Run) {
	if i := slices.Index(e.queued, r); i >= 0 {
		e.queued = slices.Delete(e.queued, i, i+1)
	}
}

// finish records that r ended with manifest m (nil: interrupted). A run
// that finished ok teaches its cost: its wall time less the base stage
// (pretraining a base model is paid once, not per run).
func (e *eta) finish(r *Run, m *results.Manifest) {
	delete(e.running, r)
	if m == nil || m.Status != results.OK {
		return
	}
	secs := m.Seconds
	for _, s := range m.Stages {
		if s.Name == "base" {
			secs -= s.Seconds
		}
	}
	e.learn(r, max(secs, 0))
}

func (e *eta) learn(r *Run, secs float64) {
	steps, class := e.plan(r)
	if p, ok := e.priorCost(r); ok {
		if e.speed[class] == nil {
			e.speed[class] = &rate{}
		}
		e.speed[class].seconds += secs
		e.speed[class].n += p
	}
	add := func(m map[string]*rate, k string, n float64) {
		if m[k] == nil {
			m[k] = &rate{}
		}
		m[k].seconds += secs
		m[k].n += n
	}
	mt := r.Config.Method + "/" + r.Config.Task
	for _, k := range []string{mt, "method:" + r.Config.Method, ""} {
		add(e.perRun, k, 1)
	}
	if steps > 0 {
		for _, k := range []string{mt, "class:" + class, ""} {
			add(e.perStep, k, float64(steps))
		}
	}
}

// cost returns the predicted wall time of r in seconds, where it comes
// from and whether from a nearest recipe (see priorRun); ok is false when
// neither a finished run nor a prior tells (see eta).
func (e *eta) cost(r *Run) (secs float64, from source, near, ok bool) {
	steps, class := e.plan(r)
	mt := r.Config.Method + "/" + r.Config.Task
	speed := 1.0 // how much slower than the prior runs of r's class are
	if s, ok := e.speed[class].mean(); ok && s > 0 {
		speed = s
	}
	if steps > 0 {
		if s, ok := e.perStep[mt].mean(); ok {
			return s * float64(steps), fromOwn, false, true
		}
		if s, from, ok := e.priorStep(mt); ok {
			return s * speed * float64(steps), from, false, true
		}
		if class != "" {
			if s, ok := e.perStep["class:"+class].mean(); ok {
				return s * float64(steps), fromOwn, false, true
			}
			if s, from, ok := e.priorStep("class:" + class); ok {
				return s * speed * float64(steps), from, false, true
			}
			return 0, 0, false, false // never a step of another class
		}
		if s, ok := e.perStep[""].mean(); ok {
			return s * float64(steps), fromOwn, false, true
		}
	}
	// A run whose steps are not known: a whole run's time, which only
	// runs of the same method and task tell before any of this
	// invocation has finished (a method's runs on other tasks and in
	// other experiments take from seconds to minutes: table1's DPZO runs
	// 4,000 steps, mia's 300).
	if s, ok := e.perRun[mt].mean(); ok {
		return s, fromOwn, false, true
	}
	if s, from, near, ok := e.priorRun(r); ok {
		return s * speed, from, near, true
	}
	for _, k := range []string{"method:" + r.Config.Method, ""} {
		if s, ok := e.perRun[k].mean(); ok {
			return s, fromOwn, false, true
		}
	}
	return 0, 0, false, false
}

// priorStep returns the seconds per step of key k of the first prior that
// has it.
func (e *eta) priorStep(k string) (float64, source, bool) {
	for _, p := range e.priors {
		if s, ok := p.perStep[k]; ok {
			return s, p.from, true
		}
	}
	return 0, 0, false
}

// priorCost returns what the priors alone predict r costs, at the speed
// of the runs they were learnt from.
func (e *eta) priorCost(r *Run) (float64, bool) {
	steps, _ := e.plan(r)
	mt := r.Config.Method + "/" + r.Config.Task
	if s, _, ok := e.priorStep(mt); ok && steps > 0 {
		return s * float64(steps), true
	}
	s, _, _, ok := e.priorRun(r)
	return s, ok
}

// priorRun returns the seconds of a whole run like r that the priors
// tell, from the first prior that has them: the mean of the runs of
// r's experiment, method, task and variant (see expKey); else of the
// runs of its method and task in other experiments whose hyperparameters
// r has, with the same values, the most of them (see recipeRun:
// extraction-chance's runs, which add train_holdout, take
// extraction-control's non-private records runs at 100 epochs, not
// extraction's at 30); else of the nearest recipe of its
// method and task, the one with the most hyperparameters in common with
// r (see nearestRecipe; near is true); else of every run of its method
// and task. An experiment's runs, and a recipe's, share their epochs,
// data and attacks, which a method and task's runs across experiments
// do not.
func (e *eta) priorRun(r *Run) (secs float64, from source, near, ok bool) {
	mt := r.Config.Method + "/" + r.Config.Task
	if k := expKey(r.Experiment, mt, r.Config.Params); k != "" {
		for _, p := range e.priors {
			if s, ok := p.perRun[k]; ok {
				return s, p.from, false, true
			}
		}
	}
	for _, p := range e.priors {
		if s, ok := p.recipeRun(mt, r.Config.Params); ok {
			return s, p.from, false, true
		}
	}
	for _, p := range e.priors {
		if s, ok := p.nearestRecipe(mt, r.Config.Params); ok {
			return s, p.from, true, true
		}
	}
	for _, p := range e.priors {
		if s, ok := p.perRun[mt]; ok {
			return s, p.from, false, true
		}
	}
	return 0, 0, false, false
}

// expKey returns the key of the priors' whole-run seconds of the runs of
// experiment exp ("": none, no key) with method/task mt and params's
// variant ([experiments.VariantParam], where it has one).
func expKey(exp, mt string, params map[string]any) string {
	if exp == "" {
		return ""
	}
	k := "exp:" + exp + "/" + mt
	if v, ok := params[experiments.VariantParam].(string); ok && v != "" {
		k += "/" + v
	}
	return k
}

// left returns the predicted time until every run has finished, false
// when it cannot tell yet: no run has finished and the prior does not
// tell, or the workers are as many as run at once and none has started.
func (e *eta) left(now time.Time) (time.Duration, bool) {
	d, _, ok := e.estimate(now)
	return d, ok
}

// estimate returns what left does and where the roughest of the costs it
// adds up comes from.
func (e *eta) estimate(now time.Time) (time.Duration, source, bool) {
	d, from, _, ok := e.estimateNear(now)
	return d, from, ok
}

// estimateNear returns what estimate does and how many of the runs left
// are costed from their nearest recipe (see priorRun).
func (e *eta) estimateNear(now time.Time) (time.Duration, source, int, bool) {
	w := e.workers
	if w <= 0 {
		if e.peak == 0 {
			return 0, 0, 0, false
		}
		w = e.peak
	}
	from, nears := fromOwn, 0
	free := make([]float64, w) // seconds from now until each worker is free
	i := 0
	for _, r := range slices.SortedFunc(maps.Keys(e.running), func(a, b *Run) int { return e.running[a].Compare(e.running[b]) }) {
		c, f, near, ok := e.cost(r)
		if !ok {
			return 0, 0, 0, false
		}
		from = max(from, f)
		if near {
			nears++
		}
		left := max(c-now.Sub(e.running[r]).Seconds(), 0)
		if i < w {
			free[i] = left
		} else {
			free[slices.Index(free, slices.Min(free))] += left
		}
		i++
	}
	for _, r := range e.queued {
		c, f, near, ok := e.cost(r)
		if !ok {
			return 0, 0, 0, false
		}
		from = max(from, f)
		if near {
			nears++
		}
		free[slices.Index(free, slices.Min(free))] += c
	}
	return time.Duration(slices.Max(free) * float64(time.Second)), from, nears, true
}
