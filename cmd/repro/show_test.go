// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repro-dp/repro/internal/results"
)

func TestShow(t *testing.T) {
	dir := t.TempDir()
	spec := fakeSpec(t, "")
	if _, _, err := run(t, "run", spec, "--results", dir); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "fake", "runs"))
	if err != nil || len(ents) != 4 {
		t.Fatalf("runs: %v, %v", ents, err)
	}
	id := ents[0].Name()
	out, _, err := run(t, "show", id[:8], "--results", dir)
	if err != nil {
		t.Fatalf("repro show: %v", err)
	}
	m0, err := results.ReadManifest(filepath.Join(dir, "fake", "runs", id))
	if err != nil {
		t.Fatal(err)
	}
	eps := m0.Config.Epsilon.String()
	for _, want := range []string{"run " + id, "status ok", "method " + fakeMethod,
		"privacy.accountant rdp", "privacy.epsilon " + map[string]string{"1": "0.5", "8": "4"}[eps] + " (target " + eps + ")", "results.acc 0.", "stage.fine-tune 0.", "revision ", "inputs.data (not recorded)"} {
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("repro show printed:\n%s\nwant it to contain %q", out, want)
		}
	}
	// The load the run ran under, where the system reports one.
	if m0.LoadStart != nil && m0.LoadEnd != nil {
		want := fmt.Sprintf("load %.2f at start, %.2f at end (1-minute average)", *m0.LoadStart, *m0.LoadEnd)
		if !strings.Contains(squeeze(out), want) {
			t.Errorf("repro show printed:\n%s\nwant it to contain %q", out, want)
		}
	}
	out, _, err = run(t, "show", "--results", dir, "--json", "fake/"+id)
	if err != nil {
		t.Fatalf("repro show --json: %v", err)
	}
	m, err := results.DecodeManifest("stdout", []byte(out))
	if err != nil || m.RunID != id || m.Status != results.OK {
		t.Errorf("repro show --json: %v, %+v", err, m)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Errorf("repro show --json printed invalid JSON: %v", err)
	}

	// A failed run shows its error.
	if _, _, err := run(t, "run", spec, "--results", dir, "--seeds", "13,"); err == nil {
		t.Fatal("repro run with seed 13: got nil error")
	}
	rows, _ := results.ReadRuns(filepath.Join(dir, "fake", results.RunsFile))
	for _, r := range rows {
		if r.Status == results.Failed {
			out, _, err := run(t, "show", r.RunID, "--results", dir)
			if err != nil || !strings.Contains(squeeze(out), "status failed\nerror unlucky seed") {
				t.Errorf("repro show of a failed run: %v\n%s", err, out)
			}
		}
	}

	// A run left running by a process that is gone (kill -9) reads as
	// interrupted in show, as in list.
	rd := results.RunDir(dir, "fake", id)
	mf, err := results.ReadManifest(rd)
	if err != nil {
		t.Fatal(err)
	}
	mf.Status = results.Running
	if err := results.WriteManifest(rd, mf); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "show", id, "--results", dir)
	if err != nil || !strings.Contains(squeeze(out), "status interrupted") {
		t.Errorf("repro show of a run whose process is gone: %v\n%s", err, out)
	}
	if out, _, _ := run(t, "list", "--results", dir); !strings.Contains(out, id+"  fake") || !strings.Contains(out, "interrupted") {
		t.Errorf("repro list of a run whose process is gone:\n%s", out)
	}

	for _, tc := range []struct{ arg, want string }{
		{"ffffffffffff", "no run"},
		{"", "bad run"},
		{"*", "bad run"},
		{"x/", "bad run"},
	} {
		if _, _, err := run(t, "show", tc.arg, "--results", dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repro show %q: got %v, want %q", tc.arg, err, tc.want)
		}
	}
	// A one-character prefix matches several runs.
	if _, _, err := run(t, "show", "", "--results", dir); err == nil {
		t.Errorf("repro show with an empty id: got nil error")
	}
}

// squeeze replaces each run of spaces in s by one.
func squeeze(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}
