// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package page

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/repro-dp/repro"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/specout"
)

// File names that Write and WriteIndex write.
const (
	// ReportFile is the page of an experiment, in its folder.
	ReportFile = "report.html"
	// SummaryFile is the summary of the page, in the experiment's
	// folder, which WriteIndex reads.
	SummaryFile = "report.json"
	// IndexFile is the index of a results folder.
	IndexFile = "index.html"
)

// Options configures [Build] and [Write]; a nil *Options means the zero
// value.
type Options struct {
	// Comparison, if not nil, is the comparison of the experiment's run
	// table with a baseline (repro compare); its regressions and
	// improvements are shown first. Baseline names the baseline.
	Comparison *reports.Comparison
	Baseline   string
	// Alpha is the family-wise error rate of the claims' Holm
	// correction; 0 means 0.05, as for repro verify.
	Alpha float64
	// Commands are the commands that reproduce the page, shown under
	// "How to reproduce"; nil means repro run, repro verify and repro
	// report of the experiment at its scale.
	Commands []string
	// Now is the time the page says it was written; zero means the
	// current time.
	Now time.Time
}

// Page is everything a report page shows, as text ready for the template.
// Build returns it; Write renders it.
type Page struct {
	Name        string
	Description string
	// Mirrors is the leading comment of the spec: what the experiment
	// reproduces and from which paper.
	Mirrors   string
	SpecFile  string
	Scale     string
	Generated string
	// LastRun is when the last run of the experiment finished.
	LastRun  string
	Commands []string
	// Provenance lists the code, data and base model hashes and the
	// other facts a reproduction must match.
	Provenance []Fact
	Seeds      string
	// RunCounts counts the runs by status; Verdicts the claim tests by
	// verdict.
	RunCounts    []Count
	Verdicts     []Count
	TotalSeconds string
	PeakMemory   string

	Comparison *Comparison

	Alpha       string
	Claims      []ClaimRow
	ClaimsNote  string
	ClaimsError string

	Tables  []TableView
	Figures []FigureView
	Runs    []RunRow
	// Warnings are what the reader should know about the page as a
	// whole: an unreadable run table, runs of other scales, ...
	Warnings []string
}

// A Fact is one labelled line of provenance.
type Fact struct {
	Label  string
	Values []string
}

// A Count is a number of things in one class (a status or a verdict).
type Count struct {
	Name  string
	Class string
	N     int
}

// Comparison is the comparison with a baseline as the page shows it.
type Comparison struct {
	Baseline string
	// Regressions, Improvements and Worse are the changes of each kind;
	// Counts counts every change by verdict.
	Regressions  []ChangeRow
	Improvements []ChangeRow
	Worse        []ChangeRow
	Counts       []Count
	Warnings     []string
}

// A ChangeRow is one change of one metric of one configuration.
type ChangeRow struct {
	Metric, Key      string
	Old, New, Change string
	Interval, P      string
	Verdict, Class   string
	NOld, NNew       int
	OldStd, NewStd   string
	// RegressionThreshold says which way is better and how much worse
	// is a regression, "" when the metric has no threshold.
	RegressionThreshold string
}

// A ClaimRow is one test of one claim.
type ClaimRow struct {
	Claim, Text, At, Metric, Expect string
	Verdict, Class                  string
	Required                        bool
	Reason                          string
	// Ours and Paper are the two sides' means ("45.3 vs 40.1"); of an
	// interaction, the gains a − b at x1 and x2 ("gain 0.57 / 0.18").
	Ours, Paper string
	// OursCells and PaperCells are, of an interaction, its four cells:
	// the means a vs b at x1 and at x2 ("task=a: 45.3 vs 40.1; task=b:
	// 30.2 vs 29.6"); "" for any other claim.
	OursCells, PaperCells string
	NA, NB                int
	// NA2 and NB2 are the sides' run counts at x2 of an interaction (NA
	// and NB are at x1); 0 for any other claim.
	NA2, NB2 int
	Effect   string
	Interval string
	P, Power string
	Test     string
	Source   string
	// SpecLine is file:line of the claim in its spec.
	SpecLine string
	// Span is the number of consecutive rows of the claim that start at
	// this row, 0 on the claim's other rows: the claim's cell spans them.
	Span int
}

// A TableView is one paper-style table.
type TableView struct {
	Name, Title, Subtitle string
	// Head holds the row key names then the column names.
	RowNames []string
	Cols     []string
	Rows     []TableRow
	Notes    []string
	Warnings []string
	Error    string
}

// A TableRow is one row of a table: its keys and its cells.
type TableRow struct {
	Keys  []string
	Cells []CellView
}

// A CellView is one cell of a table.
type CellView struct {
	// Text is "mean ± std", with "(n=…)" when the cell has fewer runs
	// than the fullest cell, or "—" with Missing set.
	Text    string
	Missing bool
	Best    bool
	// Ref is the paper's value, "" if none.
	Ref string
}

// A FigureView is one figure, inlined.
type FigureView struct {
	Name, Title string
	// Src is a data: URI of the figure's SVG; empty when Error is set.
	Src template.URL
	// Alt describes the figure for a reader who cannot see it.
	Alt      string
	Width    int
	Height   int
	Warnings []string
	Error    string
}

// A RunRow is one run of the experiment, or one the spec expects that is
// not there.
type RunRow struct {
	ID string
	// Href is the run folder relative to the page; "" when there is no
	// folder.
	Href string
	// Status is ok, failed, unfinished, damaged or missing;
	// Problem says what is wrong, "" for an ok run.
	Status, Class, Problem string
	Method, Task, Seed     string
	Params                 string
	EpsilonTarget          string
	Epsilon                string
	EpsilonNominal         string
	Accountant             string
	Delta, Sigma, Q        string
	Steps                  string
	Sampling, Neighbouring string
	ClipNorm               string
	// OtherCode is set for a run whose id is not the one the current
	// code and its inputs give (it ran with other code); NotInSpec for a
	// folder that matches no run of the spec as loaded.
	OtherCode, NotInSpec bool
	Seconds, Memory      string
	Finished             string
	CopiedFrom           string
	Revision             string
	Caveats              []string
	Results              []Result
	Warnings             []string
}

// A Result is one result of a run with its interval, if it has one.
type Result struct {
	Name, Value, Interval string
}

// none is how the page prints a value that is not there.
const none = "—"

// Build gathers experiment s (its spec, loaded at the scale of its runs)
// from root/<name>: its run table, run folders, claims, tables and
// figures. It fails only if root/<name> does not exist; everything that
// is missing or damaged inside it is shown on the page.
func Build(root string, s *experiments.Spec, opts *Options) (*Page, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	dir := filepath.Join(root, s.Name)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("page: experiment %s: %w", s.Name, err)
	}
	p := &Page{
		Name:        s.Name,
		Description: s.Description,
		SpecFile:    s.FileName,
		Scale:       s.Scale,
		Generated:   o.Now.UTC().Format("2006-01-02 15:04 UTC"),
		Alpha:       num(o.Alpha),
	}
	if src, err := experiments.Source(s); err == nil {
		p.Mirrors = experiments.Header(src)
	} else {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the spec's text cannot be read: %v", err))
	}
	arg := s.Name
	if s.FileName != "experiments/"+s.Name+".yaml" {
		arg = s.FileName
	}
	p.Commands = o.Commands
	if p.Commands == nil {
		p.Commands = []string{
			fmt.Sprintf("repro run %s --scale %s", arg, s.Scale),
			fmt.Sprintf("repro verify %s --scale %s --no-run", arg, s.Scale),
			fmt.Sprintf("repro report %s --scale %s", arg, s.Scale),
		}
	}

	manifests := p.gatherRuns(root, s)
	p.provenance(s, manifests)

	runs, err := reports.ReadRuns(filepath.Join(dir, results.RunsFile))
	if err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("no run table: %v; claims, tables and figures need it (repro run %s writes it)", err, arg))
		p.ClaimsError = "no run table"
		for _, t := range s.Tables {
			p.Tables = append(p.Tables, TableView{Name: t.Name, Title: orNone(t.Title), Error: "no run table"})
		}
		for _, pl := range s.Plots {
			p.Figures = append(p.Figures, FigureView{Name: pl.Name, Title: orNone(pl.Title), Error: "no run table"})
		}
	} else {
		p.claims(s, runs, o.Alpha)
		p.tables(s, runs)
		p.figures(root, s, runs)
	}
	if o.Comparison != nil {
		p.Comparison = comparison(o.Comparison, o.Baseline)
	}
	return p, nil
}

// gatherRuns fills p.Runs from the run folders of s under root and the
// runs s expands into, and returns the manifests that read back.
func (p *Page) gatherRuns(root string, s *experiments.Spec) []*results.Manifest {
	runsDir := filepath.Join(root, s.Name, "runs")
	ents, err := os.ReadDir(runsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the run folders cannot be listed: %v", err))
	}
	type found struct {
		row RunRow
		m   *results.Manifest
	}
	byConfig := map[string][]*found{}
	var unmatched []*found
	var manifests []*results.Manifest
	otherScale := 0
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		d := filepath.Join(runsDir, e.Name())
		m, err := results.Check(d)
		f := &found{m: m}
		f.row = runRow(e.Name(), m, err)
		if m == nil {
			unmatched = append(unmatched, f)
			continue
		}
		if m.Config.Scale != s.Scale {
			otherScale++
			continue
		}
		manifests = append(manifests, m)
		k := configKey(m.Config)
		byConfig[k] = append(byConfig[k], f)
	}
	if otherScale > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d run %s at other scales than %s %s not shown", otherScale, plural(otherScale, "folder", "folders"), s.Scale, plural(otherScale, "is", "are")))
	}
	stale, otherCode := 0, 0
	for _, c := range s.Expand() {
		fs := byConfig[configKey(c)]
		delete(byConfig, configKey(c))
		var cur *found
		for _, f := range fs {
			if f.m.RunID == c.ID(f.m.Inputs) {
				cur = f
			}
		}
		switch {
		case cur != nil:
			p.Runs = append(p.Runs, cur.row)
			stale += len(fs) - 1
		case len(fs) > 0:
			// Only runs of other code or inputs: show the latest, marked.
			f := fs[len(fs)-1]
			f.row.OtherCode = true
			p.Runs = append(p.Runs, f.row)
			otherCode++
			stale += len(fs) - 1
		default:
			p.Runs = append(p.Runs, missingRow(c))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byConfig)) {
		for _, f := range byConfig[k] {
			f.row.NotInSpec = true
			unmatched = append(unmatched, f)
		}
	}
	for _, f := range unmatched {
		p.Runs = append(p.Runs, f.row)
	}
	if otherCode > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d %s recorded by other code or inputs than this binary's (their ids differ from the ones repro run would give them now; the code fingerprints of the runs and of this build are under How to reproduce); repro run runs %s again", otherCode, plural(otherCode, "run was", "runs were"), plural(otherCode, "it", "them")))
	}
	if stale > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d older run %s of the same configurations (other code or inputs) %s not shown", stale, plural(stale, "folder", "folders"), plural(stale, "is", "are")))
	}
	p.runTotals(manifests)
	return manifests
}

// runTotals fills the run counts by status, the total wall time, the
// peak memory and the last run's end from p.Runs and manifests.
func (p *Page) runTotals(manifests []*results.Manifest) {
	counts := map[string]int{}
	classes := map[string]string{}
	var total float64
	var peak uint64
	var last time.Time
	for _, r := range p.Runs {
		counts[r.Status]++
		classes[r.Status] = r.Class
	}
	for _, m := range manifests {
		total += m.Seconds
		peak = max(peak, m.PeakMemoryBytes)
		if m.Finished.After(last) {
			last = m.Finished
		}
	}
	for _, st := range []string{"ok", "failed", "damaged", "unfinished", "missing"} {
		if counts[st] > 0 {
			p.RunCounts = append(p.RunCounts, Count{Name: st, Class: classes[st], N: counts[st]})
		}
	}
	p.TotalSeconds = duration(total)
	p.PeakMemory = bytesText(peak)
	p.LastRun = none
	if !last.IsZero() {
		p.LastRun = last.UTC().Format("2006-01-02 15:04 UTC")
	}
}

// configKey returns a key that equal configs share.
func configKey(c experiments.Config) string {
	if c.Params == nil {
		c.Params = map[string]any{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("%v", c)
	}
	return string(b)
}

// runRow returns the row of the run in folder id, whose manifest m (nil
// if it does not read back) results.Check returned with err.
func runRow(id string, m *results.Manifest, err error) RunRow {
	r := RunRow{ID: id, Href: "runs/" + id + "/"}
	var damaged *results.DamagedError
	switch {
	case m == nil && errors.Is(err, fs.ErrNotExist):
		r.Status, r.Class, r.Problem = "unfinished", "warn", "no manifest: the run never recorded its start, or its folder was emptied"
	case m == nil:
		r.Status, r.Class, r.Problem = "damaged", "bad", errText(err)
	case errors.As(err, &damaged):
		r.Status, r.Class, r.Problem = "damaged", "bad", errText(err)
	case m.Status == results.Failed:
		r.Status, r.Class, r.Problem = "failed", "bad", m.Error
	case m.Status == results.Running:
		r.Status, r.Class, r.Problem = "unfinished", "warn", "the manifest says running: the run was interrupted, or is running now"
	default:
		r.Status, r.Class = "ok", "ok"
	}
	for _, f := range []*string{&r.Method, &r.Task, &r.Seed, &r.Params, &r.EpsilonTarget, &r.Epsilon, &r.EpsilonNominal,
		&r.Accountant, &r.Delta, &r.Sigma, &r.Q, &r.Steps, &r.Sampling, &r.Neighbouring, &r.ClipNorm,
		&r.Seconds, &r.Memory, &r.Finished, &r.Revision} {
		*f = none
	}
	if m == nil {
		return r
	}
	config(&r, m.Config)
	r.Delta = num(m.Config.Delta)
	r.Seconds = duration(m.Seconds)
	if m.PeakMemoryBytes > 0 {
		r.Memory = bytesText(m.PeakMemoryBytes)
	}
	if !m.Finished.IsZero() {
		r.Finished = m.Finished.UTC().Format("2006-01-02 15:04 UTC")
	}
	r.CopiedFrom = m.CopiedFrom
	r.Revision = m.Provenance.Revision
	if m.Provenance.Modified {
		r.Revision += " (modified)"
	}
	if pr := m.Privacy; pr != nil {
		r.Accountant = pr.Accountant
		r.Epsilon = num(float64(pr.Epsilon))
		if pr.EpsilonNominal != nil {
			r.EpsilonNominal = num(float64(*pr.EpsilonNominal))
		}
		r.Delta = num(pr.Delta)
		r.Sigma = num(pr.Sigma)
		r.Q = num(pr.SampleRate)
		r.Steps = strconv.FormatInt(pr.Steps, 10)
		r.Sampling = orNone(pr.Sampling)
		r.Neighbouring = orNone(pr.Neighbouring)
		r.ClipNorm = num(pr.ClipNorm)
		r.Caveats = pr.Caveats
	} else if m.Status == results.OK {
		r.Caveats = []string{"the run recorded no privacy record"}
	}
	if r.Steps == none && m.Steps > 0 {
		r.Steps = strconv.FormatInt(m.Steps, 10)
	}
	r.Results = resultList(m.Results)
	r.Warnings = m.Warnings
	return r
}

// missingRow returns the row of a run that spec expects and that has no
// folder.
func missingRow(c experiments.Config) RunRow {
	r := RunRow{ID: none, Status: "missing", Class: "bad", Problem: "no run folder: the run has not been run (repro run)"}
	for _, f := range []*string{&r.Epsilon, &r.EpsilonNominal, &r.Accountant, &r.Sigma, &r.Q, &r.Steps,
		&r.Sampling, &r.Neighbouring, &r.ClipNorm, &r.Seconds, &r.Memory, &r.Finished, &r.Revision} {
		*f = none
	}
	config(&r, c)
	r.Delta = num(c.Delta)
	return r
}

// config fills the columns of r that come from the run's config.
func config(r *RunRow, c experiments.Config) {
	r.Method, r.Task, r.Seed = orNone(c.Method), orNone(c.Task), strconv.FormatInt(c.Seed, 10)
	r.EpsilonTarget = num(float64(c.Epsilon))
	var params []string
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		v := c.Params[k]
		if f, ok := v.(float64); ok {
			v = experiments.FormatFloat(f)
		}
		params = append(params, fmt.Sprintf("%s=%v", k, v))
	}
	r.Params = orNone(strings.Join(params, " "))
}

// resultList returns the results of a run sorted by name, each metric
// X with its interval [X_lo, X_hi] when the run has both.
func resultList(res map[string]results.Float) []Result {
	var out []Result
	for _, k := range slices.Sorted(maps.Keys(res)) {
		if base, ok := strings.CutSuffix(k, "_lo"); ok && hasBoth(res, base) {
			continue
		}
		if base, ok := strings.CutSuffix(k, "_hi"); ok && hasBoth(res, base) {
			continue
		}
		r := Result{Name: k, Value: num(float64(res[k]))}
		if hasBoth(res, k) {
			r.Interval = interval(float64(res[k+"_lo"]), float64(res[k+"_hi"]))
		}
		out = append(out, r)
	}
	return out
}

func hasBoth(res map[string]results.Float, base string) bool {
	_, lo := res[base+"_lo"]
	_, hi := res[base+"_hi"]
	_, v := res[base]
	return lo && hi && v
}

// provenance fills the reproduction facts of p from the manifests.
func (p *Page) provenance(s *experiments.Spec, ms []*results.Manifest) {
	set := func(label string, get func(m *results.Manifest) string) {
		var vals []string
		for _, m := range ms {
			if v := get(m); v != "" && !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		if len(vals) == 0 {
			vals = []string{none}
		}
		p.Provenance = append(p.Provenance, Fact{Label: label, Values: vals})
	}
	set("code fingerprint", func(m *results.Manifest) string { return m.Provenance.Code })
	p.Provenance = append(p.Provenance, Fact{Label: "this build's code", Values: []string{repro.Code()}})
	set("revision", func(m *results.Manifest) string {
		if m.Provenance.Modified {
			return m.Provenance.Revision + " (modified)"
		}
		return m.Provenance.Revision
	})
	set("data", func(m *results.Manifest) string {
		if m.Inputs.Data == "" {
			return ""
		}
		return m.Config.Task + ": " + m.Inputs.Data
	})
	set("base model", func(m *results.Manifest) string { return m.Inputs.Base })
	set("Go", func(m *results.Manifest) string { return m.Provenance.GoVersion })
	set("machine", func(m *results.Manifest) string {
		if m.Provenance.OS == "" {
			return ""
		}
		return fmt.Sprintf("%s/%s, %d CPUs, %d concurrent %s", m.Provenance.OS, m.Provenance.Arch, m.Provenance.CPUs, m.Provenance.Jobs, plural(m.Provenance.Jobs, "run", "runs"))
	})
	var seeds []int64
	for _, c := range s.Expand() {
		if !slices.Contains(seeds, c.Seed) {
			seeds = append(seeds, c.Seed)
		}
	}
	slices.Sort(seeds)
	var ss []string
	for _, x := range seeds {
		ss = append(ss, strconv.FormatInt(x, 10))
	}
	p.Seeds = orNone(strings.Join(ss, ", "))
}

// claims verifies the claims of s over runs and fills p.Claims.
func (p *Page) claims(s *experiments.Spec, runs *reports.Runs, alpha float64) {
	rc := specout.ClaimsOf(s)
	if len(rc) == 0 {
		p.ClaimsNote = "The spec states no claims."
		return
	}
	v, err := reports.Verify(runs, rc, &reports.VerifyOptions{Alpha: alpha})
	if err != nil {
		p.ClaimsError = errText(err)
		return
	}
	byName := map[string]experiments.Claim{}
	for _, c := range s.Claims {
		byName[c.Name] = c
	}
	counts := map[string]int{}
	for _, c := range v.Checks {
		sc := byName[c.Claim]
		row := ClaimRow{
			Claim: c.Claim, Text: sc.Text, At: orNone(c.At), Metric: c.Metric, Expect: expectText(sc),
			Verdict: c.Verdict, Class: verdictClass(c.Verdict), Required: c.Required, Reason: c.Reason,
			NA: c.NA, NB: c.NB, Test: orNone(c.Test.Kind), Source: orNone(c.Source),
			Ours: sides(c.MeanA, c.MeanB), Paper: sides(c.PaperA, c.PaperB),
			Effect: none, P: num(c.PHolm), Power: num(c.Power),
			SpecLine: s.FileName,
		}
		if c.X1 != "" {
			// An interaction: the gains a − b at x1 and at x2.
			row.Expect, row.Ours, row.Paper = c.Expect, c.OursText(), c.PaperText()
			row.NA2, row.NB2 = c.NA2, c.NB2
			row.OursCells = cells(c.X1, c.MeanA, c.MeanB, c.X2, c.MeanA2, c.MeanB2)
			if row.Paper != none {
				row.PaperCells = cells(c.X1, c.PaperA, c.PaperB, c.X2, c.PaperA2, c.PaperB2)
			}
		}
		effect, lo, hi := c.Effect()
		row.Interval = interval(lo, hi)
		if c.Test.Kind != "" {
			row.Effect = num(effect)
		}
		if sc.Line > 0 {
			row.SpecLine += ":" + strconv.Itoa(sc.Line)
		}
		p.Claims = append(p.Claims, row)
		counts[c.Verdict]++
	}
	for i := 0; i < len(p.Claims); {
		j := i + 1
		for j < len(p.Claims) && p.Claims[j].Claim == p.Claims[i].Claim {
			j++
		}
		p.Claims[i].Span = j - i
		i = j
	}
	for _, vd := range []string{reports.Pass, reports.Fail, reports.Contradicted, reports.Inconclusive, reports.NotRun} {
		p.Verdicts = append(p.Verdicts, Count{Name: vd, Class: verdictClass(vd), N: counts[vd]})
	}
	p.ClaimsNote = fmt.Sprintf("%d %s of %d %s; p-values adjusted by Holm's method over %s, family-wise α = %s; intervals are percentile bootstrap intervals at level 1 − α.",
		len(v.Checks), plural(len(v.Checks), "test", "tests"), len(rc), plural(len(rc), "claim", "claims"), v.FamilyText(), num(alpha))
}

func expectText(c experiments.Claim) string {
	switch {
	case c.Expect == "greater" && c.B == nil:
		return "A > " + num(c.Value)
	case c.Expect == "less" && c.B == nil:
		return "A < " + num(c.Value)
	}
	switch c.Expect {
	case "greater":
		return "A > B"
	case "less":
		return "A < B"
	case "value":
		return fmt.Sprintf("%s ± %s", num(c.Value), num(c.Tolerance))
	}
	return c.Expect
}

func verdictClass(v string) string {
	switch v {
	case reports.Pass:
		return "ok"
	case reports.Fail, reports.Contradicted:
		return "bad"
	case reports.Inconclusive:
		return "warn"
	}
	return "none"
}

// cells returns the four cells of an interaction, "x1: a vs b; x2: a2 vs
// b2", each side "—" where it has no value.
func cells(x1 string, a, b float64, x2 string, a2, b2 float64) string {
	return fmt.Sprintf("%s: %s vs %s; %s: %s vs %s", x1, num(a), num(b), x2, num(a2), num(b2))
}

// sides returns "a vs b", "a" when b is NaN, or "—" when a is NaN too.
func sides(a, b float64) string {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return none
	case math.IsNaN(b):
		return num(a)
	}
	return num(a) + " vs " + num(b)
}

// tables builds the tables of s from runs.
func (p *Page) tables(s *experiments.Spec, runs *reports.Runs) {
	for _, t := range s.Tables {
		tv := TableView{Name: t.Name, Title: t.Title}
		if tv.Title == "" {
			tv.Title = t.Name
		}
		rt, err := specout.TableOf(t)
		var g *reports.Grid
		if err == nil {
			g, err = rt.Build(runs)
		}
		if err != nil {
			tv.Error = errText(err)
			p.Tables = append(p.Tables, tv)
			continue
		}
		tv.Subtitle = g.Subtitle()
		tv.RowNames = g.RowNames
		for c := range g.Cols {
			tv.Cols = append(tv.Cols, g.ColumnName(c))
		}
		maxN := 0
		for _, row := range g.Cells {
			for _, c := range row {
				maxN = max(maxN, c.N)
			}
		}
		for i, key := range g.Rows {
			tr := TableRow{Keys: key}
			for _, c := range g.Cells[i] {
				cv := CellView{Best: c.Best}
				if c.N == 0 {
					cv.Text, cv.Missing = none+" no runs", true
				} else {
					cv.Text = g.Number(c.Mean)
					if c.N > 1 && !math.IsNaN(c.Std) {
						cv.Text += " ± " + g.Number(c.Std)
					}
					if c.N < maxN {
						cv.Text += " (n=" + strconv.Itoa(c.N) + ")"
					}
				}
				if !math.IsNaN(c.Ref) {
					cv.Ref = g.Number(c.Ref)
				}
				tr.Cells = append(tr.Cells, cv)
			}
			tv.Rows = append(tv.Rows, tr)
		}
		tv.Notes = g.Notes("bold ▲", "paper")
		for _, w := range g.Warnings {
			tv.Warnings = append(tv.Warnings, w.Error())
		}
		p.Tables = append(p.Tables, tv)
	}
}

// figures builds the figures of s from runs, each as an SVG data URI.
func (p *Page) figures(root string, s *experiments.Spec, runs *reports.Runs) {
	runDirs := results.RunDir(root, s.Name, "")
	for _, pl := range s.Plots {
		figs, err := specout.FiguresOf(runDirs, runs, pl)
		for _, f := range figs {
			fv := FigureView{Name: f.Name, Title: f.Title}
			if fv.Title == "" {
				fv.Title = f.Name
			}
			var buf bytes.Buffer
			if err := f.WriteTo(&buf, "svg"); err != nil {
				fv.Error = errText(err)
			} else {
				fv.Src = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()))
				fv.Width, fv.Height = int(math.Round(f.Width.Points()*4/3)), int(math.Round(f.Height.Points()*4/3))
			}
			fv.Alt = figureAlt(pl, fv.Title)
			for _, w := range f.Warnings {
				fv.Warnings = append(fv.Warnings, w.Error())
			}
			p.Figures = append(p.Figures, fv)
		}
		if err != nil {
			p.Figures = append(p.Figures, FigureView{Name: pl.Name, Title: orNone(pl.Title), Error: errText(err)})
		}
	}
}

// figureAlt describes plot pl in words.
func figureAlt(pl experiments.Plot, title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s plot", title, pl.Kind)
	if pl.Kind == "" {
		b.Reset()
		fmt.Fprintf(&b, "%s: line plot", title)
	}
	if pl.Y != "" {
		fmt.Fprintf(&b, " of %s", pl.Y)
	}
	if pl.X != "" {
		fmt.Fprintf(&b, " against %s", pl.X)
	}
	if pl.Series != "" {
		fmt.Fprintf(&b, ", one series per %s", pl.Series)
	}
	b.WriteString("; the numbers are in the tables and runs of this page")
	return b.String()
}

// comparison returns the page's view of c.
func comparison(c *reports.Comparison, baseline string) *Comparison {
	out := &Comparison{Baseline: orNone(baseline)}
	counts := map[string]int{}
	for _, ch := range c.Changes {
		counts[ch.Verdict]++
		row := ChangeRow{
			Metric: ch.Metric, Key: ch.Key, Old: num(ch.Old), New: num(ch.New), Change: num(ch.New - ch.Old),
			Interval: interval(ch.Lo, ch.Hi), P: num(ch.P), Verdict: ch.Verdict, NOld: ch.NOld, NNew: ch.NNew,
			OldStd: num(ch.OldStd), NewStd: num(ch.NewStd),
		}
		if th, ok := c.Thresholds[ch.Metric]; ok {
			row.RegressionThreshold = fmt.Sprintf("%s is better; worse by more than %s is a regression", th.Better, num(th.Threshold))
		}
		switch {
		case ch.Regressed:
			row.Class = "bad"
			out.Regressions = append(out.Regressions, row)
		case ch.Verdict == reports.Better:
			row.Class = "ok"
			out.Improvements = append(out.Improvements, row)
		case ch.Verdict == reports.Worse:
			row.Class = "warn"
			out.Worse = append(out.Worse, row)
		}
	}
	for _, vd := range []string{reports.Regression, reports.Missing, reports.Worse, reports.Better, reports.Changed, reports.NoChange, reports.Identical, reports.Added} {
		if counts[vd] > 0 {
			cl := "none"
			switch vd {
			case reports.Regression, reports.Missing:
				cl = "bad"
			case reports.Worse:
				cl = "warn"
			case reports.Better:
				cl = "ok"
			}
			name := vd
			if vd == reports.NoChange {
				name = "~ (not significant)"
			}
			out.Counts = append(out.Counts, Count{Name: name, Class: cl, N: counts[vd]})
		}
	}
	for _, w := range c.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

// num formats x with up to 4 significant digits; NaN is "—" and ±Inf
// "±∞".
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return none
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	case x == math.Trunc(x) && math.Abs(x) < 1e6:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

func interval(lo, hi float64) string {
	if math.IsNaN(lo) && math.IsNaN(hi) {
		return none
	}
	return "[" + num(lo) + ", " + num(hi) + "]"
}

func duration(s float64) string {
	switch {
	case s <= 0 || math.IsNaN(s):
		return none
	case s < 60:
		return strconv.FormatFloat(s, 'f', 1, 64) + " s"
	case s < 3600:
		return fmt.Sprintf("%d min %d s", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%d h %d min", int(s)/3600, int(s)%3600/60)
}

func bytesText(b uint64) string {
	if b == 0 {
		return none
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// errText is the message of err without the package prefix of package
// results, which the page's context makes redundant.
func errText(err error) string {
	return strings.TrimPrefix(err.Error(), "results: ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
