// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/specout"
)

func init() { register(mergeCommand) }

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "replace a run table's rows by a rerun's and add its new rows (a dry run unless --write)",
		ArgsUsage: "BASE.parquet NEW.parquet|RESULTS-DIR",
		Description: "BASE is a run table, such as one checked in under results/baselines/; NEW is the\n" +
			"run table of a rerun of some of its runs (FILE.parquet, or RESULTS-DIR: an\n" +
			"experiment's results folder, its runs.parquet). A row is known by its experiment,\n" +
			"method, task, scale, seed, ε (epsilon_target), δ and every hyperparameter column:\n" +
			"a row of NEW replaces BASE's row with the same values there, in its place, and a\n" +
			"row of NEW that BASE lacks is added at the end. Only NEW's runs that finished ok\n" +
			"are merged; the others are counted and left out.\n\n" +
			"It prints the rows it replaces (old and new run id) and adds, then compares the\n" +
			"replaced rows' metrics old against new as repro compare does (per configuration\n" +
			"over seeds; the spec's thresholds when the experiment loads) and prints the\n" +
			"metrics that moved: a rerun that should change only timings shows none.\n\n" +
			"Nothing is written without --write: the default is a dry run that says what\n" +
			"--write would do. With --write the merged table goes to --out (default BASE),\n" +
			"atomically: it is written to a temporary file beside it, read back and checked\n" +
			"row by row against the merge, and only then renamed over the target; on any\n" +
			"failure the target is left as it was.\n\n" +
			"It refuses (exit status 1, nothing written) tables of different experiments, a\n" +
			"NEW with runs at a scale BASE has none of, a NEW whose runs have hyperparameter or\n" +
			"result columns BASE lacks (its rows could not replace BASE's, or the table would\n" +
			"mix rows with and without a metric: rerun the whole table instead), and keys that\n" +
			"match more than one row.\n\n" +
			"   $ repro merge results/baselines/table1-smoke.parquet results/table1\n" +
			"   $ repro merge results/baselines/table1-smoke.parquet results/table1 --write\n" +
			"   $ repro merge base.parquet new.parquet --out merged.parquet --write",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "write", Usage: "write the merged table (without it, only print what would change)"},
			&cli.StringFlag{Name: "out", Usage: "write the merged table to `FILE` instead of BASE"},
		},
		SkipFlagParsing: true,
		Action:          withArgs(mergeAction),
	}
}

// mergeAction parses the arguments of repro merge and merges.
func mergeAction(c *cli.Context, f *cmdArgs) error {
	if len(f.Args()) != 2 {
		return errors.New("merge: want two arguments, BASE.parquet and NEW (FILE.parquet or RESULTS-DIR)")
	}
	basePath, newPath := f.Args()[0], f.Args()[1]
	if fi, err := os.Stat(basePath); err == nil && fi.IsDir() {
		return fmt.Errorf("merge: BASE %s is a folder; want a run table file (FILE.parquet)", basePath)
	}
	if fi, err := os.Stat(newPath); err == nil && fi.IsDir() {
		newPath = filepath.Join(newPath, results.RunsFile)
	}
	base, err := results.ReadRuns(basePath)
	if err != nil {
		return fmt.Errorf("merge: BASE: %w", err)
	}
	rerun, err := results.ReadRuns(newPath)
	if err != nil {
		return fmt.Errorf("merge: NEW: %w", err)
	}
	m, err := mergeRuns(base, rerun)
	if err != nil {
		return err
	}
	w := c.App.Writer
	out := f.String("out")
	if out == "" {
		out = basePath
	}
	fmt.Fprintf(w, "merge: %s (%d rows) with %s (%d rows, %d ok)\n", basePath, len(base), newPath, len(rerun), len(rerun)-m.skipped())
	if err := m.writeText(w); err != nil {
		return err
	}
	if len(m.replaced) > 0 {
		if err := m.writeMoved(w, c.App.ErrWriter); err != nil {
			return err
		}
	}
	if !m.changes() {
		fmt.Fprintf(w, "nothing to merge: %s is unchanged\n", out)
		return nil
	}
	if !f.Bool("write") {
		fmt.Fprintf(w, "dry run: nothing written; with --write, %d rows go to %s\n", len(m.rows), out)
		return nil
	}
	if err := writeMerged(out, m.rows); err != nil {
		return fmt.Errorf("merge: %w (%s is left as it was)", err, out)
	}
	fmt.Fprintf(w, "wrote %s: %d rows, read back and checked\n", out, len(m.rows))
	return nil
}

// A merge is the plan of repro merge: the merged rows, and which of them
// replace or add what.
type merge struct {
	rows []results.Run
	// replaced holds, for each replaced row, BASE's row and NEW's, in
	// BASE's order; same the rows of NEW already in BASE (same run id);
	// added NEW's rows that BASE lacks; left NEW's rows not ok, by status.
	replaced [][2]results.Run
	same     int
	added    []results.Run
	left     map[results.Status]int
}

func (m *merge) skipped() int {
	n := 0
	for _, c := range m.left {
		n += c
	}
	return n
}

// changes reports whether the merge changes BASE.
func (m *merge) changes() bool { return len(m.replaced) > 0 || len(m.added) > 0 }

// mergeKey returns the key of run r: its experiment, then its method,
// task, scale, seed, ε, δ and every hyperparameter as repro table --from's
// check of the declared runs keys them (configKey: numbers written the
// same whatever their type, so a column read back as DOUBLE keys as the
// INT64 it was).
func mergeKey(r results.Run) string {
	return r.Experiment + "\x00" + configKey(r.Method, r.Task, r.Scale, r.Seed, r.EpsilonTarget, r.Delta, r.Params)
}

// columns returns the names of the hyperparameter and result columns the
// rows have values in.
func columns(rows []results.Run) (params, metrics map[string]bool) {
	params, metrics = map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		for k := range r.Params {
			params[k] = true
		}
		for k := range r.Results {
			metrics[k] = true
		}
	}
	return params, metrics
}

// mergeRuns returns the merge of rerun's runs that finished ok into base
// (see repro merge), or an error when the tables cannot merge: different
// experiments, a scale base lacks, columns base lacks, or a key of more
// than one row.
func mergeRuns(base, rerun []results.Run) (*merge, error) {
	if len(base) == 0 {
		return nil, errors.New("merge: BASE has no rows: nothing to replace (copy NEW instead)")
	}
	exps, scales := map[string]bool{}, map[string]bool{}
	for _, r := range base {
		exps[r.Experiment], scales[r.Scale] = true, true
	}
	if len(exps) != 1 {
		return nil, fmt.Errorf("merge: BASE holds runs of %d experiments (%s); want one", len(exps), strings.Join(slices.Sorted(maps.Keys(exps)), ", "))
	}
	m := &merge{left: map[results.Status]int{}}
	var ok []results.Run
	for _, r := range rerun {
		if !exps[r.Experiment] {
			return nil, fmt.Errorf("merge: NEW holds runs of experiment %s, BASE of %s: they cannot merge", r.Experiment, slices.Collect(maps.Keys(exps))[0])
		}
		if !scales[r.Scale] {
			return nil, fmt.Errorf("merge: NEW holds runs at scale %s, BASE none (it holds %s): merge runs of a scale into that scale's table", r.Scale, strings.Join(slices.Sorted(maps.Keys(scales)), ", "))
		}
		if r.Status != results.OK {
			m.left[r.Status]++
			continue
		}
		ok = append(ok, r)
	}
	bp, bm := columns(base)
	np, nm := columns(ok)
	for _, c := range []struct {
		what       string
		base, next map[string]bool
		why        string
	}{
		{"hyperparameter", bp, np, "its rows are configurations BASE does not have"},
		{"result", bm, nm, "BASE's other rows would lack them"},
	} {
		var extra []string
		for k := range c.next {
			if !c.base[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return nil, fmt.Errorf("merge: NEW's runs have %s %s %s that BASE's lack (%s): rerun the whole table instead",
				c.what, plural(len(extra), "column", "columns"), strings.Join(extra, ", "), c.why)
		}
	}
	at := map[string]int{}
	for i, r := range base {
		k := mergeKey(r)
		if j, dup := at[k]; dup {
			return nil, fmt.Errorf("merge: BASE rows %d and %d (runs %s and %s) have the same key (%s): it cannot say which a rerun replaces", j+1, i+1, base[j].RunID, r.RunID, k)
		}
		at[k] = i
	}
	m.rows = slices.Clone(base)
	seen := map[string]string{}
	for _, r := range ok {
		k := mergeKey(r)
		if id, dup := seen[k]; dup {
			return nil, fmt.Errorf("merge: NEW runs %s and %s have the same key (%s): it cannot say which replaces BASE's", id, r.RunID, k)
		}
		seen[k] = r.RunID
		i, in := at[k]
		switch {
		case !in:
			m.added = append(m.added, r)
			m.rows = append(m.rows, r)
		case base[i].RunID == r.RunID:
			m.same++
		default:
			m.replaced = append(m.replaced, [2]results.Run{base[i], r})
			m.rows[i] = r
		}
	}
	slices.SortStableFunc(m.replaced, func(a, b [2]results.Run) int { return at[mergeKey(a[0])] - at[mergeKey(b[0])] })
	return m, nil
}

// writeText writes what m replaces, adds and leaves out, one row a line.
func (m *merge) writeText(w io.Writer) error {
	desc := func(r results.Run) string {
		s := fmt.Sprintf("%s %s %s ε=%s δ=%s seed %d", r.Method, r.Task, r.Scale, fmtEps(r.EpsilonTarget), num64(r.Delta), r.Seed)
		for _, k := range slices.Sorted(maps.Keys(r.Params)) {
			s += " " + k + "=" + paramString(r.Params[k])
		}
		return s
	}
	if len(m.replaced) > 0 {
		fmt.Fprintf(w, "replaces %d %s:\n", len(m.replaced), plural(len(m.replaced), "row", "rows"))
		for _, p := range m.replaced {
			fmt.Fprintf(w, "  %s: run %s → %s\n", desc(p[0]), p[0].RunID, p[1].RunID)
		}
	}
	if len(m.added) > 0 {
		fmt.Fprintf(w, "adds %d %s:\n", len(m.added), plural(len(m.added), "row", "rows"))
		for _, r := range m.added {
			fmt.Fprintf(w, "  %s: run %s\n", desc(r), r.RunID)
		}
	}
	if m.same > 0 {
		fmt.Fprintf(w, "%d %s of NEW already in BASE (same run id): kept\n", m.same, plural(m.same, "row", "rows"))
	}
	if n := m.skipped(); n > 0 {
		var by []string
		for _, s := range slices.Sorted(maps.Keys(m.left)) {
			by = append(by, fmt.Sprintf("%d %s", m.left[s], s))
		}
		fmt.Fprintf(w, "left out: %d %s of NEW that did not finish ok (%s)\n", n, plural(n, "run", "runs"), strings.Join(by, ", "))
	}
	return nil
}

// writeMoved compares the replaced rows, BASE's against NEW's, as repro
// compare does (reports.Compare: per configuration over seeds; the
// configuration keyed by the merge key less the seed; the spec's
// thresholds when the experiment loads, else none, said on wErr) and
// writes the metrics that moved, as repro compare prints them, or that
// none did.
func (m *merge) writeMoved(w, wErr io.Writer) error {
	var olds, news []results.Run
	for _, p := range m.replaced {
		olds, news = append(olds, p[0]), append(news, p[1])
	}
	old, err := runsOf(olds)
	if err != nil {
		return err
	}
	next, err := runsOf(news)
	if err != nil {
		return err
	}
	keys := append([]string{"experiment"}, reports.DefaultCompareKeys...)
	params, _ := columns(append(slices.Clone(olds), news...))
	keys = append(keys, slices.Sorted(maps.Keys(params))...)
	opts := &reports.CompareOptions{Keys: keys}
	if s, err := specOfRuns("merge", next, ""); err == nil {
		opts.Thresholds = specout.ThresholdsOf(s)
	} else {
		fmt.Fprintf(wErr, "merge: warning: no thresholds for the comparison: %v\n", err)
	}
	cmp, err := reports.Compare(old, next, opts)
	if err != nil {
		return fmt.Errorf("merge: comparing the replaced rows: %w", err)
	}
	moved := &reports.Comparison{Alpha: cmp.Alpha, Thresholds: cmp.Thresholds, Warnings: cmp.Warnings}
	metrics, still := map[string]bool{}, map[string]bool{}
	for _, ch := range cmp.Changes {
		if ch.Verdict == reports.Identical {
			still[ch.Metric] = true
			continue
		}
		metrics[ch.Metric] = true
		moved.Changes = append(moved.Changes, ch)
	}
	for k := range metrics {
		delete(still, k)
	}
	if len(metrics) == 0 {
		fmt.Fprintf(w, "metrics of the replaced rows: all %d identical, old and new (%s)\n", len(still), strings.Join(slices.Sorted(maps.Keys(still)), ", "))
		return nil
	}
	fmt.Fprintf(w, "metrics of the replaced rows that moved: %s (%d identical)\n\n", strings.Join(slices.Sorted(maps.Keys(metrics)), ", "), len(still))
	return moved.WriteText(w)
}

// runsOf returns rows as a run table of package reports, through a
// runs.parquet file in a temporary folder.
func runsOf(rows []results.Run) (*reports.Runs, error) {
	tmp, err := os.MkdirTemp("", "repro-merge-")
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	defer os.RemoveAll(tmp)
	name := filepath.Join(tmp, results.RunsFile)
	if err := results.WriteRuns(name, rows); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return reports.ReadRuns(name)
}

// readBack reads a run table written by writeMerged; tests replace it.
var readBack = results.ReadRuns

// writeMerged writes rows to the run table out atomically: to a
// temporary file in out's folder, which is read back and checked against
// rows (sameRun, row by row) and only then renamed to out. On any error
// the temporary file is removed and out is left as it was.
func writeMerged(out string, rows []results.Run) (err error) {
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := results.WriteRuns(tmp, rows); err != nil {
		return err
	}
	got, err := readBack(tmp)
	if err != nil {
		return fmt.Errorf("reading the merged table back: %w", err)
	}
	if len(got) != len(rows) {
		return fmt.Errorf("the merged table read back has %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if d := sameRun(got[i], rows[i]); d != "" {
			return fmt.Errorf("the merged table read back differs at row %d (run %s): %s", i+1, rows[i].RunID, d)
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil // renamed; the folder's sync is best effort
	}
	defer d.Close()
	d.Sync()
	return nil
}

// sameRun returns "" when a and b hold the same row (NaN equal to NaN;
// a number param equal whatever its type), else what differs.
func sameRun(a, b results.Run) string {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	switch {
	case a.RunID != b.RunID || a.Experiment != b.Experiment || a.Status != b.Status || a.Error != b.Error ||
		a.Method != b.Method || a.Task != b.Task || a.Scale != b.Scale || a.Seed != b.Seed || a.Steps != b.Steps ||
		a.GOMAXPROCS != b.GOMAXPROCS || a.Jobs != b.Jobs:
		return "a fixed column"
	case !eq(a.EpsilonTarget, b.EpsilonTarget) || !eq(a.Epsilon, b.Epsilon) || !eq(a.Delta, b.Delta) || !eq(a.Sigma, b.Sigma) ||
		!eq(a.SampleRate, b.SampleRate) || !eq(a.Seconds, b.Seconds) || !eq(a.LoadStart, b.LoadStart) || !eq(a.LoadEnd, b.LoadEnd):
		return "a fixed number column"
	case len(a.Params) != len(b.Params) || len(a.Results) != len(b.Results):
		return "its columns"
	}
	for k, v := range a.Params {
		if w, ok := b.Params[k]; !ok || paramString(v) != paramString(w) {
			return "hyperparameter " + k
		}
	}
	for k, v := range a.Results {
		if w, ok := b.Results[k]; !ok || !eq(v, w) {
			return "result " + k
		}
	}
	return ""
}
