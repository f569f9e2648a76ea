// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A heatmap has one cell per value of X (across) and of Rows (down), two
// swept columns such as update ratio × token retention; a cell's colour is
// the mean of Y over the runs (seeds) that share its keys, on one colour
// scale (Moreland's smooth cool–warm map) for every panel, and the mean is
// written in the cell. Values of either column are categories, in the order
// of a table's keys (numbers ascending); a cell without runs is grey and
// empty.

// heatGrid is the cells of one panel, as plotter.GridXYZ wants them.
type heatGrid struct {
	cells [][]sample // [row][column]
}

func (h heatGrid) Dims() (c, r int)   { return len(h.cells[0]), len(h.cells) }
func (h heatGrid) Z(c, r int) float64 { return h.cells[r][c].Mean }
func (h heatGrid) X(c int) float64    { return float64(c) }
func (h heatGrid) Y(r int) float64    { return float64(r) }

// heatmapMissing is the colour of a cell without runs.
var heatmapMissing = color.Gray{Y: 0xe0}

// buildHeatmap builds a Heatmap plot.
func (p *Plot) buildHeatmap(runs *Runs) (*Figure, error) {
	ycol, err := floatColumn(runs, "y", p.Y)
	if err != nil {
		return nil, err
	}
	xs, err := newKeyer(runs, "x", []string{p.X})
	if err != nil {
		return nil, err
	}
	ys, err := newKeyer(runs, "rows", []string{p.Rows})
	if err != nil {
		return nil, err
	}
	_, facets, err := p.keyers(runs)
	if err != nil {
		return nil, err
	}
	sel, err := selectOK(runs, p.Where)
	if err != nil {
		return nil, err
	}
	fig := &Figure{Title: p.title(""), Warnings: sel.warnings}
	if w := countMissing(ycol, sel.ok, p.Y); w != nil {
		fig.Warnings = append(fig.Warnings, w)
	}
	colGroups, colPos := xs.groups(sel.all)
	rowGroups, rowPos := ys.groups(sel.all)
	agg := newAggregator(runs, p.Scale)
	facetGroups, _ := facets.groups(sel.ok)
	grids := make([]heatGrid, len(facetGroups))
	zmin, zmax := math.Inf(1), math.Inf(-1)
	for f, fg := range facetGroups {
		fig.Panels = append(fig.Panels, Panel{Name: facets.key(fg.first).String()})
		byCell := make([][][]int, len(rowGroups))
		for r := range byCell {
			byCell[r] = make([][]int, len(colGroups))
		}
		for _, i := range fg.runs {
			r, c := rowPos[ys.id(i)], colPos[xs.id(i)]
			byCell[r][c] = append(byCell[r][c], i)
		}
		grids[f].cells = make([][]sample, len(rowGroups))
		for r := range byCell {
			for c, idx := range byCell[r] {
				s := agg.add(ycol, idx, func() (string, string) {
					return fmt.Sprintf("cell (%s; %s, %s)", fig.Panels[f].Name, xs.header(p.Labels, colGroups[c].first)[0], ys.header(p.Labels, rowGroups[r].first)[0]),
						"a swept column is neither x, rows nor a facet key"
				})
				grids[f].cells[r] = append(grids[f].cells[r], s)
				if s.N > 0 {
					zmin, zmax = min(zmin, s.Mean), max(zmax, s.Mean)
				}
			}
		}
	}
	if math.IsInf(zmin, 1) {
		return nil, fmt.Errorf("reports: no runs with a %s to plot", p.Y)
	}
	fig.Warnings = append(fig.Warnings, agg.warnings(defaultMinSeeds(p.MinSeeds))...)
	if zmin == zmax {
		zmin, zmax = zmin-0.5, zmax+0.5
	}
	xticks, yticks := heatTicks(xs, colGroups), heatTicks(ys, rowGroups)
	for f := range fig.Panels {
		plt, err := p.drawHeatmap(grids[f], zmin, zmax, xticks, yticks)
		if err != nil {
			return nil, err
		}
		plt.Title.Text = fig.Panels[f].Name
		fig.Panels[f].Plot = plt
	}
	fig.Legend = plot.NewLegend()
	fig.ColorBar = p.colorBar(zmin, zmax)
	fig.Note = p.cellNote(grids)
	if p.Width == 0 {
		cols := min(len(fig.Panels), maxPanelCols)
		fig.Width = vg.Length(vg.Length(cols)*(1.5*vg.Inch+vg.Length(vg.Length(len(colGroups))*0.8*vg.Inch))) + colorBarWidth
	}
	return fig, nil
}

// colorBarWidth is the width a heatmap's colour bar takes, labels included.
const colorBarWidth = 1.3 * vg.Inch

// heatmapColors returns the colour map of a heatmap on [zmin, zmax].
func heatmapColors(zmin, zmax float64) palette.DivergingColorMap {
	cmap := moreland.SmoothBlueRed()
	cmap.SetMin(zmin)
	cmap.SetMax(zmax)
	return cmap
}

// colorBar returns the colour scale of a heatmap on [zmin, zmax], labelled
// with the metric and its unit.
func (p *Plot) colorBar(zmin, zmax float64) *plot.Plot {
	plt := plot.New()
	plt.HideX()
	plt.Y.Label.Text = AxisLabel(p.Labels, p.Y)
	plt.Add(&plotter.ColorBar{ColorMap: heatmapColors(zmin, zmax), Vertical: true})
	return plt
}

// cellNote says what a heatmap's cells are: "cells: mean over n = 3 runs
// (seeds); grey: no runs".
func (p *Plot) cellNote(grids []heatGrid) string {
	nmin, nmax, empty := math.MaxInt, 0, false
	for _, g := range grids {
		for _, row := range g.cells {
			for _, s := range row {
				if s.N == 0 {
					empty = true
					continue
				}
				nmin, nmax = min(nmin, s.N), max(nmax, s.N)
			}
		}
	}
	n := fmt.Sprintf("n = %d", nmax)
	if nmin != nmax {
		n = fmt.Sprintf("n = %d–%d", nmin, nmax)
	}
	note := fmt.Sprintf("each cell: the mean of %s over %s runs (seeds)", shortLabel(AxisLabel(p.Labels, p.Y)), n)
	if empty {
		note += "; grey: no runs"
	}
	return note
}

// heatTicks labels the categories of k's groups at 0, 1, ….
func heatTicks(k *keyer, gs []*group) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(gs))
	for j, g := range gs {
		ticks[j] = plot.Tick{Value: float64(j), Label: k.key(g.first)[0]}
	}
	return ticks
}

// drawHeatmap draws one panel of a heatmap on the colour scale [zmin, zmax].
func (p *Plot) drawHeatmap(g heatGrid, zmin, zmax float64, xticks, yticks plot.ConstantTicks) (*plot.Plot, error) {
	plt := plot.New()
	plt.X.Label.Text = p.XLabel
	if plt.X.Label.Text == "" {
		plt.X.Label.Text = AxisLabel(p.Labels, p.X)
	}
	plt.Y.Label.Text = p.YLabel
	if plt.Y.Label.Text == "" {
		plt.Y.Label.Text = AxisLabel(p.Labels, p.Rows)
	}
	plt.X.Tick.Marker, plt.Y.Tick.Marker = xticks, yticks
	cmap := heatmapColors(zmin, zmax)
	hm := plotter.NewHeatMap(g, cmap.Palette(255))
	hm.Min, hm.Max, hm.NaN = zmin, zmax, heatmapMissing
	plt.Add(hm)
	var text plotter.XYLabels
	var dark []bool
	for r, row := range g.cells {
		for c, s := range row {
			if s.N == 0 {
				continue
			}
			text.XYs = append(text.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			text.Labels = append(text.Labels, shortFloat(s.Mean))
			col, err := cmap.At(s.Mean)
			dark = append(dark, err == nil && luminance(col) < 0.5)
		}
	}
	if len(text.XYs) > 0 {
		labels, err := plotter.NewLabels(text)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		for k := range labels.TextStyle {
			labels.TextStyle[k].XAlign, labels.TextStyle[k].YAlign = draw.XCenter, draw.YCenter
			if dark[k] {
				labels.TextStyle[k].Color = color.White
			}
		}
		plt.Add(labels)
	}
	plt.X.Min, plt.X.Max = -0.5, float64(len(xticks))-0.5
	plt.Y.Min, plt.Y.Max = -0.5, float64(len(yticks))-0.5
	return plt, nil
}

// luminance returns the relative luminance of c in [0, 1] (ITU-R BT.601
// weights).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (float64(0.299*float64(r)) + float64(0.587*float64(g)) + float64(0.114*float64(b))) / 0xffff
}
