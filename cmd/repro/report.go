// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/page"
	"github.com/repro-dp/repro/reports/specout"
)

func init() { register(reportCommand) }

// reportOptions holds the parsed flags of repro report.
type reportOptions struct {
	experiments []string
	results     string
	scale       string
	set         []string
	baseline    string
	alpha       float64
}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write an experiment's HTML report page for reviewers, and the index of the results folder",
		ArgsUsage: "[EXP...]",
		Description: "Writes results/EXP/report.html: one self-contained page (figures inlined as SVG,\n" +
			"no network and no JavaScript needed) with what the experiment mirrors and how to\n" +
			"reproduce it (commands, code, data and base model hashes, scale, seeds), every test\n" +
			"of every claim with its verdict, effect, interval, power, the paper's value and the\n" +
			"spec line, the paper-style tables, every figure, and every run with its privacy\n" +
			"record, attack results, wall time, peak memory and a link to its folder. A run the\n" +
			"spec expects that is missing, damaged, failed or unfinished is shown as such. With\n" +
			"--baseline, the regressions and improvements against that run table come first.\n" +
			"Then writes results/index.html, which lists every experiment under the results\n" +
			"folder. Without EXP, reports every experiment there. It runs nothing: repro run,\n" +
			"repro verify (of an experiment) and make nightly write the page themselves.\n\n" +
			"The spec is loaded at the scale of the experiment's run table unless --scale says\n" +
			"otherwise.\n\n" +
			"   $ repro report table1\n" +
			"   $ repro report table1 --results results/nightly --baseline results/baselines/table1-smoke.parquet\n" +
			"   $ repro report",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "results", Value: "results", Usage: "results are under `dir`"},
			&cli.StringFlag{Name: "scale", Usage: "load the spec at preset `scale` (default: the run table's)"},
			&cli.GenericFlag{Name: "set", Value: new(stringsValue), Usage: "override a spec value as repro run did: `key=value`; repeatable"},
			&cli.StringFlag{Name: "baseline", Usage: "compare with run table `FILE` (FILE.parquet or RESULTS-DIR) and show the regressions first"},
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "family-wise error rate `α` of the claims and significance level of the comparison"},
		},
		SkipFlagParsing: true,
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			o := reportOptions{
				experiments: a.Args(), results: a.String("results"), scale: a.String("scale"),
				set: a.StringSlice("set"), baseline: a.String("baseline"), alpha: a.Float64("alpha"),
			}
			if !(o.alpha > 0 && o.alpha < 1) {
				return fmt.Errorf("report: --alpha must be in (0, 1), got %v", o.alpha)
			}
			return report(c.App.Writer, c.App.ErrWriter, o)
		}),
	}
}

// report writes the pages of o.experiments (every experiment under
// o.results when there are none) and the index.
func report(w, wErr io.Writer, o reportOptions) error {
	names := o.experiments
	if len(names) == 0 {
		ents, err := os.ReadDir(o.results)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(o.results, e.Name(), results.RunsFile)); e.IsDir() && err == nil {
				names = append(names, e.Name())
			}
		}
		if len(names) == 0 {
			return fmt.Errorf("report: no experiment under %s has a run table (repro run EXP writes one)", o.results)
		}
	}
	var errs []error
	for _, name := range names {
		if len(o.experiments) == 0 {
			if _, err := experiments.Load(name, nil); err != nil {
				fmt.Fprintf(wErr, "report: warning: %s: not an embedded experiment; give its .yaml file to report it\n", name)
				continue
			}
		}
		path, err := reportExperiment(wErr, o, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "wrote %s\n", path)
	}
	if len(errs) == 0 {
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(o.results, page.IndexFile))
	}
	return errors.Join(errs...)
}

// reportExperiment writes the page of experiment name and the index.
func reportExperiment(wErr io.Writer, o reportOptions, name string) (string, error) {
	scale := o.scale
	if scale == "" {
		// The run table's scale, when the experiment's folder has one.
		probe, err := experiments.Load(name, nil)
		if err != nil {
			return "", fmt.Errorf("report: %w", err)
		}
		if runs, err := reports.ReadRuns(filepath.Join(o.results, probe.Name, results.RunsFile)); err == nil {
			if col, ok := runs.Column("scale"); ok && col.Kind == reports.String {
				var scales []string
				for _, v := range col.Strings {
					if !slices.Contains(scales, v) {
						scales = append(scales, v)
					}
				}
				if len(scales) == 1 {
					scale = scales[0]
				} else if len(scales) > 1 {
					return "", fmt.Errorf("report: %s: the run table holds scales %s; give --scale", probe.Name, strings.Join(scales, ", "))
				}
			}
		}
	}
	specOpts, err := specOverrides(scale, "", o.set)
	if err != nil {
		return "", err
	}
	s, err := experiments.Load(name, specOpts)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	popts := &page.Options{Alpha: o.alpha}
	if o.baseline != "" {
		cmp, err := baselineComparison(o.baseline, filepath.Join(o.results, s.Name), s, o.alpha)
		if err != nil {
			return "", err
		}
		popts.Comparison, popts.Baseline = cmp, o.baseline
	}
	path, err := page.Write(o.results, s, popts)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

// baselineComparison compares the run table newPath with the baseline
// oldPath as repro compare does, with the thresholds, keys and metrics
// of spec s.
func baselineComparison(oldPath, newPath string, s *experiments.Spec, alpha float64) (*reports.Comparison, error) {
	old, err := readRuns(oldPath)
	if err != nil {
		return nil, fmt.Errorf("report: --baseline: %w", err)
	}
	cur, err := readRuns(newPath)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	opts := &reports.CompareOptions{Alpha: alpha, Thresholds: specout.ThresholdsOf(s), Keys: compareKeys(s), Metrics: specMetrics(s, old, cur)}
	cmp, err := reports.Compare(old, cur, opts)
	if err != nil {
		return nil, fmt.Errorf("report: --baseline: %w", err)
	}
	return cmp, nil
}

// writeReport writes the page of s under root after repro run or repro
// verify, and prints its path to w (repro verify's stderr, since its
// stdout may be JSON); a page that cannot be written is a
// warning on wErr, never a failure of the command that ran.
func writeReport(w, wErr io.Writer, root string, s *experiments.Spec) {
	if _, err := os.Stat(filepath.Join(root, s.Name)); err != nil {
		return
	}
	path, err := page.Write(root, s, nil)
	if err != nil {
		fmt.Fprintf(wErr, "%s: warning: report: %v\n", s.Name, err)
		return
	}
	fmt.Fprintf(w, "wrote %s\n", path)
}
