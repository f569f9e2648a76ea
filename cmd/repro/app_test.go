// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/methods"
)

// TestHelpSaysWhatExists checks that repro --help lists every registered
// method and attack, and nothing else as a method: it once promised five
// methods when only two private ones existed.
func TestHelpSaysWhatExists(t *testing.T) {
	out, _, err := run(t, "--help")
	if err != nil {
		t.Fatalf("repro --help: %v", err)
	}
	lines := strings.Split(out, "\n")
	for _, tc := range []struct {
		prefix string
		names  []string
	}{
		{"   Methods: ", methods.Names()},
		{"   Attacks: ", attacks.Names()},
	} {
		if len(tc.names) == 0 {
			t.Fatalf("%s: empty registry", tc.prefix)
		}
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, tc.prefix) })
		if i < 0 {
			t.Errorf("repro --help has no line %q...:\n%s", tc.prefix, out)
			continue
		}
		got := strings.Split(strings.TrimSuffix(strings.TrimPrefix(lines[i], tc.prefix), "."), ", ")
		if !slices.Equal(got, tc.names) {
			t.Errorf("repro --help lists %q, the registry %q", got, tc.names)
		}
	}
	if strings.Contains(out, "five") {
		t.Errorf("repro --help still counts methods:\n%s", out)
	}
}

// TestHelpExamplesUseRealFlags checks every example in a command's help
// (a "$ repro CMD ..." line of its description): the command exists, and
// every flag the example gives is one of that command's flags.
func TestHelpExamplesUseRealFlags(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	var cmds []*cli.Command
	var walk func([]*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			cmds = append(cmds, c)
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	flagRe := regexp.MustCompile(`(?:^|\s)--?([a-z][a-z0-9-]*)`)
	examples := 0
	for _, c := range cmds {
		for _, line := range strings.Split(c.Description, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "$ repro ") {
				continue
			}
			examples++
			fields := strings.Fields(strings.TrimPrefix(line, "$ repro "))
			// The command the example runs: the longest run of command names.
			var target *cli.Command
			list := app.Commands
			for _, f := range fields {
				i := slices.IndexFunc(list, func(x *cli.Command) bool { return x.Name == f })
				if i < 0 {
					break
				}
				target, list = list[i], list[i].Subcommands
			}
			if target == nil {
				t.Errorf("%s: example %q runs no command", c.Name, line)
				continue
			}
			args, _, _ := strings.Cut(strings.Join(fields, " "), "#")
			for _, m := range flagRe.FindAllStringSubmatch(args, -1) {
				name := m[1]
				if name == "help" || name == "h" {
					continue
				}
				if !slices.ContainsFunc(target.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) }) {
					t.Errorf("%s: example %q gives --%s, which repro %s does not have", c.Name, line, name, target.Name)
				}
			}
		}
	}
	if examples < 20 {
		t.Errorf("found %d examples in the commands' help, want the 20 or more there are", examples)
	}
}
