// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package device

import (
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/cuda"
)

// cudaBuilt reports whether the binary was built with the cuda tag.
const cudaBuilt = true

// gpu is the opened GPU, nil until Use(CUDA).
var gpu *cuda.Device

// useDevice switches package nn's backend to name, which Check accepted:
// cuda opens the first GPU (once) and installs it; cpu restores the CPU
// backend.
func useDevice(name string) error {
	if name == CPU {
		nn.SetBackend(nil)
		return nil
	}
	if gpu == nil {
		d, err := cuda.Open(0)
		if err != nil {
			return err
		}
		gpu = d
	}
	nn.SetBackend(gpu)
	return nil
}

// describeGPU names the opened GPU.
func describeGPU() string { return gpu.String() }
