// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package buildinfo

import (
	"strings"
	"testing"
)

func TestStringMatchesRevision(t *testing.T) {
	rev, modified := Revision()
	if rev == "" {
		t.Fatalf("Revision() = %q, want a revision or \"unknown\"", rev)
	}
	got := String()
	if want := rev; modified {
		if got != want+"+dirty" {
			t.Errorf("String() = %q, want %q", got, want+"+dirty")
		}
	} else if got != want || strings.HasSuffix(got, "+dirty") {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestRevisionStamped(t *testing.T) {
	// Test binaries carry no vcs.* settings, so the stamped revision is
	// what Revision reports.
	defer func(s string) { stamped = s }(stamped)
	for _, tc := range []struct {
		stamped  string
		rev      string
		modified bool
	}{
		{"", "unknown", false},
		{"0123abc", "0123abc", false},
		{"0123abc+dirty", "0123abc", true},
		{"+dirty", "unknown", false}, // no git: the Makefile stamps only the suffix
	} {
		stamped = tc.stamped
		rev, modified := Revision()
		if rev != tc.rev || modified != tc.modified {
			t.Errorf("stamped %q: Revision() = %q, %v, want %q, %v", tc.stamped, rev, modified, tc.rev, tc.modified)
		}
	}
}
