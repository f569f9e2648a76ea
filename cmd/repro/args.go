// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// The commands that take positional arguments accept their flags before,
// between and after them, as their usage lines show
// (repro table results/x --format md). urfave/cli v2 stops parsing flags at
// the first positional argument, so these commands set SkipFlagParsing and
// wrap their Action in withArgs, which parses all their arguments with
// parseArgs against the flags their help text lists.

// cmdArgs holds the arguments of a command parsed by parseArgs: its
// positional arguments, in order, and the values of its flags.
type cmdArgs struct {
	pos   []string
	fs    *flag.FlagSet
	given []string // the names of the flags given, in the command's order
}

// parseArgs parses args, the arguments of the command called name (such
// as "table" or "data info"), against flags, the command's urfave/cli
// flags. Flags may come before, between and after the positional
// arguments, as -flag or --flag, with their value as --flag=value or
// --flag value; a boolean flag takes no separate value (--json, or
// --json=false). Every argument after "--" is positional. A repeated flag
// keeps its last value, or, for a slice flag, all its values in order.
//
// parseArgs returns an error wrapping flag.ErrHelp if args hold -h or
// --help, and an error that starts with name and names the flag for an
// unknown flag, a missing value or a value that does not parse. The help
// flag of urfave/cli (cli.HelpFlag) in flags is left out. parseArgs panics
// if another flag has an alias: its value could not be read back under
// the flag's name.
func parseArgs(name string, flags []cli.Flag, args []string) (*cmdArgs, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range flags {
		if f == cli.HelpFlag {
			continue
		}
		if len(f.Names()) != 1 {
			panic(fmt.Sprintf("cmd/repro: %s: parseArgs does not support flag aliases (%s)", name, strings.Join(f.Names(), ", ")))
		}
		if err := f.Apply(fs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	// Split args into flags (with their values) and positional arguments,
	// then parse the flags in one go, so that they are checked as the flag
	// package checks them. A flag's value is the next argument unless the
	// flag is boolean or has its value after "=", as in the flag package;
	// so --title -- gives --title the value "--".
	a := &cmdArgs{fs: fs}
	var flagArgs []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.pos = append(a.pos, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			a.pos = append(a.pos, arg)
			continue
		}
		flagArgs = append(flagArgs, arg)
		fname := strings.TrimPrefix(arg[1:], "-")
		if strings.Contains(fname, "=") {
			continue
		}
		if f := fs.Lookup(fname); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			flagArgs = append(flagArgs, args[i+1])
			i++
		}
	}
	err := fs.Parse(flagArgs)
	if errors.Is(err, flag.ErrHelp) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if fs.NArg() > 0 { // cannot be: flagArgs holds only flags and their values
		panic("cmd/repro: parseArgs left arguments " + strings.Join(fs.Args(), " "))
	}
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// fs.Visit goes in lexical order; keep that of the command's flags,
	// which is that of its help text.
	for _, f := range flags {
		if n := f.Names()[0]; given[n] {
			a.given = append(a.given, n)
		}
	}
	return a, nil
}

// isBoolFlag reports whether f takes no separate value, as the flag
// package decides it.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// withArgs returns the Action of a command that sets SkipFlagParsing: it
// parses the command's arguments with parseArgs and calls action with
// them, or prints the command's help if they hold -h or --help. It panics
// if the command does not set SkipFlagParsing, since urfave/cli would then
// have taken the flags before the first positional argument already.
func withArgs(action func(*cli.Context, *cmdArgs) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Command.SkipFlagParsing {
			panic("cmd/repro: withArgs: command " + c.Command.Name + " must set SkipFlagParsing")
		}
		// HelpName is the command line that runs the command, such as
		// "repro data info"; errors start with "data info".
		name := strings.TrimPrefix(c.Command.HelpName, c.App.Name+" ")
		a, err := parseArgs(name, c.Command.Flags, c.Args().Slice())
		if errors.Is(err, flag.ErrHelp) {
			// As urfave/cli prints the help of a command with no subcommands.
			tmpl := c.Command.CustomHelpTemplate
			if tmpl == "" {
				tmpl = cli.CommandHelpTemplate
			}
			cli.HelpPrinter(c.App.Writer, tmpl, c.Command)
			return nil
		}
		if err != nil {
			return err
		}
		return action(c, a)
	}
}

// Args returns the positional arguments.
func (a *cmdArgs) Args() []string { return a.pos }

// Given returns the names of the flags given, in the order of the
// command's flags.
func (a *cmdArgs) Given() []string { return a.given }

// get returns the value of the flag called name. It panics if the command
// has no such flag, or if its value cannot be read back.
func (a *cmdArgs) get(name string) any {
	f := a.fs.Lookup(name)
	if f == nil {
		panic("cmd/repro: " + a.fs.Name() + " has no flag --" + name)
	}
	return f.Value.(flag.Getter).Get()
}

// String returns the value of a string flag.
func (a *cmdArgs) String(name string) string { return a.get(name).(string) }

// Int returns the value of an int flag.
func (a *cmdArgs) Int(name string) int { return a.get(name).(int) }

// Uint64 returns the value of a uint64 flag.
func (a *cmdArgs) Uint64(name string) uint64 { return a.get(name).(uint64) }

// Float64 returns the value of a float64 flag.
func (a *cmdArgs) Float64(name string) float64 { return a.get(name).(float64) }

// Bool returns the value of a bool flag.
func (a *cmdArgs) Bool(name string) bool { return a.get(name).(bool) }

// StringSlice returns the values of a string slice flag: those given, in
// order, each split at commas (cli.StringSliceFlag), or kept whole
// (stringsFlag); the default if none is given.
func (a *cmdArgs) StringSlice(name string) []string {
	switch v := a.get(name).(type) {
	case cli.StringSlice:
		return v.Value()
	case stringsValue:
		return []string(v)
	default:
		panic(fmt.Sprintf("cmd/repro: --%s is a %T, not a string slice", name, v))
	}
}

// stringsValue is the value of a repeatable string flag that keeps each
// value whole, commas included (--set sweep.seed=[1,2]).
type stringsValue []string

func (s *stringsValue) String() string     { return strings.Join(*s, " ") }
func (s *stringsValue) Set(v string) error { *s = append(*s, v); return nil }
func (s *stringsValue) Get() any           { return *s }

// stringsFlag is a repeatable string flag whose values are kept whole,
// never split at commas as a cli.StringSliceFlag's are. Its help line is
// that of the embedded cli.StringSliceFlag, whose Value must be nil.
type stringsFlag struct {
	*cli.StringSliceFlag
}

// Apply adds a fresh, empty value for the flag to fs.
func (f stringsFlag) Apply(fs *flag.FlagSet) error {
	v := new(stringsValue)
	for _, name := range f.Names() {
		fs.Var(v, name, f.Usage)
	}
	return nil
}
