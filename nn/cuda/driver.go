// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

// The CUDA driver API, loaded at first use. The binary does not link the
// driver's library: libcuda.so.1 is opened with dlopen by the first Open,
// and each entry point the package calls is looked up by the name cuda.h
// gives it (cuMemAlloc is cuMemAlloc_v2 in CUDA 11.8; drivers keep every
// such name for binaries built with older toolkits). So a cuda binary
// starts, and runs on the CPU, on a machine without the NVIDIA driver;
// only Open fails there, with ErrNoDriver or ErrNoDevice.

/*
#cgo LDFLAGS: -ldl
#cgo linux CFLAGS: -I/usr/local/cuda/include
#include <stdlib.h>
#include <dlfcn.h>
#include <cuda.h>

#define REPRO_STR(x) #x
#define REPRO_XSTR(x) REPRO_STR(x)

// Each entry point: a pointer of the type cuda.h declares, looked up by
// the name the macro expands to.
#define REPRO_FNS(X) \
	X(cuInit) \
	X(cuDriverGetVersion) \
	X(cuGetErrorName) \
	X(cuGetErrorString) \
	X(cuDeviceGetCount) \
	X(cuDeviceGet) \
	X(cuDeviceGetName) \
	X(cuDeviceGetAttribute) \
	X(cuDeviceTotalMem) \
	X(cuCtxCreate) \
	X(cuCtxDestroy) \
	X(cuCtxSetCurrent) \
	X(cuCtxSynchronize) \
	X(cuModuleLoadData) \
	X(cuModuleGetFunction) \
	X(cuModuleUnload) \
	X(cuMemAlloc) \
	X(cuMemFree) \
	X(cuMemcpyHtoD) \
	X(cuMemcpyDtoH) \
	X(cuLaunchKernel)

#define REPRO_PTR(f) static __typeof__(f) *repro_##f;
REPRO_FNS(REPRO_PTR)

// repro_load opens lib and looks up every entry point. It returns NULL,
// or what failed (a static or dlerror's string: copy it at once).
static const char *repro_load(const char *lib) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		return e ? e : "dlopen failed";
	}
#define REPRO_SYM(f) \
	repro_##f = (__typeof__(f) *)dlsym(h, REPRO_XSTR(f)); \
	if (repro_##f == NULL) { return "the driver lacks " REPRO_XSTR(f); }
	REPRO_FNS(REPRO_SYM)
	return NULL;
}

static CUresult repro_init(void) { return repro_cuInit(0); }
static CUresult repro_version(int *v) { return repro_cuDriverGetVersion(v); }
static const char *repro_error_name(CUresult r) {
	const char *s = NULL;
	if (repro_cuGetErrorName == NULL || repro_cuGetErrorName(r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}
static const char *repro_error_string(CUresult r) {
	const char *s = NULL;
	if (repro_cuGetErrorString == NULL || repro_cuGetErrorString(r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}
static CUresult repro_device_count(int *n) { return repro_cuDeviceGetCount(n); }
static CUresult repro_device_get(CUdevice *d, int i) { return repro_cuDeviceGet(d, i); }
static CUresult repro_device_name(char *s, int n, CUdevice d) { return repro_cuDeviceGetName(s, n, d); }
static CUresult repro_device_attribute(int *v, int a, CUdevice d) { return repro_cuDeviceGetAttribute(v, (CUdevice_attribute)a, d); }
static CUresult repro_device_total_mem(size_t *b, CUdevice d) { return repro_cuDeviceTotalMem(b, d); }
static CUresult repro_ctx_create(CUcontext *c, unsigned int flags, CUdevice d) { return repro_cuCtxCreate(c, flags, d); }
static CUresult repro_ctx_destroy(CUcontext c) { return repro_cuCtxDestroy(c); }
static CUresult repro_ctx_set_current(CUcontext c) { return repro_cuCtxSetCurrent(c); }
static CUresult repro_ctx_synchronize(void) { return repro_cuCtxSynchronize(); }
static CUresult repro_module_load_data(CUmodule *m, const void *image) { return repro_cuModuleLoadData(m, image); }
static CUresult repro_module_function(CUfunction *f, CUmodule m, const char *name) { return repro_cuModuleGetFunction(f, m, name); }
static CUresult repro_module_unload(CUmodule m) { return repro_cuModuleUnload(m); }
static CUresult repro_mem_alloc(CUdeviceptr *p, size_t n) { return repro_cuMemAlloc(p, n); }
static CUresult repro_mem_free(CUdeviceptr p) { return repro_cuMemFree(p); }
static CUresult repro_htod(CUdeviceptr dst, const void *src, size_t n) { return repro_cuMemcpyHtoD(dst, src, n); }
static CUresult repro_dtoh(void *dst, CUdeviceptr src, size_t n) { return repro_cuMemcpyDtoH(dst, src, n); }

#define REPRO_MAX_PARAMS 32

// repro_launch launches f on the default stream with n parameters, each
// read by the kernel from one 64-bit word of words (ptx.Kernel.Pack).
// The words are copied here, so the parameter array cuLaunchKernel reads
// is C memory.
static CUresult repro_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, const unsigned long long *words, int n) {
	unsigned long long w[REPRO_MAX_PARAMS];
	void *params[REPRO_MAX_PARAMS];
	if (n < 0 || n > REPRO_MAX_PARAMS) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) {
		w[i] = words[i];
		params[i] = &w[i];
	}
	return repro_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, 0, NULL, params, NULL);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// libcuda is the driver's library, as the NVIDIA driver installs it.
const libcuda = "libcuda.so.1"

// ErrNoDriver is the error of Open on a machine without the NVIDIA
// driver's library (libcuda.so.1) or with one too old for the package.
var ErrNoDriver = errors.New("cuda: no NVIDIA driver")

// ErrNoDevice is the error of Open where the driver loads but finds no
// usable GPU (no device, its kernel module not loaded, or a driver too old
// for the GPU).
var ErrNoDevice = errors.New("cuda: no NVIDIA GPU")

// devicePtr is a device address (CUdeviceptr).
type devicePtr uint64

var driver struct {
	once sync.Once
	err  error
}

// loadDriver opens the driver's library and initialises it, once per
// process; later calls return the first call's error.
func loadDriver() error {
	driver.once.Do(func() { driver.err = openDriver(libcuda) })
	return driver.err
}

// openDriver opens the driver library lib and calls cuInit. Its errors
// wrap ErrNoDriver or ErrNoDevice and say what to do.
func openDriver(lib string) error {
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	if e := C.repro_load(clib); e != nil {
		return fmt.Errorf("%w: %s could not be loaded (%s): install the NVIDIA driver on a machine with an NVIDIA GPU, or use --device cpu", ErrNoDriver, lib, C.GoString(e))
	}
	if r := C.repro_init(); r != C.CUDA_SUCCESS {
		return fmt.Errorf("%w: the driver (%s) found none: cuInit: %v; check nvidia-smi, or use --device cpu", ErrNoDevice, lib, cuError(r))
	}
	return nil
}

// driverVersion returns the driver's CUDA version as major.minor.
func driverVersion() string {
	var v C.int
	if C.repro_version(&v) != C.CUDA_SUCCESS {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// cuError is a driver API status as an error, nil for CUDA_SUCCESS.
type cuError C.CUresult

func (r cuError) Error() string {
	name, text := C.repro_error_name(C.CUresult(r)), C.repro_error_string(C.CUresult(r))
	switch {
	case name != nil && text != nil:
		return C.GoString(name) + " (" + C.GoString(text) + ")"
	case name != nil:
		return C.GoString(name)
	}
	return fmt.Sprintf("CUDA error %d", int(r))
}

// check returns nil for CUDA_SUCCESS, else r as an error.
func check(r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return cuError(r)
}

// The wrappers below are the package's whole use of the driver API. All
// but the device queries need a current context (cuContext.do).

func deviceCount() (int, error) {
	var n C.int
	err := check(C.repro_device_count(&n))
	return int(n), err
}

// gpuInfo is what Open reads about a GPU.
type gpuInfo struct {
	dev          C.CUdevice
	name         string
	major, minor int
	total        int64
}

func deviceInfo(ordinal int) (gpuInfo, error) {
	var g gpuInfo
	if err := check(C.repro_device_get(&g.dev, C.int(ordinal))); err != nil {
		return g, err
	}
	buf := make([]byte, 256)
	if err := check(C.repro_device_name((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)), g.dev)); err != nil {
		return g, err
	}
	g.name = C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
	var major, minor C.int
	if err := check(C.repro_device_attribute(&major, C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g.dev)); err != nil {
		return g, err
	}
	if err := check(C.repro_device_attribute(&minor, C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g.dev)); err != nil {
		return g, err
	}
	g.major, g.minor = int(major), int(minor)
	var total C.size_t
	if err := check(C.repro_device_total_mem(&total, g.dev)); err != nil {
		return g, err
	}
	g.total = int64(total)
	return g, nil
}

// A cuContext is a CUDA context (blocking synchronisation) on one GPU.
type cuContext struct {
	c C.CUcontext
}

func newContext(dev C.CUdevice) (*cuContext, error) {
	var c C.CUcontext
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check(C.repro_ctx_create(&c, C.CU_CTX_SCHED_BLOCKING_SYNC, dev)); err != nil {
		return nil, err
	}
	return &cuContext{c}, nil
}

// do runs f on one OS thread with the context current on it. Callers
// serialise their calls (Device.mu).
func (c *cuContext) do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check(C.repro_ctx_set_current(c.c)); err != nil {
		return err
	}
	return f()
}

func (c *cuContext) destroy() error {
	return check(C.repro_ctx_destroy(c.c))
}

// A module is loaded PTX; a function one of its kernels.
type (
	module   struct{ m C.CUmodule }
	function struct{ f C.CUfunction }
)

// loadModule JIT-compiles the PTX text src.
func loadModule(src string) (module, error) {
	img := C.CString(src)
	defer C.free(unsafe.Pointer(img))
	var m C.CUmodule
	err := check(C.repro_module_load_data(&m, unsafe.Pointer(img)))
	return module{m}, err
}

func (m module) function(name string) (function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.CUfunction
	err := check(C.repro_module_function(&f, m.m, cname))
	return function{f}, err
}

func (m module) unload() error { return check(C.repro_module_unload(m.m)) }

func memAlloc(n int64) (devicePtr, error) {
	var p C.CUdeviceptr
	err := check(C.repro_mem_alloc(&p, C.size_t(n)))
	return devicePtr(p), err
}

func memFree(p devicePtr) error { return check(C.repro_mem_free(C.CUdeviceptr(p))) }

// memcpyHtoD copies n bytes from src (host memory without Go pointers in
// it) to the device at dst.
func memcpyHtoD(dst devicePtr, src unsafe.Pointer, n int64) error {
	return check(C.repro_htod(C.CUdeviceptr(dst), src, C.size_t(n)))
}

// memcpyDtoH copies n bytes from the device at src to dst.
func memcpyDtoH(dst unsafe.Pointer, src devicePtr, n int64) error {
	return check(C.repro_dtoh(dst, C.CUdeviceptr(src), C.size_t(n)))
}

// launch launches f with grid and block shapes and the packed parameter
// words (ptx.Kernel.Pack), on the default stream, without waiting.
func (f function) launch(gx, gy, gz, bx, by, bz int, words []uint64) error {
	var w *C.ulonglong
	if len(words) > 0 {
		w = (*C.ulonglong)(unsafe.Pointer(&words[0]))
	}
	return check(C.repro_launch(f.f, C.uint(gx), C.uint(gy), C.uint(gz), C.uint(bx), C.uint(by), C.uint(bz), w, C.int(len(words))))
}

func synchronize() error { return check(C.repro_ctx_synchronize()) }
