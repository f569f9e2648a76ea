// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !cuda

package device

// cudaBuilt reports whether the binary was built with the cuda tag.
const cudaBuilt = false

// useDevice switches to name, which Check accepted: only the CPU here,
// the default of package nn.
func useDevice(name string) error {
	if name != CPU {
		return ErrNoCUDA
	}
	return nil
}

// describeGPU is never called without the cuda build: the device cannot
// be cuda.
func describeGPU() string { return "" }
