// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners"
)

func init() { register(showCommand) }

// showOptions holds the parsed flags of repro show.
type showOptions struct {
	run     string
	results string
	json    bool
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a run's manifest",
		ArgsUsage: "RUN",
		Description: "Prints the manifest of a run: its config, status (with the error and stack of a\n" +
			"failed run), timings, provenance, privacy record and results. RUN is a run id, a\n" +
			"unique prefix of one, or EXP/ID; a run shared by several experiments is shown for each.\n\n" +
			"   $ repro show 0109688b\n" +
			"   $ repro show table1/0109688baadf6c52 --json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "results", Value: "results", Usage: "look for runs under `dir`"},
			&cli.BoolFlag{Name: "json", Usage: "print the manifest as JSON"},
		},
		SkipFlagParsing: true, // flags may follow RUN; see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) != 1 {
				return errors.New("show: want exactly one RUN argument")
			}
			return show(c.App.Writer, showOptions{run: a.Args()[0], results: a.String("results"), json: a.Bool("json")})
		}),
	}
}

func show(w io.Writer, o showOptions) error {
	exp, id := "*", o.run
	if e, i, ok := strings.Cut(o.run, "/"); ok {
		exp, id = e, i
	}
	if id == "" || strings.ContainsAny(id+exp, `\[]?`) || strings.Contains(id, "*") {
		return fmt.Errorf("show: bad run %q", o.run)
	}
	dirs, err := filepath.Glob(results.RunDir(o.results, exp, id+"*"))
	if err != nil {
		return fmt.Errorf("show: %w", err)
	}
	ids := make(map[string]bool)
	for _, d := range dirs {
		ids[filepath.Base(d)] = true
	}
	switch {
	case len(ids) == 0:
		return fmt.Errorf("show: no run %q under %s", o.run, o.results)
	case len(ids) > 1:
		return fmt.Errorf("show: %q is ambiguous: %s", o.run, strings.Join(slices.Sorted(maps.Keys(ids)), ", "))
	}
	for i, d := range dirs {
		m, err := results.ReadManifest(d)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if o.json {
			b, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		// The status as repro list reads it: a run left running by a
		// process that is gone is interrupted, one whose files do not
		// verify is damaged.
		st, _ := runners.State(d)
		printManifest(w, m, st)
	}
	return nil
}

// printManifest prints m as aligned key-value lines, section by section,
// with status state (runners.State).
func printManifest(w io.Writer, m *results.Manifest, state string) {
	// Keys are padded to the longest one (results keys are long).
	width := len("privacy.epsilon_nominal")
	for k := range m.Results {
		width = max(width, len("results."+k))
	}
	for k := range m.Config.Params {
		width = max(width, len("params."+k))
	}
	width += 2
	row := func(k string, format string, args ...any) {
		v := fmt.Sprintf(format, args...)
		v = strings.ReplaceAll(v, "\n", "\n"+strings.Repeat(" ", width))
		fmt.Fprintf(w, "%-*s%s\n", width, k, v)
	}
	c := &m.Config
	row("run", "%s", m.RunID)
	row("experiment", "%s", m.Experiment)
	row("status", "%s", state)
	if m.Error != "" {
		row("error", "%s", m.Error)
	}
	row("method", "%s", c.Method)
	row("task", "%s", c.Task)
	row("scale", "%s", c.Scale)
	row("seed", "%d", c.Seed)
	row("epsilon", "%s", c.Epsilon)
	row("delta", "%g", c.Delta)
	row("attacks", "%s", strings.Join(c.Attacks, ", "))
	for _, a := range slices.Sorted(maps.Keys(c.AttackOptions)) {
		row("attacks."+a, "%s", c.AttackOptions[a])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		v := c.Params[k]
		if f, ok := v.(float64); ok {
			v = experiments.FormatFloat(f)
		}
		row("params."+k, "%v", v)
	}
	row("inputs.data", "%s", orUnknown(m.Inputs.Data))
	row("inputs.base", "%s", orUnknown(m.Inputs.Base))
	row("started", "%s", m.Started.Format(time.RFC3339))
	if !m.Finished.IsZero() {
		row("finished", "%s", m.Finished.Format(time.RFC3339))
	}
	row("seconds", "%.3f", m.Seconds)
	for _, s := range m.Stages {
		row("stage."+s.Name, "%.3f s", s.Seconds)
	}
	if m.Steps > 0 {
		row("steps", "%d", m.Steps)
		row("seconds per step", "%.6f", m.SecondsPerStep)
	}
	row("peak memory", "%.1f MiB (process)", float64(m.PeakMemoryBytes)/(1<<20))
	p := m.Provenance
	rev := p.Revision
	if p.Modified {
		rev += "+dirty"
	}
	row("revision", "%s", rev)
	row("go", "%s %s/%s", p.GoVersion, p.OS, p.Arch)
	row("host", "%s (%d CPUs, GOMAXPROCS %d, %d jobs)", p.Host, p.CPUs, p.GOMAXPROCS, p.Jobs)
	if m.LoadStart != nil || m.LoadEnd != nil {
		loadText := func(x *float64) string {
			if x == nil {
				return "unknown"
			}
			return fmt.Sprintf("%.2f", *x)
		}
		row("load", "%s at start, %s at end (1-minute average)", loadText(m.LoadStart), loadText(m.LoadEnd))
	}
	if m.Privacy != nil {
		printPrivacy(row, m.Privacy)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Results)) {
		row("results."+k, "%s", experiments.FormatFloat(float64(m.Results[k])))
	}
	for _, wn := range m.Warnings {
		row("warning", "%s", wn)
	}
	if m.Stack != "" {
		fmt.Fprintf(w, "\nstack:\n%s", m.Stack)
	}
}

// printPrivacy prints a run's privacy record with row (see printManifest).
func printPrivacy(row func(k, format string, args ...any), pr *results.Privacy) {
	row("privacy.accountant", "%s", pr.Accountant)
	row("privacy.epsilon", "%s (target %s)", experiments.FormatFloat(float64(pr.Epsilon)), experiments.FormatFloat(float64(pr.EpsilonTarget)))
	if pr.EpsilonNominal != nil {
		row("privacy.epsilon_nominal", "%s", experiments.FormatFloat(float64(*pr.EpsilonNominal)))
	}
	row("privacy.delta", "%g", pr.Delta)
	row("privacy.sigma", "%g", pr.Sigma)
	row("privacy.sample_rate", "%g (%s sampling)", pr.SampleRate, pr.Sampling)
	row("privacy.steps", "%d", pr.Steps)
	row("privacy.clip_norm", "%g", pr.ClipNorm)
	row("privacy.neighbouring", "%s", pr.Neighbouring)
	for _, c := range pr.Components {
		row("privacy.component", "%s: σ %g, ε %s alone", c.Name, c.Sigma, experiments.FormatFloat(float64(c.Epsilon)))
	}
	if pr.SigmaScale > 0 {
		row("privacy.sigma_scale", "%g", pr.SigmaScale)
	}
	for _, cv := range pr.Caveats {
		row("privacy.caveat", "%s", cv)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}
