// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// Write writes the file name atomically: write is called with a buffered
// writer on a temporary file in name's folder, which is then flushed,
// synced, closed and renamed to name, and the folder is synced. If write
// or any step fails, the temporary file is removed, name is left as it was
// and the error is returned. The folder must exist. The file gets mode 0644.
// Temporary files of name that a dead writer left (older than StaleTemp)
// are removed after a successful write.
//
// A name that exists and is not a regular file (a device such as
// /dev/null or /dev/stdout, a named pipe) is written in place: renaming
// over it would replace the device with a file. A folder is an error.
func Write(name string, write func(w io.Writer) error) (err error) {
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("results: %s is a folder, not a file", name)
		}
		return writeInPlace(name, write)
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return fmt.Errorf("results: writing %s: %w", name, err)
	}
	if f := fault.Load(); f != nil {
		if err := (*f)(name); err != nil {
			return fmt.Errorf("results: writing %s: %w", name, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	removeStaleTemps(dir, base)
	return syncDir(dir)
}

// StaleTemp is the age after which a temporary file of Write that is
// still there was left by a writer that died (kill -9, a crash): a write
// takes seconds.
const StaleTemp = 10 * time.Minute

// removeStaleTemps removes the temporary files of base in dir that are
// older than StaleTemp; a younger one may belong to a writer still at
// work. Errors are ignored: the files are only clutter.
func removeStaleTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp"
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > StaleTemp {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// fault, when set, is called by Write before each file is completed.
var fault atomic.Pointer[func(name string) error]

// InjectFault makes every later [Write] call f with the name of the file
// it is writing, once its contents are written, and fail as a full disk
// would when f returns an error: the temporary file is removed, name is
// left as it was and the error is returned, wrapped. It returns the
// function that undoes it. It is meant for fault-injection tests; f must
// be safe for concurrent use.
func InjectFault(f func(name string) error) (undo func()) {
	fault.Store(&f)
	return func() { fault.Store(nil) }
}

// WriteFile writes data to the file name atomically; see [Write].
func WriteFile(name string, data []byte) error {
	return Write(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// syncDir makes a rename in dir durable. Filesystems that cannot sync a
// folder (some return EINVAL) are not an error: the rename is still atomic.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer d.Close()
	d.Sync()
	return nil
}

// writeInPlace writes to the existing non-regular file name (a device or
// a named pipe) directly, with no temporary file and no rename.
func writeInPlace(name string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		f.Close()
		return fmt.Errorf("results: writing %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("results: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}
