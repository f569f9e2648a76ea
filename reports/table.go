// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Best is the rule that picks the best cell of each table column.
type Best int

const (
	// NoBest marks no cell.
	NoBest Best = iota
	// Max marks the cell with the largest mean (accuracy, say).
	Max
	// Min marks the cell with the smallest mean (attack AUC, say).
	Min
)

// String returns "none", "max" or "min".
func (b Best) String() string {
	switch b {
	case NoBest:
		return "none"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "Best(" + strconv.Itoa(int(b)) + ")"
}

// ParseBest returns the rule named s: "max", "min", or "none" or "" for
// [NoBest].
func ParseBest(s string) (Best, error) {
	switch s {
	case "", "none":
		return NoBest, nil
	case "max":
		return Max, nil
	case "min":
		return Min, nil
	}
	return NoBest, fmt.Errorf("reports: unknown best rule %q (want max, min or none)", s)
}

// Reference is a value reported in a paper for one cell of a table, shown in
// brackets beside ours.
type Reference struct {
	// At selects the cell: it maps run columns to values, written as they
	// are printed ("dpsgd", "8", "∞") or, for numeric columns, any spelling
	// of the same number ("inf", "8.0"). Every row and column key column
	// that has more than one value must be named; a column that is not a
	// key (one the table filters on with Where, say) must match at least one
	// run of the cell.
	At map[string]string
	// Metric is the metric of the cell. It may be empty when the table has a
	// single metric.
	Metric string
	// Value is in the units shown, that is after [Table.Scale].
	Value float64
	// Source names where the value comes from ("Dual-Priv Table 1"); the
	// sources are listed under the table.
	Source string
}

// Table describes a table of one or more metrics: one row per distinct
// value of the row key columns, one column per distinct value of the column
// key columns (and per metric), each cell the mean ± std of the metric over
// the runs (seeds) that share its keys. Keys with string values keep the
// order in which the run table first shows them; numeric keys are sorted
// ascending (∞ last, missing after that).
type Table struct {
	// Title is printed above the table. If empty, the metrics' labels are
	// used.
	Title string
	// Rows are the row key columns, for example {"method"}. At least one is
	// required.
	Rows []string
	// Cols are the column key columns, for example {"task",
	// "epsilon_target"}. If empty, the table has a single column per metric.
	Cols []string
	// Metric is the Float column aggregated in the cells, for example "acc".
	Metric string
	// Metrics, if not empty, replaces Metric with several metrics: every
	// column is split into one sub-column per metric, the innermost column
	// key (Dual-Priv's Table 1 shows Acc and IMG under each method and
	// task). It is an error to set both Metric and Metrics.
	Metrics []string
	// Pool are run columns whose runs a cell averages before its seeds:
	// the runs of one seed that differ in these columns count as one
	// value, their mean, so each cell is the mean ± std over seeds of
	// that mean (a selection table averaged over tasks: Pool {"task"},
	// with task neither a row nor a column key). Nil averages every run
	// of a cell as one seed's value, warning when two share a seed.
	Pool []string
	// Where keeps only the runs whose column (the key) has the given value,
	// matched like the values of Reference.At (NoValue: the runs without
	// a value there), or, for a numeric column, a value in the closed range
	// "lo..hi" (seed "9..32"). Nil keeps every run.
	Where map[string]string
	// Best is the rule that marks the best cells. Cells are compared by
	// their mean as printed, so ties are all marked; a group of cells is
	// marked only if at least two of them have values.
	Best Best
	// BestAmong are the key columns whose values compete for best: cells
	// that differ only in these columns are compared. If nil, it is
	// defaulted to {"method"} when method is a row or column key (tables
	// compare methods: with methods as columns and ε as rows, as in
	// Dual-Priv's Table 1, the best method at each ε and task is marked),
	// and to the row key columns otherwise (the best cell of each column).
	BestAmong []string
	// Scale multiplies every metric value before aggregation (100 for
	// percentages). If Scale is 0, it is defaulted to 1.
	Scale float64
	// Precision is the number of digits printed after the decimal point. If
	// Precision is 0, it is defaulted to 2; a negative Precision prints none.
	Precision int
	// MinSeeds is the number of runs per cell below which the table warns. If
	// MinSeeds is 0, it is defaulted to 10; a negative MinSeeds never warns.
	MinSeeds int
	// Labels override the labels of columns and metrics in headers (for
	// example {"epsilon_target": "ε"}, which is also a default). Nil means
	// defaults.
	Labels map[string]string
	// References are the paper's values, shown beside ours.
	References []Reference
	// Partial says that some runs of the table's experiment are not
	// finished (still running in another process, or not started) and
	// that the caller has said how many. A paper value whose cell has no
	// finished run is then not a warning, since its runs may be among the
	// unfinished ones, and neither are runs whose status is running; a
	// paper value that cannot match any cell (a metric not in the table,
	// several cells) still is.
	Partial bool
}

// Cell is one aggregated cell of a [Grid].
type Cell struct {
	// N is the number of runs aggregated; a cell with N = 0 is missing.
	N int
	// Mean and Std are the mean and the sample standard deviation of the
	// scaled metric; Std is 0 when N = 1 and both are NaN when N = 0.
	Mean, Std float64
	// Best reports whether the cell is the best of its column.
	Best bool
	// Ref is the paper's value for the cell, or NaN if there is none.
	Ref float64
}

// Grid is a built table: the cells of a [Table] over a run table, ready to
// be written as text, Markdown or LaTeX.
type Grid struct {
	// Title is the table's title.
	Title string
	// RowNames are the labels of the row key columns.
	RowNames []string
	// Rows are the row keys, in order.
	Rows []Key
	// Cols are the column headers, in order, one part per column key column
	// (string values alone, numeric values as "label=value") and, with
	// several metrics, a last part naming the metric.
	Cols []Key
	// Cells holds the cells, Cells[i][j] for row i and column j.
	Cells [][]Cell
	// Precision is the number of digits printed after the decimal point.
	Precision int
	// Best is the rule used to mark cells.
	Best Best
	// BestAmong are the labels of the key columns that competed for best.
	BestAmong []string
	// Sources are the distinct sources of the paper values shown.
	Sources []string
	// Warnings are things the reader of the table should know: failed runs,
	// too few seeds, missing metrics, ambiguous cells, paper values that
	// match no cell.
	Warnings []error
	// Metrics are the metrics of the cells; with several, each column key
	// has one sub-column per metric, in this order.
	Metrics []string
	// Omitted are the columns left out because they repeat another column
	// of the same key cell for cell ("shapes-vqa img: equals shapes-vqa
	// acc"), as a note for the reader.
	Omitted []string
	// Pool are the table's pooled columns (Table.Pool): a cell's N then
	// counts seeds, each the mean of its runs over these columns.
	Pool []string
}

// Build aggregates runs into the cells of t. It returns an error if a column
// t names is missing or of the wrong kind, or if no run is left after Where;
// everything else worth knowing is in the Grid's warnings.
func (t *Table) Build(runs *Runs) (*Grid, error) {
	ts, err := t.setup(runs)
	if err != nil {
		return nil, err
	}
	sel, err := selectOK(runs, t.Where)
	if err != nil {
		return nil, err
	}
	g, lay := t.layout(ts, sel)
	g.Warnings = sel.warnings
	if t.Partial {
		g.Warnings = slices.DeleteFunc(g.Warnings, func(err error) bool {
			var se *statusError
			return errors.As(err, &se) && se.status == "running"
		})
	}
	for m, c := range ts.metrics {
		if w := countMissing(c, sel.ok, ts.names[m]); w != nil {
			g.Warnings = append(g.Warnings, w)
		}
	}
	t.fill(g, runs, ts, lay, sel)
	g.markBest(func(r, j int) string { return t.bestGroup(g, ts, lay, r, j) })
	for _, ref := range t.References {
		r, j, err := t.findReference(runs, ref, ts.names, ts.rows, lay.rowGroups, ts.cols, lay.colGroups, lay.cellRuns)
		if err != nil {
			if !t.Partial || !errors.Is(err, errUnmatched) {
				g.Warnings = append(g.Warnings, fmt.Errorf("paper value %s: %v", describeAt(ref), err))
			}
			continue
		}
		g.Cells[r][j].Ref = ref.Value
		if isBytes(ts.names[j%len(ts.names)]) {
			g.Cells[r][j].Ref /= mib
		}
		if ref.Source != "" && !slices.Contains(g.Sources, ref.Source) {
			g.Sources = append(g.Sources, ref.Source)
		}
	}
	g.omitRepeats()
	return g, nil
}

// isBytes reports whether metric name is a size in bytes (a *_bytes
// metric), which tables show in mebibytes, as plots do (mibTicks).
func isBytes(name string) bool { return strings.HasSuffix(name, "_bytes") }

// metricHeader returns the column header of metric name: its label, and
// for a *_bytes metric without one, the name less "_bytes" with the unit
// its cells are in ("train_peak (MiB)").
func metricHeader(overrides map[string]string, name string) string {
	l := label(overrides, name)
	if l == name && isBytes(name) {
		return strings.TrimSuffix(name, "_bytes") + " (MiB)"
	}
	return l
}

// omitRepeats leaves out each column of a metric that repeats, cell for
// cell (mean, std and runs, missing where it is missing), the column of an
// earlier metric under the same column key: on a task whose questions all
// show an image, IMG accuracy is the accuracy, and a second column of the
// same numbers only widens the table. Each column left out is named in
// Omitted.
func (g *Grid) omitRepeats() {
	nm := len(g.Metrics)
	if nm < 2 || len(g.Cols)%nm != 0 {
		return
	}
	same := func(a, b int) bool {
		values := false
		for _, row := range g.Cells {
			x, y := row[a], row[b]
			if x.N != y.N {
				return false
			}
			if x.N == 0 {
				continue
			}
			if x.Mean != y.Mean || x.Std != y.Std {
				return false
			}
			values = true
		}
		return values
	}
	var drop []int
	for base := 0; base < len(g.Cols); base += nm {
		for m := 1; m < nm; m++ {
			for e := range m {
				if slices.Contains(drop, base+e) || !same(base+e, base+m) {
					continue
				}
				key := strings.Join(g.Cols[base+m][:len(g.Cols[base+m])-1], " ")
				g.Omitted = append(g.Omitted, fmt.Sprintf("%s: equals %s in every row",
					strings.TrimSpace(key+" "+g.Cols[base+m][len(g.Cols[base+m])-1]),
					strings.TrimSpace(key+" "+g.Cols[base+e][len(g.Cols[base+e])-1])))
				drop = append(drop, base+m)
				break
			}
		}
	}
	if len(drop) == 0 {
		return
	}
	keep := func(j int) bool { return !slices.Contains(drop, j) }
	var cols []Key
	for j, c := range g.Cols {
		if keep(j) {
			cols = append(cols, c)
		}
	}
	g.Cols = cols
	for i, row := range g.Cells {
		var cells []Cell
		for j, c := range row {
			if keep(j) {
				cells = append(cells, c)
			}
		}
		g.Cells[i] = cells
	}
}

// tableSetup is a table's options checked against a run table, with
// defaults applied.
type tableSetup struct {
	names      []string  // the metrics
	metrics    []*Column // their columns
	rows, cols *keyer
	pool       *keyer // nil: no pooled columns
	among      []string
	prec       int
	minSeeds   int
}

// setup checks t against runs and applies its defaults.
func (t *Table) setup(runs *Runs) (*tableSetup, error) {
	if len(t.Rows) == 0 {
		return nil, errors.New("reports: table has no row key columns")
	}
	if t.Best != NoBest && t.Best != Max && t.Best != Min {
		return nil, fmt.Errorf("reports: unknown best rule %d", t.Best)
	}
	ts := &tableSetup{names: t.Metrics, minSeeds: defaultMinSeeds(t.MinSeeds)}
	switch {
	case len(ts.names) > 0 && t.Metric != "":
		return nil, errors.New("reports: table sets both Metric and Metrics")
	case len(ts.names) == 0 && t.Metric == "":
		return nil, errors.New("reports: table has no metric")
	case len(ts.names) == 0:
		ts.names = []string{t.Metric}
	}
	for m, name := range ts.names {
		if slices.Contains(ts.names[:m], name) {
			return nil, fmt.Errorf("reports: metric %s listed twice", name)
		}
		c, err := floatColumn(runs, "metric", name)
		if err != nil {
			return nil, err
		}
		ts.metrics = append(ts.metrics, c)
	}
	var err error
	if ts.rows, err = newKeyer(runs, "row", t.Rows); err != nil {
		return nil, err
	}
	if ts.cols, err = newKeyer(runs, "column", t.Cols); err != nil {
		return nil, err
	}
	for _, name := range t.Pool {
		if slices.Contains(t.Rows, name) || slices.Contains(t.Cols, name) || name == "seed" {
			return nil, fmt.Errorf("reports: pooled column %q is a row or column key or the seed", name)
		}
	}
	if len(t.Pool) > 0 {
		if ts.pool, err = newKeyer(runs, "pooled", t.Pool); err != nil {
			return nil, err
		}
	}
	ts.among = t.BestAmong
	if ts.among == nil {
		ts.among = t.Rows
		if slices.Contains(t.Rows, "method") || slices.Contains(t.Cols, "method") {
			ts.among = []string{"method"}
		}
	}
	for _, name := range ts.among {
		if !slices.Contains(t.Rows, name) && !slices.Contains(t.Cols, name) {
			return nil, fmt.Errorf("reports: best-among column %q is not a row or column key", name)
		}
	}
	switch ts.prec = t.Precision; {
	case ts.prec == 0:
		ts.prec = 2
	case ts.prec < 0:
		ts.prec = 0
	}
	return ts, nil
}

// tableLayout places the runs of a table in its cells.
type tableLayout struct {
	rowGroups, colGroups []*group
	rowPos, colPos       map[string]int
	colKeys              []Key
	// cellRuns holds the runs of each cell, failed ones included,
	// [row][column·metrics + metric].
	cellRuns [][][]int
}

// layout returns the grid of t without its cells: title, row and column
// headers; and where each run goes.
func (t *Table) layout(ts *tableSetup, sel selection) (*Grid, *tableLayout) {
	// Rows and columns come from every run, failed ones included, so that a
	// configuration whose runs all failed shows as missing cells.
	lay := &tableLayout{}
	lay.rowGroups, lay.rowPos = ts.rows.groups(sel.all)
	lay.colGroups, lay.colPos = ts.cols.groups(sel.all)
	nm := len(ts.metrics)
	g := &Grid{Title: t.Title, Precision: ts.prec, Best: t.Best, Metrics: ts.names, Pool: slices.Clone(t.Pool)}
	if g.Title == "" {
		labels := make([]string, nm)
		for m, name := range ts.names {
			labels[m] = metricHeader(t.Labels, name)
		}
		g.Title = strings.Join(labels, ", ")
	}
	for _, name := range t.Rows {
		g.RowNames = append(g.RowNames, label(t.Labels, name))
	}
	for _, rg := range lay.rowGroups {
		g.Rows = append(g.Rows, ts.rows.key(rg.first))
	}
	for _, cg := range lay.colGroups {
		lay.colKeys = append(lay.colKeys, ts.cols.key(cg.first))
		h := ts.cols.header(t.Labels, cg.first)
		for _, name := range ts.names {
			if nm > 1 {
				g.Cols = append(g.Cols, append(slices.Clip(h), metricHeader(t.Labels, name)))
			} else {
				g.Cols = append(g.Cols, h)
			}
		}
	}
	for _, name := range ts.among {
		g.BestAmong = append(g.BestAmong, label(t.Labels, name))
	}
	ncol := len(lay.colGroups) * nm
	lay.cellRuns = make([][][]int, len(lay.rowGroups))
	for r := range lay.cellRuns {
		lay.cellRuns[r] = make([][]int, ncol)
	}
	for _, i := range sel.all {
		r, c := lay.rowPos[ts.rows.id(i)], lay.colPos[ts.cols.id(i)]
		for m := range nm {
			lay.cellRuns[r][c*nm+m] = append(lay.cellRuns[r][c*nm+m], i)
		}
	}
	return g, lay
}

// fill computes the cells of g from the ok runs of each cell.
func (t *Table) fill(g *Grid, runs *Runs, ts *tableSetup, lay *tableLayout, sel selection) {
	ok := make(map[int]bool, len(sel.ok))
	for _, i := range sel.ok {
		ok[i] = true
	}
	nm := len(ts.metrics)
	agg := newAggregator(runs, t.Scale)
	g.Cells = make([][]Cell, len(lay.rowGroups))
	for r := range g.Cells {
		g.Cells[r] = make([]Cell, len(lay.cellRuns[r]))
		for j, idx := range lay.cellRuns[r] {
			good := slices.DeleteFunc(slices.Clone(idx), func(i int) bool { return !ok[i] })
			var s sample
			if ts.pool != nil {
				s = agg.addPooled(ts.metrics[j%nm], good, ts.pool, func() (string, string, string) {
					return fmt.Sprintf("cell (%s; %s)", g.Rows[r], g.colName(j)),
						"a swept column is neither a row, a column nor a pooled key",
						"a seed lacks a run of a pooled value, and its mean averages fewer"
				})
			} else {
				s = agg.add(ts.metrics[j%nm], good, func() (string, string) {
					return fmt.Sprintf("cell (%s; %s)", g.Rows[r], g.colName(j)), "a swept column is neither a row nor a column key"
				})
			}
			g.Cells[r][j] = Cell{N: s.N, Mean: s.Mean, Std: s.Std, Ref: math.NaN()}
			if isBytes(ts.names[j%nm]) {
				g.Cells[r][j].Mean /= mib
				g.Cells[r][j].Std /= mib
			}
		}
	}
	g.Warnings = append(g.Warnings, agg.warnings(ts.minSeeds)...)
}

// bestGroup returns the group of cells that cell (r, j) competes with for
// best: its key parts outside the competing columns, and its metric.
func (t *Table) bestGroup(g *Grid, ts *tableSetup, lay *tableLayout, r, j int) string {
	nm := len(ts.metrics)
	var b strings.Builder
	for p, name := range t.Rows {
		if !slices.Contains(ts.among, name) {
			b.WriteString(strconv.Quote(g.Rows[r][p]))
		}
	}
	b.WriteByte('|')
	for p, name := range t.Cols {
		if !slices.Contains(ts.among, name) {
			b.WriteString(strconv.Quote(lay.colKeys[j/nm][p]))
		}
	}
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(j % nm))
	return b.String()
}

// findReference returns the row and column of the cell that ref selects.
func (t *Table) findReference(runs *Runs, ref Reference, metrics []string, rows *keyer, rowGroups []*group,
	cols *keyer, colGroups []*group, cellRuns [][][]int) (r, j int, err error) {
	m := 0
	switch {
	case ref.Metric == "" && len(metrics) > 1:
		return 0, 0, errors.New("names no metric, and the table has several")
	case ref.Metric != "":
		m = slices.Index(metrics, ref.Metric)
		if m < 0 {
			return 0, 0, fmt.Errorf("names metric %s, not in the table", ref.Metric)
		}
	}
	r, err = matchGroup(rows, rowGroups, ref.At)
	if err != nil {
		return 0, 0, fmt.Errorf("%w among the rows", err)
	}
	c, err := matchGroup(cols, colGroups, ref.At)
	if err != nil {
		return 0, 0, fmt.Errorf("%w among the columns", err)
	}
	j = c*len(metrics) + m
	// Columns that are not keys must match a run of the cell.
	keys := append(slices.Clone(t.Rows), t.Cols...)
	for _, name := range sortedKeys(ref.At) {
		if slices.Contains(keys, name) {
			continue
		}
		col, ok := runs.Column(name)
		if !ok {
			return 0, 0, fmt.Errorf("names column %s, not in the run table", name)
		}
		if !slices.ContainsFunc(cellRuns[r][j], func(i int) bool { return matches(col, i, ref.At[name]) }) {
			return 0, 0, fmt.Errorf("%w in column %s", errNoRun, name)
		}
	}
	return r, j, nil
}

// matchGroup returns the position of the one group whose key agrees with
// at; key columns that at does not name match any value.
func matchGroup(k *keyer, gs []*group, at map[string]string) (int, error) {
	found := -1
	for p, g := range gs {
		ok := true
		for j, c := range k.cols {
			if v, named := at[k.names[j]]; named && !matches(c, g.first, v) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if found >= 0 {
			return 0, errors.New("matches several cells")
		}
		found = p
	}
	if found < 0 {
		return 0, errNoCell
	}
	return found, nil
}

// errUnmatched is wrapped by the errors of paper values that match no
// finished run: no cell (errNoCell), or no run of their cell in a column
// that is not a key (errNoRun). [Table.Partial] does not warn of them.
var (
	errUnmatched = errors.New("reports: paper value matches no finished run")
	errNoCell    = unmatchedError("matches no cell")
	errNoRun     = unmatchedError("matches no run of its cell")
)

// unmatchedError is an error that is errUnmatched for errors.Is.
type unmatchedError string

func (e unmatchedError) Error() string      { return string(e) }
func (unmatchedError) Is(target error) bool { return target == errUnmatched }

// statusError is the warning that n runs of a table have a status other
// than ok.
type statusError struct {
	n      int
	status string
}

func (e *statusError) Error() string {
	if e.status == "failed" {
		return fmt.Sprintf("%d %s failed", e.n, plural(e.n, "run", "runs"))
	}
	return fmt.Sprintf("%d %s status %q, excluded", e.n, plural(e.n, "run has", "runs have"), e.status)
}

// describeAt returns "{k=v, …}" for the At of ref, keys sorted, with its
// metric.
func describeAt(ref Reference) string {
	parts := make([]string, 0, len(ref.At)+1)
	for _, k := range sortedKeys(ref.At) {
		parts = append(parts, k+"="+ref.At[k])
	}
	if ref.Metric != "" {
		parts = append(parts, "metric="+ref.Metric)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// colName returns the header of column c as one string.
func (g *Grid) colName(c int) string {
	if len(g.Cols[c]) == 0 {
		return g.Title
	}
	return g.Cols[c].String()
}

// selectRuns returns the indices of the runs that satisfy where: each
// named column's value matches (see matches) or, for a numeric column, lies
// in the closed range "lo..hi" (see inRange).
func selectRuns(runs *Runs, where map[string]string) ([]int, error) {
	names := make([]string, 0, len(where))
	for name := range where {
		names = append(names, name)
	}
	slices.Sort(names)
	var cols []*Column
	for _, name := range names {
		c, ok := runs.Column(name)
		if !ok {
			return nil, fmt.Errorf("reports: where column %q not in the run table (columns: %s)", name, strings.Join(runs.Columns(), ", "))
		}
		cols = append(cols, c)
	}
	var idx []int
	for i := range runs.Len() {
		keep := true
		for j, c := range cols {
			if v := where[names[j]]; !matches(c, i, v) && !inRange(c, i, v) {
				keep = false
				break
			}
		}
		if keep {
			idx = append(idx, i)
		}
	}
	return idx, nil
}

// okRuns returns the runs of idx whose status is "ok" (all of them if the
// table has no status column) and a warning per other status, failed first.
func okRuns(runs *Runs, idx []int) (ok []int, warnings []error) {
	status, has := runs.Column("status")
	if !has {
		return idx, nil
	}
	counts := make(map[string]int)
	var order []string
	for _, i := range idx {
		s := status.Format(i)
		if s == "ok" {
			ok = append(ok, i)
			continue
		}
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "failed":
			return -1
		case b == "failed":
			return 1
		}
		return 0
	})
	for _, s := range order {
		warnings = append(warnings, &statusError{n: counts[s], status: s})
	}
	return ok, warnings
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// duplicate returns a value that occurs more than once in x.
func duplicate(x []float64) (float64, bool) {
	seen := make(map[float64]bool, len(x))
	for _, v := range x {
		if seen[v] {
			return v, true
		}
		seen[v] = true
	}
	return 0, false
}

// markBest sets Best on the best cells of each group of cells that
// compete, as named by group(row, column).
func (g *Grid) markBest(group func(r, j int) string) {
	if g.Best == NoBest {
		return
	}
	best := make(map[string]float64)
	have := make(map[string]int)
	for r := range g.Rows {
		for j := range g.Cols {
			cell := g.Cells[r][j]
			if cell.N == 0 {
				continue
			}
			k := group(r, j)
			v := g.rounded(cell.Mean)
			b, seen := best[k]
			if !seen || (g.Best == Max && v > b) || (g.Best == Min && v < b) {
				best[k] = v
			}
			have[k]++
		}
	}
	for r := range g.Rows {
		for j := range g.Cols {
			cell := &g.Cells[r][j]
			k := group(r, j)
			cell.Best = cell.N > 0 && have[k] >= 2 && g.rounded(cell.Mean) == best[k]
		}
	}
}

// rounded returns v rounded as it is printed.
func (g *Grid) rounded(v float64) float64 {
	r, err := strconv.ParseFloat(g.number(v), 64)
	if err != nil {
		return v // ±Inf
	}
	return r
}

// number formats v with the grid's precision; -0 prints as 0 and ±Inf as ±∞.
func (g *Grid) number(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case math.IsNaN(v):
		return missing
	}
	s := strconv.FormatFloat(v, 'f', g.Precision, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		s = s[1:]
	}
	return s
}

// maxN returns the largest number of runs in a cell.
func (g *Grid) maxN() int {
	n := 0
	for _, row := range g.Cells {
		for _, c := range row {
			n = max(n, c.N)
		}
	}
	return n
}

// minN returns the smallest number of runs in a non-missing cell, or 0.
func (g *Grid) minN() int {
	n := 0
	for _, row := range g.Cells {
		for _, c := range row {
			if c.N > 0 && (n == 0 || c.N < n) {
				n = c.N
			}
		}
	}
	return n
}

// hasRefs reports whether any cell has a paper value.
func (g *Grid) hasRefs() bool {
	for _, row := range g.Cells {
		for _, c := range row {
			if !math.IsNaN(c.Ref) {
				return true
			}
		}
	}
	return false
}

// hasBest reports whether any cell is marked best.
func (g *Grid) hasBest() bool {
	for _, row := range g.Cells {
		for _, c := range row {
			if c.Best {
				return true
			}
		}
	}
	return false
}
