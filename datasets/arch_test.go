// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import "testing"

// TestArch ties the architecture table to the task registry: every task has
// one, and the generative tasks are exactly the TinyMLLM ones.
func TestArch(t *testing.T) {
	for _, task := range Tasks() {
		arch, ok := Arch(task)
		if !ok {
			t.Errorf("task %s has no architecture", task)
			continue
		}
		d, err := Build(task, &Options{Scale: Smoke, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.Generative != (arch == "tinymllm") {
			t.Errorf("task %s: architecture %s but Generative = %v", task, arch, d.Generative)
		}
	}
	if len(taskArch) != len(Tasks()) {
		t.Errorf("%d architectures for %d tasks", len(taskArch), len(Tasks()))
	}
	if _, ok := Arch("nosuch"); ok {
		t.Error("Arch(nosuch) found")
	}
}
