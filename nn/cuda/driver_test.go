// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"errors"
	"strings"
	"testing"
)

// These tests run without a GPU: that this test binary starts at all on a
// machine without the NVIDIA driver is the first of them (the driver is
// loaded by Open, not by the package's init).

// TestOpenDriverMissing checks the error of a driver library that cannot
// be loaded: ErrNoDriver, naming the library and the way out.
func TestOpenDriverMissing(t *testing.T) {
	const lib = "libcuda-repro-missing.so.1"
	err := openDriver(lib)
	t.Logf("openDriver(%q): %v", lib, err)
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("openDriver(%q) = %v, want an error wrapping ErrNoDriver", lib, err)
	}
	for _, want := range []string{"no NVIDIA driver", lib, "install the NVIDIA driver", "--device cpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("openDriver(%q) = %q, lacks %q", lib, err, want)
		}
	}
}

// TestOpenWithoutGPU checks that Open on a machine without a usable GPU
// returns ErrNoDriver or ErrNoDevice, and the same error again on a
// second call (the driver is loaded once). On a machine with a GPU it is
// skipped.
func TestOpenWithoutGPU(t *testing.T) {
	d, err := Open(0)
	if err == nil {
		d.Close()
		t.Skip("a GPU is here")
	}
	if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) {
		t.Fatalf("Open(0) without a GPU = %v, want an error wrapping ErrNoDriver or ErrNoDevice", err)
	}
	if !strings.Contains(err.Error(), "--device cpu") {
		t.Errorf("Open(0) = %q, does not say to use --device cpu", err)
	}
	_, err2 := Open(0)
	if err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Open(0) = %v, want the first call's %v", err2, err)
	}
	t.Logf("Open(0): %v", err)
}
