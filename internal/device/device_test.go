// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !cuda

package device

import (
	"errors"
	"slices"
	"testing"
)

// TestNoCUDA checks the default build: the CPU is the only device, and
// asking for cuda is ErrNoCUDA without changing the device.
func TestNoCUDA(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{CPU}) {
		t.Errorf("Names() = %v, want [cpu]", got)
	}
	if err := Use(CUDA); !errors.Is(err, ErrNoCUDA) {
		t.Errorf("Use(cuda) = %v, want ErrNoCUDA", err)
	}
	if got := Current(); got != CPU {
		t.Errorf("after a failed Use(cuda), Current() = %q, want cpu", got)
	}
	if err := Use(CPU); err != nil {
		t.Errorf("Use(cpu) = %v", err)
	}
	if got := Describe(); got != CPU {
		t.Errorf("Describe() = %q, want cpu", got)
	}
	for _, name := range []string{"", "gpu", "CUDA", "tpu"} {
		if err := Check(name); err == nil || errors.Is(err, ErrNoCUDA) {
			t.Errorf("Check(%q) = %v, want an unknown-device error", name, err)
		}
	}
}
