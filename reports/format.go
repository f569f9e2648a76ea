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

// Write writes g to w in format f, followed by its notes and warnings.
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

// subtitle says what the cells hold.
func (g *Grid) subtitle() string {
	lo, hi := g.minN(), g.maxN()
	switch {
	case hi == 0:
		return "no runs"
	case hi == 1:
		return "one run per cell"
	case lo == hi:
		return fmt.Sprintf("mean ± std over %d runs", hi)
	}
	return fmt.Sprintf("mean ± std over %d–%d runs", lo, hi)
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
	for _, warn := range g.Warnings {
		fmt.Fprintf(bw, "warning: %v\n", warn)
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
	nm := max(len(g.Metrics), 1)
	var blocks [][]int
	var cur []int
	used := keys
	for c := 0; c < len(g.Cols); c += nm {
		unit, w := []int{}, 0
		for j := c; j < min(c+nm, len(g.Cols)); j++ {
			unit = append(unit, j)
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
	for _, warn := range g.Warnings {
		after = append(after, "- warning: "+mdEscape(warn.Error()))
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

// WriteLaTeX writes g as a booktabs tabular environment (it needs
// \usepackage{booktabs}). With two or more column key columns the headers of
// all but the last are grouped with \multicolumn and \cmidrule. The title,
// notes and warnings are written as comments.
func (g *Grid) WriteLaTeX(w io.Writer) error {
	st := style{
		pm:      ` $\pm$ `,
		missing: "---",
		esc:     texEscape,
		bold:    func(s string) string { return `\textbf{` + s + `}` },
	}
	nk := len(g.RowNames)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%% %s (%s)\n", g.Title, g.subtitle())
	fmt.Fprintf(bw, "\\begin{tabular}{%s%s}\n\\toprule\n", strings.Repeat("l", nk), strings.Repeat("r", len(g.Cols)))
	levels := 0
	for _, c := range g.Cols {
		levels = max(levels, len(c))
	}
	// Group headers: one line per column key but the last, consecutive equal
	// prefixes merged.
	for lv := 0; lv+1 < levels; lv++ {
		cells := make([]string, nk)
		var rules []string
		for c := 0; c < len(g.Cols); {
			end := c + 1
			for end < len(g.Cols) && slices.Equal(g.Cols[end][:lv+1], g.Cols[c][:lv+1]) {
				end++
			}
			cells = append(cells, fmt.Sprintf(`\multicolumn{%d}{c}{%s}`, end-c, texKey(g.Cols[c][lv])))
			rules = append(rules, fmt.Sprintf(`\cmidrule(lr){%d-%d}`, nk+c+1, nk+end))
			c = end
		}
		fmt.Fprintf(bw, "%s \\\\\n%s\n", strings.Join(cells, " & "), strings.Join(rules, " "))
	}
	head := make([]string, 0, nk+len(g.Cols))
	for _, name := range g.RowNames {
		head = append(head, texEscape(name))
	}
	for c, key := range g.Cols {
		switch {
		case levels == 0:
			head = append(head, texEscape(g.colName(c)))
		default:
			head = append(head, texKey(key[len(key)-1]))
		}
	}
	fmt.Fprintf(bw, "%s \\\\\n\\midrule\n", strings.Join(head, " & "))
	for _, row := range g.body(st) {
		fmt.Fprintf(bw, "%s \\\\\n", strings.Join(row, " & "))
	}
	bw.WriteString("\\bottomrule\n\\end{tabular}\n")
	for _, n := range g.notes("bold", "[x]", oneLine) {
		fmt.Fprintf(bw, "%% %s\n", n)
	}
	for _, warn := range g.Warnings {
		fmt.Fprintf(bw, "%% warning: %s\n", oneLine(warn.Error()))
	}
	return bw.Flush()
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
