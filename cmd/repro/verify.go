// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/specout"
)

func init() { register(verifyCommand) }

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check the papers' claims that an experiment's spec states against its runs",
		ArgsUsage: "EXP|FILE.parquet|RESULTS-DIR",
		Description: "Given an experiment (an embedded spec such as table1, or a .yaml file), runs its\n" +
			"runs that are not finished (as repro run does, with --scale, --results, --jobs and\n" +
			"--set), unless --no-run, then evaluates the claims of its spec over the seeds of its\n" +
			"run table. Given a run table (FILE.parquet or RESULTS-DIR), evaluates the claims of\n" +
			"the spec named by its experiment column, or by --spec.\n\n" +
			"Each test of a claim compares the runs of its two sides by a paired t-test over\n" +
			"seeds (when both sides have the same seeds) or Welch's t-test, with a percentile\n" +
			"bootstrap interval of the effect: over seeds, or for acc, when the runs have\n" +
			"predictions.parquet (a RESULTS-DIR or an experiment), over seeds and then examples.\n" +
			"Where the seeds show no variance at all, the exact sign test (paired) or\n" +
			"permutation test (two samples) replaces the t-test, so three equal values never\n" +
			"give p = 0. A deterministic metric (ε, σ, parameter counts; or a claim with test:\n" +
			"exact) is compared value by value, seed by seed, and says so: no p-value.\n" +
			"A claim without b tests a alone against its value V (a > V, a < V, or a = V ± T)\n" +
			"by the one-sample t-test. The effect shown is what the test tests, less the value\n" +
			"it is tested against: a − b, a − V, or a − b − V for a claim a − b = V ± T.\n" +
			"A claim with x1 and x2 is an interaction, \"the gain of a over b is larger at x1\n" +
			"than at x2\": its effect (a − b)|x1 − (a − b)|x2 is tested per seed when the four\n" +
			"cells share seeds, as a Welch test of the paired gains when each x pairs its own\n" +
			"sides, else as a contrast of four means (Welch–Satterthwaite degrees of freedom).\n\n" +
			"The p-values of all the tests are adjusted by Holm's method. A test is PASS when\n" +
			"significant in the claimed direction, FAIL when significant against it,\n" +
			"CONTRADICTED when neither but the paper's effect is ruled out (the one-sided test\n" +
			"of \"our effect is at least the paper's\" rejects, Holm-adjusted over those tests),\n" +
			"INCONCLUSIVE otherwise (with the power it had to find the paper's effect; none when\n" +
			"the paper's own numbers go against the claim), and NOT RUN when a side has fewer\n" +
			"distinct seeds than min_seeds or a claim named in its premise did not PASS.\n" +
			"Claims marked gate: true are tested first, Holm among themselves at the full α;\n" +
			"the others, Holm among themselves at the full α, only when every gate test PASSes\n" +
			"(else NOT RUN: \"not tested: gate failed\"), a serial gatekeeping order.\n" +
			"The exit status is non-zero only when a claim\n" +
			"marked required FAILs.\n\n" +
			"   $ repro verify table1 --scale smoke\n" +
			"   $ repro verify results/table1 --json\n" +
			"   $ repro verify runs.parquet --spec my-spec.yaml --alpha 0.01",
		Flags: append([]cli.Flag{
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "family-wise error rate `α` of the Holm correction"},
			&cli.BoolFlag{Name: "json", Usage: "print the verification as JSON"},
			&cli.StringFlag{Name: "spec", Usage: "FILE/DIR: take the claims from experiment `EXP` (a name or a .yaml file) instead of the run table's"},
		}, expFlags()...),
		SkipFlagParsing: true,
		Action:          withArgs(verifyAction),
	}
}

// verifyAction parses the arguments of repro verify and verifies.
func verifyAction(c *cli.Context, f *cmdArgs) error {
	if len(f.Args()) != 1 {
		return errors.New("verify: want exactly one EXP, FILE.parquet or RESULTS-DIR argument")
	}
	alpha := f.Float64("alpha")
	if !(alpha > 0 && alpha < 1) {
		return fmt.Errorf("verify: --alpha must be in (0, 1), got %v", alpha)
	}
	arg := f.Args()[0]
	experiment := !isPath(arg)
	if err := checkArgFlags("verify", f, experiment, "alpha", "json"); err != nil {
		return err
	}
	var (
		s        *experiments.Spec
		runs     *reports.Runs
		runDirs  string
		sweepErr error
		err      error
	)
	if experiment {
		o := expOptions{name: arg, scale: f.String("scale"), results: f.String("results"), jobs: f.Int("jobs"), set: f.StringSlice("set"), noRun: f.Bool("no-run"), from: f.String("from")}
		var root string
		s, root, _, sweepErr, err = prepareExperiment(c.Context, c.App.ErrWriter, "verify", o)
		if err != nil {
			return err
		}
		runs, err = readRuns(filepath.Join(root, s.Name, results.RunsFile))
		runDirs = filepath.Join(o.results, s.Name, "runs")
	} else {
		runs, err = readRuns(arg)
		if fi, serr := os.Stat(arg); serr == nil && fi.IsDir() {
			runDirs = runDirsOf(arg)
		}
		if err == nil {
			s, err = specOfRuns("verify", runs, f.String("spec"))
		}
	}
	if err != nil {
		return err
	}
	err = verify(c.App.Writer, s, runs, &reports.VerifyOptions{Alpha: alpha, RunDirs: runDirs}, f.Bool("json"))
	if experiment {
		// The page's path goes to stderr: stdout may be --json.
		writeReport(c.App.ErrWriter, c.App.ErrWriter, f.String("results"), s)
	}
	return errors.Join(sweepErr, err)
}

// specOfRuns loads the spec called name, or, when name is "", the spec of
// the experiment that the run table's experiment column names.
func specOfRuns(cmd string, runs *reports.Runs, name string) (*experiments.Spec, error) {
	if name == "" {
		col, ok := runs.Column("experiment")
		if !ok || col.Kind != reports.String || runs.Len() == 0 {
			return nil, fmt.Errorf("%s: the run table names no experiment; give --spec EXP", cmd)
		}
		for i := range runs.Len() {
			if col.Strings[i] != col.Strings[0] {
				return nil, fmt.Errorf("%s: the run table holds experiments %s and %s; give --spec EXP", cmd, col.Strings[0], col.Strings[i])
			}
		}
		name = col.Strings[0]
	}
	s, err := experiments.Load(name, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return s, nil
}

// verify evaluates the claims of s over runs and writes the result to w,
// as text or JSON. It returns an error if s has no claims or a required
// claim fails.
func verify(w io.Writer, s *experiments.Spec, runs *reports.Runs, opts *reports.VerifyOptions, asJSON bool) error {
	claims := specout.ClaimsOf(s)
	if len(claims) == 0 {
		return fmt.Errorf("verify: experiment %s states no claims", s.Name)
	}
	v, err := reports.Verify(runs, claims, opts)
	if err != nil {
		return err
	}
	if asJSON {
		out := struct {
			Experiment string `json:"experiment"`
			*reports.Verification
		}{s.Name, v}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s: %d claims, %d tests\n\n", s.Name, len(claims), len(v.Checks))
		if err := v.WriteText(w); err != nil {
			return err
		}
	}
	if failed := v.Failed(); len(failed) > 0 {
		var names []string
		for _, c := range failed {
			names = append(names, strings.TrimSpace(c.Claim+" "+c.At))
		}
		return fmt.Errorf("verify: %s: %d required %s failed: %s", s.Name, len(failed), plural(len(failed), "claim", "claims"), strings.Join(names, "; "))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
