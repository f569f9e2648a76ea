// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
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
		t.Errorf("repro version printed %q, want \"repro REV goVERSION OS/ARCH\"", out)
	}
}

func TestUnknownCommand(t *testing.T) {
	_, _, err := run(t, "no-such-command")
	if err == nil {
		t.Errorf("repro no-such-command: got nil error, want one")
	}
}

// TestHelpCommand checks that `repro help CMD` prints the command's help
// like `repro CMD --help` (it used to fail with "No help topic").
func TestHelpCommand(t *testing.T) {
	for _, cmd := range []string{"run", "table", "account"} {
		out, _, err := run(t, "help", cmd)
		if err != nil {
			t.Fatalf("repro help %s: %v", cmd, err)
		}
		want, _, err := run(t, cmd, "--help")
		if err != nil {
			t.Fatalf("repro %s --help: %v", cmd, err)
		}
		if out != want || !strings.Contains(out, "repro "+cmd) {
			t.Errorf("repro help %s:\n%s\nwant the output of repro %s --help:\n%s", cmd, out, cmd, want)
		}
	}
}
