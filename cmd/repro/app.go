// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// commands holds the subcommands; each subcommand's file registers its
// constructor from an init function, so adding one touches no other file.
var commands []func() *cli.Command

// register adds a subcommand constructor. It is called only from init functions.
func register(cmd func() *cli.Command) { commands = append(commands, cmd) }

// newApp returns the repro command line application writing to w and wErr.
// It never calls os.Exit, so tests can run the real application in-process.
func newApp(w, wErr io.Writer) *cli.App {
	cmds := make([]*cli.Command, 0, len(commands))
	for _, c := range commands {
		cmds = append(cmds, c())
	}
	slices.SortFunc(cmds, func(a, b *cli.Command) int { return strings.Compare(a.Name, b.Name) })
	return &cli.App{
		Name:  "repro",
		Usage: "reproduce and benchmark differentially private fine-tuning of multimodal models",
		Description: "repro fine-tunes a small shared multimodal transformer with five recent private\n" +
			"fine-tuning methods and their baselines, attacks every trained model, and writes\n" +
			"parquet results, paper-style tables and plots.",
		Writer:         w,
		ErrWriter:      wErr,
		ExitErrHandler: func(*cli.Context, error) {}, // main prints the error and exits
		Commands:       cmds,
	}
}
