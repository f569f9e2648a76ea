// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"slices"
	"strings"
	"testing"

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
