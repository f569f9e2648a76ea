// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ImagesDir is the folder inside a run's folder where a run writes the
// images an ImageGrid shows: ImagesDir/<name>.png, PNG files of at most
// MaxImageSide pixels a side, named by what they show (the gradient-
// inversion attack writes, say, b1-orig-0.png and b1-recon-0.png).
// Names are [a-z0-9][a-z0-9_.-]*, so that a spec can list them.
const ImagesDir = "images"

// MaxImageSide bounds the width and height of an image read for a grid,
// and MaxGridRows the rows of one grid (runs beyond it are left out and
// counted in the warnings).
const (
	MaxImageSide = 1024
	MaxGridRows  = 64
)

// gridCell is the size of one image of a grid, and gridGap the space around
// it as a fraction of the cell.
const (
	gridCell = 0.9 * vg.Inch
	gridGap  = 0.06
)

// An image grid has one row per run (its series key and seed), in the order
// of a table's keys, and one column per image name. A missing image is left
// blank and counted in the warnings.

// gridRow is one row of an image grid.
type gridRow struct {
	label  string
	images []image.Image // nil where missing
}

// buildGrid builds an ImageGrid plot.
func (p *Plot) buildGrid(runs *Runs) (*Figure, error) {
	if len(p.Facets) > 0 {
		return nil, errors.New("reports: a grid plot has no facets: filter with where, one grid per value")
	}
	ids, ok := runs.Column("run_id")
	if !ok || ids.Kind != String {
		return nil, errors.New("reports: a grid plot needs the run_id column of the run table")
	}
	names := append(p.Series, "seed")
	if _, ok := runs.Column("seed"); !ok {
		names = p.Series
	}
	rows, err := newKeyer(runs, "series", names)
	if err != nil {
		return nil, err
	}
	sel, err := selectOK(runs, p.Where)
	if err != nil {
		return nil, err
	}
	fig := &Figure{Title: p.title("Images by " + p.legendTitle(p.Series) + " and seed"), Warnings: sel.warnings}
	groups, _ := rows.groups(sel.ok)
	var order []int
	for _, g := range groups {
		order = append(order, g.runs...)
	}
	if len(order) == 0 {
		return nil, errors.New("reports: no finished runs to show")
	}
	if len(order) > MaxGridRows {
		fig.Warnings = append(fig.Warnings, fmt.Errorf("%d runs left out: a grid shows at most %d", len(order)-MaxGridRows, MaxGridRows))
		order = order[:MaxGridRows]
	}
	images := p.Images
	if len(images) == 0 {
		images, err = listImages(filepath.Join(p.RunDirs, ids.Strings[order[0]], ImagesDir))
		if err != nil {
			return nil, err
		}
	}
	var grid []gridRow
	missing := 0
	labels := make(map[string]int)
	for _, i := range order {
		row := gridRow{label: Key(rows.header(p.Labels, i)).String()}
		if n := labels[row.label]; n == 1 {
			fig.Warnings = append(fig.Warnings, fmt.Errorf("row %s has several runs of its seed: a swept column is neither a series key nor the seed", row.label))
		}
		labels[row.label]++
		for _, name := range images {
			img, err := readImage(filepath.Join(p.RunDirs, ids.Strings[i], ImagesDir, name+".png"))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				missing++
			case err != nil:
				fig.Warnings = append(fig.Warnings, fmt.Errorf("run %s: %v", ids.Strings[i], err))
			}
			row.images = append(row.images, img)
		}
		grid = append(grid, row)
	}
	if missing > 0 {
		fig.Warnings = append(fig.Warnings, fmt.Errorf("%d %s missing", missing, plural(missing, "image is", "images are")))
	}
	plt := drawGrid(grid, images)
	fig.Panels = []Panel{{Plot: plt}}
	fig.Legend = plot.NewLegend()
	if p.Width == 0 && p.Height == 0 {
		// Square cells: the row labels' width, then one cell per image.
		var labelW vg.Length
		for _, row := range grid {
			labelW = max(labelW, plt.Y.Tick.Label.Width(row.label))
		}
		fig.Width = labelW + plt.Y.Tick.Label.Font.Size + vg.Length(vg.Length(len(images))*gridCell)
		fig.Height = 2*plt.X.Tick.Label.Font.Size + vg.Length(vg.Length(len(grid))*gridCell)
		if p.Title != "" {
			fig.Height += 2 * plt.Title.TextStyle.Font.Size
			// A title wider than the cells widens the figure rather than
			// being cut at its edges.
			fig.Width = max(fig.Width, plt.Title.TextStyle.Rectangle(p.Title).Size().X+plt.Title.TextStyle.Font.Size)
		}
	}
	return fig, nil
}

// listImages returns the names of the PNG files in dir, sorted.
func listImages(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reports: grid: %w", err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".png"); ok && e.Type().IsRegular() {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("reports: grid: no .png files in %s", dir)
	}
	slices.Sort(names)
	return names, nil
}

// readImage decodes the PNG file at path, checking its size before
// decoding it.
func readImage(path string) (image.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	if cfg.Width > MaxImageSide || cfg.Height > MaxImageSide {
		return nil, fmt.Errorf("%s: %d×%d pixels, more than %d a side", filepath.Base(path), cfg.Width, cfg.Height, MaxImageSide)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	return img, nil
}

// drawGrid draws the images of rows, column c of row r in the unit square
// [c, c+1] × [−r−1, −r], the names along the top and the row labels to the
// left.
func drawGrid(rows []gridRow, names []string) *plot.Plot {
	plt := plot.New()
	xt := make(plot.ConstantTicks, len(names))
	for c, name := range names {
		xt[c] = plot.Tick{Value: float64(c) + 0.5, Label: name}
	}
	yt := make(plot.ConstantTicks, len(rows))
	for r, row := range rows {
		yt[r] = plot.Tick{Value: -float64(r) - 0.5, Label: row.label}
		for c, img := range row.images {
			if img == nil {
				continue
			}
			x, y := float64(c), -float64(r)-1
			plt.Add(plotter.NewImage(img, x+gridGap, y+gridGap, x+1-gridGap, y+1-gridGap))
		}
	}
	plt.X.Tick.Marker, plt.Y.Tick.Marker = xt, yt
	plt.X.Min, plt.X.Max = 0, float64(len(names))
	plt.Y.Min, plt.Y.Max = -float64(len(rows)), 0
	for _, a := range []*plot.Axis{&plt.X, &plt.Y} {
		a.LineStyle.Width = 0
		a.Tick.LineStyle.Width = 0
		a.Padding = 0
	}
	return plt
}
