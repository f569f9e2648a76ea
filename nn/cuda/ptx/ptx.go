// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package ptx provides the GPU kernels of package nn/cuda as PTX, with what
// a launch needs that can be computed and checked without a GPU: each
// kernel's parameter list, the packing of its arguments into the words
// cuLaunchKernel reads, and the grid and block shapes.
//
// The kernels are CUDA C (kernels.cu) compiled by go generate to PTX for
// compute_80 (generate.go) and embedded as Source, so that a binary needs
// only the NVIDIA driver at run time, which compiles the PTX for its GPU.
// The package is pure Go and part of every build; only nn/cuda, behind the
// cuda build tag, loads the PTX on a device.
package ptx

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
)

// Source is the PTX module of every kernel in Kernels.
//
//go:embed kernels.ptx
var Source string

// Sum is the output of sha256sum for the kernels.cu that Source was
// generated from.
//
//go:embed kernels.sum
var Sum string

// A Kind is the type of a kernel parameter, as the PTX declares it.
type Kind uint8

const (
	// Ptr is a device pointer (.u64).
	Ptr Kind = iota
	// Int is a long long (.u64).
	Int
	// F32 is a float (.f32).
	F32
	// F64 is a double (.f64).
	F64
)

// String returns the PTX type of k.
func (k Kind) String() string {
	switch k {
	case Ptr, Int:
		return ".u64"
	case F32:
		return ".f32"
	case F64:
		return ".f64"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// A Kernel is an entry point of Source and its parameters in order.
type Kernel struct {
	Name   string
	Params []Kind
}

// Kernels lists every kernel of kernels.cu.
var Kernels = []Kernel{
	{"sgemm", []Kind{Int, Int, Int, Int, Int, F32, Ptr, Int, Ptr, Int, F32, Ptr, Int}},
	{"gelu", []Kind{Ptr, Ptr, Int}},
	{"softmax_rows", []Kind{Ptr, Ptr, Int, Int}},
	{"layernorm_rows", []Kind{Ptr, Ptr, Ptr, Ptr, Int, Int, F64}},
	{"sumsq_rows", []Kind{Ptr, Int, Int, Ptr}},
	{"scale_rows", []Kind{Ptr, Int, Int, Ptr, Int}},
	{"sum_noise_scale", []Kind{Ptr, Int, Int, Ptr, F64, Ptr}},
	{"sgd_step", []Kind{Ptr, Ptr, Int, F32}},
	{"adam_step", []Kind{Ptr, Ptr, Ptr, Ptr, Int, F64, F64, F64, F64, F64, F64, F64, F64, F64}},
}

// Lookup returns the kernel called name.
func Lookup(name string) (Kernel, bool) {
	for _, k := range Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return Kernel{}, false
}

// An Arg is one argument of a launch: a value and the kind it was made as.
type Arg struct {
	kind Kind
	bits uint64
}

// P returns a device pointer argument.
func P(ptr uintptr) Arg { return Arg{Ptr, uint64(ptr)} }

// I returns a long long argument.
func I(n int) Arg { return Arg{Int, uint64(int64(n))} }

// F returns a float argument.
func F(f float32) Arg { return Arg{F32, uint64(math.Float32bits(f))} }

// D returns a double argument.
func D(f float64) Arg { return Arg{F64, math.Float64bits(f)} }

// ErrArgs is the error of Pack for arguments that do not match the
// kernel's parameters.
var ErrArgs = errors.New("ptx: arguments do not match the kernel's parameters")

// Pack returns the argument words of a launch of k: one 64-bit word per
// parameter, as package nn/cuda's launch copies them (one word behind
// each pointer of its kernelParams array) and cuLaunchKernel then reads
// them (the parameter's size from the word's address, so the low bytes on
// a little-endian host): a pointer or a long long as its 64 bits, a float
// as its 32 bits in the low half and zeros above, a double as its 64 bits.
// It returns ErrArgs, wrapped with the kernel's name, when the number or
// the kinds of args differ from k.Params.
func (k Kernel) Pack(args ...Arg) ([]uint64, error) {
	if len(args) != len(k.Params) {
		return nil, fmt.Errorf("%w: %s takes %d, got %d", ErrArgs, k.Name, len(k.Params), len(args))
	}
	w := make([]uint64, len(args))
	for i, a := range args {
		if a.kind != k.Params[i] {
			return nil, fmt.Errorf("%w: %s parameter %d is %v (kind %d), got kind %d", ErrArgs, k.Name, i, k.Params[i], k.Params[i], a.kind)
		}
		w[i] = a.bits
	}
	return w, nil
}
