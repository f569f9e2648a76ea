// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/runners"
)

func init() { register(taskCommand) }

// taskFlags are the flags of repro task.
var taskFlags = []cli.Flag{
	&cli.StringFlag{Name: "scale", Usage: "run at preset `scale`"},
	&cli.StringFlag{Name: "seeds", Usage: "seeds, as repro run takes them"},
	stringsFlag{&cli.StringSliceFlag{Name: "set", Usage: "override a spec value: `key=value`; repeatable"}},
	&cli.StringFlag{Name: "results", Value: "results", Usage: "write results under `dir`"},
	&cli.BoolFlag{Name: "fresh", Usage: "run the run again even if it is finished"},
}

// taskCommand is what each task of a Slurm job array executes: one run,
// with its lock and atomic writes, and no runs.parquet (the submitting
// repro writes it). It is hidden: users run repro run --executor slurm.
func taskCommand() *cli.Command {
	return &cli.Command{
		Name:      "task",
		Usage:     "execute one run of an experiment (the task of a Slurm job array)",
		ArgsUsage: "EXP ID",
		Hidden:    true,
		Description: "Executes the run ID of experiment EXP into the results folder, as the local pool\n" +
			"does (a lock on the run, atomic writes), unless it is finished. The exit status is\n" +
			"non-zero if the run failed or was not run.",
		Flags:           taskFlags,
		SkipFlagParsing: true, // see withArgs
		Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
			if len(a.Args()) != 2 {
				return errors.New("task: want EXP ID")
			}
			exp, id := a.Args()[0], a.Args()[1]
			specOpts, err := specOverrides(a.String("scale"), a.String("seeds"), a.StringSlice("set"))
			if err != nil {
				return err
			}
			s, err := experiments.Load(exp, specOpts)
			if err != nil {
				return err
			}
			o := &runners.Options{Root: a.String("results"), Jobs: 1, Only: []string{id}, Fresh: a.Bool("fresh"),
				NoRunsFile: true, Progress: c.App.ErrWriter, Inputs: runInputs}
			plan, err := runners.Plan(s, o)
			if err != nil {
				return err
			}
			n := 0
			for _, r := range plan {
				if r.ID == id {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("task: experiment %s has no run %s (the code, the spec or its flags differ from the submission's)", s.Name, id)
			}
			_, err = runners.Sweep(c.Context, s, o)
			return err
		}),
	}
}
