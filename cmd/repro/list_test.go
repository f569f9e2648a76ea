// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "list", "--results", dir)
	if err != nil {
		t.Fatalf("repro list: %v", err)
	}
	// The columns are as wide as the longest experiment name.
	if !regexp.MustCompile(`(?m)^EXPERIMENT +DESCRIPTION$`).MatchString(out) {
		t.Errorf("repro list printed:\n%s\nwant a header EXPERIMENT  DESCRIPTION", out)
	}
	for _, want := range []string{"\ntable1  ", "\nfig1  ", "Dual-Priv Table 1 shape", "no runs under " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("repro list printed:\n%s\nwant it to contain %q", out, want)
		}
	}
	if _, _, err := run(t, "run", fakeSpec(t, ""), "--results", dir); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "list", "--results", dir)
	if err != nil {
		t.Fatalf("repro list: %v", err)
	}
	if !strings.Contains(out, "4 runs under "+dir) || strings.Count(out, " fake ") != 4 || strings.Count(out, " ok ") != 4 {
		t.Errorf("repro list after a run printed:\n%s", out)
	}
	if _, _, err := run(t, "list", "extra"); err == nil {
		t.Errorf("repro list extra: got nil error")
	}
}
