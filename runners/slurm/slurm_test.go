// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package slurm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
