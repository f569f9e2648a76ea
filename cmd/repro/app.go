// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/methods"
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
	cmds = append(cmds, helpCommand())
	return &cli.App{
		Name:        "repro",
		Usage:       "reproduce and benchmark differentially private fine-tuning of multimodal models",
		Description: description(),
		// urfave/cli prints "repro version " and this for --version (and -v).
		Version:   version(),
		Writer:    w,
		ErrWriter: wErr,
		// urfave/cli adds its help flag only when there is no help
		// command; repro has its own (helpCommand).
		Flags:          []cli.Flag{cli.HelpFlag},
		ExitErrHandler: func(*cli.Context, error) {}, // main prints the error and exits
		Commands:       cmds,
	}
}

// description returns the description in repro --help. It lists the
// methods and attacks from their registries, so it says what this build
// has, whatever is added later.
func description() string {
	return "repro fine-tunes a small shared multimodal transformer with differentially private\n" +
		"fine-tuning methods and their baselines, attacks every trained model, and writes\n" +
		"parquet results, paper-style tables and plots.\n\n" +
		"Methods: " + strings.Join(methods.Names(), ", ") + ".\n" +
		"Attacks: " + strings.Join(attacks.Names(), ", ") + ".\n" +
		"Experiments: repro list."
}

// helpCommand returns repro help: repro help CMD... runs repro CMD... --help,
// so it prints exactly the help that --help prints. It replaces the help
// command of urfave/cli v2, which prints the help of a command with
// subcommands (repro help data) before setting the command up, so without
// its COMMANDS and OPTIONS, and prints the help of data for
// repro help data info.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:            "help",
		Aliases:         []string{"h"},
		Usage:           "show the help of repro or of a command",
		ArgsUsage:       "[COMMAND [SUBCOMMAND]]",
		HideHelp:        true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := append([]string{c.App.Name}, c.Args().Slice()...)
			return c.App.RunContext(c.Context, append(args, "--help"))
		},
	}
}
