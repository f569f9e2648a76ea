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
// brackets beside ours. Row and Col are the cell's key values, one per row
// key and column key column, written as they are printed ("dpsgd",
// "fashion-vqa", "8") or, for numeric columns, any spelling of the same number
// ("inf", "8.0"). Value is in the units shown, that is after [Table.Scale].
type Reference struct {
	Row   []string
	Col   []string
	Value float64
}

// Table describes a table of one metric: one row per distinct value of the
// row key columns, one column per distinct value of the column key columns,
// each cell the mean ± std of the metric over the runs (seeds) that share its
// keys. Rows with string keys keep the order in which the run table first
// shows them; numeric keys are sorted ascending (∞ last, missing after that).
type Table struct {
	// Title is printed above the table. If empty, the metric's label is used.
	Title string
	// Rows are the row key columns, for example {"method"}. At least one is
	// required.
	Rows []string
	// Cols are the column key columns, for example {"task",
	// "epsilon_target"}. If empty, the table has a single column of values.
	Cols []string
	// Metric is the Float column aggregated in the cells, for example "acc".
	Metric string
	// Where keeps only the runs whose column (the key) has the given value,
	// matched like the keys of a Reference. Nil keeps every run.
	Where map[string]string
	// Best is the rule that marks the best cell of each column. Cells are
	// compared by their mean as printed, so ties are all marked; a column is
	// marked only if at least two of its cells have values.
	Best Best
	// Scale multiplies every metric value before aggregation (100 for
	// percentages). If Scale is 0, it is defaulted to 1.
	Scale float64
	// Precision is the number of digits printed after the decimal point. If
	// Precision is 0, it is defaulted to 2; a negative Precision prints none.
	Precision int
	// MinSeeds is the number of runs per cell below which the table warns. If
	// MinSeeds is 0, it is defaulted to 10; a negative MinSeeds never warns.
	MinSeeds int
	// Labels override the labels of columns in headers (for example
	// {"epsilon_target": "ε"}, which is also a default). Nil means defaults.
	Labels map[string]string
	// References are the paper's values, shown beside ours.
	References []Reference
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
	// (string values alone, numeric values as "label=value").
	Cols []Key
	// Cells holds the cells, Cells[i][j] for row i and column j.
	Cells [][]Cell
	// Precision is the number of digits printed after the decimal point.
	Precision int
	// Best is the rule used to mark cells.
	Best Best
	// Warnings are things the reader of the table should know: failed runs,
	// too few seeds, missing metrics, ambiguous cells.
	Warnings []error
}

// Build aggregates runs into the cells of t. It returns an error if a column
// t names is missing or of the wrong kind, or if no run is left after Where;
// everything else worth knowing is in the Grid's warnings.
func (t *Table) Build(runs *Runs) (*Grid, error) {
	if len(t.Rows) == 0 {
		return nil, errors.New("reports: table has no row key columns")
	}
	if t.Best != NoBest && t.Best != Max && t.Best != Min {
		return nil, fmt.Errorf("reports: unknown best rule %d", t.Best)
	}
	metric, ok := runs.Column(t.Metric)
	if !ok {
		return nil, fmt.Errorf("reports: metric column %q not in the run table (columns: %s)", t.Metric, strings.Join(runs.Columns(), ", "))
	}
	if metric.Kind != Float {
		return nil, fmt.Errorf("reports: metric column %q holds strings, want numbers", t.Metric)
	}
	rows, err := newKeyer(runs, "row", t.Rows)
	if err != nil {
		return nil, err
	}
	cols, err := newKeyer(runs, "column", t.Cols)
	if err != nil {
		return nil, err
	}
	scale := t.Scale
	if scale == 0 {
		scale = 1
	}
	prec := t.Precision
	switch {
	case prec == 0:
		prec = 2
	case prec < 0:
		prec = 0
	}
	minSeeds := t.MinSeeds
	if minSeeds == 0 {
		minSeeds = 10
	}

	idx, err := selectRuns(runs, t.Where)
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return nil, errors.New("reports: no runs left after the where filter")
	}
	good, excluded := okRuns(runs, idx)

	// Rows and columns come from every run, failed ones included, so that a
	// configuration whose runs all failed shows as missing cells.
	rowGroups, rowPos := rows.groups(idx)
	colGroups, colPos := cols.groups(idx)
	g := &Grid{
		Title:     t.Title,
		Precision: prec,
		Best:      t.Best,
		Warnings:  excluded,
	}
	if g.Title == "" {
		g.Title = label(t.Labels, t.Metric)
	}
	for _, name := range t.Rows {
		g.RowNames = append(g.RowNames, label(t.Labels, name))
	}
	for _, rg := range rowGroups {
		g.Rows = append(g.Rows, rows.key(rg.first))
	}
	for _, cg := range colGroups {
		g.Cols = append(g.Cols, cols.header(t.Labels, cg.first))
	}

	values := make([][][]float64, len(rowGroups))
	seeds := make([][][]float64, len(rowGroups))
	for i := range values {
		values[i] = make([][]float64, len(colGroups))
		seeds[i] = make([][]float64, len(colGroups))
	}
	seed, hasSeed := runs.Column("seed")
	noMetric := 0
	for _, i := range good {
		r, c := rowPos[rows.id(i)], colPos[cols.id(i)]
		v := metric.Floats[i]
		if math.IsNaN(v) {
			noMetric++
			continue
		}
		values[r][c] = append(values[r][c], v*scale)
		if hasSeed && seed.Kind == Float {
			seeds[r][c] = append(seeds[r][c], seed.Floats[i])
		}
	}
	if noMetric > 0 {
		g.Warnings = append(g.Warnings, fmt.Errorf("%d %s no %s", noMetric, plural(noMetric, "run has", "runs have"), t.Metric))
	}

	g.Cells = make([][]Cell, len(rowGroups))
	minN, maxN := math.MaxInt, 0
	for r := range rowGroups {
		g.Cells[r] = make([]Cell, len(colGroups))
		for c := range colGroups {
			x := values[r][c]
			mean, std := meanStd(x)
			g.Cells[r][c] = Cell{N: len(x), Mean: mean, Std: std, Ref: math.NaN()}
			if len(x) > 0 {
				minN, maxN = min(minN, len(x)), max(maxN, len(x))
			}
			if dup, ok := duplicate(seeds[r][c]); ok {
				g.Warnings = append(g.Warnings, fmt.Errorf("cell (%s; %s) has several runs of seed %s: a swept column is neither a row nor a column key",
					g.Rows[r], g.colName(c), formatKeyFloat(dup)))
			}
		}
	}
	if maxN > 0 && minSeeds > 0 && minN < minSeeds {
		n := strconv.Itoa(minN)
		if minN != maxN {
			n += "–" + strconv.Itoa(maxN)
		}
		g.Warnings = append(g.Warnings, fmt.Errorf("n=%s seeds < %d", n, minSeeds))
	}
	g.markBest()
	for _, ref := range t.References {
		r := findKey(rows, rowGroups, ref.Row)
		c := findKey(cols, colGroups, ref.Col)
		if r < 0 || c < 0 {
			g.Warnings = append(g.Warnings, fmt.Errorf("paper value for (%s; %s) matches no cell", strings.Join(ref.Row, " "), strings.Join(ref.Col, " ")))
			continue
		}
		g.Cells[r][c].Ref = ref.Value
	}
	return g, nil
}

// colName returns the header of column c as one string.
func (g *Grid) colName(c int) string {
	if len(g.Cols[c]) == 0 {
		return g.Title
	}
	return g.Cols[c].String()
}

// selectRuns returns the indices of the runs that satisfy where.
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
			if !matches(c, i, where[names[j]]) {
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
		n := counts[s]
		if s == "failed" {
			warnings = append(warnings, fmt.Errorf("%d %s failed", n, plural(n, "run", "runs")))
		} else {
			warnings = append(warnings, fmt.Errorf("%d %s status %q, excluded", n, plural(n, "run has", "runs have"), s))
		}
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

// findKey returns the position of the group whose key matches parts, or -1.
func findKey(k *keyer, gs []*group, parts []string) int {
	if len(parts) != len(k.cols) {
		return -1
	}
	for p, g := range gs {
		all := true
		for j, c := range k.cols {
			if !matches(c, g.first, parts[j]) {
				all = false
				break
			}
		}
		if all {
			return p
		}
	}
	return -1
}

// markBest sets Best on the best cells of each column.
func (g *Grid) markBest() {
	if g.Best == NoBest {
		return
	}
	for c := range g.Cols {
		best, have := math.NaN(), 0
		for r := range g.Rows {
			cell := g.Cells[r][c]
			if cell.N == 0 {
				continue
			}
			have++
			v := g.rounded(cell.Mean)
			if math.IsNaN(best) || (g.Best == Max && v > best) || (g.Best == Min && v < best) {
				best = v
			}
		}
		if have < 2 {
			continue
		}
		for r := range g.Rows {
			cell := &g.Cells[r][c]
			cell.Best = cell.N > 0 && g.rounded(cell.Mean) == best
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
