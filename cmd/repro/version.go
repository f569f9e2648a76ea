// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

func init() { register(versionCommand) }

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the code revision and Go version of this binary",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "repro %s %s %s/%s\n", revision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// revision returns the VCS revision recorded in the build, with "+dirty" when
// the tree had local changes, or "unknown" when the binary carries none.
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "unknown", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
