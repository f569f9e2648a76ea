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
