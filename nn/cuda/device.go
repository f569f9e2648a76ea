// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/cuda/ptx"
)

// DefaultMinGemm is the default of Device.MinGemm: products of fewer
// multiply-adds stay on the CPU, where they cost less than the transfers.
// The environment variable REPRO_CUDA_MIN_GEMM (a count of multiply-adds,
// 0 for every product) replaces it in Open.
const DefaultMinGemm = 1 << 20

// A Device is one NVIDIA GPU with the kernels loaded. Its methods are safe
// for concurrent use: device work is serialised (one CUDA context, one
// stream), CPU fallbacks run in the caller's goroutine.
type Device struct {
	// MinGemm is the smallest product m·n·k that Gemm runs on the GPU;
	// set it before use. Open sets DefaultMinGemm.
	MinGemm int

	mu    sync.Mutex
	ctx   *cuContext
	mod   module
	fns   map[string]function
	name  string
	major int
	minor int
	total int64

	gemm  [3]buffer // A, B and C of Gemm, grown as needed
	bytes int64     // device memory held by the package's allocations
	peak  int64
}

var _ nn.Backend = (*Device)(nil)

// A buffer is a device allocation of bytes bytes.
type buffer struct {
	ptr   devicePtr
	bytes int64
}

// Open opens GPU ordinal (0 for the first), creates a context on it and
// loads the kernels. The first Open loads the driver (driver.go). It
// returns an error wrapping ErrNoDriver on a machine without the NVIDIA
// driver, ErrNoDevice where the driver finds no GPU, and an error when
// there is no such GPU or its compute capability is below 8.0 (the PTX
// targets compute_80).
func Open(ordinal int) (*Device, error) {
	if err := loadDriver(); err != nil {
		return nil, err
	}
	n, err := deviceCount()
	if err != nil {
		return nil, fmt.Errorf("%w: counting the GPUs: %w", ErrNoDevice, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver sees none; check nvidia-smi, or use --device cpu", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: no GPU %d (the driver sees %d)", ordinal, n)
	}
	g, err := deviceInfo(ordinal)
	if err != nil {
		return nil, fmt.Errorf("cuda: GPU %d: %w", ordinal, err)
	}
	d := &Device{MinGemm: DefaultMinGemm, fns: map[string]function{}, name: g.name, major: g.major, minor: g.minor, total: g.total}
	if v, ok := os.LookupEnv("REPRO_CUDA_MIN_GEMM"); ok {
		if d.MinGemm, err = strconv.Atoi(v); err != nil || d.MinGemm < 0 {
			return nil, fmt.Errorf("cuda: REPRO_CUDA_MIN_GEMM=%q: want a count of multiply-adds ≥ 0", v)
		}
	}
	if d.major < 8 {
		return nil, fmt.Errorf("cuda: %s has compute capability %d.%d; the kernels need 8.0 or later", d.name, d.major, d.minor)
	}
	if d.ctx, err = newContext(g.dev); err != nil {
		return nil, fmt.Errorf("cuda: creating a context on %s: %w", d.name, err)
	}
	err = d.ctx.do(func() error {
		mod, err := loadModule(ptx.Source)
		if err != nil {
			return fmt.Errorf("loading the PTX: %w", err)
		}
		d.mod = mod
		for _, k := range ptx.Kernels {
			fn, err := mod.function(k.Name)
			if err != nil {
				return fmt.Errorf("kernel %s: %w", k.Name, err)
			}
			d.fns[k.Name] = fn
		}
		return nil
	})
	if err != nil {
		d.ctx.destroy()
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return d, nil
}

// Close frees the device memory and destroys the context.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	errs = append(errs, d.ctx.do(func() error {
		for i := range d.gemm {
			d.free(&d.gemm[i])
		}
		return d.mod.unload()
	}))
	errs = append(errs, d.ctx.destroy())
	return errors.Join(errs...)
}

// String names the GPU and its compute capability.
func (d *Device) String() string {
	return fmt.Sprintf("%s (compute capability %d.%d, %d MiB, driver for CUDA %s; products of ≥ %d multiply-adds on the GPU)", d.name, d.major, d.minor, d.total>>20, driverVersion(), d.MinGemm)
}

// PeakBytes returns the most device memory the package's allocations have
// held at once since Open (or the last ResetPeak).
func (d *Device) PeakBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peak
}

// ResetPeak sets the peak to the memory held now.
func (d *Device) ResetPeak() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.peak = d.bytes
}

// The methods below run on the context's goroutine (inside ctx.Do) with
// d.mu held.

// alloc returns a device buffer of n bytes (at least 1).
func (d *Device) alloc(n int64) (buffer, error) {
	n = max(n, 4)
	p, err := memAlloc(n)
	if err != nil {
		return buffer{}, fmt.Errorf("allocating %d bytes: %w", n, err)
	}
	d.bytes += n
	d.peak = max(d.peak, d.bytes)
	return buffer{p, n}, nil
}

// grow makes b hold at least n bytes, reallocating without copying.
func (d *Device) grow(b *buffer, n int64) error {
	if b.bytes >= n && b.ptr != 0 {
		return nil
	}
	d.free(b)
	nb, err := d.alloc(n)
	if err != nil {
		return err
	}
	*b = nb
	return nil
}

// free releases b.
func (d *Device) free(b *buffer) {
	if b.ptr != 0 {
		memFree(b.ptr)
		d.bytes -= b.bytes
	}
	*b = buffer{}
}

// put copies x to the device at p.
func put[T float32 | float64](p devicePtr, x []T) error {
	if len(x) == 0 {
		return nil
	}
	return memcpyHtoD(p, unsafe.Pointer(&x[0]), int64(len(x))*int64(unsafe.Sizeof(x[0])))
}

// get copies len(x) elements from the device at p to x.
func get[T float32 | float64](x []T, p devicePtr) error {
	if len(x) == 0 {
		return nil
	}
	return memcpyDtoH(unsafe.Pointer(&x[0]), p, int64(len(x))*int64(unsafe.Sizeof(x[0])))
}

// launch runs kernel name with shape l and args, and waits for it.
func (d *Device) launch(name string, l ptx.Launch, args ...ptx.Arg) error {
	k, ok := ptx.Lookup(name)
	if !ok {
		return fmt.Errorf("no kernel %s", name)
	}
	words, err := k.Pack(args...)
	if err != nil {
		return err
	}
	fn := d.fns[name]
	if err := fn.launch(l.Grid.X, l.Grid.Y, l.Grid.Z, l.Block.X, l.Block.Y, l.Block.Z, words); err != nil {
		return fmt.Errorf("launching %s: %w", name, err)
	}
	if err := synchronize(); err != nil {
		return fmt.Errorf("running %s: %w", name, err)
	}
	return nil
}

// do runs f on the context's goroutine with d.mu held.
func (d *Device) do(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ctx.do(f)
}

// p returns the pointer argument of b.
func p(b buffer) ptx.Arg { return ptx.P(uintptr(b.ptr)) }
