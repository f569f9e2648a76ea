// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package slurm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/repro-dp/repro/runners"
)

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		n, max       int
		offsets, szs []int
	}{
		{1, 1001, []int{0}, []int{1}},
		{1001, 1001, []int{0}, []int{1001}},
		{1002, 1001, []int{0, 1001}, []int{1001, 1}},
		{7, 3, []int{0, 3, 6}, []int{3, 3, 1}},
	} {
		off, sz := chunks(tc.n, tc.max)
		if !cmp.Equal(off, tc.offsets) || !cmp.Equal(sz, tc.szs) {
			t.Errorf("chunks(%d, %d): got %v %v, want %v %v", tc.n, tc.max, off, sz, tc.offsets, tc.szs)
		}
	}
}

func TestParseMaxArraySize(t *testing.T) {
	// The lines as scontrol show config of Slurm 22.05 prints them.
	cfg := "KillWait                = 30 sec\nMaxArraySize            = 4001\nMaxJobCount             = 10000\n"
	if got := parseMaxArraySize(cfg); got != 4001 {
		t.Errorf("parseMaxArraySize: got %d, want 4001", got)
	}
	if got := parseMaxArraySize("MaxJobCount = 10\n"); got != defaultMaxArraySize {
		t.Errorf("parseMaxArraySize without the line: got %d, want %d", got, defaultMaxArraySize)
	}
}

func TestJobScriptQuotes(t *testing.T) {
	job := &Job{Exe: "/opt/re pro/repro", Root: "/shared/it's", Experiment: "table1", Spec: "table1",
		SpecArgs: []string{"--set", "sweep.epsilon=[1, 8]"}}
	s := jobScript(job, "/shared/it's/table1/.slurm/x", 2)
	for _, want := range []string{
		`'/opt/re pro/repro' 'task' '--results' '/shared/it'\''s' '--set' 'sweep.epsilon=[1, 8]' '--' 'table1' "$id"`,
		`dir='/shared/it'\''s/table1/.slurm/x'`,
		"retries=2",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("job script lacks %q:\n%s", want, s)
		}
	}
}

// fakeCommands puts shell scripts named after the Slurm commands on PATH.
// They stand in for a cluster only to inject faults that a real one does
// not produce on demand (an sbatch that fails half-way through a
// submission); the integration test (TestCluster) runs a real cluster.
func fakeCommands(t *testing.T, scripts map[string]string) string {
	t.Helper()
	bin := t.TempDir()
	for _, name := range []string{"sbatch", "squeue", "scancel", "scontrol", "srun"} {
		body, ok := scripts[name]
		if !ok {
			body = "exit 0"
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

func TestSubmitFailsHalfWay(t *testing.T) {
	bin := fakeCommands(t, map[string]string{
		// Arrays of at most 2 tasks: 3 runs make 2 arrays.
		"scontrol": `echo "MaxArraySize            = 2"`,
		"srun":     `echo repro-probe-seen`,
		// The pretraining job and the first array are accepted; the
		// second array is refused.
		"sbatch": `n=$(cat "$0.count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >"$0.count"
echo "$@" >>"$0.log"
if [ $n -ge 3 ]; then echo "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy" >&2; exit 1; fi
echo $((100 + n))`,
		"scancel": `echo "$@" >>"$0.log"`,
	})
	root := t.TempDir()
	job := &Job{Exe: "/usr/bin/repro", Root: root, Experiment: "table1", Spec: "table1", Bases: [][]string{{"--scale", "smoke", "--arch", "tinymllm"}}}
	var runs []*runners.Run
	for _, id := range []string{"a1", "b2", "c3"} {
		runs = append(runs, &runners.Run{Experiment: "table1", ID: id, Dir: filepath.Join(root, "table1", "runs", id)})
	}
	sub, err := Submit(t.Context(), job, nil, runs)
	if err == nil || !strings.Contains(err.Error(), "Job violates accounting/QOS policy") {
		t.Fatalf("Submit: got %+v, %v; want the error of the failed sbatch", sub, err)
	}
	sbatchLog, _ := os.ReadFile(filepath.Join(bin, "sbatch.log"))
	calls := strings.Split(strings.TrimSpace(string(sbatchLog)), "\n")
	if len(calls) != 3 || !strings.Contains(calls[1], "--array=0-1") || !strings.Contains(calls[1], "--dependency=afterok:101") ||
		!strings.Contains(calls[2], "--array=0-0") || !strings.Contains(calls[2], "REPRO_OFFSET=2") {
		t.Errorf("sbatch calls: got\n%s\nwant the pretraining job, then arrays 0-1 and 0-0 (offset 2) depending on it", sbatchLog)
	}
	scancelLog, _ := os.ReadFile(filepath.Join(bin, "scancel.log"))
	if got := strings.TrimSpace(string(scancelLog)); got != "101 102" {
		t.Errorf("scancel: got %q, want the jobs submitted before the failure, 101 102", got)
	}
	if subs, err := Submissions(root, "table1"); err != nil || len(subs) != 0 {
		t.Errorf("Submissions after a failed submission: got %d (%v), want none", len(subs), err)
	}
}

func TestSubmitResultsNotShared(t *testing.T) {
	bin := fakeCommands(t, map[string]string{
		// The probe runs on a node that does not see the results folder.
		"srun":   `echo repro-probe-missing node7`,
		"sbatch": `echo "$@" >>"$0.log"; echo 101`,
	})
	root := t.TempDir()
	job := &Job{Exe: "/usr/bin/repro", Root: root, Experiment: "table1", Spec: "table1"}
	runs := []*runners.Run{{Experiment: "table1", ID: "a1", Dir: filepath.Join(root, "table1", "runs", "a1")}}
	_, err := Submit(t.Context(), job, nil, runs)
	if want := "compute node node7 does not see the results folder " + root; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Submit: got %v, want an error containing %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(bin, "sbatch.log")); err == nil {
		t.Error("Submit called sbatch after the probe failed")
	}
}

// TestJobScriptRetries runs the job script with sh, with a stand-in for
// repro that fails its first calls, and checks that --retries executes
// the run again, and that a task killed by a signal is not retried.
func TestJobScriptRetries(t *testing.T) {
	for _, tc := range []struct {
		desc           string
		retries        int
		failures, code int // the stand-in fails its first failures calls with exit status code
		wantCalls      int
		wantOK         bool
	}{
		{"no retries", 0, 1, 1, 1, false},
		{"retried", 2, 2, 1, 3, true},
		{"retries used up", 1, 2, 1, 2, false},
		{"killed", 3, 1, 143, 1, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "repro")
			stub := fmt.Sprintf("#!/bin/sh\nn=$(cat %[1]s/calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n >%[1]s/calls\necho \"$@\" >%[1]s/args\n[ $n -le %[2]d ] && exit %[3]d\nexit 0\n", dir, tc.failures, tc.code)
			if err := os.WriteFile(exe, []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string]string{probeFile: "x\n", "runs.txt": "r0\nr1\nr2\n"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			job := &Job{Exe: exe, Root: dir, Experiment: "table1", Spec: "table1"}
			cmd := exec.Command("sh", "-c", jobScript(job, dir, tc.retries))
			cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1", "REPRO_OFFSET=1")
			err := cmd.Run()
			if (err == nil) != tc.wantOK {
				t.Errorf("job script: got %v, want success %v", err, tc.wantOK)
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
			if got := strings.TrimSpace(string(calls)); got != fmt.Sprint(tc.wantCalls) {
				t.Errorf("repro called %s times, want %d", got, tc.wantCalls)
			}
			// Task 1 of the array at offset 1 is the third run.
			if args, _ := os.ReadFile(filepath.Join(dir, "args")); !strings.HasSuffix(strings.TrimSpace(string(args)), "-- table1 r2") {
				t.Errorf("repro called with %q, want the run r2", args)
			}
		})
	}
}
