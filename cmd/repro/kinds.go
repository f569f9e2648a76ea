// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners/pipeline"
)

func init() { register(kindsCommand) }

func kindsCommand() *cli.Command {
	return &cli.Command{
		Name:      "kinds",
		Usage:     "split the test accuracy of an experiment's runs by question kind",
		ArgsUsage: "EXP",
		Description: "Reads the finished runs of experiment EXP under the results folder, each run's\n" +
			"predictions.parquet and its data set (rebuilt from the run's task, scale, seed and\n" +
			"data params), and prints, for each group of runs that differ only in the seed, the\n" +
			"accuracy on each question kind of the test split (Example.Kind: shapes-vqa's count,\n" +
			"colour-at, ...; n counts the examples over all seeds) beside the accuracy of always giving the kind's most frequent\n" +
			"training answer (the majority answer, as acc_majority), mean ± std over seeds.\n\n" +
			"   $ repro kinds shapes-learnable",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "results", Value: "results", Usage: "look for runs under `dir`"},
		},
		SkipFlagParsing: true, // flags may follow EXP; see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) != 1 {
				return errors.New("kinds: want exactly one EXP argument")
			}
			return kinds(c.App.Writer, a.String("results"), a.Args()[0])
		}),
	}
}

// kindScore is one run's hits on one question kind.
type kindScore struct{ n, hit, majority int }

// kinds prints the per-kind accuracy of the finished runs of exp under
// root (see kindsCommand).
func kinds(w io.Writer, root, exp string) error {
	if exp == "" || strings.ContainsAny(exp, `/\*?[]`) {
		return fmt.Errorf("kinds: bad experiment %q", exp)
	}
	dirs, err := filepath.Glob(results.RunDir(root, exp, "*"))
	if err != nil {
		return fmt.Errorf("kinds: %w", err)
	}
	// groups[label][kind] holds one score per run, in seed order.
	groups := map[string]map[string][]kindScore{}
	seeds := map[string][]int64{}
	for _, dir := range dirs {
		if !results.Finished(dir) {
			continue
		}
		m, err := results.ReadManifest(dir)
		if err != nil {
			return fmt.Errorf("kinds: %w", err)
		}
		preds, err := results.ReadPredictions(filepath.Join(dir, results.PredictionsFile))
		if err != nil {
			return fmt.Errorf("kinds: run %s: %w", m.RunID, err)
		}
		cfg := m.Config
		d, err := pipeline.DataPart(cfg.Task, cfg.Scale, cfg.Seed, cfg.Partition())
		if err != nil {
			return fmt.Errorf("kinds: run %s: %w", m.RunID, err)
		}
		train := d.Private
		if cfg.TrainHoldout() {
			train = d.Holdout
		}
		scores, err := scoreKinds(d.Test, train, preds)
		if err != nil {
			return fmt.Errorf("kinds: run %s: %w", m.RunID, err)
		}
		label := groupLabel(cfg.Method, cfg.Task, cfg.Scale, cfg.Params)
		if groups[label] == nil {
			groups[label] = map[string][]kindScore{}
		}
		for k, s := range scores {
			groups[label][k] = append(groups[label][k], s)
		}
		seeds[label] = append(seeds[label], cfg.Seed)
	}
	if len(groups) == 0 {
		return fmt.Errorf("kinds: no finished runs of %s under %s", exp, root)
	}
	for i, label := range slices.Sorted(maps.Keys(groups)) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		ss := slices.Clone(seeds[label])
		slices.Sort(ss)
		fmt.Fprintf(w, "%s (seeds %v)\n", label, ss)
		fmt.Fprintf(w, "%-14s %6s %15s %15s\n", "kind", "n", "acc", "majority")
		var all []kindScore
		for _, k := range slices.Sorted(maps.Keys(groups[label])) {
			s := groups[label][k]
			n := 0
			for _, x := range s {
				n += x.n
			}
			fmt.Fprintf(w, "%-14s %6d %15s %15s\n", k, n, meanStd(s, false), meanStd(s, true))
			for j, x := range s {
				if j >= len(all) {
					all = append(all, kindScore{})
				}
				all[j].n += x.n
				all[j].hit += x.hit
				all[j].majority += x.majority
			}
		}
		n := 0
		for _, x := range all {
			n += x.n
		}
		fmt.Fprintf(w, "%-14s %6d %15s %15s\n", "all", n, meanStd(all, false), meanStd(all, true))
	}
	return nil
}

// scoreKinds counts, for each question kind of test, the examples, the
// predictions marked correct and the examples whose answer is the kind's
// most frequent answer in train (the lowest answer on ties, as
// pipeline.Evaluate's majority baseline). preds are a run's prediction
// rows; every test example must have one.
func scoreKinds(test, train []datasets.Example, preds []results.Prediction) (map[string]kindScore, error) {
	correct := map[string]bool{}
	for _, p := range preds {
		if p.Split == "test" {
			correct[p.ExampleID] = p.Correct
		}
	}
	majority := pipeline.MajorityAnswers(train)
	out := map[string]kindScore{}
	for i := range test {
		ex := &test[i]
		ok, found := correct[ex.ID]
		if !found {
			return nil, fmt.Errorf("no prediction for test example %s", ex.ID)
		}
		s := out[ex.Kind]
		s.n++
		if ok {
			s.hit++
		}
		if majority[ex.Kind] == fmt.Sprint(ex.Answer) {
			s.majority++
		}
		out[ex.Kind] = s
	}
	return out, nil
}

// groupLabel names a group of runs that differ only in the seed.
func groupLabel(method, task, scale string, params map[string]any) string {
	var b strings.Builder
	b.WriteString(method + " " + task + " " + scale)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		fmt.Fprintf(&b, " %s=%v", k, params[k])
	}
	return b.String()
}

// meanStd formats the mean ± sample std over runs of the accuracy (%) of
// the hits, or of the majority answer's hits.
func meanStd(s []kindScore, majority bool) string {
	xs := make([]float64, len(s))
	for i, x := range s {
		h := x.hit
		if majority {
			h = x.majority
		}
		xs[i] = 100 * float64(h) / float64(x.n)
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return fmt.Sprintf("%.1f", mean)
	}
	ss := 0.0
	for _, x := range xs {
		ss += float64((x - mean) * (x - mean))
	}
	return fmt.Sprintf("%.1f ± %.1f", mean, math.Sqrt(ss/float64(len(xs)-1)))
}
