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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
)

func init() { register(auditCommand) }

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "print the accounted ε beside the one-run audit's empirical lower bound",
		ArgsUsage: "RUN|EXP|FILE.parquet",
		Description: "For each run of experiment EXP, or for the run RUN (a run id, a unique prefix of\n" +
			"one, or EXP/ID), prints the accounted ε and δ, the one-run audit's 95% lower bound on\n" +
			"ε (Steinke, Nasr & Jagielski, NeurIPS 2023) with its one-sided interval and a central\n" +
			"estimate (the ε at p-value ½), the guesses it rests on and the verdict: PASS when the\n" +
			"bound does not exceed the accounted ε, FAIL when it does. A planted under-noised control\n" +
			"(noise_scale ≠ 1) is expected to fail and says so. Runs without the audit-one-run attack\n" +
			"are listed as not audited. The exit status is non-zero if an honest run fails.\n" +
			"Given a run table (FILE.parquet, such as a checked-in baseline), reads its rows\n" +
			"instead of the runs' manifests; a planted control is one whose noise_scale ≠ 1.\n\n" +
			"   $ repro audit audit\n" +
			"   $ repro audit 0109688b\n" +
			"   $ repro audit results/baselines/audit-small.parquet",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "results", Value: "results", Usage: "look for runs under `dir`"},
		},
		SkipFlagParsing: true, // flags may follow RUN; see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) != 1 {
				return errors.New("audit: want exactly one RUN, EXP or FILE.parquet argument")
			}
			return audit(c.App.Writer, a.Args()[0], a.String("results"))
		}),
	}
}

// audit prints the audit of the runs arg names under root.
func audit(w io.Writer, arg, root string) error {
	var rows []auditRun
	if strings.HasSuffix(arg, ".parquet") {
		runs, err := results.ReadRuns(arg)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for _, r := range runs {
			rows = append(rows, auditRunOfRow(r))
		}
		if len(rows) == 0 {
			return fmt.Errorf("audit: %s holds no runs", arg)
		}
	} else {
		dirs, err := auditDirs(arg, root)
		if err != nil {
			return err
		}
		for _, d := range dirs {
			m, err := results.ReadManifest(d)
			if err != nil {
				return fmt.Errorf("audit: %w", err)
			}
			rows = append(rows, auditRunOf(m))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tMETHOD\tTASK\tSEED\tε ACCOUNTED\tδ\tε LOWER BOUND (95%)\tINTERVAL\tCENTRAL\tGUESSES\tVERDICT")
	failed := 0
	for _, r := range rows {
		row, fail := auditRow(r)
		if fail {
			failed++
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("audit: %d honest run(s) fail their audit: the empirical lower bound exceeds the accounted ε", failed)
	}
	return nil
}

// auditDirs returns the run folders arg names: every run of experiment arg
// when root/arg/runs exists, else the run arg (an id, a unique prefix, or
// EXP/ID) in whichever experiments hold it.
func auditDirs(arg, root string) ([]string, error) {
	if !strings.Contains(arg, "/") && !strings.ContainsAny(arg, `*\[]?`) {
		if fi, err := os.Stat(filepath.Join(root, arg, "runs")); err == nil && fi.IsDir() {
			dirs, err := filepath.Glob(results.RunDir(root, arg, "*"))
			if err != nil || len(dirs) == 0 {
				return nil, fmt.Errorf("audit: experiment %s under %s has no runs", arg, root)
			}
			slices.Sort(dirs)
			return dirs, nil
		}
	}
	if strings.ContainsAny(arg, `*\[]?`) {
		return nil, fmt.Errorf("audit: bad run or experiment %q", arg)
	}
	exp, id := "*", arg
	if e, i, ok := strings.Cut(arg, "/"); ok {
		exp, id = e, i
	}
	if id == "" || exp == "" {
		return nil, fmt.Errorf("audit: bad run or experiment %q", arg)
	}
	dirs, err := filepath.Glob(results.RunDir(root, exp, id+"*"))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	ids := make(map[string]bool)
	for _, d := range dirs {
		ids[filepath.Base(d)] = true
	}
	switch {
	case len(ids) == 0:
		return nil, fmt.Errorf("audit: no experiment or run %q under %s", arg, root)
	case len(ids) > 1:
		return nil, fmt.Errorf("audit: %q is ambiguous: %s", arg, strings.Join(slices.Sorted(maps.Keys(ids)), ", "))
	}
	return dirs[:1], nil
}

// auditRun is what the audit table shows of one run, from its manifest
// or from its row of a run table.
type auditRun struct {
	id, method, task string
	seed             int64
	status           results.Status
	eps, delta       float64
	// planted marks a planted under-noised control.
	planted bool
	results map[string]float64
}

// auditRunOf returns the audit view of the run manifest m describes: the
// accounted ε and δ of its privacy record, and whether the record's caveats
// mark it as a planted under-noised control.
func auditRunOf(m *results.Manifest) auditRun {
	c := m.Config
	r := auditRun{id: m.RunID, method: c.Method, task: c.Task, seed: c.Seed, status: m.Status,
		eps: float64(c.Epsilon), delta: c.Delta, results: make(map[string]float64, len(m.Results))}
	if p := m.Privacy; p != nil {
		r.eps, r.delta = float64(p.Epsilon), p.Delta
		r.planted = slices.ContainsFunc(p.Caveats, func(s string) bool { return strings.HasPrefix(s, methods.PlantedCaveat) })
	}
	for k, v := range m.Results {
		r.results[k] = float64(v)
	}
	return r
}

// auditRunOfRow returns the audit view of row r of a run table (a
// checked-in baseline, say): the accounted ε (epsilon, else the target)
// and δ, and a planted control by its noise_scale ≠ 1, the hyperparameter
// that plants it.
func auditRunOfRow(r results.Run) auditRun {
	a := auditRun{id: r.RunID, method: r.Method, task: r.Task, seed: r.Seed, status: r.Status,
		eps: r.Epsilon, delta: r.Delta, results: r.Results}
	if math.IsNaN(a.eps) {
		a.eps = r.EpsilonTarget
	}
	if s, ok := r.Params["noise_scale"].(float64); ok && s != 1 {
		a.planted = true
	}
	return a
}

// auditRow returns the row of the audit table of run a, and whether it is
// an honest run that fails its audit.
func auditRow(a auditRun) (string, bool) {
	eps, delta, planted := a.eps, a.delta, a.planted
	head := fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s", a.id, a.method, a.task, a.seed, fmtEps(eps), experiments.FormatFloat(delta))
	r := a.results
	lb, ok := r["audit_epsilon_lb"]
	if ok && math.IsNaN(lb) {
		ok = false // a run table's NULL: a run without the attack
	}
	switch {
	case a.status != results.OK && !ok:
		return head + "\t—\t—\t—\t—\tnot audited: the run " + string(a.status), false
	case !ok:
		return head + "\t—\t—\t—\t—\tnot audited: the run has no audit-one-run attack", false
	}
	verdict := "PASS"
	fail := float64(lb) > eps
	switch {
	case fail && planted:
		verdict = "FAIL (planted under-noised control: expected)"
	case fail:
		verdict = "FAIL: the privacy guarantee does not hold"
	case planted:
		verdict = "PASS (planted under-noised control: the audit missed it)"
	}
	return fmt.Sprintf("%s\t%.3f\t[%.3f, ∞)\t%.3f\t%.0f of %.0f on %.0f canaries\t%s", head,
		float64(lb), float64(lb), float64(r["audit_epsilon_median"]),
		float64(r["audit_correct"]), float64(r["audit_guesses"]), float64(r["audit_canaries"]), verdict), fail && !planted
}

// fmtEps formats an accounted ε, ∞ for none.
func fmtEps(e float64) string {
	if math.IsInf(e, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.4g", e)
}
