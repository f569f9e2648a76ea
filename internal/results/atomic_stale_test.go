// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteRemovesStaleTemps checks that a write removes the temporary
// files of the same name that a killed writer left (older than
// StaleTemp), and keeps a fresh one, which may belong to a writer still
// at work, and those of other names.
func TestWriteRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".t.txt.tmp123")
	fresh := filepath.Join(dir, ".t.txt.tmp456")
	other := filepath.Join(dir, ".u.txt.tmp789")
	for _, f := range []string{stale, fresh, other} {
		if err := os.WriteFile(f, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * StaleTemp)
	for _, f := range []string{stale, other} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "t.txt"), []byte("whole")); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{stale: false, fresh: true, other: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
}
