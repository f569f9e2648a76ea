// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package buildinfo reports which code this binary was built from, for
// manifests and `repro version`.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// stamped is the revision the build stamped with the linker, the way
// `make build` does where the Go command records no VCS information
// (GOFLAGS=-buildvcs=false, a tree copied without .git):
//
//	go build -ldflags "-X github.com/repro-dp/repro/internal/buildinfo.stamped=$(git rev-parse HEAD)$(git diff --quiet HEAD || echo +dirty)"
//
// A trailing "+dirty" marks a tree with local changes. Empty when the
// build stamped nothing.
var stamped string

// Revision returns the VCS revision recorded in the build and whether the
// tree had local changes: the Go command's vcs.revision and vcs.modified
// when the build has them, else the revision stamped with the linker (see
// stamped), else "unknown".
func Revision() (rev string, modified bool) {
	rev = "unknown"
	if s, dirty := strings.CutSuffix(stamped, "+dirty"); s != "" {
		rev, modified = s, dirty
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return rev, modified
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

// Version returns the module version the Go command recorded in the build
// (a tag, or a pseudo-version derived from the revision), or "devel" when it
// recorded none, as in a build of a tree without .git.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "devel"
	}
	return info.Main.Version
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
