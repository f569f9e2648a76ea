// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/repro-dp/repro/internal/results"
)

// Format is an output format of a table.
type Format int

const (
	// Text is a terminal table drawn with box-drawing characters; the best
	// cells are marked with a trailing *.
	Text Format = iota
	// Markdown is a GitHub-flavoured Markdown table; the best cells are bold.
	Markdown
	// LaTeX is a booktabs tabular environment to \input into a table; the
	// best cells are in \textbf, notes and warnings are comments.
	LaTeX
)

// String returns "text", "md" or "tex".
func (f Format) String() string {
	switch f {
	case Text:
		return "text"
	case Markdown:
		return "md"
	case LaTeX:
		return "tex"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Ext returns the file name extension of f: ".txt", ".md" or ".tex".
func (f Format) Ext() string {
	if f == Text {
		return ".txt"
	}
	return "." + f.String()
}

// ParseFormat returns the format named s: "text" (or "txt"), "md" (or
// "markdown"), or "tex" (or "latex").
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "text", "txt":
		return Text, nil
	case "md", "markdown":
		return Markdown, nil
	case "tex", "latex":
		return LaTeX, nil
	}
	return 0, fmt.Errorf("reports: unknown table format %q (want text, md or tex)", s)
}

// Write writes g to w in format f, followed by its notes. The warnings
// (too few seeds, failed runs) are not written: they are for the author,
// not for the paper the table goes into, and callers print them to the
// terminal from Grid.Warnings.
func (g *Grid) Write(w io.Writer, f Format) error {
	switch f {
	case Text:
		return g.WriteText(w)
	case Markdown:
		return g.WriteMarkdown(w)
	case LaTeX:
		return g.WriteLaTeX(w)
	}
	return fmt.Errorf("reports: unknown table format %d", f)
}

// style says how one output format spells the parts of a cell.
type style struct {
	pm      string              // between mean and std
	missing string              // an empty cell
	bold    func(string) string // the best cells
	plain   func(string) string // the other cells, nil for none
	esc     func(string) string // any text
}

// cellText returns the text of cell c in style st; n is the largest number of
// runs of any cell, the one that is not repeated in each cell.
func (g *Grid) cellText(c Cell, n int, st style) string {
	var s string
	if c.N == 0 {
		s = st.missing
		if st.plain != nil {
			s = st.plain(s)
		}
	} else {
		s = st.esc(g.number(c.Mean))
		if c.N > 1 && !math.IsNaN(c.Std) { // an infinite mean has no std
			s += st.pm + st.esc(g.number(c.Std))
		}
		switch {
		case c.Best:
			s = st.bold(s)
		case st.plain != nil:
			s = st.plain(s)
		}
		if c.N < n {
			s += " (n=" + strconv.Itoa(c.N) + ")"
		}
	}
	if !math.IsNaN(c.Ref) {
		s += " [" + st.esc(g.number(c.Ref)) + "]"
	}
	return s
}

// subtitle says what the cells hold; "mean ± std" only when the title does
// not say it already. A pooled table's cells count seeds, each the mean of
// its runs over the pooled columns.
func (g *Grid) subtitle() string {
	lo, hi := g.minN(), g.maxN()
	what := "mean ± std over "
	if strings.Contains(g.Title, "±") {
		what = "over "
	}
	unit, pooled := "runs", ""
	if len(g.Pool) > 0 {
		unit = "seeds"
		pooled = ", each the mean of its runs over " + strings.Join(g.Pool, ", ")
	}
	switch {
	case hi == 0:
		return "no runs"
	case hi == 1 && pooled != "":
		return "one seed per cell, the mean of its runs over " + strings.Join(g.Pool, ", ")
	case hi == 1:
		return "one run per cell"
	case lo == hi:
		return fmt.Sprintf("%s%d %s%s", what, hi, unit, pooled)
	}
	return fmt.Sprintf("%s%d–%d %s%s", what, lo, hi, unit, pooled)
}

// notes returns the legend lines printed under the table; best is how the
// best cells are marked, ref how a paper value is shown, and esc escapes
// the sources.
func (g *Grid) notes(best, ref string, esc func(string) string) []string {
	var notes []string
	if g.hasBest() {
		among := "in column"
		if !slices.Equal(g.BestAmong, g.RowNames) {
			among = strings.Join(g.BestAmong, " × ")
		}
		notes = append(notes, fmt.Sprintf("%s: best %s (%s)", best, esc(among), g.Best))
	}
	if g.hasRefs() {
		n := ref + ": value reported in the paper"
		if len(g.Sources) > 0 {
			n += " (" + esc(strings.Join(g.Sources, "; ")) + ")"
		}
		notes = append(notes, n)
	}
	for _, o := range g.Omitted {
		notes = append(notes, "left out: "+esc(o))
	}
	return notes
}

// header returns the header row: the row key names, then the column headers.
func (g *Grid) header(esc func(string) string) []string {
	h := make([]string, 0, len(g.RowNames)+len(g.Cols))
	for _, name := range g.RowNames {
		h = append(h, esc(name))
	}
	for c := range g.Cols {
		h = append(h, esc(g.colName(c)))
	}
	return h
}

// body returns the table rows in style st.
func (g *Grid) body(st style) [][]string {
	n := g.maxN()
	rows := make([][]string, len(g.Rows))
	for r, key := range g.Rows {
		row := make([]string, 0, len(key)+len(g.Cols))
		for _, k := range key {
			row = append(row, st.esc(k))
		}
		for _, c := range g.Cells[r] {
			row = append(row, g.cellText(c, n, st))
		}
		rows[r] = row
	}
	return rows
}

func identity(s string) string { return s }

// TextWidth is the width, in terminal columns, within which WriteText keeps
// a table. A table with more columns is written as several tables one
// under the other, each with the row keys and as many columns as fit (the
// sub-columns of the metrics of one column key stay together), and each
// column header puts one key part per line.
const TextWidth = 120

// WriteText writes g as a terminal table with its title above and its notes
// and warnings below; see [TextWidth].
func (g *Grid) WriteText(w io.Writer) error {
	st := style{pm: " ± ", missing: missing, esc: identity, bold: identity}
	if g.hasBest() {
		// Unmarked cells are padded so that the numbers stay aligned.
		st.bold = func(s string) string { return s + " *" }
		st.plain = func(s string) string { return s + "  " }
	}
	header := g.stackedHeader()
	body := g.body(st)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s (%s)\n", g.Title, g.subtitle())
	blocks := g.textBlocks(header, body)
	for k, cols := range blocks {
		if len(blocks) > 1 {
			fmt.Fprintf(bw, "(columns %d–%d of %d)\n", cols[0]+1, cols[len(cols)-1]+1, len(g.Cols))
		}
		if err := g.renderText(bw, header, body, cols); err != nil {
			return err
		}
		if k < len(blocks)-1 {
			fmt.Fprintln(bw)
		}
	}
	for _, n := range g.notes("*", "[x]", identity) {
		fmt.Fprintln(bw, n)
	}
	return bw.Flush()
}

// stackedHeader returns the header row of a terminal table: the row key
// names, then the column headers with one key part per line.
func (g *Grid) stackedHeader() []string {
	h := slices.Clone(g.RowNames)
	for c, key := range g.Cols {
		if len(key) == 0 {
			h = append(h, g.colName(c))
			continue
		}
		h = append(h, strings.Join(key, "\n"))
	}
	return h
}

// textWidth returns the widest line of s in terminal columns.
func textWidth(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

// textBlocks splits the data columns of g into blocks that fit TextWidth
// with the row keys, keeping the sub-columns of one column key together.
func (g *Grid) textBlocks(header []string, body [][]string) [][]int {
	nk := len(g.RowNames)
	width := func(j int) int { // a column with its padding and border
		w := textWidth(header[j])
		for _, row := range body {
			w = max(w, textWidth(row[j]))
		}
		return w + 3
	}
	keys := 1
	for j := range nk {
		keys += width(j)
	}
	var blocks [][]int
	var cur []int
	used := keys
	for _, unit := range g.units() {
		w := 0
		for _, j := range unit {
			w += width(nk + j)
		}
		if len(cur) > 0 && used+w > TextWidth {
			blocks = append(blocks, cur)
			cur, used = nil, keys
		}
		cur = append(cur, unit...)
		used += w
	}
	if len(cur) > 0 || len(blocks) == 0 {
		blocks = append(blocks, cur)
	}
	return blocks
}

// units returns the data columns of g in the groups that stay together
// when a table is split: the sub-columns of the metrics of one column key
// (fewer where a repeated one was omitted), else each column alone.
func (g *Grid) units() [][]int {
	var units [][]int
	for j, key := range g.Cols {
		if n := len(units); n > 0 && len(g.Metrics) > 1 && len(key) > 1 {
			prev := g.Cols[units[n-1][0]]
			if len(prev) == len(key) && slices.Equal(prev[:len(prev)-1], key[:len(key)-1]) {
				units[n-1] = append(units[n-1], j)
				continue
			}
		}
		units = append(units, []int{j})
	}
	return units
}

// topUnits returns the data columns of g grouped by the value of the first
// column key, or nil when the columns have fewer than two header parts.
func (g *Grid) topUnits() [][]int {
	var units [][]int
	for j, key := range g.Cols {
		if len(key) < 2 {
			return nil
		}
		if n := len(units); n > 0 && g.Cols[units[n-1][0]][0] == key[0] {
			units[n-1] = append(units[n-1], j)
			continue
		}
		units = append(units, []int{j})
	}
	return units
}

// renderText writes the row keys and the data columns cols of a terminal
// table.
func (g *Grid) renderText(w io.Writer, header []string, body [][]string, cols []int) error {
	nk := len(g.RowNames)
	pick := func(row []string) []string {
		out := slices.Clone(row[:nk])
		for _, j := range cols {
			out = append(out, row[nk+j])
		}
		return out
	}
	align := make([]tw.Align, nk+len(cols))
	for j := range align {
		if j < nk {
			align[j] = tw.AlignLeft
		} else {
			align[j] = tw.AlignRight
		}
	}
	rows := make([][]string, len(body))
	for r, row := range body {
		rows[r] = pick(row)
	}
	table := tablewriter.NewTable(w,
		tablewriter.WithEastAsian(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	table.Header(pick(header))
	if err := table.Bulk(rows); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err := table.Render(); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// WriteMarkdown writes g as a GitHub-flavoured Markdown table with its title
// above and its notes and warnings as a list below.
func (g *Grid) WriteMarkdown(w io.Writer) error {
	st := style{
		pm:      " ± ",
		missing: missing,
		esc:     mdEscape,
		bold:    func(s string) string { return "**" + s + "**" },
	}
	head := g.header(mdEscape)
	body := g.body(st)
	width := make([]int, len(head))
	for j, h := range head {
		width[j] = max(3, utf8.RuneCountInString(h))
		for _, row := range body {
			width[j] = max(width[j], utf8.RuneCountInString(row[j]))
		}
	}
	left := func(j int) bool { return j < len(g.RowNames) }
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s (%s)\n\n", mdEscape(g.Title), g.subtitle())
	line := func(cells []string) {
		bw.WriteString("|")
		for j, s := range cells {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			if left(j) {
				bw.WriteString(" " + s + pad + " |")
			} else {
				bw.WriteString(" " + pad + s + " |")
			}
		}
		bw.WriteString("\n")
	}
	line(head)
	rule := make([]string, len(head))
	for j := range rule {
		if left(j) {
			rule[j] = ":" + strings.Repeat("-", width[j]-1)
		} else {
			rule[j] = strings.Repeat("-", width[j]-1) + ":"
		}
	}
	line(rule)
	for _, row := range body {
		line(row)
	}
	var after []string
	for _, n := range g.notes("**bold**", `\[x\]`, mdEscape) {
		after = append(after, "- "+n)
	}
	if len(after) > 0 {
		bw.WriteString("\n" + strings.Join(after, "\n") + "\n")
	}
	return bw.Flush()
}

// mdEscape escapes the characters that Markdown would read as markup in a
// table cell.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '|', '*', '_', '`', '[', ']', '<', '>', '#':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TeXTextWidth is the width, in points, that a LaTeX table must fit: the
// text width of a single-column ICLR or NeurIPS paper (5.5 in = 397.48 pt).
// A wider table is split into several tabulars, see WriteLaTeX.
const TeXTextWidth = 397

// texPackages is the comment that opens a LaTeX table: what it needs.
const texPackages = `% needs \usepackage{booktabs} (\toprule, \midrule, \cmidrule, \bottomrule)`

// WriteLaTeX writes g as a booktabs tabular environment; its first line
// is a comment naming the packages it needs (\usepackage{booktabs}). With
// two or more column key columns the headers of all but the last are
// grouped with \multicolumn and \cmidrule. The title and notes are
// written as comments; the warnings are not, since they are for the
// author, not for the paper: Grid.Warnings carries them to the terminal.
//
// A table wider than TeXTextWidth (estimated from its widest entries at
// 5 pt a character, about a digit of 10 pt Computer Modern, plus 12 pt of
// column separation) is split into several tabulars, one after the other,
// each with the row keys and as many column groups as fit; a comment says
// so and suggests the transposed layout (rows and columns of the table
// swapped), which is often narrower.
func (g *Grid) WriteLaTeX(w io.Writer) error {
	st := style{
		pm:      ` $\pm$ `,
		missing: "---",
		esc:     texEscape,
		bold:    func(s string) string { return `\textbf{` + s + `}` },
	}
	body := g.body(st)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, texPackages)
	fmt.Fprintf(bw, "%% %s (%s)\n", g.Title, g.subtitle())
	blocks, width := g.texBlocks(body)
	if len(blocks) > 1 {
		fmt.Fprintf(bw, "%% about %d pt wide, over the %d pt text width: split into %d tabulars by columns (a transposed table, rows and columns swapped, may fit whole)\n", width, TeXTextWidth, len(blocks))
	}
	for k, cols := range blocks {
		if len(blocks) > 1 {
			if k > 0 {
				bw.WriteString("\n\\medskip\n\n")
			}
			fmt.Fprintf(bw, "%% columns %d–%d of %d\n", cols[0]+1, cols[len(cols)-1]+1, len(g.Cols))
		}
		g.writeTabular(bw, body, cols)
	}
	for _, n := range g.notes("bold", "[x]", oneLine) {
		fmt.Fprintf(bw, "%% %s\n", n)
	}
	return bw.Flush()
}

// texBlocks splits the data columns of g into blocks whose tabulars fit
// TeXTextWidth, keeping the units of g together, and returns them with the
// estimated width of the whole table in points.
func (g *Grid) texBlocks(body [][]string) (blocks [][]int, total int) {
	nk := len(g.RowNames)
	const perChar, colSep = 5, 12
	width := func(j int, head string) int {
		w := texWidth(head)
		for _, row := range body {
			w = max(w, texWidth(row[j]))
		}
		return w*perChar + colSep
	}
	keys := 0
	for j, name := range g.RowNames {
		keys += width(j, name)
	}
	colWidth := func(j int) int {
		head := g.colName(j)
		if len(g.Cols[j]) > 0 {
			head = g.Cols[j][len(g.Cols[j])-1]
		}
		return width(nk+j, head)
	}
	unitWidth := func(unit []int) int {
		w := 0
		for _, j := range unit {
			w += colWidth(j)
		}
		return w
	}
	// Split between the groups of the first column key (the methods of
	// Dual-Priv's Table 1) when each fits, else between the finer units.
	units := g.units()
	if top := g.topUnits(); top != nil && !slices.ContainsFunc(top, func(u []int) bool { return keys+unitWidth(u) > TeXTextWidth }) {
		units = top
	}
	total = keys
	var cur []int
	used := keys
	for _, unit := range units {
		w := unitWidth(unit)
		total += w
		if len(cur) > 0 && used+w > TeXTextWidth {
			blocks = append(blocks, cur)
			cur, used = nil, keys
		}
		cur = append(cur, unit...)
		used += w
	}
	if len(cur) > 0 || len(blocks) == 0 {
		blocks = append(blocks, cur)
	}
	return blocks, total
}

// texWidth estimates the printed width of a LaTeX cell in characters: the
// text less its commands (\textbf{…}, $\pm$ counts as one).
func texWidth(s string) int {
	s = strings.NewReplacer(`\textbf{`, "", "}", "", "{", "", `$\pm$`, "±", `$\infty$`, "∞", `$\varepsilon$`, "ε", "$", "").Replace(s)
	return utf8.RuneCountInString(s)
}

// writeTabular writes the tabular of the row keys and the data columns
// cols of g.
func (g *Grid) writeTabular(bw *bufio.Writer, body [][]string, cols []int) {
	nk := len(g.RowNames)
	sub := make([]Key, len(cols))
	for k, j := range cols {
		sub[k] = g.Cols[j]
	}
	fmt.Fprintf(bw, "\\begin{tabular}{%s%s}\n\\toprule\n", strings.Repeat("l", nk), strings.Repeat("r", len(sub)))
	levels := 0
	for _, c := range sub {
		levels = max(levels, len(c))
	}
	// Group headers: one line per column key but the last, consecutive equal
	// prefixes merged.
	for lv := 0; lv+1 < levels; lv++ {
		cells := make([]string, nk)
		var rules []string
		for c := 0; c < len(sub); {
			end := c + 1
			for end < len(sub) && slices.Equal(sub[end][:lv+1], sub[c][:lv+1]) {
				end++
			}
			cells = append(cells, fmt.Sprintf(`\multicolumn{%d}{c}{%s}`, end-c, texKey(sub[c][lv])))
			rules = append(rules, fmt.Sprintf(`\cmidrule(lr){%d-%d}`, nk+c+1, nk+end))
			c = end
		}
		fmt.Fprintf(bw, "%s \\\\\n%s\n", strings.Join(cells, " & "), strings.Join(rules, " "))
	}
	head := make([]string, 0, nk+len(sub))
	for _, name := range g.RowNames {
		head = append(head, texEscape(name))
	}
	for k, key := range sub {
		switch {
		case levels == 0:
			head = append(head, texEscape(g.colName(cols[k])))
		default:
			head = append(head, texKey(key[len(key)-1]))
		}
	}
	fmt.Fprintf(bw, "%s \\\\\n\\midrule\n", strings.Join(head, " & "))
	for _, row := range body {
		out := slices.Clone(row[:nk])
		for _, j := range cols {
			out = append(out, row[nk+j])
		}
		fmt.Fprintf(bw, "%s \\\\\n", strings.Join(out, " & "))
	}
	bw.WriteString("\\bottomrule\n\\end{tabular}\n")
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// texMath spells the symbols of numeric key labels and values in LaTeX
// math mode.
var texMath = map[rune]string{'ε': `\varepsilon`, 'δ': `\delta`, 'σ': `\sigma`, '∞': `\infty`}

// texKey returns a column header part in LaTeX: "ε=1" as $\varepsilon=1$
// when the label is a Greek letter and the value a number or ∞, anything
// else escaped.
func texKey(s string) string {
	l, v, ok := strings.Cut(s, "=")
	if !ok || len([]rune(l)) != 1 || texMath[[]rune(l)[0]] == "" {
		return texEscape(s)
	}
	value := v
	switch v {
	case "∞":
		value = texMath['∞']
	case "-∞":
		value = "-" + texMath['∞']
	default:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return texEscape(s)
		}
	}
	return "$" + texMath[[]rune(l)[0]] + "=" + value + "$"
}

// texEscape escapes the LaTeX special characters of s and spells the Unicode
// symbols that reports print (ε, δ, σ, ∞, ±, —, –) as LaTeX.
func texEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '&', '%', '$', '#', '_', '{', '}':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '<':
			b.WriteString(`\textless{}`)
		case '>':
			b.WriteString(`\textgreater{}`)
		case '|':
			b.WriteString(`\textbar{}`)
		case 'ε':
			b.WriteString(`$\varepsilon$`)
		case 'δ':
			b.WriteString(`$\delta$`)
		case 'σ':
			b.WriteString(`$\sigma$`)
		case '∞':
			b.WriteString(`$\infty$`)
		case '±':
			b.WriteString(`$\pm$`)
		case '—':
			b.WriteString(`---`)
		case '–':
			b.WriteString(`--`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Formats are the formats Grid.Save writes by default.
var Formats = []Format{Text, Markdown, LaTeX}

// Save writes g to prefix.txt, prefix.md and prefix.tex, or to the given
// formats, and returns the paths written. Each file is written atomically: to
// a temporary file in the same directory, then renamed.
func (g *Grid) Save(prefix string, formats ...Format) ([]string, error) {
	if len(formats) == 0 {
		formats = Formats
	}
	var paths []string
	for _, f := range formats {
		var buf bytes.Buffer
		if err := g.Write(&buf, f); err != nil {
			return paths, err
		}
		path := prefix + f.Ext()
		if err := results.WriteFile(path, buf.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// Number returns v as the cells of g print it: with g's precision, ±Inf
// as ±∞ and NaN as "—". Writers of other formats (package reports/page's
// HTML) use it so that every format shows the same digits.
func (g *Grid) Number(v float64) string { return g.number(v) }

// Subtitle says what the cells of g hold ("mean ± std over 3 runs").
func (g *Grid) Subtitle() string { return g.subtitle() }

// ColumnName returns the header of column c as one string.
func (g *Grid) ColumnName(c int) string { return g.colName(c) }

// Notes returns the legend lines written under g, in plain text: best is
// how the best cells are marked and ref how a paper value is shown.
func (g *Grid) Notes(best, ref string) []string { return g.notes(best, ref, identity) }
