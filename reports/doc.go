// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package reports provides paper-style tables and plots of a run table, the
// one-row-per-run results that an experiment writes to runs.parquet.
//
// Reports read only what is on disk, never a live run. The typical steps are:
//
//  1. Read the run table with [ReadRuns] (or build one in memory with [NewRuns]).
//  2. Describe a table with a [Table] (row keys, column keys, metric, bold-best
//     rule, paper reference values) and call [Table.Build], or describe a plot
//     with a [Plot] and call [Plot.Build]. Both share one aggregation step:
//     select the runs, group them by their keys, reduce each group to the
//     mean ± std over seeds.
//  3. Write the resulting [Grid] as terminal text, Markdown or LaTeX, or save the
//     [Figure] as PNG, SVG and PDF.
//
// # Run tables
//
// A run table has flat named columns, each holding either strings or float64
// values. Missing floats are NaN; ε = ∞ is +Inf. Integer parquet columns (a seed
// stored as int64, say) are read as float64, booleans as the strings "true" and
// "false". A run is counted only when its status column says "ok" (or when the
// table has no status column); every other run is excluded and counted in the
// warnings.
//
// # Aggregation
//
// Every cell of a table and every point of a plot aggregates the runs that share
// its keys: the mean, the sample standard deviation (n−1 in the denominator) and
// the count n of runs whose metric is not NaN. A cell with a single run prints
// without ±. This package is opinionated about what deserves a warning: fewer
// seeds than [Table.MinSeeds], failed or unfinished runs, runs without the
// metric, two runs of one seed in the same cell (a sweep dimension that is
// neither a row nor a column key), and paper reference values that match no
// cell. Warnings are data: they are returned beside the table or figure as
// values of type error, and the commands print them to the terminal, never
// into a table's files (a paper table holds no "n=3 seeds < 10"). They are
// not prefixed with the package name because they are always shown in context.
//
// # Labels
//
// Columns are labelled by [Table.Labels] and [Plot.Labels], with defaults for
// well-known columns (epsilon_target is shown as ε, epsilon as "ε achieved",
// delta as δ, sigma as σ); a string key value stands alone ("fashion-vqa") while a numeric one is
// shown with its label ("ε=1"). A plot's metric axis names the metric with
// its unit: acc is "accuracy (%)", img "IMG accuracy (%)" (the accuracies
// are percentages), mia_auc "MIA AUC". Infinity is printed as ∞ and, in LaTeX, as
// $\infty$; a missing cell is printed as "—" (LaTeX "---").
//
// # Tables
//
// A [Table] has row keys, column keys and one or more metrics; with several
// metrics each column splits into one sub-column per metric (Dual-Priv's
// Table 1 shows Acc and IMG under each method and task). The best cells are
// those with the largest (or smallest) mean as printed among the cells that
// differ only in the competing key columns: by default the methods, when
// method is a key, else the rows of each column. Paper values ([Reference])
// are selected by column values and shown in brackets beside ours, with their
// sources listed under the table. A [Grid] is written as a terminal table
// (github.com/olekukonko/tablewriter; the best cells marked with *), as
// GitHub Markdown (bold), or as a LaTeX booktabs tabular (\textbf, ± as
// $\pm$, multi-level column headers with \cmidrule) whose first line names
// the packages it needs. A table wider than a page ([TeXTextWidth], or
// [TextWidth] in a terminal) is split by columns into several tabulars. A
// metric column that repeats another under the same key cell for cell
// (IMG accuracy on a task whose questions all show an image) is left out
// and named in the notes.
//
// # Plots
//
// A [Plot] draws one line per series (the mean over seeds at each x) with a
// shaded band of ±1 standard deviation (or standard error, or none), or a
// scatter or grouped bars (x values as categories) with error bars; one
// panel per facet value, side by side with a shared y range and one legend
// to the right of the panels, where it never hides data. A series keeps its
// colour, marker and dash pattern across panels and plots of one run table,
// so that overlapping lines stay apart in print and in grey.
//
// Every figure is meant to be pasted into a paper as it is: it has a title
// (the spec's, or "Y against X" from the labels), axis labels that say
// what a column measures and in what unit (a label table keyed by column:
// "update ratio P_K (fraction of blocks)", "accuracy (%)"; never a raw
// column name), a legend titled with the label of its series columns, and a
// note under the panels that states what the bands mean ("shaded bands: ±1
// std over n = 3 runs (seeds) per point"). Runs at x = +Inf (ε = ∞, the
// non-private end of a privacy sweep) have no place on a numeric axis, so
// each series' value at +Inf is drawn as a thin dotted reference line in
// the series' colour, without a shaded band so that it never covers the
// data; its legend entry states the mean and the band's half-width, "name
// (ε = ∞): 48.8 ± 2.8". A series that has only runs at +Inf (a non-private
// baseline) is drawn as that line alone. A heatmap has a colour bar
// labelled with its metric. Figures are written as PNG (150 dpi) and, as
// vector graphics, SVG and PDF, with gonum.org/v1/plot. [Figure] holds the
// texts (title, axis labels, legend title and entries, note) so that tests
// check them without reading pixels.
//
// The other kinds draw what the papers show:
//
//   - [Radar]: one spoke per metric (or per value of X), one polygon per
//     series, each spoke from min(0, smallest value) to its largest (Dual-Priv
//     Fig. 4);
//   - [ROC]: the membership-inference ROC of each series on log-log axes with
//     the diagonal, from the per-example scores each run wrote
//     (scores.parquet in its folder under [Plot.RunDirs]), the mean TPR over
//     seeds at log-spaced FPRs with its band, the mean AUC in the legend;
//   - [Heatmap]: the mean of Y over two swept columns (X across, Rows down),
//     each cell coloured and its value written in;
//   - [ImageGrid]: the images each run wrote as [ImagesDir]/<name>.png in its
//     folder, one row per run and one column per name.
//
// # Files
//
// [Grid.Save] and [Figure.Save] write every format of a table or figure next
// to each other (prefix.txt, prefix.md, prefix.tex; prefix.png, prefix.svg,
// prefix.pdf), each file atomically (internal/results.WriteFile). Run tables
// are read with every length of the parquet file checked before it is used
// (internal/parquetcheck), so a damaged file is an error, never a crash or an
// out-of-memory kill. Package reports/specout draws the tables and plots an
// experiment spec asks for.
package reports
