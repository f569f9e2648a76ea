// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package slurm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners/slurm"
)

// The integration test runs a subset of table1 at scale smoke through a
// real Slurm cluster (scripts/slurm-local.sh up starts a one-node one) and
// through the local pool, and checks that the results are the same bit
// for bit; then it cancels a task in the middle of its run and checks that
// a second submission completes the same table. With
// REPRO_SLURM_NODE_FAILURE=1 (set by .ci/run for the one-node cluster it
// starts; never set it on a shared cluster) it also marks the node down
// while a task runs, as a node failure does, and checks that Slurm
// requeues the task and the requeued task completes the same table.
// REPRO_SLURM_FULL=1 runs
// the whole of table1 at smoke (78 runs, about 15 minutes on two cores)
// in place of the subset.

// subset is the part of table1 the test runs: 4 runs of about 5 s each on
// two cores (DP-SGD at ε = 8 and the non-private baseline, seed 1, on both
// tasks).
var subset = []string{"--seeds", "1", "--only", "method=dpsgd,epsilon=8", "--only", "method=nonprivate"}

// skipWithoutSlurm skips the test where no Slurm cluster answers.
func skipWithoutSlurm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slurm: the integration test runs a sweep on a real cluster; skipped in -short")
	}
	if err := slurm.Available(); err != nil {
		t.Skipf("slurm: no Slurm cluster here (%v); scripts/slurm-local.sh install && scripts/slurm-local.sh up starts a one-node one", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sinfo", "--noheader", "--responding", "--format=%t").Output()
	if err != nil || !strings.Contains(string(out), "idle") && !strings.Contains(string(out), "mix") && !strings.Contains(string(out), "alloc") {
		t.Skipf("slurm: the Slurm commands are here but no node responds (sinfo: %q, %v); scripts/slurm-local.sh up starts the local cluster", out, err)
	}
}

// buildRepro builds the repro binary into dir and returns its path.
func buildRepro(t *testing.T, dir string) string {
	t.Helper()
	exe := filepath.Join(dir, "repro")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", exe, "github.com/repro-dp/repro/cmd/repro")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// repro runs the binary exe with args and returns its standard output;
// it fails the test if repro fails.
func repro(t *testing.T, exe string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("repro %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	t.Logf("repro %s: %.1fs", strings.Join(args, " "), time.Since(start).Seconds())
	return out.String()
}

// volatile are the results that measure the machine, not the run.
var volatile = []string{"step_seconds", "train_peak_bytes", "sparta_sparse_step_seconds"}

// readRuns reads root/table1/runs.parquet without its machine-dependent
// values (the wall time, what it was measured under, and the volatile
// results).
func readRuns(t *testing.T, root string) []results.Run {
	t.Helper()
	rows, err := results.ReadRuns(filepath.Join(root, "table1", results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Seconds, rows[i].LoadStart, rows[i].LoadEnd, rows[i].GOMAXPROCS, rows[i].Jobs = 0, 0, 0, 0, 0
		for _, k := range volatile {
			delete(rows[i].Results, k)
		}
	}
	slices.SortFunc(rows, func(a, b results.Run) int { return strings.Compare(a.RunID, b.RunID) })
	return rows
}

// fileHashes returns the SHA-256 of every file each run under root wrote,
// by run and file, but base.json, which names the base's path under root.
func fileHashes(t *testing.T, root string) map[string]string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "table1", "runs", "*"))
	h := map[string]string{}
	for _, d := range dirs {
		m, err := results.Check(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if f.Name != "base.json" {
				h[filepath.Base(d)+"/"+f.Name] = f.SHA256
			}
		}
	}
	return h
}

// compareResults checks that the runs under got equal those under want:
// the same rows of runs.parquet but for timings, and the same files bit
// for bit.
func compareResults(t *testing.T, got, want string) {
	t.Helper()
	g, w := readRuns(t, got), readRuns(t, want)
	if len(w) == 0 {
		t.Fatalf("no runs under %s", want)
	}
	if diff := cmp.Diff(w, g, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("runs.parquet through Slurm differs from the local pool's (-local +slurm):\n%s", diff)
	}
	if diff := cmp.Diff(fileHashes(t, want), fileHashes(t, got)); diff != "" {
		t.Errorf("run files through Slurm differ from the local pool's (-local +slurm):\n%s", diff)
	}
}

func TestCluster(t *testing.T) {
	skipWithoutSlurm(t)
	tmp := t.TempDir()
	exe := buildRepro(t, tmp)
	args := []string{"table1", "--scale", "smoke"}
	if os.Getenv("REPRO_SLURM_FULL") == "" {
		args = append(args, subset...)
	}
	local := filepath.Join(tmp, "local")
	repro(t, exe, append([]string{"run", "--results", local, "--jobs", "2"}, args...)...)

	t.Run("identical", func(t *testing.T) {
		root := filepath.Join(tmp, "slurm")
		out := repro(t, exe, append([]string{"run", "--results", root, "--executor", "slurm", "--wait"}, args...)...)
		if !strings.Contains(out, "wrote "+filepath.Join(root, "table1", "table1.txt")) {
			t.Errorf("repro run --executor slurm --wait did not write the table:\n%s", out)
		}
		compareResults(t, root, local)
		subs, err := slurm.Submissions(root, "table1")
		if err != nil || len(subs) != 1 || subs[0].Pretrain == "" {
			t.Errorf("want one submission with a pretraining job, got %+v (%v)", subs, err)
		}
		// Everything is finished: a second run submits nothing.
		out = repro(t, exe, append([]string{"run", "--results", root, "--executor", "slurm"}, args...)...)
		if !strings.Contains(out, "nothing to submit") {
			t.Errorf("a second submission of finished runs says:\n%s", out)
		}
		status := repro(t, exe, append([]string{"status", "--results", root}, args[:3]...)...)
		t.Logf("repro status:\n%s", status)
	})

	t.Run("sbatch refuses", func(t *testing.T) {
		root := filepath.Join(tmp, "refused")
		cmd := exec.CommandContext(t.Context(), exe, append([]string{"run", "--results", root, "--executor", "slurm", "--sbatch-arg=--partition=no-such-partition"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Invalid partition name specified") {
			t.Errorf("repro run with a partition sbatch refuses: got %v, want sbatch's error; output:\n%s", err, out)
		}
		if subs, err := slurm.Submissions(root, "table1"); err != nil || len(subs) != 0 {
			t.Errorf("a refused submission recorded %d submissions (%v), want none", len(subs), err)
		}
	})

	t.Run("cancel and resubmit", func(t *testing.T) {
		root := filepath.Join(tmp, "fault")
		// The base is cached already: copy the cache, so that the tasks
		// start at once.
		if err := os.CopyFS(filepath.Join(root, "pretrain"), os.DirFS(filepath.Join(local, "pretrain"))); err != nil {
			t.Fatal(err)
		}
		repro(t, exe, append([]string{"run", "--results", root, "--executor", "slurm", "--array-limit", "1"}, args...)...)
		subs, err := slurm.Submissions(root, "table1")
		if err != nil || len(subs) != 1 {
			t.Fatalf("want one submission, got %d (%v)", len(subs), err)
		}
		sub := subs[0]
		// Wait for the first task's run to start, then cancel that task.
		first := filepath.Join(root, "table1", "runs", sub.Runs[0])
		deadline := time.Now().Add(5 * time.Minute)
		for {
			m, err := results.ReadManifest(first)
			if err == nil && m.Status == results.Running {
				break
			}
			if err == nil || time.Now().After(deadline) {
				t.Fatalf("run %s did not start running in time (manifest: %+v, %v)", sub.Runs[0], m, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		task := sub.Arrays[0] + "_0"
		if out, err := exec.Command("scancel", task).CombinedOutput(); err != nil {
			t.Fatalf("scancel %s: %v: %s", task, err, out)
		}
		for {
			q, err := slurm.Queue(t.Context(), sub.Jobs())
			if err != nil {
				t.Fatal(err)
			}
			if len(q) == 0 {
				break
			}
			time.Sleep(time.Second)
		}
		m, err := results.Check(first)
		if err != nil || m.Status != results.Running {
			t.Fatalf("the cancelled run: got manifest %+v (%v), want one that says running", m, err)
		}
		status := repro(t, exe, append([]string{"status", "--results", root}, args[:3]...)...)
		if !strings.Contains(status, "1 interrupted\n") {
			t.Errorf("repro status after cancelling a task does not count it interrupted:\n%s", status)
		}
		// A second submission runs the cancelled run only.
		repro(t, exe, append([]string{"run", "--results", root, "--executor", "slurm", "--wait"}, args...)...)
		subs, err = slurm.Submissions(root, "table1")
		if err != nil || len(subs) != 2 {
			t.Fatalf("want two submissions, got %d (%v)", len(subs), err)
		}
		if got := subs[1].Runs; !cmp.Equal(got, sub.Runs[:1]) {
			t.Errorf("the second submission ran %v, want only the cancelled run %v", got, sub.Runs[:1])
		}
		compareResults(t, root, local)
	})
	t.Run("node failure", func(t *testing.T) {
		if os.Getenv("REPRO_SLURM_NODE_FAILURE") != "1" {
			t.Skip("slurm: the node-failure test marks a node down; REPRO_SLURM_NODE_FAILURE=1 allows it (only on a test cluster)")
		}
		root := filepath.Join(tmp, "nodefail")
		if err := os.CopyFS(filepath.Join(root, "pretrain"), os.DirFS(filepath.Join(local, "pretrain"))); err != nil {
			t.Fatal(err)
		}
		repro(t, exe, append([]string{"run", "--results", root, "--executor", "slurm", "--array-limit", "1"}, args...)...)
		subs, err := slurm.Submissions(root, "table1")
		if err != nil || len(subs) != 1 {
			t.Fatalf("want one submission, got %d (%v)", len(subs), err)
		}
		sub := subs[0]
		first := filepath.Join(root, "table1", "runs", sub.Runs[0])
		deadline := time.Now().Add(5 * time.Minute)
		for {
			m, err := results.ReadManifest(first)
			if err == nil && m.Status == results.Running {
				break
			}
			if err == nil || time.Now().After(deadline) {
				t.Fatalf("run %s did not start running in time (manifest: %+v, %v)", sub.Runs[0], m, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		out, err := exec.Command("squeue", "--noheader", "--jobs="+sub.Arrays[0]+"_0", "--format=%N").Output()
		node := strings.TrimSpace(string(out))
		if err != nil || node == "" {
			t.Fatalf("squeue: the node of task %s_0: %q (%v)", sub.Arrays[0], out, err)
		}
		// Slurm kills the jobs of a node marked down and requeues those
		// submitted with --requeue, as it does when a node stops answering.
		if out, err := exec.Command("scontrol", "update", "nodename="+node, "state=down", "reason=repro node-failure test").CombinedOutput(); err != nil {
			t.Fatalf("scontrol update state=down: %v: %s", err, out)
		}
		resumed := false
		resume := func() {
			if !resumed {
				// The node may be back already (ReturnToService=2): ignore the error.
				exec.Command("scontrol", "update", "nodename="+node, "state=resume").Run()
				resumed = true
			}
		}
		defer resume()
		deadline = time.Now().Add(time.Minute)
		for {
			out, _ := exec.Command("scontrol", "show", "job", sub.Arrays[0]+"_0").Output()
			if strings.Contains(string(out), "Restarts=1") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s_0 was not requeued after its node went down:\n%s", sub.Arrays[0], out)
			}
			time.Sleep(200 * time.Millisecond)
		}
		resume()
		// The requeued task runs the run again; nothing is submitted twice.
		for {
			q, err := slurm.Queue(t.Context(), sub.Jobs())
			if err != nil {
				t.Fatal(err)
			}
			if len(q) == 0 {
				break
			}
			time.Sleep(time.Second)
		}
		// The task's output is appended to, so it keeps the killed attempt.
		if b, err := os.ReadFile(filepath.Join(sub.Dir, "task-"+sub.Arrays[0]+"_0.out")); err != nil || !strings.Contains(string(b), "NODE FAILURE") {
			t.Errorf("the requeued task's output does not keep Slurm's node-failure message (%v):\n%s", err, b)
		}
		if st, err := results.Check(first); err != nil || st.Status != results.OK {
			t.Fatalf("the requeued run: got manifest %+v (%v), want one that says ok", st, err)
		}
		out2 := repro(t, exe, append([]string{"run", "--results", root, "--executor", "slurm"}, args...)...)
		if !strings.Contains(out2, "nothing to submit") {
			t.Errorf("after the requeued task finished, a second submission says:\n%s", out2)
		}
		// Every run is finished: the local pool only writes the tables.
		repro(t, exe, append([]string{"run", "--results", root}, args...)...)
		compareResults(t, root, local)
	})
}
