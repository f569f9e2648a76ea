// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A radar (Dual-Priv Fig. 4) has one spoke per metric of Plot.Metrics, or
// per value of X with Y as the metric, and one closed polygon per series
// whose vertex on a spoke is the series' mean there. Each spoke runs from
// min(0, smallest value) at the centre to the largest value of any series
// at its tip (mean plus band), written beside the spoke's label, so that
// metrics in different units share one drawing; with a single metric (the
// spokes are values of X) all spokes share one range. The band is a shaded
// ring between mean − band and mean + band.

// radarSpoke is one spoke: its label and how to aggregate a group of runs.
type radarSpoke struct {
	label string
	col   *Column
	keep  func(i int) bool // nil keeps every run
}

// radarSpokes returns the spokes of p over runs.
func (p *Plot) radarSpokes(runs *Runs, idx []int) ([]radarSpoke, error) {
	if len(p.Metrics) > 0 {
		spokes := make([]radarSpoke, len(p.Metrics))
		for k, m := range p.Metrics {
			c, err := floatColumn(runs, "metric", m)
			if err != nil {
				return nil, err
			}
			// A spoke names its setting; the title names the family.
			spokes[k] = radarSpoke{label: shortLabel(AxisLabel(p.Labels, m)), col: c}
		}
		return spokes, nil
	}
	ycol, err := floatColumn(runs, "y", p.Y)
	if err != nil {
		return nil, err
	}
	xs, err := newKeyer(runs, "x", []string{p.X})
	if err != nil {
		return nil, err
	}
	groups, _ := xs.groups(idx)
	if len(groups) < 3 {
		return nil, fmt.Errorf("reports: a radar plot needs three or more values of %s, have %d", p.X, len(groups))
	}
	var spokes []radarSpoke
	for _, g := range groups {
		id := xs.id(g.first)
		spokes = append(spokes, radarSpoke{
			label: xs.header(p.Labels, g.first)[0],
			col:   ycol,
			keep:  func(i int) bool { return xs.id(i) == id },
		})
	}
	return spokes, nil
}

// buildRadar builds a Radar plot.
func (p *Plot) buildRadar(runs *Runs) (*Figure, error) {
	series, facets, err := p.keyers(runs)
	if err != nil {
		return nil, err
	}
	sel, err := selectOK(runs, p.Where)
	if err != nil {
		return nil, err
	}
	spokes, err := p.radarSpokes(runs, sel.ok)
	if err != nil {
		return nil, err
	}
	stylePos := styles(runs, series)
	agg := newAggregator(runs, p.Scale)
	fig := &Figure{Title: p.title("Mean of each metric by " + p.legendTitle(p.Series)), LegendTitle: p.legendTitle(p.Series), Warnings: sel.warnings}
	facetGroups, _ := facets.groups(sel.ok)
	for _, fg := range facetGroups {
		panel := Panel{Name: facets.key(fg.first).String()}
		groups, _ := series.groups(fg.runs)
		for _, g := range groups {
			s := Series{Name: series.key(g.first).String(), style: stylePos[series.id(g.first)]}
			for k, sp := range spokes {
				var idx []int
				for _, i := range g.runs {
					if sp.keep == nil || sp.keep(i) {
						idx = append(idx, i)
					}
				}
				smp := agg.add(sp.col, idx, func() (string, string) {
					return fmt.Sprintf("spoke %s of %s", sp.label, s.Name), "a swept column is neither a series nor a facet key"
				})
				s.Points = append(s.Points, Point{X: float64(k), N: smp.N, Mean: smp.Mean, Std: smp.Std})
				if smp.N == 0 {
					fig.Warnings = append(fig.Warnings, fmt.Errorf("%s has no %s: its polygon skips that spoke", joinName(panel.Name, s.Name), sp.label))
				}
			}
			panel.Series = append(panel.Series, s)
		}
		fig.Panels = append(fig.Panels, panel)
	}
	if len(fig.Panels) == 0 {
		return nil, fmt.Errorf("reports: no finished runs to plot")
	}
	fig.Warnings = append(fig.Warnings, agg.warnings(defaultMinSeeds(p.MinSeeds))...)
	lo, hi := p.radarRanges(fig, spokes)
	var lb legendBuilder
	for k := range fig.Panels {
		panel := &fig.Panels[k]
		plt, entries, err := p.drawRadar(panel.Series, spokes, lo, hi)
		if err != nil {
			return nil, err
		}
		plt.Title.Text = panel.Name
		panel.Plot = plt
		lb.add(entries)
	}
	fig.Legend, fig.Entries = lb.legend()
	fig.Note = p.bandNote("shaded rings", fig.Panels)
	if p.Width == 0 && p.Height == 0 {
		cols := min(len(fig.Panels), maxPanelCols)
		rows := (len(fig.Panels) + cols - 1) / cols
		fig.Width = vg.Length(vg.Length(cols)*4.5*vg.Inch) + 2*vg.Inch
		fig.Height = vg.Length(rows) * 4.5 * vg.Inch
	}
	return fig, nil
}

// radarRanges returns the range of each spoke over every panel.
func (p *Plot) radarRanges(fig *Figure, spokes []radarSpoke) (lo, hi []float64) {
	lo, hi = make([]float64, len(spokes)), make([]float64, len(spokes))
	for k := range spokes {
		lo[k], hi[k] = 0, math.Inf(-1)
		for _, panel := range fig.Panels {
			for _, s := range panel.Series {
				pt := s.Points[k]
				if pt.N == 0 {
					continue
				}
				h := p.Band.half(pt)
				lo[k], hi[k] = min(lo[k], pt.Mean-h), max(hi[k], pt.Mean+h)
			}
		}
	}
	if len(p.Metrics) == 0 {
		// One metric: one range for every spoke.
		l, h := lo[0], hi[0]
		for k := range lo {
			l, h = min(l, lo[k]), max(h, hi[k])
		}
		for k := range lo {
			lo[k], hi[k] = l, h
		}
	}
	for k := range hi {
		if math.IsInf(hi[k], -1) || hi[k] <= lo[k] {
			hi[k] = lo[k] + 1
		}
	}
	return lo, hi
}

// radarXY returns the position of value v on spoke k of n, whose range is
// [lo, hi]: spoke 0 points up, the others follow clockwise.
func radarXY(k, n int, v, lo, hi float64) plotter.XY {
	r := math.Max(0, (v-lo)/(hi-lo))
	a := math.Pi/2 - 2*math.Pi*float64(k)/float64(n)
	return plotter.XY{X: r * math.Cos(a), Y: r * math.Sin(a)}
}

// radarGrey is the colour of the spokes and rings.
var radarGrey = color.Gray{Y: 0xc0}

// drawRadar draws the series of one panel.
func (p *Plot) drawRadar(series []Series, spokes []radarSpoke, lo, hi []float64) (*plot.Plot, []legendEntry, error) {
	plt := plot.New()
	plt.HideAxes()
	n := len(spokes)
	plt.X.Min, plt.X.Max, plt.Y.Min, plt.Y.Max = -1.8, 1.8, -1.3, 1.3
	for _, f := range []float64{0.25, 0.5, 0.75, 1} {
		ring := make(plotter.XYs, n+1)
		for k := range n + 1 {
			ring[k] = radarXY(k%n, n, lo[0]+float64(f*(hi[0]-lo[0])), lo[0], hi[0])
		}
		l, err := plotter.NewLine(ring)
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		l.Color, l.Width = radarGrey, vg.Points(0.5)
		plt.Add(l)
	}
	var tips plotter.XYLabels
	for k, sp := range spokes {
		end := radarXY(k, n, hi[k], lo[k], hi[k])
		l, err := plotter.NewLine(plotter.XYs{{}, end})
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		l.Color, l.Width = radarGrey, vg.Points(0.5)
		plt.Add(l)
		tip := radarXY(k, n, hi[k]+float64(0.05*(hi[k]-lo[k])), lo[k], hi[k])
		tips.XYs = append(tips.XYs, tip)
		tips.Labels = append(tips.Labels, fmt.Sprintf("%s\n%s–%s", sp.label, shortFloat(lo[k]), shortFloat(hi[k])))
	}
	labels, err := plotter.NewLabels(tips)
	if err != nil {
		return nil, nil, fmt.Errorf("reports: %w", err)
	}
	for k, xy := range tips.XYs {
		// Labels lean away from the centre, so that they never cover
		// the polygons.
		sty := &labels.TextStyle[k]
		sty.Font.Size = vg.Points(8)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		switch {
		case xy.X > 0.2:
			sty.XAlign = draw.XLeft
		case xy.X < -0.2:
			sty.XAlign = draw.XRight
		case xy.Y > 0:
			sty.YAlign = draw.YBottom
		default:
			sty.YAlign = draw.YTop
		}
	}
	plt.Add(labels)
	var entries []legendEntry
	for _, s := range series {
		e, err := p.radarPolygon(plt, s, lo, hi)
		if err != nil {
			return nil, nil, err
		}
		if e != nil {
			entries = append(entries, *e)
		}
	}
	return plt, entries, nil
}

// radarPolygon adds the polygon (and band) of s to plt, through the spokes
// where s has values; nil if it has fewer than two.
func (p *Plot) radarPolygon(plt *plot.Plot, s Series, lo, hi []float64) (*legendEntry, error) {
	n := len(s.Points)
	col := plotutil.Color(s.style)
	var mean, outer, inner plotter.XYs
	band := false
	for k, pt := range s.Points {
		if pt.N == 0 {
			continue
		}
		h := p.Band.half(pt)
		band = band || h > 0
		mean = append(mean, radarXY(k, n, pt.Mean, lo[k], hi[k]))
		outer = append(outer, radarXY(k, n, pt.Mean+h, lo[k], hi[k]))
		inner = append(inner, radarXY(k, n, pt.Mean-h, lo[k], hi[k]))
	}
	if len(mean) < 2 {
		return nil, nil
	}
	slices.Reverse(inner)
	if band {
		ring, err := plotter.NewPolygon(outer, inner)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		ring.Color = withAlpha(col, bandAlpha)
		ring.LineStyle.Width = 0
		plt.Add(ring)
	}
	poly, err := plotter.NewPolygon(mean)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	poly.Color = withAlpha(col, 0x20)
	poly.LineStyle.Color, poly.LineStyle.Width = col, vg.Points(1.5)
	poly.LineStyle.Dashes = seriesDashes(s.style)
	plt.Add(poly)
	points, err := plotter.NewScatter(mean)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	points.Color, points.Shape, points.Radius = col, plotutil.Shape(s.style), vg.Points(3)
	plt.Add(points)
	thumb, err := plotter.NewLine(mean)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	thumb.Color, thumb.Width = col, vg.Points(1.5)
	return &legendEntry{name: s.Name, thumbs: []plot.Thumbnailer{thumb, points}}, nil
}

// shortFloat formats v with three significant digits.
func shortFloat(v float64) string { return fmt.Sprintf("%.3g", v) }
