// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

// Package cuda provides the GPU backend of package nn on NVIDIA GPUs,
// through the CUDA driver API and the kernels of package nn/cuda/ptx. It is built only with the cuda build tag: the default build
// of repro has no cgo and no CUDA.
//
// What runs on the GPU:
//   - the matrix products of the tape (nn.Backend.Gemm) of at least
//     MinGemm multiply-adds, with the CPU backend's bits exactly (the
//     sgemm kernel computes each element as the same fused multiply-add
//     chain in the same order); smaller ones stay on the CPU. Operands
//     travel to the device and back at every call: the tape's activations
//     live in host memory;
//   - the private part of a DP-SGD step (DPSGDStep): the per-example
//     norms, the clipping (nn.Clip's factors and its nudge), the ordered
//     sum, the noise addition, the normalisation by the expected batch
//     size, and the SGD update of the parameters;
//   - Adam and AdamW (AdamStep), with nn/optim's bits;
//   - GELU, row softmax and LayerNorm forward (GELU, Softmax, LayerNorm),
//     checked against the CPU but not yet used by the tape.
//
// What stays on the CPU: everything else of the forward and backward
// passes (elementwise maps, attention's softmax, LayerNorm, embeddings,
// the loss), the Gaussian draws (the host's noise stream, so that the
// noise is the one the CPU would add), and the methods' optimizer steps
// (repro run --device cuda offloads the matrix products only).
//
// Determinism: no kernel uses atomics; every reduction has one fixed order
// (per-thread strided partial sums, then a fixed tree in shared memory, or
// a sequential loop), so the same inputs give the same bits on the same
// GPU and build.
//
// The driver's library (libcuda.so.1) is not linked: the first Open loads
// it with dlopen and initialises the driver (driver.go), so a binary that
// imports the package starts, and runs on the CPU, on a machine without
// the driver or a GPU; there Open returns an error wrapping ErrNoDriver or
// ErrNoDevice. See docs/gpu.md.
package cuda
