// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package lint

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The Go spec lets the compiler fuse x·y + z into one fused multiply-add,
// which rounds once instead of twice. It does so on arm64 by default (and
// on amd64 at GOAMD64=v3), so a fusable Go loop gives other bits there
// than on amd64 at the baseline level. The rule (docs/engine.md): a
// product that is added or subtracted is converted explicitly,
// float64(x*y) + z, which the spec says rounds and cannot be fused.
// TestNoFusedMultiplyAdd builds the module for arm64 with the compiler's
// assembly listing (-S) and fails on every FMADD, FMSUB, FNMADD and FNMSUB
// instruction whose source line is in the repository, outside the
// allow-list below. No arm64 machine or emulator is needed: the compiler
// cross-compiles, and the listing says where each instruction came from
// (for inlined code, the line of the inlined function).

// fusedAllowed lists the fused sites proven harmless: the file, the
// source line's text (trimmed), and why fusing cannot change a result.
// A site whose line changes drops out of the list and fails the check
// until it is reviewed again.
var fusedAllowed = []struct{ file, line, reason string }{
	{"nn/gemm.go", "s := x*float64(bv) + float64(row[j])",
		"the pure-Go gemm kernel emulates the float32 FMA: a product of two float32 values is exact in float64, so fusing the float64 sum changes nothing"},
	{"nn/gemm.go", "s := float64(x)*float64(y) + float64(z)",
		"fma32: a product of two float32 values is exact in float64"},
	{"nn/gemm.go", "s := p + w",
		"fma32Slow's TwoSum: p is a product of two float32 values, exact in float64"},
	{"nn/gemm.go", "v := s - p",
		"fma32Slow's TwoSum: p is a product of two float32 values, exact in float64"},
	{"nn/gemm.go", "e := (p - (s - v)) + (w - v)",
		"fma32Slow's TwoSum: p is a product of two float32 values, exact in float64"},
	{"nn/param.go", "p.Data[i] = float32((float64(2*rng.Float64()) - 1) * bound)",
		"the compiler writes 2·u as u + u and fuses it with rand's u = n·2⁻⁵³; a product with a power of two is exact"},
}

// fusedPending lists the directories whose fusable sites are not fixed
// yet: their sites are logged, not failed. Every other directory of the
// repository must have none.
var fusedPending = map[string]bool{}

// fusedInsn matches an instruction line of the listing: its source file,
// line and mnemonic.
var fusedInsn = regexp.MustCompile(`^\s+0x[0-9a-f]+ \d+ \((.+\.go):(\d+)\)\s+(FN?M(?:ADD|SUB)[SD])\s`)

// fusedSite is one source line with fused instructions.
type fusedSite struct {
	file string // relative to the repository root, slash-separated
	line int
	n    int // instructions
	op   string
}

// scanFused reads a listing and returns the source lines, under root or
// named by the module path (as with -trimpath), with fused instructions,
// sorted by file and line, and the listing's last lines that are neither
// instructions nor function headers (the build's errors, if it failed).
func scanFused(r io.Reader, root, module string) ([]fusedSite, []string, error) {
	sites := map[string]*fusedSite{}
	var other []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b := sc.Bytes()
		if len(b) > 0 && b[0] != '\t' && !bytes.Contains(b, []byte(" STEXT ")) {
			if other = append(other, string(b)); len(other) > 20 {
				other = other[1:]
			}
		}
		if !bytes.Contains(b, []byte("\tFM")) && !bytes.Contains(b, []byte("\tFNM")) {
			continue
		}
		m := fusedInsn.FindSubmatch(b)
		if m == nil {
			continue
		}
		file := filepath.ToSlash(string(m[1]))
		switch {
		case strings.HasPrefix(file, root+"/"):
			file = strings.TrimPrefix(file, root+"/")
		case strings.HasPrefix(file, module+"/"):
			file = strings.TrimPrefix(file, module+"/")
		default:
			continue // the standard library's or a dependency's code, inlined
		}
		line, _ := strconv.Atoi(string(m[2]))
		key := file + ":" + string(m[2])
		s := sites[key]
		if s == nil {
			s = &fusedSite{file: file, line: line, op: string(m[3])}
			sites[key] = s
		}
		s.n++
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	out := make([]fusedSite, 0, len(sites))
	for _, s := range sites {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].line < out[j].line
	})
	return out, other, nil
}

// armListing builds the packages for linux/arm64, discarding the results,
// with the assembly listing of the module's own packages, and returns
// their fused sites.
func armListing(t *testing.T, root string, pkgs ...string) []fusedSite {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	const module = "github.com/repro-dp/repro"
	args := append([]string{"build", "-o", os.DevNull, "-gcflags=" + module + "/...=-S"}, pkgs...)
	cmd := exec.Command(gocmd, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sites, other, err := scanFused(stderr, root, module)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go %s (GOARCH=arm64): %v\n%s", strings.Join(args, " "), err, strings.Join(other, "\n"))
	}
	return sites
}

// sourceLine returns the trimmed text of a line of a repository file.
func sourceLine(root, file string, line int) string {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[line-1])
}

// TestNoFusedMultiplyAdd fails on every fused multiply-add the compiler
// emits for arm64 from the repository's Go code, outside the allow-list
// and the pending directories. It runs where REPRO_FUSION_CHECK=1 (make
// fusion-check; .ci/run runs it after make check): on a cold build cache
// it compiles the standard library and every dependency for arm64, about
// three CPU-minutes, too much for make check; on a warm one it takes
// seconds.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if os.Getenv("REPRO_FUSION_CHECK") != "1" {
		t.Skip("set REPRO_FUSION_CHECK=1 (make fusion-check) to build the module for arm64 and search its listing")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.ToSlash(root)
	sites := armListing(t, root, "./...")
	used := make([]bool, len(fusedAllowed))
	pending := 0
	for _, s := range sites {
		text := sourceLine(root, s.file, s.line)
		allowed := false
		for i, a := range fusedAllowed {
			if a.file == s.file && a.line == text {
				allowed, used[i] = true, true
			}
		}
		switch {
		case allowed:
		case fusedPending[pathDir(s.file)]:
			pending++
			t.Logf("pending: %s:%d: %d × %s: %s", s.file, s.line, s.n, s.op, text)
		default:
			t.Errorf("%s:%d: %d fused instruction(s) (%s) on arm64: %s\n\tround the product explicitly (float64(x*y) + z; docs/engine.md)", s.file, s.line, s.n, s.op, text)
		}
	}
	for i, a := range fusedAllowed {
		if !used[i] {
			t.Errorf("allow-list entry %s %q matches no fused site: remove it", a.file, a.line)
		}
	}
	t.Logf("%d fused sites, %d in pending directories", len(sites), pending)
}

// pathDir returns a slash-separated path's directory ("." for none).
func pathDir(file string) string {
	if i := strings.LastIndex(file, "/"); i >= 0 {
		return file[:i]
	}
	return "."
}

// TestFusionCheckFinds builds a package with one fusable loop and the
// same loop written by the rule, and checks that the listing's scan finds
// the first and not the second: the check above can fail.
func TestFusionCheckFinds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package for arm64")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.ToSlash(root)
	sites := armListing(t, root, "./internal/lint/testdata/fused")
	const file = "internal/lint/testdata/fused/fused.go"
	var got []string
	for _, s := range sites {
		got = append(got, sourceLine(root, s.file, s.line))
		if s.file != file {
			t.Errorf("site outside the test package: %s:%d", s.file, s.line)
		}
	}
	if len(got) != 1 || got[0] != "s += a[i] * b[i]" {
		t.Errorf("fused sites %q, want only the unconverted product's line", got)
	}
}
