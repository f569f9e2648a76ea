// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// run runs the repro application in-process with args and returns its
// standard output, standard error and error.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var w, wErr bytes.Buffer
	err = newApp(&w, &wErr).RunContext(t.Context(), append([]string{"repro"}, args...))
	return w.String(), wErr.String(), err
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, "version")
	if err != nil {
		t.Fatalf("repro version: %v", err)
	}
	if !strings.HasPrefix(out, "repro ") || !strings.Contains(out, "go1.") {
		t.Errorf("repro version printed %q, want \"repro version VERSION (revision REV, goVERSION OS/ARCH)\"", out)
	}
}

func TestUnknownCommand(t *testing.T) {
	_, _, err := run(t, "no-such-command")
	if err == nil {
		t.Errorf("repro no-such-command: got nil error, want one")
	}
}

// TestHelpCommand checks that `repro help CMD...` prints the help of the
// command, or subcommand, like `repro CMD... --help` (it used to fail with
// "No help topic"), and `repro help` that of repro, like `repro --help`.
// A command with subcommands lists them (urfave/cli's help command printed
// its help before setting it up, so without its COMMANDS and OPTIONS).
func TestHelpCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want string // a line of the help
	}{
		{[]string{"run"}, "   repro run [command options] EXP..."},
		{[]string{"table"}, "   repro table [command options] EXP|FILE.parquet|RESULTS-DIR"},
		{[]string{"account"}, "OPTIONS:"},
		{[]string{"data"}, "   info     print a task's split sizes, vocabulary, class balance, canaries and fingerprint"},
		{[]string{"data", "info"}, "   repro data info [command options] TASK"},
		{nil, "   data      inspect the tasks' data"},
	} {
		name := strings.Join(tc.cmd, " ")
		out, errOut, err := run(t, append([]string{"help"}, tc.cmd...)...)
		if err != nil {
			t.Fatalf("repro help %s: %v", name, err)
		}
		want, _, err := run(t, append(tc.cmd[:len(tc.cmd):len(tc.cmd)], "--help")...)
		if err != nil {
			t.Fatalf("repro %s --help: %v", name, err)
		}
		if out != want || errOut != "" || !slices.Contains(strings.Split(out, "\n"), tc.want) {
			t.Errorf("repro help %s:\n%s\n(standard error %q)\nwant the output of repro %s --help, with the line %q:\n%s", name, out, errOut, name, tc.want, want)
		}
	}
}
