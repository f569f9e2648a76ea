// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package experiments provides the declarative experiment specs of repro:
// parsing, validation, command line overrides and expansion into runs.
//
// # Overview
//
// A spec is a YAML file. The specs that ship with repro (table1.yaml,
// fig1.yaml, ...) are embedded in the binary; [Load] reads one by name and
// [List] lists them. The typical steps are:
//
//  1. [Parse] (or [Load]) reads a spec, applies `--set key=value`
//     overrides ([Override]) and validates it. Parsing is strict: an
//     unknown key, a value of the wrong type or out of range is a
//     [*SyntaxError] naming the file and line.
//  2. [Spec.Expand] turns the spec into the fully resolved [Config] of
//     every run: methods × tasks (a method's own, else the spec's) × the
//     sweep's cartesian product (with `zip` groups for paired values).
//  3. [Config.ID] hashes a config together with the run's [Inputs] (the
//     data fingerprint and base checkpoint hash) into the run id.
//
// # The spec format
//
//	name: table1                      # required; [a-z0-9][a-z0-9_-]*, the results folder
//	description: what it reproduces   # required
//	scale: small                      # smoke, small or full; default small
//	delta: 1e-5                       # 0 ≤ δ < 1; default 1e-5
//	tasks: [fashion-vqa, shapes-vqa]  # required
//	methods:                          # required: a name, hyperparameters, a sweep
//	  - name: nonprivate
//	    sweep: {epsilon: [inf]}       # replaces the spec's epsilon axis for this method
//	  - name: dpsgd
//	    params: {lora_rank: 8}
//	  - name: dpsgd                   # the same method again needs a variant:
//	    variant: rank-4               # a label, the run column variant
//	    params: {lora_rank: 4}
//	  - name: dpsgd
//	    variant: shapes-only
//	    tasks: [shapes-vqa]           # replaces the spec's tasks for this method
//	params: {lr: 0.001}               # fixed hyperparameters of every method
//	sweep:                            # cartesian product over the axes
//	  epsilon: [1, 3, 8, inf]         # ε > 0 or inf; default [inf]
//	  seed: [1, 2, 3]                 # default [1]
//	  zip:                            # paired values: one dimension per group
//	    - {prune_ratio: [0.1, 0.5], update_ratio: [0.2, 0.6]}
//	attacks:                          # names, or a name with options
//	  - loss-mia
//	  - {name: mink-mia, k: [10, 20, 50]}
//	diagnostics: on                   # off: no non-private per-step diagnostics
//	tables:
//	  - name: table1
//	    rows: [epsilon_target]
//	    columns: [method, task]
//	    metrics: [acc, img]
//	    best: max
//	    reference:
//	      - {at: {method: dpsgd, epsilon_target: 1}, metric: acc, value: 81.54, source: "paper Table 1"}
//	plots:
//	  - {name: fig1, kind: line, x: epsilon_target, y: acc, series: method, facet: task, band: std}
//	claims:                           # checked by repro verify (see [Claim])
//	  - {name: dpsgd-beats-dpzo, metric: acc, a: {method: dpsgd}, b: {method: dpzo},
//	     each: [epsilon_target, task], expect: greater, source: "paper §5.2"}
//	regression:                       # repro compare's thresholds per metric
//	  - {metric: acc, better: max, threshold: 5}
//	  - {name: radar, kind: radar, metrics: [acc, img, mia_auc], series: method}
//	  - {name: roc, kind: roc, attack: loss-mia, series: method, facet: epsilon_target}
//	  - {name: heat, kind: heatmap, x: update_ratio, rows: retention, y: acc}
//	  - {name: recon, kind: grid, images: [original-0, reconstruction-0], series: epsilon_target}
//
// # Attacks and their options
//
// Each element of attacks is an attack's name, or a mapping with its name
// and options. The options each attack takes, with their defaults, are
// declared by the attack (attacks.Optioned); an attack without options
// computes its default score sets:
//
//	attacks:
//	  - loss-mia
//	  - name: maxrenyi-mia
//	    slices: [img, desp]   # img, inst, desp, inst_desp; default all four
//	    orders: [0.5, inf]    # Rényi orders α ≥ 0 or inf; default [0.5, 1, 2, inf]
//	    k: [0, 10]            # K% in [0, 100]; default [0, 10, 100]
//	  - {name: mink-mia, k: [10, 20, 50]}   # K% in [0, 100]; default [10, 20]
//
// An option takes a list or a single value. An unknown attack or option,
// a value out of range (an unknown slice, a negative order, K outside
// [0, 100]), a duplicate value and an empty list are file:line errors at
// the offending key or value, e.g. `spec.yaml:18: attack maxrenyi-mia has
// no option "order" (known: slices, orders, k)`. The options reach the run
// in [Config.AttackOptions], in canonical spelling and order: they change
// the run id, except that options equal to an attack's defaults are
// dropped, so a spec without options (or spelling out the defaults) keeps
// the ids of specs written before attacks took options. An override sets
// options of an attack named bare, too:
// `--set attacks.maxrenyi-mia.orders=[inf]`.
//
// A metric of a table, plot or claim that is a result of an attack's score
// set (renyi_img_a2_k10_auc of maxrenyi-mia, mink50_auc of mink-mia) must
// be one the spec's attacks compute with their options; otherwise it is
// an error at the metric's line (see [Names.AttackSets]).
//
// # Outputs
//
// Tables and plots name run columns: method, task, scale, seed,
// epsilon_target, delta, and the spec's sweep axes and hyperparameters; an
// x–y plot may also draw against the achieved epsilon or sigma. Metrics (a
// table's metrics, a plot's y and metrics) are whatever the runs record;
// a name that no run records but that is within two edits of one that a
// run does (img for imgg, acc_text for acc_txet) is a misspelling and a
// file:line error before anything runs, naming the metric meant (see
// [Names.Metrics]).
// A table's pool lists run columns that are neither its rows nor its
// columns whose runs each cell averages per seed before the seeds: a
// selection table with rows of hyperparameters and `pool: [task]` shows
// the mean over seeds of each seed's mean over the tasks (the ± is over
// seeds), where without it the cell would mix the tasks' runs as if they
// were seeds, and warn so.
// Each plot kind takes its own keys besides name, title and kind, and any
// other key is an error:
//
//   - line, scatter: x and y; series, facet, band (std, sem or none), logx;
//   - bar: x and y; series, facet, band;
//   - radar: metrics (three or more), or x and y (one spoke per x value);
//     series, facet, band;
//   - roc: attack (one of the spec's attacks; default every one), series,
//     facet, band; the spec must have attacks;
//   - heatmap: x, rows (the second swept column) and y (the colour); facet;
//   - grid: images (names of images/<name>.png in each run's folder; default
//     every image of the first run), series, facet (one grid file per value).
//
// A plot with a facet is written as one file per facet value,
// <name>-<value>.png (and .svg, .pdf).
//
// The sweep axes and their ranges are listed in [Axes]. Hyperparameters
// (params) are scalars: integers, finite floats, strings or booleans; a name
// may be a fixed hyperparameter or a sweep axis, never both.
//
// A run's config merges, from weakest to strongest, the spec's params, the
// method's params and the run's sweep values; ε, δ and the seed have
// fields of their own. The names of methods, tasks, attacks and scales,
// every param and sweep value a method receives, and every method × task
// pair are checked against [Names] ([Registered] by default: the methods,
// datasets and attacks registries, with each method's hyperparameter
// declarations), so a misspelt or mistyped hyperparameter is a file:line
// error before anything runs. diagnostics: off sets the param
// diagnostics=false of every method.
//
// Some hyperparameters act more coarsely than their values at a preset's
// scale: at smoke an image has 4 patches, so Dual-Priv's retentions 0.1,
// 0.2 and 0.3 all keep one patch token. [Spec.Collapses] names the values
// of a sweep that give one effective setting (see [Names.Effective]) and
// counts the distinct settings among the runs; repro run, table, plot and
// verify print it as a warning before anything runs.
package experiments
