// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package buildinfo reports which code this binary was built from, for
// manifests and `repro version`.
package buildinfo

import "runtime/debug"

// Revision returns the VCS revision recorded in the build ("unknown" when the
// binary carries none, e.g. built with -buildvcs=false) and whether the tree
// had local changes.
func Revision() (rev string, modified bool) {
	rev = "unknown"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return rev, false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}

// String returns Revision as one word: the revision, with "+dirty" appended
// when the tree had local changes.
func String() string {
	rev, modified := Revision()
	if modified {
		rev += "+dirty"
	}
	return rev
}
