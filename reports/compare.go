// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/repro-dp/repro/internal/results"
)

// A Threshold says when a change of a metric is a regression: a
// significant change for the worse by more than Threshold (in the
// metric's units). Better is "max" (larger is better) or "min".
type Threshold struct {
	Better    string
	Threshold float64
}

// DefaultCompareKeys are the run columns that identify a configuration
// when [CompareOptions.Keys] is nil (those the two run tables have).
var DefaultCompareKeys = []string{"method", "task", "scale", "epsilon_target", "delta"}

// notMetrics are the numeric run columns that are never compared by
// default: the seed pairs runs, and steps, wall time and what the time
// was measured under (load, GOMAXPROCS, jobs) are bookkeeping.
var notMetrics = append([]string{"seed", "steps", "seconds"}, results.TimingColumns()...)

// CompareOptions configures [Compare]; a nil *CompareOptions means the zero
// value.
type CompareOptions struct {
	// Keys are the run columns that identify a configuration; nil means
	// DefaultCompareKeys. A key column missing from a table is left out.
	Keys []string
	// Metrics are the columns compared; nil means every numeric column of
	// both tables that is not a key, seed, steps, seconds or a timing
	// column (load_start, load_end, gomaxprocs, jobs).
	Metrics []string
	// Thresholds hold the regression threshold of each metric; a metric
	// without one is compared but never a regression.
	Thresholds map[string]Threshold
	// Alpha is the significance level of each comparison; 0 means 0.05.
	// As in benchstat, no correction for multiple comparisons is made
	// between aggregate t-tests: the thresholds keep the false alarms
	// down. The example-level tests of a metric are Holm-corrected
	// together (see [Compare]).
	Alpha float64
	// OldRunDirs and NewRunDirs are the folders holding the run folders
	// of old and new (results/EXP/runs), where each run's
	// predictions.parquet is read; "" means none. When both are set,
	// the metrics of ExampleMetrics are compared example by example.
	OldRunDirs, NewRunDirs string
	// Resamples is the number of bootstrap resamples; 0 means 10000.
	Resamples int
	// Mixed compares tables whose experiments or scales differ. Without
	// it, Compare refuses them: their rows cannot pair (every
	// configuration would be missing on one side), or pair by accident.
	Mixed bool
}

// Verdicts of a change, besides the signed change itself.
const (
	Identical  = "identical"  // the same seeds with the same values
	Changed    = "changed"    // significant, and the metric has no threshold
	NoChange   = "~"          // not significant
	Better     = "better"     // significant, for the better (or no direction known)
	Worse      = "worse"      // significant, for the worse, within the threshold
	Regression = "REGRESSION" // significant, for the worse, beyond the threshold
	// Missing: in old, and new has no run of the configuration (not
	// started yet, or interrupted): not a regression, but the comparison
	// is partial.
	Missing = "MISSING"
	// Running: in old, and new's runs of the configuration are still
	// running (status running): not a regression; the comparison is
	// partial.
	Running = "RUNNING"
	// Failed: in old, and new has runs of the configuration, none of
	// which finished with the metric (they failed, or did not record
	// it): a regression when the metric has a threshold.
	Failed = "FAILED"
	Added  = "new" // in new, not in old
	// Untested: a side has fewer than two runs and no predictions to
	// test at the example level; a regression when worse beyond the
	// threshold, since nothing can show the change is noise.
	Untested = "untested"
)

// A Change is the comparison of one metric of one configuration.
type Change struct {
	Metric string `json:"metric"`
	// Key is the configuration ("dpsgd fashion-vqa smoke ε=1 δ=1e-05").
	Key string `json:"key"`
	// NOld, NNew are the runs with the metric; Old, New their means and
	// OldStd, NewStd their standard deviations.
	NOld, NNew     int
	Old, New       float64
	OldStd, NewStd float64
	// Test is the t-test of New − Old (paired by seed when both have the
	// same seeds, else Welch), or for a metric compared example by
	// example the McNemar test (Kind "mcnemar", Effect the mean change
	// over shared seeds, SE and DF NaN); Lo and Hi the bootstrap
	// interval of the change at level 1−α; P its two-sided p-value and
	// PHolm, for an example-level test, P adjusted by Holm's method
	// over the metric's example-level tests (NaN otherwise).
	Test     TTest
	Lo, Hi   float64
	P, PHolm float64
	// Examples is the number of (seed, example) pairs of an
	// example-level test, and Worse and Better its discordant pairs:
	// right in old and wrong in new, and the other way round.
	Examples, WorsePairs, BetterPairs int
	// Verdict is one of the verdict constants.
	Verdict string
	// Regressed reports whether the change fails the comparison.
	Regressed bool
}

// A Comparison is the result of [Compare].
type Comparison struct {
	Alpha      float64
	Changes    []Change
	Thresholds map[string]Threshold
	// Warnings hold the runs left out (failed, not ok) and notes.
	Warnings []error
}

// Partial returns the changes of configurations that new has not
// finished: Missing or Running. A comparison with any is partial: it says
// nothing of those configurations.
func (c *Comparison) Partial() []Change {
	var out []Change
	for _, ch := range c.Changes {
		if ch.Verdict == Missing || ch.Verdict == Running {
			out = append(out, ch)
		}
	}
	return out
}

// Regressions returns the changes that fail the comparison.
func (c *Comparison) Regressions() []Change {
	var out []Change
	for _, ch := range c.Changes {
		if ch.Regressed {
			out = append(out, ch)
		}
	}
	return out
}

// Compare compares the runs of old and new, per metric and configuration
// (the values of the key columns), over seeds. Only runs with status ok
// count. A configuration whose runs have the same seeds with the same
// values in both is Identical. Otherwise, for a metric of ExampleMetrics
// when both sides' runs have predictions (see OldRunDirs) and share a
// seed, the change is tested example by example: McNemar's exact test
// (mid-p) on the (seed, example) pairs of the shared seeds, its p-values
// Holm-adjusted over the metric's example-level tests (the family is the
// configurations tested, not those identical), with a bootstrap interval
// over seeds and examples; this works with a single seed. Else the change
// new − old is tested by a paired t-test on the seeds both have (when they
// have the same seeds) or Welch's t-test, and is untested when either side
// has fewer than two runs. A tested change is ~ when its (adjusted) p > α,
// else better or worse by the metric's Threshold (better when it has
// none), and a REGRESSION when worse by the threshold or more. An
// untested change worse by the threshold or more is a regression too. A
// configuration in old that has no run with the metric in new is RUNNING
// when new has a run of it with status running, MISSING when new has no
// run of it (or only interrupted ones), neither a regression but both
// making the comparison partial ([Comparison.Partial]), and FAILED
// otherwise (its runs failed or lack the metric), a regression when the
// metric has a threshold.
func Compare(old, new *Runs, opts *CompareOptions) (*Comparison, error) {
	o := CompareOptions{}
	if opts != nil {
		o = *opts
	}
	var err error
	if o.Alpha, o.Resamples, err = testSettings("compare", o.Alpha, o.Resamples); err != nil {
		return nil, err
	}
	if !o.Mixed {
		if err := sameProvenance(old, new); err != nil {
			return nil, err
		}
	}
	keys := o.Keys
	if keys == nil {
		keys = DefaultCompareKeys
	}
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
		_, a := old.Column(k)
		_, b := new.Column(k)
		return !a || !b
	})
	metrics, err := compareMetrics(old, new, keys, o.Metrics)
	if err != nil {
		return nil, err
	}
	new = new.withMissing(metrics)
	cmp := &Comparison{Alpha: o.Alpha, Thresholds: o.Thresholds}
	oldOK, ws := okRuns(old, allRuns(old))
	cmp.Warnings = append(cmp.Warnings, prefixed("old: ", ws)...)
	newOK, ws := okRuns(new, allRuns(new))
	cmp.Warnings = append(cmp.Warnings, prefixed("new: ", ws)...)
	for _, m := range metrics {
		chs, err := compareMetric(old, new, keys, m, oldOK, newOK, o)
		if err != nil {
			return nil, err
		}
		cmp.Changes = append(cmp.Changes, chs...)
	}
	return cmp, nil
}

// compareMetrics returns the metrics to compare: want, each of which old
// must have as a numeric column and new as one or not at all (its runs
// have not recorded it), or by default every numeric column of both that
// is not a key or in notMetrics, sorted by name.
func compareMetrics(old, new *Runs, keys, want []string) ([]string, error) {
	numeric := func(r *Runs, name string) bool {
		c, ok := r.Column(name)
		return ok && c.Kind == Float
	}
	if want != nil {
		for _, m := range want {
			_, inNew := new.Column(m)
			// new may lack a metric old has: its runs have not
			// recorded it yet (running) or at all (see Compare).
			if !numeric(old, m) || (inNew && !numeric(new, m)) {
				return nil, fmt.Errorf("reports: compare: metric %q is not a numeric column of both run tables", m)
			}
		}
		return want, nil
	}
	var out []string
	for _, name := range old.Columns() {
		if numeric(old, name) && numeric(new, name) && !slices.Contains(keys, name) && !slices.Contains(notMetrics, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("reports: compare: the run tables have no numeric column in common to compare")
	}
	return out, nil
}

// withMissing returns r, or when r lacks a column of names, a copy of r
// with those columns added, every value missing (NaN).
func (r *Runs) withMissing(names []string) *Runs {
	out := r
	for _, name := range names {
		if _, ok := out.Column(name); ok {
			continue
		}
		if out == r {
			out = &Runs{cols: slices.Clone(r.cols), index: maps.Clone(r.index), n: r.n, skipped: r.skipped}
		}
		nan := make([]float64, r.n)
		for i := range nan {
			nan[i] = math.NaN()
		}
		out.addColumn(Column{Name: name, Kind: Float, Floats: nan})
	}
	return out
}

func allRuns(r *Runs) []int {
	idx := make([]int, r.Len())
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func prefixed(p string, ws []error) []error {
	out := make([]error, len(ws))
	for i, w := range ws {
		out[i] = fmt.Errorf("%s%w", p, w)
	}
	return out
}

// keyedRuns groups the runs idx of r by the key columns, in order of
// first appearance; it returns the keys and the runs of each.
func keyedRuns(r *Runs, keys []string, idx []int) ([]string, map[string][]int) {
	k, _ := newKeyer(r, "key", keys)
	var order []string
	by := make(map[string][]int)
	for _, i := range idx {
		key := strings.Join(k.header(nil, i), " ")
		if _, ok := by[key]; !ok {
			order = append(order, key)
		}
		by[key] = append(by[key], i)
	}
	return order, by
}

// compareMetric compares metric m of every configuration.
func compareMetric(old, new *Runs, keys []string, m string, oldOK, newOK []int, o CompareOptions) ([]Change, error) {
	oldKeys, oldBy := keyedRuns(old, keys, oldOK)
	newKeys, newBy := keyedRuns(new, keys, newOK)
	_, newAllBy := keyedRuns(new, keys, allRuns(new))
	status, hasStatus := new.Column("status")
	th, hasTh := o.Thresholds[m]
	split, byExample := ExampleMetrics[m]
	byExample = byExample && o.OldRunDirs != "" && o.NewRunDirs != ""
	var out []Change
	var exact []int // the changes tested example by example
	for _, key := range slices.Concat(oldKeys, slices.DeleteFunc(newKeys, func(k string) bool { _, ok := oldBy[k]; return ok })) {
		vo, so := values(old, m, oldBy[key])
		vn, sn := values(new, m, newBy[key])
		if len(vo) == 0 && len(vn) == 0 {
			continue // the metric is not recorded for this configuration
		}
		ch := Change{Metric: m, Key: key, NOld: len(vo), NNew: len(vn), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), PHolm: math.NaN()}
		ch.Old, ch.OldStd = meanStd(vo)
		ch.New, ch.NewStd = meanStd(vn)
		var pairs *pairedExamples
		if byExample && len(vo) > 0 && len(vn) > 0 {
			eo, err := runExamples(old, o.OldRunDirs, m, split, oldBy[key])
			if err != nil {
				return nil, fmt.Errorf("reports: compare: old %s: %w", key, err)
			}
			en, err := runExamples(new, o.NewRunDirs, m, split, newBy[key])
			if err != nil {
				return nil, fmt.Errorf("reports: compare: new %s: %w", key, err)
			}
			if eo != nil && en != nil {
				pairs = pairExamples(eo, en)
			}
		}
		switch {
		case len(vn) == 0:
			ch.Verdict = Missing
			for _, i := range newAllBy[key] {
				st := "ok"
				if hasStatus {
					st = status.Format(i)
				}
				switch {
				case st == "running":
					ch.Verdict, ch.Regressed = Running, false
				case ch.Verdict == Running:
				case st != "interrupted":
					ch.Verdict, ch.Regressed = Failed, hasTh
				}
			}
		case len(vo) == 0:
			ch.Verdict = Added
		case slices.Equal(vo, vn) && slices.Equal(so, sn) && (pairs == nil || pairs.same()):
			ch.Verdict = Identical
			ch.Test = TTest{Kind: "identical", DF: math.NaN()}
			ch.Lo, ch.Hi, ch.P = 0, 0, 1
		case pairs != nil:
			ch.testExamples(pairs, o)
			exact = append(exact, len(out))
		case len(vo) < 2 || len(vn) < 2:
			ch.Verdict = Untested
			ch.Regressed = hasTh && worseBy(th, ch.New-ch.Old)
		default:
			ch.test(old, new, m, oldBy[key], newBy[key], so, sn, o)
			ch.judge(th, hasTh, ch.P, o.Alpha)
		}
		out = append(out, ch)
	}
	ps := make([]float64, len(exact))
	for j, i := range exact {
		ps[j] = out[i].P
	}
	for j, adj := range holm(ps) {
		ch := &out[exact[j]]
		ch.PHolm = adj
		ch.judge(th, hasTh, adj, o.Alpha)
	}
	return out, nil
}

// worseBy reports whether the change d is worse than th by its threshold
// or more.
func worseBy(th Threshold, d float64) bool {
	return (th.Better == "max" && d <= -th.Threshold) || (th.Better == "min" && d >= th.Threshold)
}

// same reports whether every pair agrees.
func (p *pairedExamples) same() bool {
	b, c := p.discordant()
	return b == 0 && c == 0
}

// testExamples runs McNemar's test and the two-stage bootstrap of the
// change new − old on pairs.
func (ch *Change) testExamples(p *pairedExamples, o CompareOptions) {
	b, c := p.discordant()
	ch.WorsePairs, ch.BetterPairs = b, c
	for _, s := range p.old {
		ch.Examples += len(s)
	}
	ch.Test = TTest{Kind: "mcnemar", Effect: p.effect(), SE: math.NaN(), DF: math.NaN()}
	ch.P = mcnemarMidP(b, c)
	rng := rand.New(rand.NewPCG(seedOf(ch.Metric, ch.Key), 0x6578616d706c6573))
	ch.Lo, ch.Hi = p.bootstrap(rng, o.Alpha, o.Resamples)
}

// test runs the t-test and the bootstrap of the change new − old.
func (ch *Change) test(old, new *Runs, m string, oi, ni []int, so, sn []float64, o CompareOptions) {
	vo, _ := values(old, m, oi)
	vn, _ := values(new, m, ni)
	rng := rand.New(rand.NewPCG(seedOf(m, ch.Key), 0x636f6d70617265))
	if so != nil && slices.Equal(so, sn) {
		d := make([]float64, len(vn))
		for i := range d {
			d[i] = vn[i] - vo[i]
		}
		ch.Test = oneSample(d, "paired")
		ch.Lo, ch.Hi = bootstrapCI(rng, d, nil, o.Alpha, o.Resamples)
	} else {
		ch.Test = welch(vn, vo)
		ch.Lo, ch.Hi = bootstrapCI(rng, vn, vo, o.Alpha, o.Resamples)
	}
	ch.P = math.Min(1, 2*math.Min(ch.Test.PAbove(0), ch.Test.PBelow(0)))
}

// judge sets the verdict of a tested change whose p-value (adjusted, for
// an example-level test) is p.
func (ch *Change) judge(th Threshold, hasTh bool, p, alpha float64) {
	if p > alpha {
		ch.Verdict = NoChange
		return
	}
	worse := hasTh && ((th.Better == "max" && ch.Test.Effect < 0) || (th.Better == "min" && ch.Test.Effect > 0))
	switch {
	case !worse:
		ch.Verdict = Better
		if !hasTh {
			ch.Verdict = Changed
		}
	case math.Abs(ch.Test.Effect) >= th.Threshold:
		ch.Verdict, ch.Regressed = Regression, true
	default:
		ch.Verdict = Worse
	}
}

// WriteText writes c as one table per metric, benchstat-style: the mean ±
// std and count of old and new, the change (percent of old), its interval
// and p-value, and the verdict; then the regressions and warnings.
func (c *Comparison) WriteText(w io.Writer) error {
	var metric string
	var tw *tabwriter.Writer
	exampleLevel := false
	flush := func() {
		if tw != nil {
			tw.Flush()
			fmt.Fprintln(w)
		}
	}
	for _, ch := range c.Changes {
		if ch.Metric != metric {
			flush()
			metric = ch.Metric
			head := metric
			if th, ok := c.Thresholds[metric]; ok {
				head += fmt.Sprintf(" (better: %s; a regression is a significant change for the worse by %v or more)", th.Better, th.Threshold)
			}
			fmt.Fprintln(w, head)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "key\told\tnew\tΔ\tΔ%\tinterval\tp\tverdict")
		}
		delta, pct, iv := "—", "—", "—"
		if ch.NOld > 0 && ch.NNew > 0 {
			delta = fmtSigned(ch.New - ch.Old)
			if ch.Verdict == Identical {
				delta = "0"
			}
			if ch.Old != 0 && !math.IsNaN(ch.New-ch.Old) && !math.IsInf(ch.Old, 0) {
				pct = fmt.Sprintf("%+.2f%%", 100*(ch.New-ch.Old)/math.Abs(ch.Old))
			}
			iv = fmt.Sprintf("[%s, %s]", fmtNum(ch.Lo), fmtNum(ch.Hi))
		}
		p := fmtP(ch.P)
		if ch.Test.Kind == "mcnemar" {
			p = fmt.Sprintf("%s (Holm %s; %d pairs, %d worse, %d better)", fmtP(ch.P), fmtP(ch.PHolm), ch.Examples, ch.WorsePairs, ch.BetterPairs)
			exampleLevel = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ch.Key, meanN(ch.Old, ch.OldStd, ch.NOld), meanN(ch.New, ch.NewStd, ch.NNew),
			delta, pct, iv, p, ch.Verdict)
	}
	flush()
	regs := c.Regressions()
	fmt.Fprintf(w, "%d changes compared at α = %v (paired t-test over shared seeds, else Welch; %v%% percentile bootstrap interval of new − old): %d regressions.\n",
		len(c.Changes), c.Alpha, 100*(1-c.Alpha), len(regs))
	if exampleLevel {
		fmt.Fprintln(w, "mcnemar: compared example by example: McNemar's exact test (mid-p) on the (seed, example) pairs of the shared seeds, Holm-adjusted over the metric's example-level tests; interval: bootstrap over seeds, then examples.")
	}
	for _, r := range regs {
		fmt.Fprintf(w, "regression: %s %s: %s → %s (%s)\n", r.Metric, r.Key, fmtNum(r.Old), fmtNum(r.New), r.Verdict)
	}
	if sum := c.PartialSummary(); sum != "" {
		fmt.Fprintf(w, "partial: %s\n", sum)
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "warning: %v\n", warn)
	}
	return nil
}

// PartialSummary says, for a partial comparison, how many configurations
// new has not finished: "12 of 40 configurations have no finished run in
// new (4 running, 8 missing): the comparison says nothing of them"; ""
// when the comparison is complete.
func (c *Comparison) PartialSummary() string {
	if len(c.Partial()) == 0 {
		return ""
	}
	all := map[string]bool{}
	by := map[string]string{} // configuration → Running or Missing
	for _, ch := range c.Changes {
		all[ch.Key] = true
		if ch.Verdict == Running || (ch.Verdict == Missing && by[ch.Key] == "") {
			by[ch.Key] = ch.Verdict
		}
	}
	running := 0
	for _, v := range by {
		if v == Running {
			running++
		}
	}
	return fmt.Sprintf("%d of %d configurations have no finished run in new (%d running, %d missing): the comparison says nothing of them",
		len(by), len(all), running, len(by)-running)
}

func meanN(m, s float64, n int) string {
	switch {
	case n == 0:
		return "—"
	case math.IsNaN(s):
		return fmt.Sprintf("%s n=%d", fmtNum(m), n)
	}
	return fmt.Sprintf("%s ± %s n=%d", fmtNum(m), fmtNum(s), n)
}

// MarshalJSON implements json.Marshaler: NaN numbers are null.
func (ch Change) MarshalJSON() ([]byte, error) {
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		Metric    string   `json:"metric"`
		Key       string   `json:"key"`
		NOld      int      `json:"n_old"`
		NNew      int      `json:"n_new"`
		Old       *float64 `json:"old"`
		New       *float64 `json:"new"`
		OldStd    *float64 `json:"old_std"`
		NewStd    *float64 `json:"new_std"`
		Test      string   `json:"test,omitempty"`
		Lo        *float64 `json:"ci_lo"`
		Hi        *float64 `json:"ci_hi"`
		P         *float64 `json:"p"`
		PHolm     *float64 `json:"p_holm,omitempty"`
		Examples  int      `json:"pairs,omitempty"`
		Worse     int      `json:"pairs_worse,omitempty"`
		Better    int      `json:"pairs_better,omitempty"`
		Verdict   string   `json:"verdict"`
		Regressed bool     `json:"regressed"`
	}{ch.Metric, ch.Key, ch.NOld, ch.NNew, num(ch.Old), num(ch.New), num(ch.OldStd), num(ch.NewStd),
		ch.Test.Kind, num(ch.Lo), num(ch.Hi), num(ch.P), num(ch.PHolm), ch.Examples, ch.WorsePairs, ch.BetterPairs, ch.Verdict, ch.Regressed})
}

// sameProvenance returns an error if old and new hold runs of different
// experiments or scales (the distinct values of their experiment and
// scale columns; a table without such a column is not checked on it).
func sameProvenance(old, new *Runs) error {
	for _, col := range []string{"experiment", "scale"} {
		a, b := distinctStrings(old, col), distinctStrings(new, col)
		if a == nil || b == nil || slices.Equal(a, b) {
			continue
		}
		return fmt.Errorf("reports: compare: the old table holds runs of %s %s, the new one of %s %s: their configurations cannot pair; compare runs of one experiment at one scale (or ask for a mixed comparison)",
			col, strings.Join(a, ", "), col, strings.Join(b, ", "))
	}
	return nil
}

// distinctStrings returns the sorted distinct non-empty values of the
// string column name of r, or nil if r has no such column or no value.
func distinctStrings(r *Runs, name string) []string {
	c, ok := r.Column(name)
	if !ok || c.Kind != String {
		return nil
	}
	var out []string
	for _, v := range c.Strings {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
