// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"
)

// testFlags returns flags of each kind the commands use, and the help flag.
func testFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "text"},
		&cli.IntFlag{Name: "jobs"},
		&cli.Uint64Flag{Name: "seed"},
		&cli.Float64Flag{Name: "factor", Value: 1},
		&cli.BoolFlag{Name: "json"},
		&cli.StringSliceFlag{Name: "cols", Value: cli.NewStringSlice("task")},
		stringsFlag{&cli.StringSliceFlag{Name: "set"}},
		&cli.GenericFlag{Name: "only", Value: new(stringsValue)},
		cli.HelpFlag,
	}
}

// parsed is what parseArgs returned, for comparison.
type parsed struct {
	Pos    []string
	Set    []string // the flags given
	Format string
	Jobs   int
	Seed   uint64
	Factor float64
	JSON   bool
	Cols   []string
	Sets   []string
	Only   []string
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	defaults := parsed{Format: "text", Factor: 1, Cols: []string{"task"}}
	with := func(f func(*parsed)) parsed {
		p := defaults
		f(&p)
		return p
	}
	for _, tc := range []struct {
		desc string
		args []string
		want parsed
	}{
		{"nothing", nil, defaults},
		{"positional only", []string{"a", "b"}, with(func(p *parsed) { p.Pos = []string{"a", "b"} })},
		{
			"flags before, between and after positional arguments",
			[]string{"--jobs", "2", "a", "--format", "md", "b", "--factor", "100"},
			with(func(p *parsed) {
				p.Pos, p.Set, p.Jobs, p.Format, p.Factor = []string{"a", "b"}, []string{"format", "jobs", "factor"}, 2, "md", 100
			}),
		},
		{
			"--flag=value and -flag value",
			[]string{"a", "--format=tex", "-seed", "7", "--factor=-0.5"},
			with(func(p *parsed) {
				p.Pos, p.Set, p.Format, p.Seed, p.Factor = []string{"a"}, []string{"format", "seed", "factor"}, "tex", 7, -0.5
			}),
		},
		{
			"a value may start with a dash or be --",
			[]string{"--format", "--", "a", "--factor", "-2"},
			with(func(p *parsed) {
				p.Pos, p.Set, p.Format, p.Factor = []string{"a"}, []string{"format", "factor"}, "--", -2
			}),
		},
		{
			"a boolean flag takes no separate value",
			[]string{"--json", "a", "--json=false", "--json", "true"},
			with(func(p *parsed) { p.Pos, p.Set, p.JSON = []string{"a", "true"}, []string{"json"}, true }),
		},
		{
			"--json=false",
			[]string{"a", "--json=false"},
			with(func(p *parsed) { p.Pos, p.Set = []string{"a"}, []string{"json"} }),
		},
		{
			"-- ends the flags",
			[]string{"--jobs", "3", "a", "--", "--format", "md", "-"},
			with(func(p *parsed) { p.Pos, p.Set, p.Jobs = []string{"a", "--format", "md", "-"}, []string{"jobs"}, 3 }),
		},
		{"- is positional", []string{"-", "--json"}, with(func(p *parsed) { p.Pos, p.Set, p.JSON = []string{"-"}, []string{"json"}, true })},
		{
			"the last value of a repeated flag wins",
			[]string{"--format", "md", "a", "--format", "tex"},
			with(func(p *parsed) { p.Pos, p.Set, p.Format = []string{"a"}, []string{"format"}, "tex" }),
		},
		{
			"slice flags: given values replace the default, in order, split at commas or kept whole",
			[]string{"--cols", "method,eps", "a", "--cols", "seed", "--set", "sweep.seed=[1,2]", "--only", "m=x,e=1", "--set", "delta=1e-6"},
			with(func(p *parsed) {
				p.Pos, p.Set = []string{"a"}, []string{"cols", "set", "only"}
				p.Cols, p.Sets, p.Only = []string{"method", "eps", "seed"}, []string{"sweep.seed=[1,2]", "delta=1e-6"}, []string{"m=x,e=1"}
			}),
		},
		{"--cols '' empties a slice", []string{"--cols", ""}, with(func(p *parsed) { p.Set, p.Cols = []string{"cols"}, []string{""} })},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			a, err := parseArgs("test", testFlags(), tc.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tc.args, err)
			}
			got := parsed{
				Pos: a.Args(), Set: a.Given(), Format: a.String("format"), Jobs: a.Int("jobs"), Seed: a.Uint64("seed"),
				Factor: a.Float64("factor"), JSON: a.Bool("json"), Cols: a.StringSlice("cols"), Sets: a.StringSlice("set"), Only: a.StringSlice("only"),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseArgs(%q): (-want +got)\n%s", tc.args, diff)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc string
		args []string
		want string // the error message
		help bool   // whether it wraps flag.ErrHelp
	}{
		{"unknown flag after a positional argument", []string{"a", "--nope"}, "data info: flag provided but not defined: -nope", false},
		{"unknown flag before a positional argument", []string{"--nope", "a"}, "data info: flag provided but not defined: -nope", false},
		{"unknown flag=value", []string{"a", "--nope=1"}, "data info: flag provided but not defined: -nope", false},
		{"missing value", []string{"a", "--jobs"}, "data info: flag needs an argument: -jobs", false},
		{"bad int", []string{"--jobs", "x", "a"}, `data info: invalid value "x" for flag -jobs: parse error`, false},
		{"negative uint", []string{"--seed", "-1"}, `data info: invalid value "-1" for flag -seed: parse error`, false},
		{"bad bool", []string{"--json=maybe"}, `data info: invalid boolean value "maybe" for -json: parse error`, false},
		{"--help", []string{"a", "--help"}, "data info: flag: help requested", true},
		{"-h", []string{"-h", "a"}, "data info: flag: help requested", true},
		{"-h after --", []string{"--", "-h"}, "", false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			_, err := parseArgs("data info", testFlags(), tc.args)
			if tc.want == "" {
				if err != nil {
					t.Errorf("parseArgs(%q): got error %v, want none", tc.args, err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || errors.Is(err, flag.ErrHelp) != tc.help {
				t.Errorf("parseArgs(%q): got error %v, want %q (help %t)", tc.args, err, tc.want, tc.help)
			}
		})
	}
}

// TestCommandArgs checks, for every command that takes flags after its
// positional arguments, that an unknown flag before or after them is an
// error naming the command and the flag, printing nothing, and that -h or
// --help anywhere prints the command's help. Like every test that runs
// the app, it is not parallel: urfave/cli writes to its global HelpFlag.
func TestCommandArgs(t *testing.T) {
	for _, cmd := range [][]string{{"run"}, {"list"}, {"show"}, {"table"}, {"plot"}, {"data", "info"}} {
		name := strings.Join(cmd, " ")
		for _, args := range [][]string{{"--nope", "x"}, {"x", "--nope"}, {"x", "--nope=1"}} {
			args = append(cmd[:len(cmd):len(cmd)], args...)
			out, errOut, err := run(t, args...)
			if want := name + ": flag provided but not defined: -nope"; err == nil || err.Error() != want || out != "" || errOut != "" {
				t.Errorf("repro %s: got error %v, output %q, %q; want error %q and no output", strings.Join(args, " "), err, out, errOut, want)
			}
		}
		for _, args := range [][]string{{"-h"}, {"x", "--help"}, {"--help", "x"}} {
			args = append(cmd[:len(cmd):len(cmd)], args...)
			out, _, err := run(t, args...)
			if err != nil || !strings.HasPrefix(out, "NAME:\n   repro "+name+" - ") || !strings.Contains(out, "\nOPTIONS:\n") || strings.Contains(out, "COMMANDS:") {
				t.Errorf("repro %s: got error %v, output\n%s\nwant the command's help", strings.Join(args, " "), err, out)
			}
		}
	}
}
