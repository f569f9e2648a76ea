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
