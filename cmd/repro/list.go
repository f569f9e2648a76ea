// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners"
)

func init() { register(listCommand) }

// listOptions holds the parsed flags of repro list.
type listOptions struct {
	results string
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the embedded experiments and the runs found under the results folder",
		Description: "Prints each experiment embedded in the binary with its description, then one line\n" +
			"per run found under --results: id, experiment, status, method, task, ε, seed, time.\n" +
			"A status is ok, failed, running, interrupted (left running by a process that is gone)\n" +
			"or damaged (a file does not match its manifest: the next repro run runs it again).\n\n" +
			"   $ repro list\n" +
			"   $ repro list --results /scratch/results",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "results", Value: "results", Usage: "look for runs under `dir`"},
		},
		SkipFlagParsing: true, // see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) > 0 {
				return fmt.Errorf("list: unexpected argument %q", a.Args()[0])
			}
			return list(c.App.Writer, c.App.ErrWriter, listOptions{results: a.String("results")})
		}),
	}
}

func list(w, wErr io.Writer, o listOptions) error {
	infos, err := experiments.List(nil)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "EXPERIMENT\tDESCRIPTION")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\n", in.Name, in.Description)
	}
	tw.Flush()

	ms, err := results.FindRuns(o.results)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "\nno runs under %s\n", o.results)
		return nil
	}
	if err != nil {
		// Unreadable manifests are reported, the others listed.
		fmt.Fprintf(wErr, "repro list: %v\n", err)
	}
	if len(ms) == 0 {
		fmt.Fprintf(w, "\nno runs under %s\n", o.results)
		return nil
	}
	fmt.Fprintf(w, "\n%d runs under %s\n", len(ms), o.results)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tEXPERIMENT\tSTATUS\tMETHOD\tTASK\tε\tSEED\tSECONDS")
	var damaged []error
	for _, m := range ms {
		// A run whose files do not verify is damaged; one left running
		// by a killed process is interrupted.
		st, err := runners.State(results.RunDir(o.results, m.Experiment, m.RunID))
		if err != nil {
			damaged = append(damaged, err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\n", m.RunID, m.Experiment, st, m.Config.Method, m.Config.Task, m.Config.Epsilon, m.Config.Seed, m.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, err := range damaged {
		fmt.Fprintf(wErr, "repro list: %v\n", err)
	}
	return nil
}
