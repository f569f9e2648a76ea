// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/repro-dp/repro/nn/cuda/ptx"
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

// TestDriverShimOnFake drives the shim (driver.go) against a stand-in for
// the driver's library built from testdata/fakecuda.c with the C compiler
// cgo uses: the 21 entry points are found under cuda.h's names (the _v2
// ones where cuda.h says so), the device queries, a context, memory there
// and back, and a launch whose stand-in kernel writes back the shapes and
// the parameter words it received, the reference for the packing: each
// word is ptx.Kernel.Pack's, as cuLaunchKernel reads one parameter behind
// each pointer. On a machine whose real driver loaded, it is skipped, so
// as not to replace the real entry points in this process.
func TestDriverShimOnFake(t *testing.T) {
	if loadDriver() == nil {
		t.Skip("the real driver is loaded in this process")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	src := filepath.Join("testdata", "fakecuda.c")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("the stand-in's source: %v (the test runs in its package's folder)", err)
	}
	lib := filepath.Join(t.TempDir(), "libfakecuda.so")
	args := []string{"-shared", "-fPIC", "-o", lib, src}
	args = append(args, strings.Fields(os.Getenv("CGO_CFLAGS"))...)
	args = append(args, "-I/usr/local/cuda/include")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Skipf("no C compiler to build the stand-in driver: %v\n%s", err, out)
	}
	if err := openDriver(lib); err != nil {
		t.Fatalf("openDriver(stand-in): %v", err)
	}
	if v := driverVersion(); v != "13.0" {
		t.Errorf("driverVersion() = %q, want 13.0", v)
	}
	n, err := deviceCount()
	if err != nil || n != 1 {
		t.Fatalf("deviceCount() = %d, %v; want 1", n, err)
	}
	g, err := deviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	if g.name != "Fake GPU" || g.major != 8 || g.minor != 0 || g.total != 1<<30 {
		t.Errorf("deviceInfo(0) = %+v, want Fake GPU, 8.0, 1 GiB", g)
	}
	ctx, err := newContext(g.dev)
	if err != nil {
		t.Fatal(err)
	}
	err = ctx.do(func() error {
		// Memory: there and back.
		x := []float32{1, -2.5, float32(math.Pi), 7}
		p, err := memAlloc(int64(4 * len(x)))
		if err != nil {
			return err
		}
		defer memFree(p)
		if err := put(p, x); err != nil {
			return err
		}
		y := make([]float32, len(x))
		if err := get(y, p); err != nil {
			return err
		}
		if !slices.Equal(x, y) {
			t.Errorf("memory round trip: got %v, want %v", y, x)
		}
		// A launch: the stand-in records shapes and parameter words.
		mod, err := loadModule("// stand-in PTX")
		if err != nil {
			return err
		}
		defer mod.unload()
		if _, err := mod.function("sgemm"); err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_NOT_FOUND (named symbol not found)") {
			t.Errorf("function of a missing kernel: %v, want CUDA_ERROR_NOT_FOUND (named symbol not found)", err)
		}
		fn, err := mod.function("record5")
		if err != nil {
			return err
		}
		rec, err := memAlloc(8 * (6 + 5))
		if err != nil {
			return err
		}
		defer memFree(rec)
		k := ptx.Kernel{Name: "record5", Params: []ptx.Kind{ptx.Ptr, ptx.Int, ptx.F32, ptx.F64, ptx.Int}}
		words, err := k.Pack(ptx.P(uintptr(rec)), ptx.I(-3), ptx.F(1.5), ptx.D(-0.25), ptx.I(1<<40))
		if err != nil {
			return err
		}
		if err := fn.launch(7, 8, 9, 64, 2, 1, words); err != nil {
			return err
		}
		if err := synchronize(); err != nil {
			return err
		}
		got := make([]uint64, 6+5)
		if err := memcpyDtoH(unsafe.Pointer(&got[0]), rec, int64(8*len(got))); err != nil {
			return err
		}
		want := append([]uint64{7, 8, 9, 64, 2, 1}, words...)
		if !slices.Equal(got, want) {
			t.Errorf("the stand-in kernel received %v, want %v (shapes, then the packed words)", got, want)
		}
		if int64(got[7]) != -3 || math.Float32frombits(uint32(got[8])) != 1.5 || math.Float64frombits(got[9]) != -0.25 {
			t.Errorf("parameter words %v do not read back as -3, 1.5, -0.25", got[7:10])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.destroy(); err != nil {
		t.Fatal(err)
	}
}
