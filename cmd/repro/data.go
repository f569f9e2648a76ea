// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/datasets"
)

func init() { register(dataCommand) }

func dataCommand() *cli.Command {
	return &cli.Command{
		Name:  "data",
		Usage: "inspect the tasks' data",
		Description: "repro data info TASK prints what a task's runs train and are tested on.\n\n" +
			"   $ repro data info fashion-vqa --scale smoke",
		Subcommands: []*cli.Command{{
			Name:      "info",
			Usage:     "print a task's split sizes, vocabulary, class balance, canaries and fingerprint",
			ArgsUsage: "TASK",
			Description: "TASK is one of " + strings.Join(datasets.Tasks(), ", ") + ".\n" +
				"The default data is embedded in the binary; --data-dir reads the full Fashion-MNIST\n" +
				"release (Debian package dataset-fashion-mnist installs it in " + datasets.DefaultFashionDir + ").\n" +
				"A task's splits depend on the seed: the runs of seed N train on the data of --seed N.\n\n" +
				"   $ repro data info fashion-vqa --scale smoke\n" +
				"   $ repro data info records --seed 2 --examples 1 --scale smoke\n" +
				"   $ repro data info fashion-cls --json",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "scale", Value: string(datasets.Small), Usage: "size `preset`: smoke, small or full"},
				&cli.StringFlag{Name: "data-dir", Usage: "read the full Fashion-MNIST release from `DIR`"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "data seed `N`: the run seed whose splits, generated content and canaries to show (runs of seed N train on it)"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				&cli.IntFlag{Name: "examples", Usage: "also print the first `N` examples of each split, decoded (not with --json)"},
			},
			SkipFlagParsing: true, // flags may follow TASK; see withArgs
			Action: withArgs(func(c *cli.Context, a *cmdArgs) error {
				if len(a.Args()) != 1 {
					return fmt.Errorf("data info: want one TASK argument (one of %s), got %d", strings.Join(datasets.Tasks(), ", "), len(a.Args()))
				}
				o := dataInfoOptions{task: a.Args()[0], scale: a.String("scale"), dataDir: a.String("data-dir"), seed: a.Uint64("seed"), json: a.Bool("json"), examples: a.Int("examples")}
				return dataInfo(c.App.Writer, o)
			}),
		}},
	}
}

type dataInfoOptions struct {
	task, scale, dataDir string
	seed                 uint64
	json                 bool
	examples             int
}

func dataInfo(w io.Writer, o dataInfoOptions) error {
	if !contains(datasets.Tasks(), o.task) {
		return fmt.Errorf("data info: unknown TASK %q: want one of %s", o.task, strings.Join(datasets.Tasks(), ", "))
	}
	scale, err := datasets.ParseScale(o.scale)
	if err != nil || o.scale == "" {
		return fmt.Errorf("data info: --scale %q: want one of smoke, small, full", o.scale)
	}
	if o.examples < 0 {
		return fmt.Errorf("data info: --examples %d: want N ≥ 0", o.examples)
	}
	d, err := datasets.Build(o.task, &datasets.Options{Scale: scale, Seed: o.seed, DataDir: o.dataDir})
	if err != nil {
		return err
	}
	info := d.Info()
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	if err := info.WriteText(w); err != nil {
		return err
	}
	if o.examples > 0 {
		return d.WriteExamples(w, o.examples)
	}
	return nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
