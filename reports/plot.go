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

// Plot describes a line plot of a metric against a numeric column: one line
// per series with markers at the mean over the runs that share an x, and a
// shaded band of ±1 sample standard deviation around it. Runs at x = +Inf are
// drawn as a dashed horizontal line per series (see the package
// documentation).
type Plot struct {
	// X is the Float column on the horizontal axis, for example
	// "epsilon_target".
	X string
	// Y is the Float column aggregated on the vertical axis, for example
	// "acc".
	Y string
	// Series are the columns whose values split the runs into lines, for
	// example {"method"}. If empty, all runs form a single line.
	Series []string
	// Where keeps only the runs whose column (the key) has the given value;
	// see Table.Where. Nil keeps every run.
	Where map[string]string
	// Title is the plot's title. If empty, the plot has none.
	Title string
	// XLabel and YLabel are the axis labels. If empty, the labels of X and Y
	// are used (see Labels).
	XLabel, YLabel string
	// Labels override the labels of columns; see Table.Labels.
	Labels map[string]string
	// LogX draws the horizontal axis on a log scale; runs with x ≤ 0 are then
	// left out and counted in the warnings.
	LogX bool
	// Scale multiplies every y value before aggregation. If Scale is 0, it is
	// defaulted to 1.
	Scale float64
	// MinSeeds is the number of runs per point below which the figure warns.
	// If MinSeeds is 0, it is defaulted to 10; a negative MinSeeds never warns.
	MinSeeds int
	// Width and Height are the size of the figure. If zero, they are
	// defaulted to 7 and 4 inches; the legend takes the right of the width.
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

// Series is one line of a figure.
type Series struct {
	// Name is the series key, its values joined by spaces.
	Name string
	// Points are the points at finite x, in ascending x.
	Points []Point
	// Inf is the point at x = +Inf, or nil if the series has no such runs.
	Inf *Point

	style int // the index of the series' colour and marker
}

// Figure is a built plot: the aggregated series, the gonum plot drawing
// them, its legend, and the warnings. The legend is drawn outside the plot,
// to its right, so that it never hides data.
type Figure struct {
	// Plot is the drawing without its legend; callers may restyle it before
	// saving.
	Plot *plot.Plot
	// Legend is the legend drawn to the right of Plot.
	Legend plot.Legend
	// Series holds the aggregated data, in legend order.
	Series []Series
	// Warnings are things the reader of the figure should know.
	Warnings []error
	// Width and Height are the size at which the figure is written.
	Width, Height vg.Length
}

// pngDPI is the resolution of PNG output.
const pngDPI = 150

// Build aggregates runs into the series of p and draws them. It returns an
// error if a column p names is missing or of the wrong kind, or if no run with
// a finite x and a y is left.
func (p *Plot) Build(runs *Runs) (*Figure, error) {
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
	// table, so that a method keeps its style across the plots of one
	// experiment whatever the filter.
	all := make([]int, runs.Len())
	for i := range all {
		all[i] = i
	}
	_, stylePos := series.groups(all)
	groups, _ := series.groups(kept)
	fig := &Figure{Width: p.Width, Height: p.Height}
	if fig.Width == 0 {
		fig.Width = 7 * vg.Inch
	}
	if fig.Height == 0 {
		fig.Height = 4 * vg.Inch
	}
	seed, hasSeed := runs.Column("seed")
	hasSeed = hasSeed && seed.Kind == Float
	minN, maxN := math.MaxInt, 0
	finite := false
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
				warnings = append(warnings, fmt.Errorf("point (%s; %s=%s) has several runs of seed %s: a swept column is neither x nor a series key",
					s.Name, p.X, formatKeyFloat(x), formatKeyFloat(dup)))
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
		fig.Series = append(fig.Series, s)
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
	fig.Plot, fig.Legend, err = p.draw(fig.Series)
	if err != nil {
		return nil, err
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

// bandAlpha is the opacity of the ±std bands.
const bandAlpha = 0x40

// draw returns a gonum plot of series, which have at least one finite point
// among them, and its legend.
func (p *Plot) draw(series []Series) (*plot.Plot, plot.Legend, error) {
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	plt := plot.New()
	plt.Title.Text = p.Title
	plt.X.Label.Text = p.XLabel
	if plt.X.Label.Text == "" {
		plt.X.Label.Text = label(p.Labels, p.X)
	}
	plt.Y.Label.Text = p.YLabel
	if plt.Y.Label.Text == "" {
		plt.Y.Label.Text = label(p.Labels, p.Y)
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
	if xmin == xmax {
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
	if len(xs) <= 12 {
		slices.Sort(xs)
		ticks := make(plot.ConstantTicks, len(xs))
		for i, x := range xs {
			ticks[i] = plot.Tick{Value: x, Label: formatKeyFloat(x)}
		}
		plt.X.Tick.Marker = ticks
	}

	var infEntries []func()
	for _, s := range series {
		col := plotutil.Color(s.style)
		band := withAlpha(col, bandAlpha)
		if len(s.Points) > 0 {
			if poly := bandPolygon(s.Points); poly != nil {
				poly.Color = band
				poly.LineStyle.Width = 0
				plt.Add(poly)
			}
			xys := make(plotter.XYs, len(s.Points))
			for k, pt := range s.Points {
				xys[k] = plotter.XY{X: pt.X, Y: pt.Mean}
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, legend, fmt.Errorf("reports: %w", err)
			}
			line.Color = col
			line.Width = vg.Points(1.5)
			points.Color = col
			points.Shape = plotutil.Shape(s.style)
			points.Radius = vg.Points(3)
			plt.Add(line, points)
			legend.Add(s.Name, line, points)
		}
		if s.Inf != nil {
			pt := *s.Inf
			if pt.N > 1 && pt.Std > 0 {
				rect, err := plotter.NewPolygon(plotter.XYs{
					{X: xmin, Y: pt.Mean - pt.Std}, {X: xmax, Y: pt.Mean - pt.Std},
					{X: xmax, Y: pt.Mean + pt.Std}, {X: xmin, Y: pt.Mean + pt.Std},
				})
				if err != nil {
					return nil, legend, fmt.Errorf("reports: %w", err)
				}
				rect.Color = withAlpha(col, bandAlpha/2)
				rect.LineStyle.Width = 0
				plt.Add(rect)
			}
			line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: pt.Mean}, {X: xmax, Y: pt.Mean}})
			if err != nil {
				return nil, legend, fmt.Errorf("reports: %w", err)
			}
			line.Color = col
			line.Width = vg.Points(1.5)
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			plt.Add(line)
			name := fmt.Sprintf("%s (%s = ∞)", s.Name, plt.X.Label.Text)
			infEntries = append(infEntries, func() { legend.Add(name, line) })
		}
	}
	// The lines at ∞ come last in the legend, below the sweeps.
	for _, add := range infEntries {
		add()
	}
	// Leave a margin above and below the data, so that no band touches the
	// frame.
	pad := (plt.Y.Max - plt.Y.Min) * 0.05
	if pad == 0 {
		pad = math.Max(math.Abs(plt.Y.Max)*0.05, 1e-3)
	}
	plt.Y.Min -= pad
	plt.Y.Max += pad
	return plt, legend, nil
}

// legendGap is the space between the plot and its legend and after the
// legend.
const legendGap = 8 // points

// Draw draws the figure, the plot and to its right the legend, on c.
func (f *Figure) Draw(c draw.Canvas) {
	width := f.Legend.Rectangle(c).Size().X
	if width == 0 {
		f.Plot.Draw(c)
		return
	}
	gap := vg.Points(legendGap)
	f.Plot.Draw(draw.Crop(c, 0, -(width + 2*gap), 0, 0))
	lc := draw.Crop(c, c.Size().X-width-gap, -gap, 0, 0)
	// Align the legend's top with the top of the data area.
	if t := f.Plot.Title; t.Text != "" {
		lc.Max.Y -= t.TextStyle.Rectangle(t.Text).Size().Y + t.Padding
	}
	lc.Max.Y -= f.Plot.Y.Padding
	f.Legend.Draw(lc)
}

// bandPolygon returns the ±std band around pts (in ascending x), or nil if
// no point has a spread.
func bandPolygon(pts []Point) *plotter.Polygon {
	spread := false
	for _, pt := range pts {
		spread = spread || pt.Std > 0
	}
	if !spread {
		return nil
	}
	ring := make(plotter.XYs, 0, 2*len(pts))
	for _, pt := range pts {
		ring = append(ring, plotter.XY{X: pt.X, Y: pt.Mean + pt.Std})
	}
	for k := len(pts) - 1; k >= 0; k-- {
		ring = append(ring, plotter.XY{X: pts[k].X, Y: pts[k].Mean - pts[k].Std})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		// The values are finite by construction.
		panic("reports: bad band polygon: " + err.Error())
	}
	return poly
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
