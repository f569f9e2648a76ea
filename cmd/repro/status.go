// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners"
	"github.com/repro-dp/repro/runners/slurm"
)

func init() {
	register(statusCommand)
	register(cancelCommand)
}

// statusFlags are the flags of repro status and repro cancel: those that
// resolve an experiment's runs, as repro run takes them.
func statusFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "scale", Usage: "the runs at preset `scale` (smoke, small or full) instead of the spec's"},
		&cli.StringFlag{Name: "seeds", Usage: "seeds: `n` for 1…n, or a comma-separated list"},
		stringsFlag{&cli.StringSliceFlag{Name: "set", Usage: "override a spec value: `key=value`; repeatable"}},
		stringsFlag{&cli.StringSliceFlag{Name: "only", Usage: "only the runs matching `filter`, as repro run takes it; repeatable"}},
		&cli.StringFlag{Name: "results", Value: "results", Usage: "results are under `dir`"},
	}
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show how far an experiment's runs are, on any executor",
		ArgsUsage: "EXP",
		Description: "Counts the runs of EXP (resolved with --scale, --seeds and --set as repro run\n" +
			"resolves them; --only selects some) by state: ok, to run, running, failed (each\n" +
			"with its error), interrupted (killed while running: the next repro run runs it\n" +
			"again) and damaged. For the Slurm submissions of EXP it shows the state of their\n" +
			"jobs from squeue.\n\n" +
			"   $ repro status table1 --scale smoke",
		Flags:           statusFlags(),
		SkipFlagParsing: true, // see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) != 1 {
				return errors.New("status: want one experiment")
			}
			s, plan, err := loadPlan(a)
			if err != nil {
				return err
			}
			return printStatus(c.Context, c.App.Writer, a.String("results"), s, plan)
		}),
	}
}

// loadPlan loads the experiment of a and plans its runs.
func loadPlan(a *cmdArgs) (*experiments.Spec, []*runners.Run, error) {
	specOpts, err := specOverrides(a.String("scale"), a.String("seeds"), a.StringSlice("set"))
	if err != nil {
		return nil, nil, err
	}
	s, err := experiments.Load(a.Args()[0], specOpts)
	if err != nil {
		return nil, nil, err
	}
	plan, err := runners.Plan(s, &runners.Options{Root: a.String("results"), Inputs: runInputs})
	if err != nil {
		return nil, nil, err
	}
	sel, err := runners.Select(plan, a.StringSlice("only"))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	return s, sel, nil
}

// printStatus prints the state of the runs plan of s under root, and of
// its Slurm jobs.
func printStatus(ctx context.Context, w io.Writer, root string, s *experiments.Spec, plan []*runners.Run) error {
	count := map[string]int{}
	var failed []string
	for _, r := range plan {
		st, err := runners.State(r.Dir)
		count[st]++
		switch st {
		case string(results.Failed):
			msg := "?"
			if m, err := results.ReadManifest(r.Dir); err == nil {
				msg, _, _ = strings.Cut(m.Error, "\n")
			}
			failed = append(failed, fmt.Sprintf("  %s %s: %s", r.ID, r.Config.String(), msg))
		case runners.StateDamaged:
			failed = append(failed, fmt.Sprintf("  %s %s: damaged: %v", r.ID, r.Config.String(), err))
		}
	}
	var counts []string
	for _, st := range []string{string(results.OK), runners.StateToRun, string(results.Running), string(results.Failed), runners.StateInterrupted, runners.StateDamaged} {
		if count[st] > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", count[st], st))
		}
	}
	fmt.Fprintf(w, "%s: %d runs (scale %s): %s\n", s.Name, len(plan), s.Scale, strings.Join(counts, ", "))
	for _, f := range failed {
		fmt.Fprintln(w, f)
	}
	subs, err := slurm.Submissions(root, s.Name)
	if err != nil || len(subs) == 0 {
		return err
	}
	if err := slurm.Available(); err != nil {
		fmt.Fprintf(w, "%d Slurm submissions; job states unknown: %v\n", len(subs), err)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBMITTED\tJOBS\tRUNS\tIN THE QUEUE")
	for _, sub := range subs {
		q, err := slurm.Queue(ctx, sub.Jobs())
		if err != nil {
			return err
		}
		states := map[string]int{}
		for _, t := range q {
			states[t.State+reason(t)]++
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(states)) {
			parts = append(parts, fmt.Sprintf("%d %s", states[k], strings.ToLower(k)))
		}
		if len(parts) == 0 {
			parts = []string{"none (done)"}
		}
		jobs := strings.Join(sub.Arrays, ",")
		if sub.Pretrain != "" {
			jobs = sub.Pretrain + " (pretrain)," + jobs
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", sub.Submitted.Local().Format("2006-01-02 15:04:05"), jobs, len(sub.Runs), strings.Join(parts, ", "))
	}
	return tw.Flush()
}

// reason returns " (REASON)" for a pending task waiting for something
// other than its turn, or "".
func reason(t slurm.Task) string {
	switch t.Reason {
	case "", "None", "Priority", "Resources", "JobArrayTaskLimit":
		return ""
	}
	return " (" + t.Reason + ")"
}

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "cancel the Slurm jobs of an experiment",
		ArgsUsage: "EXP",
		Description: "Cancels (scancel) every job of the Slurm submissions of EXP still in the queue.\n" +
			"A task killed while running leaves its run unfinished, never half-written; the next\n" +
			"repro run submits it again.\n\n" +
			"   $ repro cancel table1",
		Flags:           statusFlags()[4:],
		SkipFlagParsing: true, // see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) != 1 {
				return errors.New("cancel: want one experiment")
			}
			s, err := experiments.Load(a.Args()[0], nil)
			if err != nil {
				return err
			}
			ids, err := slurm.Cancel(c.Context, a.String("results"), s.Name)
			if err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
			if len(ids) == 0 {
				fmt.Fprintf(c.App.Writer, "%s: no Slurm job of it is in the queue\n", s.Name)
				return nil
			}
			fmt.Fprintf(c.App.Writer, "%s: cancelled jobs %s\n", s.Name, strings.Join(ids, ", "))
			return nil
		}),
	}
}
