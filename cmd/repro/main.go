// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal stops the work in order; the second exits at
		// once, even where the signal was ignored when repro started (a
		// background job of a script), which restoring the default
		// handling would not do.
		s := <-sig
		if s == syscall.SIGTERM && len(os.Args) > 1 && os.Args[1] == "task" {
			// A Slurm task is terminated by scancel, its time limit or
			// its node's failure: its run stays unfinished (a manifest
			// that says running, no half file) and the next submission
			// runs it again, so there is nothing to finish first.
			fmt.Fprintf(os.Stderr, "repro: task terminated (%v): its run is left unfinished; the next submission runs it again\n", s)
			os.Exit(143)
		}
		cancel(fmt.Errorf("%v: %w", s, context.Canceled))
		s = <-sig
		fmt.Fprintf(os.Stderr, "repro: second signal (%v): exiting at once\n", s)
		os.Exit(130)
	}()
	if err := newApp(os.Stdout, os.Stderr).RunContext(ctx, os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "repro: %v\n", err)
		// A command documents its exit statuses other than 1 (repro
		// compare exits 2 on a partial comparison) by an ExitCoder.
		code := 1
		if ec, ok := errors.AsType[cli.ExitCoder](err); ok && ec.ExitCode() != 0 {
			code = ec.ExitCode()
		}
		os.Exit(code)
	}
}
