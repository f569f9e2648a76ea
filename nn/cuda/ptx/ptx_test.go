// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// entries parses the .entry declarations of a PTX module: each kernel's
// name and the types of its parameters in order.
func entries(t *testing.T, src string) map[string][]string {
	t.Helper()
	entry := regexp.MustCompile(`(?s)\.visible \.entry (\w+)\((.*?)\)`)
	param := regexp.MustCompile(`\.param (\.\w+) (\w+)_param_(\d+)`)
	out := map[string][]string{}
	for _, m := range entry.FindAllStringSubmatch(src, -1) {
		var types []string
		for i, p := range param.FindAllStringSubmatch(m[2], -1) {
			if p[2] != m[1] || p[3] != strconv.Itoa(i) {
				t.Fatalf("kernel %s: parameter %d is declared as %s_param_%s", m[1], i, p[2], p[3])
			}
			types = append(types, p[1])
		}
		out[m[1]] = types
	}
	return out
}

// TestEntries checks the embedded PTX against Kernels: every kernel is
// present with the parameter types Kernels gives (the ones Pack packs),
// and every entry point of the PTX is listed.
func TestEntries(t *testing.T) {
	got := entries(t, Source)
	if len(got) != len(Kernels) {
		t.Errorf("the embedded PTX has %d kernels, Kernels lists %d", len(got), len(Kernels))
	}
	for _, k := range Kernels {
		types, ok := got[k.Name]
		if !ok {
			t.Errorf("kernel %s is not in the embedded PTX", k.Name)
			continue
		}
		var want []string
		for _, p := range k.Params {
			want = append(want, p.String())
		}
		if !slices.Equal(types, want) {
			t.Errorf("kernel %s: the PTX declares parameters %v, Kernels says %v", k.Name, types, want)
		}
		delete(got, k.Name)
	}
	for name := range got {
		t.Errorf("the PTX has kernel %s, which Kernels does not list", name)
	}
}

// TestTarget checks that the PTX is for the virtual architecture
// compute_80 (sm_80 in the PTX), which the driver compiles for compute
// capability 8.0 and later, 64-bit addresses.
func TestTarget(t *testing.T) {
	for _, want := range []string{"\n.target sm_80\n", "\n.address_size 64\n"} {
		if !strings.Contains(Source, want) {
			t.Errorf("the PTX lacks %q", strings.TrimSpace(want))
		}
	}
}

// atomic matches a PTX atomic or reduction instruction (atom, red), with
// or without a guard predicate (@%p1, @!%p1), which nvcc puts on the
// atomics of a short conditional instead of a branch around them.
var atomic = regexp.MustCompile(`(?m)^\s*(@!?%\w+\s+)?(atom|red)\.`)

// TestNoAtomics checks that no kernel uses an atomic or reduction
// instruction (atom, red): every reduction has one fixed order, so a
// kernel gives the same bits run after run. It first checks that the
// pattern finds such instructions, guarded or not.
func TestNoAtomics(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"\tatom.global.add.f32 \t%f1, [%rd1], %f2;", true},
		{"\t@%p1 atom.global.add.f32 \t%f1, [%rd1], %f2;", true},
		{"\t@!%p2 red.global.add.f32 \t[%rd1], %f2;", true},
		{"\tatom.shared.cas.b32 \t%r1, [%r2], %r3, %r4;", true},
		{"\t@%p3 bra \t$L__BB0_2;", false},
		{"\tst.shared.f32 \t[%r8], %f463;", false},
		{"\tadd.rn.f64 \t%fd1, %fd2, %fd3; // red.global", false},
	} {
		if got := atomic.MatchString(tc.line); got != tc.want {
			t.Errorf("atomic.MatchString(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
	if m := atomic.FindString(Source); m != "" {
		t.Errorf("the PTX has an atomic instruction: %q", strings.TrimSpace(m))
	}
}

// TestSum checks that the PTX was generated from the kernels.cu beside it:
// after editing kernels.cu, run go generate ./nn/cuda/ptx (needs nvcc).
func TestSum(t *testing.T) {
	src, err := os.ReadFile("kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(src)
	want := hex.EncodeToString(h[:]) + "  kernels.cu\n"
	if Sum != want {
		t.Errorf("kernels.sum is %q, kernels.cu hashes to %q: run go generate ./nn/cuda/ptx", Sum, want)
	}
}

// TestPack checks the argument words against their definition: a pointer
// and an integer as 64 bits (two's complement), a float's IEEE bits in the
// low four bytes (what the kernel reads, little-endian) and zeros above, a
// double's bits; and that a wrong count or kind is ErrArgs.
func TestPack(t *testing.T) {
	k, ok := Lookup("sum_noise_scale")
	if !ok {
		t.Fatal("no kernel sum_noise_scale")
	}
	w, err := k.Pack(P(0x7f0000001000), I(-3), I(1<<40), P(0), D(-0.25), P(0xdeadbeef0))
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x7f0000001000, 0xfffffffffffffffd, 1 << 40, 0, 0xbfd0000000000000, 0xdeadbeef0}
	if !slices.Equal(w, want) {
		t.Errorf("Pack = %#x, want %#x", w, want)
	}
	g, _ := Lookup("sgd_step")
	w, err = g.Pack(P(8), P(16), I(5), F(-1.5))
	if err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], w[3])
	if f := math.Float32frombits(binary.LittleEndian.Uint32(b[:4])); f != -1.5 || w[3]>>32 != 0 {
		t.Errorf("float word %#x: low bytes read as %v, high half %#x; want -1.5 and 0", w[3], f, w[3]>>32)
	}
	for _, args := range [][]Arg{
		{P(8), P(16), I(5)},
		{P(8), P(16), I(5), F(1), F(2)},
		{P(8), P(16), I(5), D(1.5)},
		{P(8), I(16), I(5), F(1.5)},
	} {
		if _, err := g.Pack(args...); !errors.Is(err, ErrArgs) {
			t.Errorf("Pack(%v) = %v, want ErrArgs", args, err)
		}
	}
}

// TestLaunch checks the launch shapes: every element of the output is in
// exactly one block's range (the grid covers it, and no block is wholly
// outside), and the driver's grid limits are enforced.
func TestLaunch(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {63, 65}, {64, 64}, {640, 256}, {1, 100000}, {4097, 3}} {
		m, n := mn[0], mn[1]
		l, err := Gemm(m, n)
		if err != nil {
			t.Fatal(err)
		}
		// A thread of the block covers rows ty + 16r, columns tx + 16c.
		if l.Block.X*4 != GemmTileN || l.Block.Y*4 != GemmTileM {
			t.Errorf("Gemm block %v does not make a %d×%d tile", l.Block, GemmTileM, GemmTileN)
		}
		if l.Grid.X*GemmTileN < n || (l.Grid.X-1)*GemmTileN >= n || l.Grid.Y*GemmTileM < m || (l.Grid.Y-1)*GemmTileM >= m {
			t.Errorf("Gemm(%d, %d) grid %v does not cover C exactly", m, n, l.Grid)
		}
	}
	for _, n := range []int{1, 255, 256, 257, 1 << 20} {
		l, err := Elems(n)
		if err != nil {
			t.Fatal(err)
		}
		if l.Threads() < n || l.Threads()-n >= ElemThreads {
			t.Errorf("Elems(%d) starts %d threads", n, l.Threads())
		}
		s, err := ScaleRows(7, n)
		if err != nil || s.Grid.Y != 7 || s.Grid.X != l.Grid.X {
			t.Errorf("ScaleRows(7, %d) = %+v, %v", n, s, err)
		}
	}
	if RowThreads&(RowThreads-1) != 0 {
		t.Errorf("RowThreads %d is not a power of two, which blockSum needs", RowThreads)
	}
	if _, err := Gemm(0, 5); err == nil {
		t.Error("Gemm(0, 5) gave no error")
	}
	if _, err := ScaleRows(70000, 10); err == nil {
		t.Error("ScaleRows with 70000 rows (grid.y > 65535) gave no error")
	}
	if _, err := Rows(0); err == nil {
		t.Error("Rows(0) gave no error")
	}
}

// TestSourceConstants checks that the tile and block sizes Go launches
// with are the ones kernels.cu was written for.
func TestSourceConstants(t *testing.T) {
	src, err := os.ReadFile("kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]int{"GEMM_TM": GemmTileM, "GEMM_TN": GemmTileN, "GEMM_THREADS": GemmThreadsX * GemmThreadsY, "ROW_THREADS": RowThreads} {
		if !strings.Contains(string(src), "#define "+name+" "+strconv.Itoa(v)+"\n") {
			t.Errorf("kernels.cu does not define %s as %d", name, v)
		}
	}
}
