// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

// The PTX is generated from kernels.cu with the CUDA toolkit's nvcc (11.8
// or later) for the virtual architecture compute_80, which the driver
// compiles for any GPU of compute capability 8.0 or higher (A100, H100,
// H200, ...) when it loads the module. kernels.sum records the SHA-256 of
// the source it was generated from; a test fails when they disagree.
//
//go:generate nvcc -ptx -arch=compute_80 -o kernels.ptx kernels.cu
//go:generate sh -c "sha256sum kernels.cu > kernels.sum"
