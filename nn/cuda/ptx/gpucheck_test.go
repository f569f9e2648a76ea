// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package ptx

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gpuCheck runs scripts/gpu-check.sh with the given binaries folder, PATH
// prefix and $OUT, and returns its exit status and output.
func gpuCheck(t *testing.T, bin, path, out string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "gpu-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "GPU_CHECK_BIN="+bin, "OUT="+out, "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err = cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode(), b.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, b.String()
}

// fakeBins writes stand-ins for the test binaries that record their
// arguments in log and exit with the given status (the benchmark's always
// 0), and a stand-in nvidia-smi exiting with smi, and returns the folders
// of the binaries and of nvidia-smi.
func fakeBins(t *testing.T, status, smi string) (bin, path, log string) {
	t.Helper()
	dir := t.TempDir()
	bin, path, log = filepath.Join(dir, "bin"), filepath.Join(dir, "path"), filepath.Join(dir, "log")
	os.Mkdir(bin, 0o755)
	os.Mkdir(path, 0o755)
	test := "#!/bin/sh\necho \"$0 $*\" >>" + log + "\ncase \"$*\" in *bench*) exit 0;; esac\nexit " + status + "\n"
	for _, f := range []string{"cuda.test", "ptx.test"} {
		if err := os.WriteFile(filepath.Join(bin, f), []byte(test), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(path, "nvidia-smi"), []byte("#!/bin/sh\necho 'GPU 0: stand-in'\nexit "+smi+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, path, log
}

// TestGPUCheckRefuses checks that the device check stops before starting a
// binary, with its documented status and a reason, when the binaries are
// missing (2) and where there is no GPU (3: no driver library, or no
// kernel module and nvidia-smi sees no GPU).
func TestGPUCheckRefuses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, msg := gpuCheck(t, t.TempDir(), t.TempDir(), out)
	if code != 2 || !strings.Contains(msg, "make gpu-check-build") {
		t.Errorf("without binaries: status %d, output %q; want 2 and how to build them", code, msg)
	}
	if _, err := os.Stat("/proc/driver/nvidia/version"); err == nil {
		t.Skip("this machine has the NVIDIA driver: cannot check the refusal without one")
	}
	bin, path, log := fakeBins(t, "0", "9")
	code, msg = gpuCheck(t, bin, path, out)
	if code != 3 || !strings.Contains(msg, "gpu-check: no NVIDIA") {
		t.Errorf("without a GPU: status %d, output %q; want 3 and the reason", code, msg)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("without a GPU the check started a test binary")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused check created $OUT")
	}
}

// TestGPUCheckPhases runs the device check with stand-in binaries and a
// stand-in nvidia-smi: the three phases run in order, the report is
// written under $OUT, and the exit status is 0 when every phase passes and
// 1 when one fails.
func TestGPUCheckPhases(t *testing.T) {
	if out, _ := exec.Command("sh", "-c", "ldconfig -p 2>/dev/null | grep -c 'libcuda\\.so\\.1 '").Output(); strings.TrimSpace(string(out)) == "0" || len(out) == 0 {
		t.Skip("no libcuda.so.1 on this machine: the check stops at the driver library before the phases")
	}
	for _, tc := range []struct {
		status string
		want   int
	}{{"0", 0}, {"1", 1}} {
		bin, path, log := fakeBins(t, tc.status, "0")
		out := filepath.Join(t.TempDir(), "out")
		code, msg := gpuCheck(t, bin, path, out)
		if code != tc.want {
			t.Errorf("tests exiting %s: status %d, want %d; output:\n%s", tc.status, code, tc.want, msg)
		}
		report, err := os.ReadFile(filepath.Join(out, "gpu-check.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"== CPU-side kernel checks", "== device correctness", "== DP-SGD step, CPU against GPU"} {
			if !bytes.Contains(report, []byte(want)) {
				t.Errorf("the report lacks %q:\n%s", want, report)
			}
		}
		calls, _ := os.ReadFile(log)
		lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
		want := []string{"ptx.test -test.v", "cuda.test -test.v", "cuda.test -test.run ^$ -test.bench ^Benchmark(Gemm|Private|DPSGDStep)$"}
		if len(lines) != len(want) {
			t.Fatalf("binary runs:\n%s\nwant %d", calls, len(want))
		}
		for i, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("run %d is %q, want %q", i, lines[i], w)
			}
		}
	}
}
