// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// finishedRun writes a finished run into a new folder: metrics, scores, an
// extra file, and the manifest recording them.
func finishedRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteMetrics(filepath.Join(dir, MetricsFile), []Metric{{Step: 1, Split: "train", Name: "loss", Value: 2.5}}); err != nil {
		t.Fatal(err)
	}
	if err := WriteScores(filepath.Join(dir, ScoresFile), []Score{{Attack: "loss-mia", ExampleID: 1, Member: true, Score: 0.5}}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "base.json"), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	files, err := HashFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("HashFiles recorded %d files, want 3: %+v", len(files), files)
	}
	m := testManifest("0123456789abcdef", OK)
	m.Files = files
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheck damages each file of a finished run in turn and checks that
// the run no longer counts as finished and that the damage is named.
func TestCheck(t *testing.T) {
	truncate := func(n int64) func(string) error {
		return func(name string) error { return os.Truncate(name, n) }
	}
	for _, tc := range []struct {
		desc   string
		file   string
		damage func(name string) error
	}{
		{"nothing", "", nil},
		{"metrics truncated to 100 bytes", MetricsFile, truncate(100)},
		{"scores truncated to 0 bytes", ScoresFile, truncate(0)},
		{"extra file removed", "base.json", os.Remove},
		{"a byte flipped, same size", MetricsFile, func(name string) error {
			b, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 1
			return os.WriteFile(name, b, 0o644)
		}},
		{"manifest truncated", ManifestFile, truncate(100)},
		{"manifest emptied", ManifestFile, truncate(0)},
		{"manifest records no files", ManifestFile, func(name string) error {
			m, err := ReadManifest(name)
			if err != nil {
				return err
			}
			m.Files = nil
			return WriteManifest(filepath.Dir(name), m)
		}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			dir := finishedRun(t)
			if tc.damage != nil {
				if err := tc.damage(filepath.Join(dir, tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Check(dir)
			if got := Finished(dir); got != (tc.damage == nil) {
				t.Errorf("Finished = %v, want %v (Check: %v)", got, tc.damage == nil, err)
			}
			if tc.damage == nil {
				if err != nil {
					t.Errorf("Check of an intact run: %v", err)
				}
				return
			}
			de, ok := errors.AsType[*DamagedError](err)
			if !ok {
				t.Fatalf("Check = %v, want a *DamagedError", err)
			}
			if de.File != tc.file {
				t.Errorf("Check names %s as damaged, want %s (%v)", de.File, tc.file, err)
			}
		})
	}
	if _, err := Check(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check(folder without a manifest) = %v, want fs.ErrNotExist", err)
	}
}

// TestInjectFault checks that a write failed by InjectFault leaves the
// file as it was and no temporary file behind.
func TestInjectFault(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.txt")
	if err := WriteFile(name, []byte("old")); err != nil {
		t.Fatal(err)
	}
	undo := InjectFault(func(string) error { return syscall.ENOSPC })
	err := WriteFile(name, []byte("new contents"))
	undo()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteFile under a full-disk fault: %v, want ENOSPC", err)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Errorf("after the failed write the file holds %q, want %q", b, "old")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after the failed write the folder holds %d files, want 1", len(ents))
	}
	if err := WriteFile(name, []byte("new")); err != nil {
		t.Errorf("WriteFile after undo: %v", err)
	}
}
