// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/repro-dp/repro/internal/results"
)

// A ROC plot draws, per series, the membership-inference ROC curve on
// log-log axes (Carlini et al., "Membership Inference Attacks From First
// Principles", IEEE S&P 2022, §III: the TPR at low FPR is what matters),
// with the diagonal TPR = FPR of a random guess. Each run's curve comes from
// the per-example scores it wrote (scores.parquet: a higher score means
// "more likely a member"); the curves of the runs (seeds) of a series are
// read at log-spaced FPRs, TPR(f) being the largest TPR of a threshold
// whose FPR is at most f, and their mean is drawn with the band. Each panel
// lists the mean AUC of its series in its lower right corner. The FPR axis starts at the smallest FPR the
// runs can resolve, 1 over the most non-members; TPRs below it are drawn at
// it.

// rocGridPoints is the number of log-spaced FPRs per decade.
const rocGridPoints = 8

// rocCurve is the ROC curve of one run and attack.
type rocCurve struct {
	fpr, tpr []float64 // ascending, from (0, 0) to (1, 1)
	auc      float64
	negs     int
}

// newROC returns the ROC curve of scores (higher means member). It is an
// error if there is no member or no non-member.
func newROC(scores []results.Score) (rocCurve, error) {
	s := slices.Clone(scores)
	slices.SortFunc(s, func(a, b results.Score) int { return cmp.Compare(b.Score, a.Score) })
	var pos, neg int
	for _, x := range s {
		if x.Member {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return rocCurve{}, fmt.Errorf("%d members and %d non-members", pos, neg)
	}
	c := rocCurve{fpr: []float64{0}, tpr: []float64{0}, negs: neg}
	var tp, fp int
	for k := 0; k < len(s); {
		// Ties share a threshold.
		for j := k; k < len(s) && s[k].Score == s[j].Score; k++ {
			if s[k].Member {
				tp++
			} else {
				fp++
			}
		}
		f, t := float64(fp)/float64(neg), float64(tp)/float64(pos)
		// Trapezoid between thresholds: ties count one half.
		c.auc += float64((f - c.fpr[len(c.fpr)-1]) * (t + c.tpr[len(c.tpr)-1]) / 2)
		c.fpr, c.tpr = append(c.fpr, f), append(c.tpr, t)
	}
	return c, nil
}

// at returns the largest TPR of a threshold whose FPR is at most f.
func (c rocCurve) at(f float64) float64 {
	k, _ := slices.BinarySearch(c.fpr, math.Nextafter(f, math.Inf(1)))
	return c.tpr[max(k-1, 0)]
}

// rocGrid returns log-spaced FPRs from lo to 1.
func rocGrid(lo float64) []float64 {
	n := int(math.Ceil(-math.Log10(lo) * rocGridPoints))
	g := make([]float64, n+1)
	for k := range g {
		g[k] = math.Pow(10, math.Log10(lo)*float64(n-k)/float64(n))
	}
	return g
}

// rocScores reads the scores of run id and returns its curve per attack.
func (p *Plot) rocScores(id string) (map[string]rocCurve, error) {
	scores, err := results.ReadScores(filepath.Join(p.RunDirs, id, results.ScoresFile))
	if err != nil {
		return nil, err
	}
	by := make(map[string][]results.Score)
	for _, s := range scores {
		if p.Attack == "" || s.Attack == p.Attack {
			by[s.Attack] = append(by[s.Attack], s)
		}
	}
	curves := make(map[string]rocCurve, len(by))
	for a, s := range by {
		c, err := newROC(s)
		if err != nil {
			return nil, fmt.Errorf("attack %s: %v", a, err)
		}
		curves[a] = c
	}
	return curves, nil
}

// buildROC builds a ROC plot.
func (p *Plot) buildROC(runs *Runs) (*Figure, error) {
	ids, ok := runs.Column("run_id")
	if !ok || ids.Kind != String {
		return nil, errors.New("reports: a roc plot needs the run_id column of the run table")
	}
	series, facets, err := p.keyers(runs)
	if err != nil {
		return nil, err
	}
	sel, err := selectOK(runs, p.Where)
	if err != nil {
		return nil, err
	}
	fig := &Figure{Title: p.title("Membership-inference ROC"), LegendTitle: p.legendTitle(p.Series), Warnings: sel.warnings}
	// The curves of every run, and a column of their AUCs per attack for
	// the aggregation.
	curves := make(map[int]map[string]rocCurve)
	var attacks []string
	var noScores int
	negs := 1
	for _, i := range sel.ok {
		c, err := p.rocScores(ids.Strings[i])
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				fig.Warnings = append(fig.Warnings, fmt.Errorf("run %s: %v", ids.Strings[i], err))
			} else {
				noScores++
			}
			continue
		}
		curves[i] = c
		for a, rc := range c {
			negs = max(negs, rc.negs)
			if !slices.Contains(attacks, a) {
				attacks = append(attacks, a)
			}
		}
	}
	if noScores > 0 {
		fig.Warnings = append(fig.Warnings, fmt.Errorf("%d %s no %s", noScores, plural(noScores, "run has", "runs have"), results.ScoresFile))
	}
	if len(attacks) == 0 {
		what := "any attack"
		if p.Attack != "" {
			what = "attack " + p.Attack
		}
		return nil, fmt.Errorf("reports: no run has scores of %s to plot", what)
	}
	slices.Sort(attacks)
	lo := math.Pow(10, math.Floor(math.Log10(1/float64(negs))))
	grid := rocGrid(lo)
	stylePos := styles(runs, series)
	agg := newAggregator(runs, 1)
	facetGroups, _ := facets.groups(sel.ok)
	for _, fg := range facetGroups {
		panel := Panel{Name: facets.key(fg.first).String()}
		groups, _ := series.groups(fg.runs)
		for _, g := range groups {
			for ak, a := range attacks {
				s, ok := p.rocSeries(runs, agg, curves, g.runs, a, grid)
				if !ok {
					continue
				}
				s.Name = series.key(g.first).String()
				if len(attacks) > 1 {
					s.Name = joinName(s.Name, a)
				}
				s.style = stylePos[series.id(g.first)]*len(attacks) + ak
				panel.Series = append(panel.Series, s)
			}
		}
		fig.Panels = append(fig.Panels, panel)
	}
	fig.Warnings = append(fig.Warnings, agg.warnings(defaultMinSeeds(p.MinSeeds))...)
	var lb legendBuilder
	for k := range fig.Panels {
		plt, entries, err := p.drawROC(fig.Panels[k].Series, lo)
		if err != nil {
			return nil, err
		}
		plt.Title.Text = fig.Panels[k].Name
		fig.Panels[k].Plot = plt
		lb.add(entries)
	}
	fig.Legend, fig.Entries = lb.legend()
	if len(attacks) > 1 {
		fig.LegendTitle = strings.TrimPrefix(fig.LegendTitle+", attack", ", ")
	}
	fig.Note = p.bandNote("shaded bands (TPR)", fig.Panels)
	return fig, nil
}

// rocSeries aggregates the curves of attack a over the runs idx: the mean
// TPR at each FPR of grid, and the AUC in Series.Inf (its X is NaN).
func (p *Plot) rocSeries(runs *Runs, agg *aggregator, curves map[int]map[string]rocCurve, idx []int, a string, grid []float64) (Series, bool) {
	auc := &Column{Name: "auc", Kind: Float, Floats: make([]float64, runs.Len())}
	var have []int
	for _, i := range idx {
		auc.Floats[i] = math.NaN()
		if c, ok := curves[i][a]; ok {
			auc.Floats[i] = c.auc
			have = append(have, i)
		}
	}
	if len(have) == 0 {
		return Series{}, false
	}
	s := agg.add(auc, have, func() (string, string) {
		return "curve " + a, "a swept column is neither a series nor a facet key"
	})
	out := Series{Inf: &Point{X: math.NaN(), N: s.N, Mean: s.Mean, Std: s.Std}}
	tprs := make([]float64, len(have))
	for _, f := range grid {
		for k, i := range have {
			tprs[k] = curves[i][a].at(f)
		}
		mean, std := meanStd(tprs)
		out.Points = append(out.Points, Point{X: f, N: len(have), Mean: mean, Std: std})
	}
	return out, true
}

// joinName joins the parts of a series name that are not empty.
func joinName(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// drawROC draws the curves of one panel, TPRs below lo drawn at lo.
func (p *Plot) drawROC(series []Series, lo float64) (*plot.Plot, []legendEntry, error) {
	plt := plot.New()
	plt.X.Label.Text, plt.Y.Label.Text = "false positive rate", "true positive rate"
	plt.X.Scale, plt.Y.Scale = plot.LogScale{}, plot.LogScale{}
	plt.X.Tick.Marker, plt.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	plt.X.Min, plt.X.Max, plt.Y.Min, plt.Y.Max = lo, 1, lo, 1
	plt.Add(plotter.NewGrid())
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: 1, Y: 1}})
	if err != nil {
		return nil, nil, fmt.Errorf("reports: %w", err)
	}
	diag.Color, diag.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(4), vg.Points(3)}
	plt.Add(diag)
	clamp := func(v float64) float64 { return math.Min(math.Max(v, lo), 1) }
	var entries []legendEntry
	var aucs []string
	for _, s := range series {
		col := plotutil.Color(s.style)
		xys := make(plotter.XYs, len(s.Points))
		for k, pt := range s.Points {
			xys[k] = plotter.XY{X: pt.X, Y: clamp(pt.Mean)}
		}
		band := make([]Point, len(s.Points))
		for k, pt := range s.Points {
			band[k] = pt
			band[k].Mean = clamp(pt.Mean)
		}
		if poly := p.bandPolygon(band); poly != nil {
			for k := range poly.XYs[0] {
				poly.XYs[0][k].Y = clamp(poly.XYs[0][k].Y)
			}
			poly.Color = withAlpha(col, bandAlpha)
			poly.LineStyle.Width = 0
			plt.Add(poly)
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		line.Color, line.Width = col, vg.Points(1.5)
		line.Dashes = seriesDashes(s.style)
		plt.Add(line)
		entries = append(entries, legendEntry{name: s.Name, thumbs: []plot.Thumbnailer{line}})
		aucs = append(aucs, fmt.Sprintf("%s %.3f", s.Name, s.Inf.Mean))
	}
	if len(aucs) > 0 {
		// The AUCs differ between panels: each panel writes its own.
		text, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 1, Y: lo}}, Labels: []string{"AUC\n" + strings.Join(aucs, "\n")}})
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		text.TextStyle[0].XAlign, text.TextStyle[0].YAlign = draw.XRight, draw.YBottom
		text.TextStyle[0].Font.Size = vg.Points(8)
		text.Offset = vg.Point{X: -vg.Points(4), Y: vg.Points(4)}
		plt.Add(text)
	}
	entries = append(entries, legendEntry{name: "random guess", thumbs: []plot.Thumbnailer{diag}})
	return plt, entries, nil
}
