// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package page provides the report page of an experiment: one
// self-contained HTML file, results/<exp>/report.html, that gathers for a
// reviewer what the experiment's folder holds, and results/index.html,
// which lists the experiments under a results folder.
//
// Like the rest of package reports, it reads only what is on disk. The
// steps of [Write] are:
//
//  1. read the experiment's run table (runs.parquet) and the manifest of
//     every run folder, checking each folder against its manifest;
//  2. match the runs against the spec's expansion at its scale, so that a
//     run that is missing, damaged, failed or unfinished is shown as such;
//  3. verify the spec's claims over the run table ([reports.Verify]),
//     build its tables and figures (package reports/specout), and, when
//     the caller gives one, take a comparison with a baseline;
//  4. render the page with html/template and write it, with a small JSON
//     summary (report.json) that the index reads, atomically.
//
// # The page
//
// In order: the experiment, what it mirrors (the leading comment of its
// spec) and how to reproduce it (the commands, the code, data and base
// model hashes, the scale and the seeds); the regressions and
// improvements against the baseline, first, when there is a comparison;
// every test of every claim with its verdict in words, effect, interval,
// Holm-adjusted p-value, power, our means beside the paper's values and
// the spec line of the claim; the paper-style tables with the paper's
// numbers beside ours; every figure, inlined as an SVG data URI so that
// the file needs nothing else; and every run: status, method, task,
// ε target and accounted ε with δ, σ, q, steps and the accountant, wall
// time, peak memory, a link to its folder, and, folded under it, its
// results (attack results with their intervals), privacy caveats and
// warnings.
//
// The page uses semantic HTML (sections, tables with captions and header
// cells), shows verdicts in words as well as colour, reflows for a phone
// (wide tables scroll inside their own box), prints without navigation,
// and needs no JavaScript. Everything the page shows comes from the
// experiment's folder, the spec and the options; a value that is not
// there is printed as "—", never left blank.
package page
