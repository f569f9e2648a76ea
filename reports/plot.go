// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/repro-dp/repro/internal/results"
)

// Band is the error band drawn around each series' mean.
type Band int

const (
	// BandStd spans ±1 sample standard deviation over the runs at a point.
	BandStd Band = iota
	// BandSEM spans ±1 standard error of the mean, std/√n.
	BandSEM
	// BandNone draws no band.
	BandNone
)

// String returns "std", "sem" or "none".
func (b Band) String() string {
	switch b {
	case BandStd:
		return "std"
	case BandSEM:
		return "sem"
	case BandNone:
		return "none"
	}
	return "Band(" + strconv.Itoa(int(b)) + ")"
}

// ParseBand returns the band named s: "std" (or ""), "sem" or "none".
func ParseBand(s string) (Band, error) {
	switch s {
	case "", "std":
		return BandStd, nil
	case "sem":
		return BandSEM, nil
	case "none":
		return BandNone, nil
	}
	return 0, fmt.Errorf("reports: unknown band %q (want std, sem or none)", s)
}

// half returns the half-width of the band at pt.
func (b Band) half(pt Point) float64 {
	switch {
	case b == BandNone || pt.N < 2:
		return 0
	case b == BandSEM:
		return pt.Std / math.Sqrt(float64(pt.N))
	}
	return pt.Std
}

// PlotKind is the kind of a plot.
type PlotKind int

const (
	// Line joins the means of a series with a line over a shaded band.
	Line PlotKind = iota
	// Scatter marks the means of a series with error bars and no line.
	Scatter
	// Bar draws one bar per series side by side at each x, which becomes a
	// category (∞ included, as the last one), with error bars.
	Bar
	// Radar draws one polygon per series on spokes, one spoke per metric of
	// Plot.Metrics (or per value of X, with Y as the metric); see radar.go.
	Radar
	// ROC draws each series' membership-inference ROC curve on log-log
	// axes with the diagonal of a random guess, from the per-example
	// scores each run wrote; see roc.go.
	ROC
	// Heatmap draws the mean of Y over two swept columns, X across and
	// Rows down, as coloured cells with their values written in; see
	// heatmap.go.
	Heatmap
	// ImageGrid draws the images each run wrote (reconstructions, say) as a
	// grid, one row per run and one column per image name; see grid.go.
	ImageGrid
)

// plotKinds are the names of the kinds, indexed by kind.
var plotKinds = []string{"line", "scatter", "bar", "radar", "roc", "heatmap", "grid"}

// PlotKinds returns the names of every plot kind, in the order of their
// values: what [ParsePlotKind] accepts.
func PlotKinds() []string { return slices.Clone(plotKinds) }

// String returns the kind's name: "line", "scatter", "bar", "radar", "roc",
// "heatmap" or "grid".
func (k PlotKind) String() string {
	if k >= 0 && int(k) < len(plotKinds) {
		return plotKinds[k]
	}
	return "PlotKind(" + strconv.Itoa(int(k)) + ")"
}

// ParsePlotKind returns the kind named s, one of [PlotKinds]; "" is Line.
func ParsePlotKind(s string) (PlotKind, error) {
	if s == "" {
		return Line, nil
	}
	if k := slices.Index(plotKinds, s); k >= 0 {
		return PlotKind(k), nil
	}
	return 0, fmt.Errorf("reports: unknown plot kind %q (want %s)", s, strings.Join(plotKinds, ", "))
}

// Plot describes a plot of a metric against a numeric column: one series
// per value of the series columns, each point the mean over the runs that
// share an x, with an error band (±1 sample standard deviation by default);
// one panel per value of the facet columns, side by side with a shared y
// axis and one legend. Runs at x = +Inf are drawn as a dotted horizontal
// reference line per series (see the package documentation), and so is a
// series none of whose runs has an x (a method the swept column does not
// apply to, as DP-SGD has no token retention), in a Line or Scatter plot.
// The other kinds (Radar,
// ROC, Heatmap, ImageGrid) read the fields their documentation names.
type Plot struct {
	// X is the Float column on the horizontal axis, for example
	// "epsilon_target". Radar reads it (of either kind) for its spokes when
	// Metrics is empty; ROC and ImageGrid ignore it.
	X string
	// Y is the Float column aggregated on the vertical axis, for example
	// "acc"; a Heatmap's colour. ROC and ImageGrid ignore it, and so does
	// Radar when Metrics is set.
	Y string
	// Series are the columns whose values split the runs into lines, for
	// example {"method"}. If empty, all runs of a panel form a single line.
	// ImageGrid makes one row per run, labelled by its series key and seed.
	Series []string
	// Facets are the columns whose values split the runs into panels, for
	// example {"task"}. If empty, the figure has a single panel.
	Facets []string
	// Where keeps only the runs whose column (the key) has the given value;
	// see Table.Where. Nil keeps every run.
	Where map[string]string
	// Kind is the kind of plot; the zero value is Line.
	Kind PlotKind
	// Band is the error band; the zero value is BandStd. Radar draws it as
	// a shaded ring around each polygon, ROC as a shaded band around the
	// mean TPR; Heatmap and ImageGrid ignore it.
	Band Band
	// Metrics are the spokes of a Radar, one per metric (at least three).
	// Other kinds ignore it.
	Metrics []string
	// Rows is the column whose values are the rows of a Heatmap, drawn
	// down its vertical axis; X gives its columns. Other kinds ignore it.
	Rows string
	// Attack selects the attack whose scores a ROC draws (the attack column
	// of scores.parquet). If empty, every attack in the files is drawn,
	// each as its own series.
	Attack string
	// Images are the names of the images an ImageGrid shows, one column
	// each, read from the run's folder as images/<name>.png. If empty, every
	// PNG file in the images folder of the first run is shown, sorted by
	// name.
	Images []string
	// RunDirs is the folder that holds one folder per run, named by the run's
	// run_id column (an experiment's runs folder). ROC reads scores.parquet
	// there, ImageGrid the images folder; other kinds ignore it.
	RunDirs string
	// Title is the figure's title. If empty, it is made from the labels of
	// Y and X ("Accuracy against ε"); a figure always has a title.
	Title string
	// XLabel and YLabel are the axis labels. If empty, the labels of X and Y
	// are used (see Labels): a well-known metric's label states its unit
	// ("accuracy (%)"), a well-known column's what it measures ("update
	// ratio P_K (fraction of blocks)"), any other column its name with
	// spaces for underscores.
	XLabel, YLabel string
	// Labels override the labels of columns on axes, legend titles and
	// colour bars.
	Labels map[string]string
	// LogX draws the horizontal axis on a log scale; runs with x ≤ 0 are then
	// left out and counted in the warnings. It is an error with Bar, Radar,
	// Heatmap and ImageGrid; ROC is always log-log.
	LogX bool
	// Scale multiplies every y value before aggregation. If Scale is 0, it is
	// defaulted to 1.
	Scale float64
	// MinSeeds is the number of runs per point below which the figure warns.
	// If MinSeeds is 0, it is defaulted to 10; a negative MinSeeds never warns.
	MinSeeds int
	// Width and Height are the size of the figure. If zero, the width is
	// defaulted to 5 inches per panel (4 with several panels) plus 2 for the
	// legend, and the height to 4 inches per row of panels (at most three
	// panels per row); an ImageGrid's size follows its rows and columns.
	Width, Height vg.Length
}

// Point is one aggregated point of a series.
type Point struct {
	X float64
	// N is the number of runs aggregated; Mean and Std are the mean and the
	// sample standard deviation (0 when N = 1) of their scaled y values.
	N         int
	Mean, Std float64
}

// Series is one line of a panel.
type Series struct {
	// Name is the series key, its values joined by spaces.
	Name string
	// Points are the points at finite x, in ascending x. A Radar's points
	// are its spokes, X being the spoke's index; a ROC's are TPRs at
	// log-spaced FPRs.
	Points []Point
	// Inf is the point at x = +Inf, or nil if the series has no such runs.
	Inf *Point
	// NoX is the point of a series none of whose runs has an x (in a
	// Line or Scatter plot), or nil: a method the x does not apply to,
	// such as DP-SGD against Dual-Priv's token retention. It is drawn as
	// a reference line, as Inf is, for the other series to compare
	// against.
	NoX *Point

	style int // the index of the series' colour and marker
}

// Panel is one panel of a figure: the runs of one facet value.
type Panel struct {
	// Name is the facet key, its values joined by spaces; "" without facets.
	Name string
	// Series holds the aggregated data, in legend order.
	Series []Series
	// Plot is the drawing, without a legend; callers may restyle it before
	// saving.
	Plot *plot.Plot
}

// Figure is a built plot: its panels, one legend for all of them drawn to
// their right so that it never hides data, a note under the panels that
// says what the bands and reference lines mean, and the warnings.
type Figure struct {
	// Title is the figure's title, drawn above the panels.
	Title string
	// Panels are the panels, left to right and top to bottom.
	Panels []Panel
	// Legend is the legend drawn to the right of the panels, under
	// LegendTitle; Entries are its entries' texts, in order.
	Legend      plot.Legend
	LegendTitle string
	Entries     []string
	// ColorBar, when not nil, is a heatmap's colour scale, drawn to the
	// right of the panels with the metric's label.
	ColorBar *plot.Plot
	// Note says what the figure's marks mean ("shaded bands: ±1 std over
	// n = 3 seeds"); it is drawn under the panels. Empty for none.
	Note string
	// Warnings are things the reader of the figure should know.
	Warnings []error
	// Width and Height are the size at which the figure is written.
	Width, Height vg.Length
}

// pngDPI is the resolution of PNG output.
const pngDPI = 150

// maxPanelCols is the largest number of panels in a row.
const maxPanelCols = 3

// Build aggregates runs into the panels and series of p and draws them. It
// returns an error if a column p names is missing or of the wrong kind, if
// an option does not apply to p's kind, or if nothing is left to draw.
func (p *Plot) Build(runs *Runs) (*Figure, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	var fig *Figure
	var err error
	switch p.Kind {
	case Radar:
		fig, err = p.buildRadar(runs)
	case ROC:
		fig, err = p.buildROC(runs)
	case Heatmap:
		fig, err = p.buildHeatmap(runs)
	case ImageGrid:
		fig, err = p.buildGrid(runs)
	default:
		fig, err = p.buildXY(runs)
	}
	if err != nil {
		return nil, err
	}
	p.size(fig)
	return fig, nil
}

// check returns an error if p's kind, band or an option it sets is not
// valid for its kind.
func (p *Plot) check() error {
	if p.Kind < 0 || int(p.Kind) >= len(plotKinds) {
		return fmt.Errorf("reports: unknown plot kind %d", p.Kind)
	}
	if p.Band != BandStd && p.Band != BandSEM && p.Band != BandNone {
		return fmt.Errorf("reports: unknown band %d", p.Band)
	}
	if p.LogX && p.Kind != Line && p.Kind != Scatter && p.Kind != ROC {
		return fmt.Errorf("reports: a %s plot has no log x axis", p.Kind)
	}
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("reports: a %s plot needs %s", p.Kind, what)
		}
		return nil
	}
	switch p.Kind {
	case Radar:
		if len(p.Metrics) == 0 {
			return need(p.X != "" && p.Y != "", "three or more Metrics, or X and Y")
		}
		return need(len(p.Metrics) >= 3, "three or more Metrics")
	case ROC:
		return need(p.RunDirs != "", "RunDirs, the folder of the runs' folders")
	case ImageGrid:
		return need(p.RunDirs != "", "RunDirs, the folder of the runs' folders")
	case Heatmap:
		return need(p.X != "" && p.Y != "" && p.Rows != "", "X, Rows and Y")
	}
	return need(p.X != "" && p.Y != "", "X and Y")
}

// size sets the figure's size: p's, or the default for its panels.
func (p *Plot) size(fig *Figure) {
	cols := min(len(fig.Panels), maxPanelCols)
	rows := (len(fig.Panels) + cols - 1) / cols
	if fig.Width == 0 {
		fig.Width = p.Width
	}
	if fig.Height == 0 {
		fig.Height = p.Height
	}
	if fig.Width == 0 {
		panelW := 5 * vg.Inch
		if len(fig.Panels) > 1 {
			panelW = 4 * vg.Inch
		}
		fig.Width = vg.Length(vg.Length(cols)*panelW) + 2*vg.Inch
	}
	if fig.Height == 0 {
		fig.Height = vg.Length(rows) * 4 * vg.Inch
	}
}

// title returns p's title, or one made from the labels of what it draws:
// "Accuracy against update ratio P_K", "Accuracy by token retention and
// update ratio P_K" for a heatmap.
func (p *Plot) title(fallback string) string {
	if p.Title != "" {
		return p.Title
	}
	y := shortLabel(AxisLabel(p.Labels, p.Y))
	t := fallback
	switch p.Kind {
	case Line, Scatter, Bar:
		t = y + " against " + shortLabel(AxisLabel(p.Labels, p.X))
	case Heatmap:
		t = y + " by " + shortLabel(AxisLabel(p.Labels, p.X)) + " and " + shortLabel(AxisLabel(p.Labels, p.Rows))
	}
	if t == "" {
		return ""
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// legendTitle returns the title of the legend of series columns cols: their
// labels, joined by commas.
func (p *Plot) legendTitle(cols []string) string {
	labels := make([]string, len(cols))
	for i, c := range cols {
		labels[i] = shortLabel(AxisLabel(p.Labels, c))
	}
	return strings.Join(labels, ", ")
}

// bandNote returns what the bands of figure panels mean over the runs per
// point, or "" if p draws none: "shaded bands: ±1 std over n = 3 seeds".
// what names the marks ("shaded bands", "error bars").
func (p *Plot) bandNote(what string, panels []Panel) string {
	nmin, nmax := math.MaxInt, 0
	for _, panel := range panels {
		for _, s := range panel.Series {
			pts := s.Points
			for _, ref := range []*Point{s.Inf, s.NoX} {
				if ref != nil {
					pts = append(slices.Clip(pts), *ref)
				}
			}
			for _, pt := range pts {
				nmin, nmax = min(nmin, pt.N), max(nmax, pt.N)
			}
		}
	}
	if p.Band == BandNone || nmax < 2 {
		return ""
	}
	n := fmt.Sprintf("n = %d", nmax)
	if nmin != nmax {
		n = fmt.Sprintf("n = %d–%d", nmin, nmax)
	}
	sd := "±1 std"
	if p.Band == BandSEM {
		sd = "±1 standard error (std/√n)"
	}
	return fmt.Sprintf("%s: %s over %s runs (seeds) per point", what, sd, n)
}

// xyRuns are the runs of an x–y plot that have a value to draw, and, in
// a Line or Scatter plot, those with a y and no x (noX), which are drawn
// as references when their whole series has no x.
func (p *Plot) xyRuns(sel selection, xcol, ycol *Column) (kept, noXRuns []int, warnings []error) {
	var noY, noX, nonPositive, negInf int
	for _, i := range sel.ok {
		x, y := xcol.Floats[i], ycol.Floats[i]
		switch {
		case math.IsNaN(y):
			noY++
		case math.IsNaN(x) && p.Kind != Bar:
			noXRuns = append(noXRuns, i)
		case math.IsNaN(x):
			noX++
		case math.IsInf(x, -1):
			negInf++
		case p.LogX && x <= 0:
			nonPositive++
		default:
			kept = append(kept, i)
		}
	}
	count := func(n int, what string) {
		if n > 0 {
			warnings = append(warnings, fmt.Errorf("%d %s %s", n, plural(n, "run has", "runs have"), what))
		}
	}
	count(noY, "no "+p.Y)
	count(noX, "no "+p.X)
	count(negInf, p.X+" = -∞, left out")
	count(nonPositive, p.X+" ≤ 0, left out of the log scale")
	return kept, noXRuns, warnings
}

// styles returns the style index of each series key: its place among all
// runs of the table, so that a method keeps its colour and marker across
// the panels and plots of one experiment whatever the filter.
func styles(runs *Runs, series *keyer) map[string]int {
	all := make([]int, runs.Len())
	for i := range all {
		all[i] = i
	}
	_, pos := series.groups(all)
	return pos
}

// buildXY builds a Line, Scatter or Bar plot.
func (p *Plot) buildXY(runs *Runs) (*Figure, error) {
	xcol, err := floatColumn(runs, "x", p.X)
	if err != nil {
		return nil, err
	}
	ycol, err := floatColumn(runs, "y", p.Y)
	if err != nil {
		return nil, err
	}
	series, facets, err := p.keyers(runs)
	if err != nil {
		return nil, err
	}
	sel, err := selectOK(runs, p.Where)
	if err != nil {
		return nil, err
	}
	kept, noXRuns, warnings := p.xyRuns(sel, xcol, ycol)
	stylePos := styles(runs, series)
	agg := newAggregator(runs, p.Scale)
	fig := &Figure{Title: p.title(""), LegendTitle: p.legendTitle(p.Series)}
	finite := false
	noX := 0 // runs without an x in a series that has some
	facetGroups, _ := facets.groups(slices.Concat(kept, noXRuns))
	for _, fg := range facetGroups {
		panel := Panel{Name: facets.key(fg.first).String()}
		groups, _ := series.groups(fg.runs)
		for _, g := range groups {
			s := Series{Name: series.key(g.first).String(), style: stylePos[series.id(g.first)]}
			if len(p.Series) == 0 {
				s.Name = AxisLabel(p.Labels, p.Y)
			}
			withX := slices.DeleteFunc(slices.Clone(g.runs), func(i int) bool { return math.IsNaN(xcol.Floats[i]) })
			switch {
			case len(withX) == 0 && !agg.repeatsSeed(g.runs):
				pt := agg.add(ycol, g.runs, func() (string, string) {
					return fmt.Sprintf("reference (%s; no %s)", strings.TrimSpace(panel.Name+" "+s.Name), p.X), "a swept column is neither x, a series nor a facet key"
				})
				s.NoX = &Point{X: math.NaN(), N: pt.N, Mean: pt.Mean, Std: pt.Std}
			case len(withX) < len(g.runs):
				// Runs without an x beside runs with one, or several
				// runs of a seed without one (they differ in a swept
				// column the plot does not show): no single reference.
				noX += len(g.runs) - len(withX)
			}
			for _, pt := range p.points(agg, xcol, ycol, withX, panel.Name, s.Name) {
				if math.IsInf(pt.X, 1) {
					s.Inf = &pt
				} else {
					s.Points = append(s.Points, pt)
					finite = true
				}
			}
			panel.Series = append(panel.Series, s)
		}
		fig.Panels = append(fig.Panels, panel)
	}
	if !finite {
		return nil, fmt.Errorf("reports: no runs with a finite %s and a %s to plot", p.X, p.Y)
	}
	if noX > 0 {
		warnings = append(warnings, fmt.Errorf("%d %s no %s", noX, plural(noX, "run has", "runs have"), p.X))
	}
	fig.Warnings = append(slices.Concat(sel.warnings, warnings), agg.warnings(defaultMinSeeds(p.MinSeeds))...)
	if err := p.drawXY(fig); err != nil {
		return nil, err
	}
	var notes []string
	what := "shaded bands"
	if p.Kind != Line {
		what = "error bars"
	}
	if n := p.bandNote(what, fig.Panels); n != "" {
		notes = append(notes, n)
	}
	if p.Kind != Bar && slices.ContainsFunc(fig.Panels, func(pn Panel) bool {
		return slices.ContainsFunc(pn.Series, func(s Series) bool { return s.Inf != nil })
	}) {
		notes = append(notes, fmt.Sprintf("dotted: runs at %s = ∞, mean (± the band's width) in the legend", shortLabel(AxisLabel(p.Labels, p.X))))
	}
	if slices.ContainsFunc(fig.Panels, func(pn Panel) bool {
		return slices.ContainsFunc(pn.Series, func(s Series) bool { return s.NoX != nil })
	}) {
		notes = append(notes, fmt.Sprintf("dotted: runs without a %s, mean (± the band) in the legend", shortLabel(AxisLabel(p.Labels, p.X))))
	}
	fig.Note = strings.Join(notes, "; ")
	return fig, nil
}

// keyers returns the keyers of p's series and facet columns.
func (p *Plot) keyers(runs *Runs) (series, facets *keyer, err error) {
	if series, err = newKeyer(runs, "series", p.Series); err != nil {
		return nil, nil, err
	}
	if facets, err = newKeyer(runs, "facet", p.Facets); err != nil {
		return nil, nil, err
	}
	return series, facets, nil
}

// points aggregates the runs idx of one series into one point per distinct
// x, in ascending x (+Inf last).
func (p *Plot) points(agg *aggregator, xcol, ycol *Column, idx []int, panel, name string) []Point {
	byX := make(map[float64][]int)
	for _, i := range idx {
		x := normalise(xcol.Floats[i])
		byX[x] = append(byX[x], i)
	}
	xs := slices.Sorted(maps.Keys(byX))
	pts := make([]Point, 0, len(xs))
	for _, x := range xs {
		s := agg.add(ycol, byX[x], func() (string, string) {
			where := name
			if panel != "" {
				where = panel + " " + where
			}
			return fmt.Sprintf("point (%s; %s=%s)", where, p.X, formatKeyFloat(x)), "a swept column is neither x, a series nor a facet key"
		})
		pts = append(pts, Point{X: x, N: s.N, Mean: s.Mean, Std: s.Std})
	}
	return pts
}

// drawXY draws the panels of an x–y figure with one legend, sharing one y
// range among the panels.
func (p *Plot) drawXY(fig *Figure) error {
	var lb legendBuilder
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for k := range fig.Panels {
		panel := &fig.Panels[k]
		plt, entries, err := p.draw(panel.Series, panel.Name)
		if err != nil {
			return err
		}
		plt.Title.Text = panel.Name
		panel.Plot = plt
		ymin, ymax = min(ymin, plt.Y.Min), max(ymax, plt.Y.Max)
		lb.add(entries)
	}
	fig.Legend, fig.Entries = lb.legend()
	// Leave a margin above and below the data, so that no band touches the
	// frame.
	pad := (ymax - ymin) * 0.05
	if pad == 0 {
		pad = math.Max(math.Abs(ymax)*0.05, 1e-3)
	}
	for _, panel := range fig.Panels {
		panel.Plot.Y.Min, panel.Plot.Y.Max = ymin-pad, ymax+pad
	}
	return nil
}

// legendBuilder gathers the legend entries of a figure's panels: each name
// once, the lines at ∞ after the others.
type legendBuilder struct {
	names, infNames []string
	entries, inf    []legendEntry
}

func (lb *legendBuilder) add(entries []legendEntry) {
	for _, e := range entries {
		switch {
		case e.inf && !slices.Contains(lb.infNames, e.name):
			lb.infNames = append(lb.infNames, e.name)
			lb.inf = append(lb.inf, e)
		case !e.inf && !slices.Contains(lb.names, e.name):
			lb.names = append(lb.names, e.name)
			lb.entries = append(lb.entries, e)
		}
	}
}

// legend returns the legend, drawn from its top left, and its entries'
// texts.
func (lb *legendBuilder) legend() (plot.Legend, []string) {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(28) // room for a dash pattern to show
	var names []string
	for _, e := range slices.Concat(lb.entries, lb.inf) {
		l.Add(e.name, e.thumbs...)
		names = append(names, e.name)
	}
	return l, names
}

// floatColumn returns the Float column name of runs.
func floatColumn(runs *Runs, what, name string) (*Column, error) {
	c, ok := runs.Column(name)
	if !ok {
		return nil, fmt.Errorf("reports: %s column %q not in the run table (columns: %s)", what, name, strings.Join(runs.Columns(), ", "))
	}
	if c.Kind != Float {
		return nil, fmt.Errorf("reports: %s column %q holds strings, want numbers", what, name)
	}
	return c, nil
}

// bandAlpha is the opacity of the bands.
const bandAlpha = 0x40

// mib is the number of bytes in a mebibyte.
const mib = 1 << 20

// mibTicks places the ticks of an axis whose values are bytes, with labels
// in mebibytes (the unit of the axis label of a *_bytes metric), where
// gonum's default ticks would print "31250000.00".
type mibTicks struct{}

// Ticks returns plot.DefaultTicks over [min, max] in MiB, at their values in
// bytes.
func (mibTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min/mib, max/mib)
	for i := range ts {
		ts[i].Value *= mib
	}
	return ts
}

// legendEntry is one entry of a panel's legend.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
	inf    bool // a line at x = +Inf
}

// draw returns a gonum plot of series, which may have no finite point when
// the figure has several panels, and its legend entries.
func (p *Plot) draw(series []Series, panel string) (*plot.Plot, []legendEntry, error) {
	plt := plot.New()
	plt.X.Label.Text = p.XLabel
	if plt.X.Label.Text == "" {
		plt.X.Label.Text = AxisLabel(p.Labels, p.X)
	}
	plt.Y.Label.Text = p.YLabel
	if plt.Y.Label.Text == "" {
		plt.Y.Label.Text = AxisLabel(p.Labels, p.Y)
	}
	if strings.HasSuffix(p.Y, "_bytes") {
		plt.Y.Tick.Marker = mibTicks{}
	}
	if p.Kind == Bar {
		grid := plotter.NewGrid()
		grid.Vertical.Width = 0
		plt.Add(grid)
		entries := p.drawBars(plt, series)
		return plt, entries, nil
	}
	plt.Add(plotter.NewGrid())

	// The horizontal extent of the reference lines at x = +Inf.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	var xs []float64
	for _, s := range series {
		for _, pt := range s.Points {
			xmin, xmax = min(xmin, pt.X), max(xmax, pt.X)
			if !slices.Contains(xs, pt.X) {
				xs = append(xs, pt.X)
			}
		}
	}
	// widened: the x range is not the data's (gonum would widen a single x
	// by ±1, to 0 on a log axis).
	widened := len(xs) == 0 || xmin == xmax
	switch {
	case len(xs) == 0:
		// A panel with runs at ∞ only.
		xmin, xmax = 1, 10
	case xmin == xmax:
		// A single x: give the lines at ∞ some length around it.
		if p.LogX {
			xmin, xmax = xmin/2, xmax*2
		} else {
			d := math.Max(math.Abs(xmin)/2, 0.5)
			xmin, xmax = xmin-d, xmax+d
		}
	}
	if p.LogX {
		plt.X.Scale = plot.LogScale{}
		plt.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	// Few distinct x values (a sweep) are labelled exactly where they are.
	if len(xs) > 0 && len(xs) <= 12 {
		slices.Sort(xs)
		ticks := make(plot.ConstantTicks, len(xs))
		for i, x := range xs {
			ticks[i] = plot.Tick{Value: x, Label: formatKeyFloat(x)}
		}
		plt.X.Tick.Marker = ticks
	}

	var entries, infEntries []legendEntry
	for _, s := range series {
		if len(s.Points) > 0 {
			e, err := p.drawSeries(plt, s)
			if err != nil {
				return nil, nil, err
			}
			entries = append(entries, e)
		}
		if s.Inf != nil {
			e, err := p.drawInf(plt, s, panel, xmin, xmax)
			if err != nil {
				return nil, nil, err
			}
			infEntries = append(infEntries, e)
		}
		if s.NoX != nil {
			e, err := p.drawRef(plt, s, *s.NoX, "no "+shortLabel(plt.X.Label.Text), panel, xmin, xmax)
			if err != nil {
				return nil, nil, err
			}
			infEntries = append(infEntries, e)
		}
	}
	if widened {
		plt.X.Min, plt.X.Max = xmin, xmax
	}
	return plt, append(entries, infEntries...), nil
}

// drawSeries adds the points at finite x of series s to plt: a line over
// its band, or points with error bars.
func (p *Plot) drawSeries(plt *plot.Plot, s Series) (legendEntry, error) {
	col := plotutil.Color(s.style)
	xys := make(plotter.XYs, len(s.Points))
	for k, pt := range s.Points {
		xys[k] = plotter.XY{X: pt.X, Y: pt.Mean}
	}
	points, err := plotter.NewScatter(xys)
	if err != nil {
		return legendEntry{}, fmt.Errorf("reports: %w", err)
	}
	points.Color = col
	points.Shape = plotutil.Shape(s.style)
	points.Radius = vg.Points(3)
	thumbs := []plot.Thumbnailer{points}
	switch p.Kind {
	case Line:
		if poly := p.bandPolygon(s.Points); poly != nil {
			poly.Color = withAlpha(col, bandAlpha)
			poly.LineStyle.Width = 0
			plt.Add(poly)
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return legendEntry{}, fmt.Errorf("reports: %w", err)
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		line.Dashes = seriesDashes(s.style)
		plt.Add(line)
		thumbs = []plot.Thumbnailer{line, points}
	case Scatter:
		if bars := p.errorBars(xys, s.Points); bars != nil {
			bars.Color = col
			plt.Add(bars)
		}
	}
	plt.Add(points)
	return legendEntry{name: s.Name, thumbs: thumbs}, nil
}

// drawInf adds the value of series s at x = +Inf to plt: a thin dotted
// reference line from xmin to xmax. Its band is not shaded, so that
// references never cover the data; the legend entry states the mean and
// the band's half-width instead.
func (p *Plot) drawInf(plt *plot.Plot, s Series, panel string, xmin, xmax float64) (legendEntry, error) {
	return p.drawRef(plt, s, *s.Inf, shortLabel(plt.X.Label.Text)+" = ∞", panel, xmin, xmax)
}

// drawRef adds the reference point pt of series s to plt as drawInf
// says; at says where it is ("ε = ∞", "no token retention").
func (p *Plot) drawRef(plt *plot.Plot, s Series, pt Point, at, panel string, xmin, xmax float64) (legendEntry, error) {
	col := plotutil.Color(s.style)
	line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: pt.Mean}, {X: xmax, Y: pt.Mean}})
	if err != nil {
		return legendEntry{}, fmt.Errorf("reports: %w", err)
	}
	line.Color = col
	line.Width = vg.Points(1)
	line.Dashes = infDashes
	plt.Add(line)
	if panel != "" {
		at += ", " + panel // the panels' lines differ
	}
	value := formatMeanHalf(pt.Mean, p.Band.half(pt))
	if isBytes(p.Y) {
		// In the axis's unit (mibTicks), not in bytes.
		value = formatMeanHalf(pt.Mean/mib, p.Band.half(pt)/mib) + " MiB"
	}
	name := fmt.Sprintf("%s (%s): %s", s.Name, at, value)
	return legendEntry{name: name, thumbs: []plot.Thumbnailer{line}, inf: true}, nil
}

// infDashes is the dotted pattern of the reference lines at x = +Inf,
// which no series line uses.
var infDashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}

// seriesDashes returns the dash pattern of the line of the series with
// style index k: solid for the first, then patterns that stay apart from
// each other and from infDashes, so that lines that overlap (and share
// neighbouring colours) can be told apart by their dashes as well as by
// their markers.
func seriesDashes(k int) []vg.Length {
	patterns := [][]float64{nil, {7, 3}, {12, 3, 3, 3}, {4, 2}, {12, 3, 3, 3, 3, 3}, {9, 5}}
	pat := patterns[k%len(patterns)]
	out := make([]vg.Length, len(pat))
	for i, v := range pat {
		out[i] = vg.Points(v)
	}
	return out
}

// formatMeanHalf formats a mean and a band's half-width, the half-width
// to two significant digits and the mean to the same decimals: "48.8 ±
// 3.0"; the mean alone to three significant digits without a band.
func formatMeanHalf(mean, half float64) string {
	if half == 0 || math.IsNaN(half) {
		return strconv.FormatFloat(mean, 'g', 3, 64)
	}
	dec := max(0, 1-int(math.Floor(math.Log10(half))))
	return strconv.FormatFloat(mean, 'f', dec, 64) + " ± " + strconv.FormatFloat(half, 'f', dec, 64)
}

// barGroupWidth is the width of the bars at one category, side by side, in
// units of the distance between categories.
const barGroupWidth = 0.8

// drawBars adds to plt one bar per series and x category, with error bars,
// and returns the legend entries.
func (p *Plot) drawBars(plt *plot.Plot, series []Series) []legendEntry {
	var cats []float64
	for _, s := range series {
		for _, pt := range s.Points {
			if !slices.Contains(cats, pt.X) {
				cats = append(cats, pt.X)
			}
		}
		if s.Inf != nil && !slices.Contains(cats, math.Inf(1)) {
			cats = append(cats, math.Inf(1))
		}
	}
	slices.Sort(cats)
	ticks := make(plot.ConstantTicks, len(cats))
	for i, x := range cats {
		ticks[i] = plot.Tick{Value: float64(i), Label: formatKeyFloat(x)}
	}
	plt.X.Tick.Marker = ticks
	plt.X.Min, plt.X.Max = -0.5, float64(len(cats))-0.5

	width := barGroupWidth / float64(len(series))
	var entries []legendEntry
	for k, s := range series {
		col := plotutil.Color(s.style)
		pts := slices.Clone(s.Points)
		if s.Inf != nil {
			pts = append(pts, *s.Inf)
		}
		var thumb *plotter.Polygon
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, pt := range pts {
			centre := float64(slices.Index(cats, pt.X)) + float64((float64(k)-float64(float64(len(series)-1)/2))*width)
			half := float64(width / 2)
			bar, err := plotter.NewPolygon(plotter.XYs{
				{X: centre - half, Y: 0}, {X: centre + half, Y: 0},
				{X: centre + half, Y: pt.Mean}, {X: centre - half, Y: pt.Mean},
			})
			if err != nil {
				// The values are finite by construction.
				panic("reports: bad bar: " + err.Error())
			}
			bar.Color = withAlpha(col, 0xc0)
			bar.LineStyle.Color = col
			bar.LineStyle.Width = vg.Points(0.5)
			plt.Add(bar)
			thumb = bar
			h := p.Band.half(pt)
			xys = append(xys, plotter.XY{X: centre, Y: pt.Mean})
			errs = append(errs, struct{ Low, High float64 }{h, h})
		}
		if bars, err := plotter.NewYErrorBars(errorXYs{XYs: xys, YErrors: errs}); err == nil && slices.ContainsFunc(errs, func(e struct{ Low, High float64 }) bool { return e.High > 0 }) {
			bars.Color = color.Black
			plt.Add(bars)
		}
		if thumb != nil {
			entries = append(entries, legendEntry{name: s.Name, thumbs: []plot.Thumbnailer{thumb}})
		}
	}
	return entries
}

// legendGap is the space between the plot and its legend and after the
// legend.
const legendGap = 8 // points

// Draw draws the figure on c: the title, the panels, to their right the
// legend under its title (or a heatmap's colour bar), and under them the
// note.
func (f *Figure) Draw(c draw.Canvas) {
	top := c
	base := f.Panels[0].Plot.Title.TextStyle
	if f.Title != "" {
		sty := base
		sty.Font.Size *= 1.15
		descent := sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y + descent}, f.Title)
		top.Max.Y -= sty.Rectangle(f.Title).Size().Y + vg.Points(4)
	}
	if f.Note != "" {
		sty := base
		sty.Font.Size *= 0.8
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
		h := sty.Rectangle(f.Note).Size().Y
		c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(6), Y: c.Min.Y + sty.FontExtents().Descent + vg.Points(3)}, f.Note)
		top.Min.Y += h + vg.Points(6)
	}
	gap := vg.Points(legendGap)
	width := f.Legend.Rectangle(top).Size().X
	titleSty := f.Legend.TextStyle
	titleSty.XAlign, titleSty.YAlign = draw.XLeft, draw.YBottom
	if f.LegendTitle != "" && width > 0 {
		width = max(width, titleSty.Rectangle(f.LegendTitle).Size().X)
	}
	if f.ColorBar != nil {
		width = colorBarWidth - 2*gap
	}
	area := top
	if width > 0 {
		area = draw.Crop(top, 0, -(width + 2*gap), 0, 0)
	}
	cols := min(len(f.Panels), maxPanelCols)
	rows := (len(f.Panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for k, panel := range f.Panels {
		grid[k/cols][k%cols] = panel.Plot
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12)}
	canvases := plot.Align(grid, tiles, area)
	for k, panel := range f.Panels {
		panel.Plot.Draw(canvases[k/cols][k%cols])
	}
	if width == 0 {
		return
	}
	lc := draw.Crop(top, top.Size().X-width-gap, -gap, 0, 0)
	// Align the legend's top with the top of the first panel's data area.
	if t := f.Panels[0].Plot.Title; t.Text != "" {
		lc.Max.Y -= t.TextStyle.Rectangle(t.Text).Size().Y + t.Padding
	}
	lc.Max.Y -= f.Panels[0].Plot.Y.Padding
	if f.ColorBar != nil {
		// As tall as the first row of panels.
		first := canvases[0][0]
		lc.Min.Y = first.Min.Y
		f.ColorBar.Draw(lc)
		return
	}
	if f.LegendTitle != "" {
		h := titleSty.Rectangle(f.LegendTitle).Size().Y
		lc.FillText(titleSty, vg.Point{X: lc.Min.X, Y: lc.Max.Y - h + titleSty.FontExtents().Descent}, f.LegendTitle)
		lc.Max.Y -= h + vg.Points(3)
	}
	f.Legend.Draw(lc)
}

// bandPolygon returns the band around pts (in ascending x), or nil if it
// has no width anywhere.
func (p *Plot) bandPolygon(pts []Point) *plotter.Polygon {
	width := false
	for _, pt := range pts {
		width = width || p.Band.half(pt) > 0
	}
	if !width {
		return nil
	}
	ring := make(plotter.XYs, 0, 2*len(pts))
	for _, pt := range pts {
		ring = append(ring, plotter.XY{X: pt.X, Y: pt.Mean + p.Band.half(pt)})
	}
	for k := len(pts) - 1; k >= 0; k-- {
		ring = append(ring, plotter.XY{X: pts[k].X, Y: pts[k].Mean - p.Band.half(pts[k])})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		// The values are finite by construction.
		panic("reports: bad band polygon: " + err.Error())
	}
	return poly
}

// errorXYs are points with vertical error bars.
type errorXYs struct {
	plotter.XYs
	plotter.YErrors
}

// errorBars returns the error bars of pts at xys, or nil if no point has
// any.
func (p *Plot) errorBars(xys plotter.XYs, pts []Point) *plotter.YErrorBars {
	e := errorXYs{XYs: xys, YErrors: make(plotter.YErrors, len(pts))}
	some := false
	for k, pt := range pts {
		h := p.Band.half(pt)
		e.YErrors[k].Low, e.YErrors[k].High = h, h
		some = some || h > 0
	}
	if !some {
		return nil
	}
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		panic("reports: bad error bars: " + err.Error())
	}
	return bars
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// PlotFormats are the formats Figure.Save writes by default.
var PlotFormats = []string{"png", "svg", "pdf"}

// WriteTo writes the figure to w in format, one of "png", "svg" or "pdf"
// (or any other format gonum/plot knows, such as "eps" or "tex"). PNG is
// rendered at 150 dpi.
func (f *Figure) WriteTo(w io.Writer, format string) error {
	var wt io.WriterTo
	if format == "png" {
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(pngDPI))
		f.Draw(draw.New(c))
		wt = vgimg.PngCanvas{Canvas: c}
	} else {
		c, err := draw.NewFormattedCanvas(f.Width, f.Height, format)
		if err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		f.Draw(draw.New(c))
		wt = c
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// Save writes the figure to prefix.png, prefix.svg and prefix.pdf, or to the
// given formats, and returns the paths written. Each file is written
// atomically: to a temporary file in the same directory, then renamed.
func (f *Figure) Save(prefix string, formats ...string) ([]string, error) {
	if len(formats) == 0 {
		formats = PlotFormats
	}
	var paths []string
	for _, format := range formats {
		var buf bytes.Buffer
		if err := f.WriteTo(&buf, format); err != nil {
			return paths, err
		}
		path := prefix + "." + format
		if err := results.WriteFile(path, buf.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
