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
		Usage: "print the code revision and Go version of this binary",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "repro %s %s %s/%s\n", buildinfo.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
