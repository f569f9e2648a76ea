// A stand-in for the NVIDIA driver's library, for TestDriverShimOnFake:
// the 21 entry points nn/cuda looks up, under the names cuda.h gives them
// (cuMemAlloc is cuMemAlloc_v2, and so on), with "device" memory in host
// memory. It has one GPU, "Fake GPU", compute capability 8.0, 1 GiB.
//
// A function's name ends in its parameter count ("record5" takes 5). A
// launch of it writes, to the device pointer in its first parameter, the
// grid and block shapes (6 words) and then every parameter's 64-bit word
// as cuLaunchKernel received it: the test reads them back to check the
// shim's packing. Build: cc -shared -fPIC -o libfakecuda.so fakecuda.c
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

struct fake_fn { int nparams; };

CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult r, const char **s) {
	switch (r) {
	case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; return CUDA_SUCCESS;
	case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
	case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
	default: break;
	}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
	if (r == CUDA_ERROR_NOT_FOUND) { *s = "named symbol not found"; return CUDA_SUCCESS; }
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i) { if (i != 0) return CUDA_ERROR_INVALID_VALUE; *d = 0; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *s, int n, CUdevice d) { strncpy(s, "Fake GPU", n); return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
	if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) { *v = 8; return CUDA_SUCCESS; }
	if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) { *v = 0; return CUDA_SUCCESS; }
	return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuDeviceTotalMem(size_t *b, CUdevice d) { *b = (size_t)1 << 30; return CUDA_SUCCESS; }
static int fake_ctx;
CUresult cuCtxCreate(CUcontext *c, unsigned int flags, CUdevice d) {
	if (flags != CU_CTX_SCHED_BLOCKING_SYNC) return CUDA_ERROR_INVALID_VALUE;
	*c = (CUcontext)&fake_ctx;
	return CUDA_SUCCESS;
}
CUresult cuCtxDestroy(CUcontext c) { return c == (CUcontext)&fake_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuCtxSetCurrent(CUcontext c) { return c == (CUcontext)&fake_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
static int fake_module;
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
	if (strncmp((const char *)image, "//", 2) != 0) return CUDA_ERROR_INVALID_VALUE;
	*m = (CUmodule)&fake_module;
	return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
	if (strncmp(name, "record", 6) != 0) return CUDA_ERROR_NOT_FOUND;
	struct fake_fn *fn = malloc(sizeof *fn);
	fn->nparams = atoi(name + 6);
	*f = (CUfunction)fn;
	return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { return m == (CUmodule)&fake_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return CUDA_SUCCESS; }
CUresult cuMemFree(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (void *)(uintptr_t)src, n); return CUDA_SUCCESS; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, CUstream s, void **params, void **extra) {
	struct fake_fn *fn = (struct fake_fn *)f;
	if (shared != 0 || s != NULL || extra != NULL || fn->nparams < 1) return CUDA_ERROR_INVALID_VALUE;
	unsigned long long *out = (unsigned long long *)(uintptr_t)*(CUdeviceptr *)params[0];
	unsigned long long dims[6] = {gx, gy, gz, bx, by, bz};
	memcpy(out, dims, sizeof dims);
	for (int i = 0; i < fn->nparams; i++) memcpy(&out[6 + i], params[i], 8);
	return CUDA_SUCCESS;
}
