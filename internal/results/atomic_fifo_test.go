// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build unix

package results

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteNonRegular: Write to an existing named pipe writes through it
// and leaves the pipe in place (a rename would have replaced it with a
// regular file, as it would replace /dev/null when run as root), and a
// folder is refused.
func TestWriteNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// The read end, opened without blocking first, lets Write open the
	// write end at once; the message fits the pipe's buffer.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write(fifo, func(w io.Writer) error {
		_, err := io.WriteString(w, "through the pipe")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if s := string(buf[:n]); s != "through the pipe" {
		t.Errorf("the reader got %q", s)
	}
	fi, err := os.Lstat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after Write, %s has mode %v: the pipe was replaced", fifo, fi.Mode())
	}
	if err := Write(dir, func(w io.Writer) error { return nil }); err == nil {
		t.Error("Write to a folder: no error")
	}
}
