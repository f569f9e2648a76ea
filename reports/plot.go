// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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
)

// String returns "line" or "scatter".
func (k PlotKind) String() string {
	switch k {
	case Line:
		return "line"
	case Scatter:
		return "scatter"
	case Bar:
		return "bar"
	}
	return "PlotKind(" + strconv.Itoa(int(k)) + ")"
}

// ParsePlotKind returns the kind named s: "line" (or ""), "scatter" or
// "bar".
func ParsePlotKind(s string) (PlotKind, error) {
	switch s {
	case "", "line":
		return Line, nil
	case "scatter":
		return Scatter, nil
	case "bar":
		return Bar, nil
	}
	return 0, fmt.Errorf("reports: unknown plot kind %q (want line, scatter or bar)", s)
}

// Plot describes a plot of a metric against a numeric column: one series
// per value of the series columns, each point the mean over the runs that
// share an x, with an error band (±1 sample standard deviation by default);
// one panel per value of the facet columns, side by side with a shared y
// axis and one legend. Runs at x = +Inf are drawn as a dashed horizontal
// line per series (see the package documentation).
type Plot struct {
	// X is the Float column on the horizontal axis, for example
	// "epsilon_target".
	X string
	// Y is the Float column aggregated on the vertical axis, for example
	// "acc".
	Y string
	// Series are the columns whose values split the runs into lines, for
	// example {"method"}. If empty, all runs of a panel form a single line.
	Series []string
	// Facets are the columns whose values split the runs into panels, for
	// example {"task"}. If empty, the figure has a single panel.
	Facets []string
	// Where keeps only the runs whose column (the key) has the given value;
	// see Table.Where. Nil keeps every run.
	Where map[string]string
	// Kind is the kind of plot; the zero value is Line.
	Kind PlotKind
	// Band is the error band; the zero value is BandStd.
	Band Band
	// Title is the figure's title. If empty, the figure has none.
	Title string
	// XLabel and YLabel are the axis labels. If empty, the labels of X and Y
	// are used (see Labels).
	XLabel, YLabel string
	// Labels override the labels of columns; see Table.Labels.
	Labels map[string]string
	// LogX draws the horizontal axis on a log scale; runs with x ≤ 0 are then
	// left out and counted in the warnings. It is an error with Bar.
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
	// panels per row).
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
	// Points are the points at finite x, in ascending x.
	Points []Point
	// Inf is the point at x = +Inf, or nil if the series has no such runs.
	Inf *Point

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
// their right so that it never hides data, and the warnings.
type Figure struct {
	// Title is the figure's title, drawn above the panels.
	Title string
	// Panels are the panels, left to right and top to bottom.
	Panels []Panel
	// Legend is the legend drawn to the right of the panels.
	Legend plot.Legend
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
// returns an error if a column p names is missing or of the wrong kind, or
// if no run with a finite x and a y is left.
func (p *Plot) Build(runs *Runs) (*Figure, error) {
	if p.Kind != Line && p.Kind != Scatter && p.Kind != Bar {
		return nil, fmt.Errorf("reports: unknown plot kind %d", p.Kind)
	}
	if p.Kind == Bar && p.LogX {
		return nil, errors.New("reports: a bar plot has no log x axis: its x values are categories")
	}
	if p.Band != BandStd && p.Band != BandSEM && p.Band != BandNone {
		return nil, fmt.Errorf("reports: unknown band %d", p.Band)
	}
	xcol, err := floatColumn(runs, "x", p.X)
	if err != nil {
		return nil, err
	}
	ycol, err := floatColumn(runs, "y", p.Y)
	if err != nil {
		return nil, err
	}
	series, err := newKeyer(runs, "series", p.Series)
	if err != nil {
		return nil, err
	}
	facets, err := newKeyer(runs, "facet", p.Facets)
	if err != nil {
		return nil, err
	}
	scale := p.Scale
	if scale == 0 {
		scale = 1
	}
	minSeeds := p.MinSeeds
	if minSeeds == 0 {
		minSeeds = 10
	}
	idx, err := selectRuns(runs, p.Where)
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return nil, errors.New("reports: no runs left after the where filter")
	}
	good, warnings := okRuns(runs, idx)

	var noY, noX, nonPositive, negInf int
	var kept []int
	for _, i := range good {
		x, y := xcol.Floats[i], ycol.Floats[i]
		switch {
		case math.IsNaN(y):
			noY++
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

	// Colours and markers follow a series' place among all runs of the
	// table, so that a method keeps its style across the panels and plots of
	// one experiment whatever the filter.
	all := make([]int, runs.Len())
	for i := range all {
		all[i] = i
	}
	_, stylePos := series.groups(all)
	seed, hasSeed := runs.Column("seed")
	hasSeed = hasSeed && seed.Kind == Float

	fig := &Figure{Title: p.Title}
	minN, maxN := math.MaxInt, 0
	finite := false
	facetGroups, _ := facets.groups(kept)
	for _, fg := range facetGroups {
		panel := Panel{Name: facets.key(fg.first).String()}
		groups, _ := series.groups(fg.runs)
		for _, g := range groups {
			byX := make(map[float64][]int)
			for _, i := range g.runs {
				x := normalise(xcol.Floats[i])
				byX[x] = append(byX[x], i)
			}
			xs := make([]float64, 0, len(byX))
			for x := range byX {
				xs = append(xs, x)
			}
			slices.Sort(xs)
			s := Series{Name: series.key(g.first).String(), style: stylePos[series.id(g.first)]}
			if len(p.Series) == 0 {
				s.Name = label(p.Labels, p.Y)
			}
			for _, x := range xs {
				ys := make([]float64, len(byX[x]))
				var seeds []float64
				for k, i := range byX[x] {
					ys[k] = ycol.Floats[i] * scale
					if hasSeed {
						seeds = append(seeds, seed.Floats[i])
					}
				}
				if dup, ok := duplicate(seeds); ok {
					where := s.Name
					if panel.Name != "" {
						where = panel.Name + " " + where
					}
					warnings = append(warnings, fmt.Errorf("point (%s; %s=%s) has several runs of seed %s: a swept column is neither x, a series nor a facet key",
						where, p.X, formatKeyFloat(x), formatKeyFloat(dup)))
				}
				mean, std := meanStd(ys)
				pt := Point{X: x, N: len(ys), Mean: mean, Std: std}
				minN, maxN = min(minN, pt.N), max(maxN, pt.N)
				if math.IsInf(x, 1) {
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
	if minSeeds > 0 && minN < minSeeds {
		n := strconv.Itoa(minN)
		if minN != maxN {
			n += "–" + strconv.Itoa(maxN)
		}
		warnings = append(warnings, fmt.Errorf("n=%s seeds < %d", n, minSeeds))
	}
	fig.Warnings = warnings

	// Draw, then share one y range among the panels.
	fig.Legend = plot.NewLegend()
	fig.Legend.Top, fig.Legend.Left = true, true
	var legendNames, infNames []string
	var infEntries []func()
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for k := range fig.Panels {
		panel := &fig.Panels[k]
		plt, entries, err := p.draw(panel.Series, len(p.Facets) > 0)
		if err != nil {
			return nil, err
		}
		plt.Title.Text = panel.Name
		panel.Plot = plt
		ymin, ymax = min(ymin, plt.Y.Min), max(ymax, plt.Y.Max)
		for _, e := range entries {
			switch {
			case e.inf && !slices.Contains(infNames, e.name):
				infNames = append(infNames, e.name)
				infEntries = append(infEntries, func() { fig.Legend.Add(e.name, e.thumbs...) })
			case !e.inf && !slices.Contains(legendNames, e.name):
				legendNames = append(legendNames, e.name)
				fig.Legend.Add(e.name, e.thumbs...)
			}
		}
	}
	// The lines at ∞ come last in the legend, below the sweeps.
	for _, add := range infEntries {
		add()
	}
	// Leave a margin above and below the data, so that no band touches the
	// frame.
	pad := (ymax - ymin) * 0.05
	if pad == 0 {
		pad = math.Max(math.Abs(ymax)*0.05, 1e-3)
	}
	for _, panel := range fig.Panels {
		panel.Plot.Y.Min, panel.Plot.Y.Max = ymin-pad, ymax+pad
	}

	cols := min(len(fig.Panels), maxPanelCols)
	rows := (len(fig.Panels) + cols - 1) / cols
	fig.Width, fig.Height = p.Width, p.Height
	if fig.Width == 0 {
		panelW := 5 * vg.Inch
		if len(fig.Panels) > 1 {
			panelW = 4 * vg.Inch
		}
		fig.Width = vg.Length(cols)*panelW + 2*vg.Inch
	}
	if fig.Height == 0 {
		fig.Height = vg.Length(rows) * 4 * vg.Inch
	}
	return fig, nil
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

// legendEntry is one entry of a panel's legend.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
	inf    bool // a line at x = +Inf
}

// draw returns a gonum plot of series, which may have no finite point when
// the figure has several panels, and its legend entries.
func (p *Plot) draw(series []Series, faceted bool) (*plot.Plot, []legendEntry, error) {
	plt := plot.New()
	plt.X.Label.Text = p.XLabel
	if plt.X.Label.Text == "" {
		plt.X.Label.Text = label(p.Labels, p.X)
	}
	plt.Y.Label.Text = p.YLabel
	if plt.Y.Label.Text == "" {
		plt.Y.Label.Text = label(p.Labels, p.Y)
	}
	if p.Kind == Bar {
		grid := plotter.NewGrid()
		grid.Vertical.Width = 0
		plt.Add(grid)
		entries := p.drawBars(plt, series)
		return plt, entries, nil
	}
	plt.Add(plotter.NewGrid())

	// The horizontal extent of the dashed lines at x = +Inf.
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
		col := plotutil.Color(s.style)
		if len(s.Points) > 0 {
			xys := make(plotter.XYs, len(s.Points))
			for k, pt := range s.Points {
				xys[k] = plotter.XY{X: pt.X, Y: pt.Mean}
			}
			points, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, nil, fmt.Errorf("reports: %w", err)
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
					return nil, nil, fmt.Errorf("reports: %w", err)
				}
				line.Color = col
				line.Width = vg.Points(1.5)
				plt.Add(line)
				thumbs = []plot.Thumbnailer{line, points}
			case Scatter:
				if bars := p.errorBars(xys, s.Points); bars != nil {
					bars.Color = col
					plt.Add(bars)
				}
			}
			plt.Add(points)
			entries = append(entries, legendEntry{name: s.Name, thumbs: thumbs})
		}
		if s.Inf != nil {
			pt := *s.Inf
			if h := p.Band.half(pt); h > 0 {
				rect, err := plotter.NewPolygon(plotter.XYs{
					{X: xmin, Y: pt.Mean - h}, {X: xmax, Y: pt.Mean - h},
					{X: xmax, Y: pt.Mean + h}, {X: xmin, Y: pt.Mean + h},
				})
				if err != nil {
					return nil, nil, fmt.Errorf("reports: %w", err)
				}
				rect.Color = withAlpha(col, bandAlpha/2)
				rect.LineStyle.Width = 0
				plt.Add(rect)
			}
			line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: pt.Mean}, {X: xmax, Y: pt.Mean}})
			if err != nil {
				return nil, nil, fmt.Errorf("reports: %w", err)
			}
			line.Color = col
			line.Width = vg.Points(1.5)
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			plt.Add(line)
			name := fmt.Sprintf("%s (%s = ∞)", s.Name, plt.X.Label.Text)
			infEntries = append(infEntries, legendEntry{name: name, thumbs: []plot.Thumbnailer{line}, inf: true})
		}
	}
	if len(xs) == 0 {
		plt.X.Min, plt.X.Max = xmin, xmax
	}
	return plt, append(entries, infEntries...), nil
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
			centre := float64(slices.Index(cats, pt.X)) + (float64(k)-float64(len(series)-1)/2)*width
			bar, err := plotter.NewPolygon(plotter.XYs{
				{X: centre - width/2, Y: 0}, {X: centre + width/2, Y: 0},
				{X: centre + width/2, Y: pt.Mean}, {X: centre - width/2, Y: pt.Mean},
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

// Draw draws the figure on c: the title, the panels, and to their right the
// legend.
func (f *Figure) Draw(c draw.Canvas) {
	top := c
	if f.Title != "" {
		sty := f.Panels[0].Plot.Title.TextStyle
		sty.Font.Size *= 1.15
		descent := sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y + descent}, f.Title)
		top.Max.Y -= sty.Rectangle(f.Title).Size().Y + vg.Points(4)
	}
	width := f.Legend.Rectangle(top).Size().X
	gap := vg.Points(legendGap)
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
		if err := writeFileAtomic(path, buf.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed, so that path never holds a partial file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}
