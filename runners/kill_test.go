// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package runners

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/repro-dp/repro/internal/results"
)

const killChildEnv = "RUNNERS_TEST_KILL_CHILD"

// TestKillResume kills a sweep with SIGKILL half way (in a child process:
// this test binary, re-executed) and checks that every file left behind
// reads back, and that a second sweep completes the rest.
func TestKillResume(t *testing.T) {
	if root := os.Getenv(killChildEnv); root != "" {
		// The child: a slow sweep, killed by the parent.
		slow := func(ctx context.Context, r *Run, rec *Recorder) error {
			time.Sleep(20 * time.Millisecond)
			return fake(ctx, r, rec)
		}
		Sweep(context.Background(), parse(t), &Options{Root: root, Jobs: 2, Executor: slow})
		t.Fatal("the child sweep finished before it was killed")
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillResume$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once a few runs are recorded.
	deadline := time.Now().Add(time.Minute)
	for {
		ok := 0
		ms, _ := filepath.Glob(filepath.Join(root, "exp", "runs", "*", results.ManifestFile))
		for _, m := range ms {
			if results.Finished(filepath.Dir(m)) {
				ok++
			}
		}
		if ok >= 4 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the child recorded %d runs in a minute", ok)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// Every manifest and parquet file left behind reads back; a run folder
	// holds no stray files except the temporary files of a write the
	// kill interrupted (the next attempt empties the folder).
	finished := 0
	dirs, _ := filepath.Glob(filepath.Join(root, "exp", "runs", "*"))
	for _, d := range dirs {
		m, err := results.ReadManifest(d)
		if err != nil {
			if _, serr := os.Stat(filepath.Join(d, results.ManifestFile)); serr == nil {
				t.Errorf("run %s: unreadable manifest: %v", d, err)
			}
			continue
		}
		if m.Status == results.OK {
			finished++
			if _, err := results.ReadMetrics(filepath.Join(d, results.MetricsFile)); err != nil {
				t.Errorf("finished run %s: %v", d, err)
			}
			if _, err := results.ReadScores(filepath.Join(d, results.ScoresFile)); err != nil {
				t.Errorf("finished run %s: %v", d, err)
			}
			if _, err := results.ReadPredictions(filepath.Join(d, results.PredictionsFile)); err != nil {
				t.Errorf("finished run %s: %v", d, err)
			}
		}
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			switch n := e.Name(); {
			case n == results.ManifestFile, n == results.MetricsFile, n == results.ScoresFile, n == results.PredictionsFile:
			case strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp") && m.Status != results.OK:
			default:
				t.Errorf("run %s (%s): unexpected file %s", d, m.Status, n)
			}
		}
	}
	if finished < 4 || finished == 18 {
		t.Errorf("after the kill %d runs are finished, want between 4 and 17", finished)
	}

	sum, err := Sweep(t.Context(), parse(t), &Options{Root: root, Jobs: 2, Executor: fake})
	if err != nil {
		t.Fatalf("Sweep after the kill: %v", err)
	}
	if sum.Cached != finished || sum.OK != 18-finished {
		t.Errorf("Sweep after the kill: %+v, want %d cached and %d ok", sum, finished, 18-finished)
	}
	runs, err := results.ReadRuns(filepath.Join(root, "exp", results.RunsFile))
	if err != nil || len(runs) != 18 {
		t.Errorf("runs.parquet after the resumed sweep: %d rows, %v", len(runs), err)
	}
	stale, _ := filepath.Glob(filepath.Join(root, "exp", ".*.tmp*"))
	if len(stale) > 0 {
		t.Errorf("stale files after the resumed sweep: %q", stale)
	}
}
