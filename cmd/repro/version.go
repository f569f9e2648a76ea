// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"fmt"
	"runtime"

	"github.com/repro-dp/repro/internal/buildinfo"

	"github.com/urfave/cli/v2"
)

func init() { register(versionCommand) }

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, code revision and Go version of this binary (as repro --version does)",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "repro version %s\n", version())
			return nil
		},
	}
}

// version returns what repro version and repro --version print after
// "repro version ": the module version, the code revision ("+dirty" when the
// tree had local changes) and the Go version and platform of the build, as
// in "devel (revision 0123abc…, go1.26.8 linux/amd64)".
func version() string {
	return fmt.Sprintf("%s (revision %s, %s %s/%s)", buildinfo.Version(), buildinfo.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
