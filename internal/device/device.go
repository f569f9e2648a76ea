// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package device selects the hardware that trains: the CPU, or an NVIDIA
// GPU through CUDA in a binary built with the cuda build tag.
//
// The default build has no CUDA code and no cgo: asking it for the cuda
// device is an error ([ErrNoCUDA]) returned before anything runs. The
// cuda build (go build -tags cuda, make cuda-build) adds package nn/cuda,
// which loads the CUDA driver at first use: that binary starts and runs on
// the CPU without a driver, and Use(CUDA) fails there; see docs/gpu.md.
//
// The device is provenance, not configuration: it is recorded in a run's
// manifest but does not enter the run id, so a run finished on one device
// is not executed again on the other (see docs/gpu.md, Run ids).
package device

import (
	"errors"
	"fmt"
	"sync"
)

// The devices a binary may offer.
const (
	CPU  = "cpu"
	CUDA = "cuda"
)

// ErrNoCUDA is the error of Use(CUDA) in a binary built without the cuda
// build tag.
var ErrNoCUDA = errors.New("device: this repro was built without CUDA (the cuda build tag): build it with `make cuda-build` on a machine with the CUDA toolkit (docs/gpu.md), or use --device cpu")

var (
	mu      sync.Mutex
	current = CPU
)

// Names returns the devices this binary can train on, the CPU first.
func Names() []string {
	if cudaBuilt {
		return []string{CPU, CUDA}
	}
	return []string{CPU}
}

// Check reports whether name is a device this binary can train on, without
// opening it: an unknown name, or cuda in a binary without the cuda build
// tag, is an error.
func Check(name string) error {
	switch name {
	case CPU:
		return nil
	case CUDA:
		if !cudaBuilt {
			return ErrNoCUDA
		}
		return nil
	}
	return fmt.Errorf("device: unknown device %q (cpu or cuda)", name)
}

// Use makes name the device every later training step of this process runs
// on. For cuda it opens the first GPU and installs its backend in package
// nn; an error (no cuda build, no driver, no GPU) leaves the device as it
// was. Use must be called before any training starts, not concurrently
// with it.
func Use(name string) error {
	if err := Check(name); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if name == current {
		return nil
	}
	if err := useDevice(name); err != nil {
		return err
	}
	current = name
	return nil
}

// Current returns the device in use: cpu until Use selects another.
func Current() string {
	mu.Lock()
	defer mu.Unlock()
	return current
}

// Describe returns the device in use in words: "cpu", or "cuda" with the
// GPU's name, compute capability and memory.
func Describe() string {
	mu.Lock()
	defer mu.Unlock()
	if current == CUDA {
		return CUDA + ": " + describeGPU()
	}
	return current
}
