// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/device"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/runners"
)

// fakeMethod is a method known only to these tests, with an executor whose
// results depend only on the run's config; runs with seed 13 fail.
// unimplemented is a known method without an executor.
const (
	fakeMethod    = "fake-cli-test"
	unimplemented = "unimplemented-cli-test"
)

var fakeCalls atomic.Int64

func init() {
	// Runs get zero inputs: the tests never build data or a base model.
	runInputs = func(*experiments.Config) (experiments.Inputs, error) { return experiments.Inputs{}, nil }
	methods.Register(fakeCLIMethod(fakeMethod))
	methods.Register(fakeCLIMethod(unimplemented))
	runners.Register(fakeMethod, func(ctx context.Context, r *runners.Run, rec *runners.Recorder) error {
		fakeCalls.Add(1)
		if d := os.Getenv(slowEnv); d != "" {
			ms, _ := strconv.Atoi(d)
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		if r.Config.Seed == 13 {
			return errors.New("unlucky seed")
		}
		rng := rand.New(rand.NewPCG(uint64(r.Config.Seed), 1))
		rec.Stage("fine-tune")
		rec.Metric(0, "train", "loss", rng.Float64())
		rec.Steps(1)
		rec.Stage("attacks")
		rec.Scores("loss-mia", []results.Score{{ExampleID: 1, Member: true, Score: rng.Float64()}})
		rec.Result("acc", rng.Float64())
		rec.Privacy(results.Privacy{Accountant: "rdp", Epsilon: results.Float(r.Config.Epsilon) / 2, Sigma: 1, SampleRate: 0.1, Steps: 1, Sampling: "poisson", Neighbouring: "add-remove", ClipNorm: 1})
		return nil
	})
}

// fakeCLIMethod is a registered method whose runs go to the executor the
// tests register (or to none), never to FineTune.
type fakeCLIMethod string

func (m fakeCLIMethod) Name() string { return string(m) }
func (fakeCLIMethod) Arch() string   { return "tinymllm" }
func (fakeCLIMethod) Params() []methods.Param {
	p, _ := methods.Lookup("dpsgd")
	return p.Params()
}
func (fakeCLIMethod) FineTune(context.Context, *methods.Job) (*methods.Result, error) {
	return nil, errors.New("fake method: not for fine-tuning")
}

// fakeSpec writes a spec of the fake method to a temporary file.
func fakeSpec(t *testing.T, extra string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "fake.yaml")
	src := "name: fake\ndescription: a fake experiment\nscale: smoke\ntasks: [fashion-vqa]\nmethods: [{name: " + fakeMethod + "}]\n" +
		"sweep:\n  epsilon: [1, 8]\n  seed: [1, 2]\nattacks: [loss-mia]\n" + extra
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestRunDryRun(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "run", "table1", "--dry-run", "--scale", "smoke", "--seeds", "2", "--results", dir, "--only", "method=dpsgd", "--set", "sweep.epsilon=[1, 8]")
	if err != nil {
		t.Fatalf("repro run --dry-run: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// dpsgd × 2 tasks × 2 ε × 2 seeds, plus a summary and a header line.
	if len(lines) != 2+8 || lines[0] != "table1: 8 runs, 0 finished, 8 to run (scale smoke)" {
		t.Fatalf("repro run --dry-run printed:\n%s", out)
	}
	s, err := experiments.Load("table1", &experiments.Options{Overrides: []string{"scale=smoke", "sweep.seed=[1, 2]", "sweep.epsilon=[1, 8]"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Expand() {
		if c.Method == "dpsgd" && !strings.Contains(out, c.ID(experiments.Inputs{})) {
			t.Errorf("repro run --dry-run does not list run %s (%v):\n%s", c.ID(experiments.Inputs{}), &c, out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("repro run --dry-run wrote %d entries under --results", len(ents))
	}
}

func TestRunFailsBeforeStarting(t *testing.T) {
	for _, tc := range []struct {
		desc string
		args []string
		want string
	}{
		{"no executor", []string{fakeSpec(t, ""), "--set", "methods.0.name=" + unimplemented}, "no executor for method " + unimplemented},
		{"unknown experiment", []string{"table9"}, `no experiment "table9"`},
		{"epsilon", []string{"table1", "--set", "sweep.epsilon=[0, 1]"}, "--set sweep.epsilon=[0, 1]: sweep.epsilon: epsilon is 0, must be > 0 or inf"},
		{"delta", []string{"table1", "--set", "delta=1"}, "--set delta=1: delta is 1, must be in [0, 1)"},
		{"scale", []string{"table1", "--scale", "huge"}, `--scale huge: unknown scale "huge"`},
		{"seeds as typed", []string{"table1", "--seeds", "1,1"}, "--seeds 1,1: sweep.seed: duplicate value 1"},
		{"seeds", []string{"table1", "--seeds", "0"}, "--seeds"},
		{"empty seed", []string{"table1", "--seeds", "1,,2"}, `--seeds "1,,2": an empty seed in the list`},
		{"only", []string{"table1", "--only", "method=dpsgdd"}, `no run matches "method=dpsgdd"`},
		{"jobs", []string{"table1", "--jobs", "-1"}, "--jobs must be ≥ 0"},
		{"executor", []string{"table1", "--executor", "cloud"}, `unknown executor "cloud" (local or slurm)`},
		{"slurm flag", []string{"table1", "--partition", "cpu"}, "--partition applies only to --executor slurm"},
		{"slurm jobs", []string{"table1", "--executor", "slurm", "--jobs", "2"}, "--jobs applies only to --executor local"},
		{"slurm retries", []string{"table1", "--executor", "slurm", "--retries", "-1"}, "--retries must be ≥ 0"},
		{"no experiment", []string{"--jobs", "2"}, "want at least one experiment"},
		{"flag", []string{"table1", "--colour"}, "flag provided but not defined: -colour"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			dir := t.TempDir()
			_, _, err := run(t, append([]string{"run", "--results", dir}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("repro run %q: got %v, want an error containing %q", tc.args, err, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("repro run %q wrote %d entries under --results, want none", tc.args, len(ents))
			}
		})
	}
}

func TestRunBadSpecFile(t *testing.T) {
	for _, tc := range []struct {
		desc, extra string
		line        int
		want        string
	}{
		{"unknown key", "colour: red\n", 10, `unknown key "colour"`},
		{"delta", "delta: 1\n", 10, "delta is 1, must be in [0, 1)"},
		{"epsilon", "", 7, "epsilon is -8"},
		{"unknown method", "", 5, ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			spec := fakeSpec(t, tc.extra)
			b, _ := os.ReadFile(spec)
			switch tc.desc {
			case "unknown method":
				os.WriteFile(spec, []byte(strings.Replace(string(b), fakeMethod, "dpsgdd", 1)), 0o644)
				tc.want = `unknown method "dpsgdd"`
			case "epsilon":
				os.WriteFile(spec, []byte(strings.Replace(string(b), "[1, 8]", "[1, -8]", 1)), 0o644)
			}
			dir := t.TempDir()
			_, _, err := run(t, "run", spec, "--results", dir)
			var se *experiments.SyntaxError
			if !errors.As(err, &se) || se.FileName != spec || se.Line != tc.line || !strings.Contains(se.Msg, tc.want) {
				t.Errorf("repro run with %s: got %v, want %s:%d: ...%s...", tc.desc, err, spec, tc.line, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("repro run with a bad spec wrote %d entries under --results", len(ents))
			}
		})
	}
}

func TestRunFake(t *testing.T) {
	dir := t.TempDir()
	spec := fakeSpec(t, "")
	fakeCalls.Store(0)
	_, stderr, err := run(t, "run", spec, "--jobs", "2", "--results", dir)
	if err != nil {
		t.Fatalf("repro run: %v\n%s", err, stderr)
	}
	if fakeCalls.Load() != 4 || !strings.Contains(stderr, "fake: 4 runs: 4 ok, 0 failed, 0 not run, 0 cached") {
		t.Errorf("repro run: %d executor calls, stderr:\n%s", fakeCalls.Load(), stderr)
	}
	runs, err := results.ReadRuns(filepath.Join(dir, "fake", results.RunsFile))
	if err != nil || len(runs) != 4 {
		t.Fatalf("runs.parquet: %d rows, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.Status != results.OK || r.Epsilon != r.EpsilonTarget/2 {
			t.Errorf("run %s: status %s, ε %v of %v", r.RunID, r.Status, r.Epsilon, r.EpsilonTarget)
		}
	}

	// Again: every run is cached.
	fakeCalls.Store(0)
	_, stderr, err = run(t, "run", "--results", dir, spec)
	if err != nil || fakeCalls.Load() != 0 || !strings.Contains(stderr, "4 cached") {
		t.Errorf("repro run again: %v, %d calls, stderr:\n%s", err, fakeCalls.Load(), stderr)
	}
	out, _, err := run(t, "run", spec, "--results", dir, "--dry-run")
	if err != nil || !strings.Contains(out, "fake: 4 runs, 4 finished, 0 to run") || strings.Count(out, " ok ") != 4 {
		t.Errorf("repro run --dry-run after a run: %v\n%s", err, out)
	}

	// Another experiment with the same runs copies them.
	other := filepath.Join(t.TempDir(), "other.yaml")
	b, _ := os.ReadFile(spec)
	os.WriteFile(other, []byte(strings.Replace(string(b), "name: fake", "name: other", 1)), 0o644)
	out, _, err = run(t, "run", other, "--results", dir, "--dry-run")
	if err != nil || strings.Count(out, "copy from fake") != 4 {
		t.Errorf("repro run --dry-run of a copy: %v\n%s", err, out)
	}
	fakeCalls.Store(0)
	_, stderr, err = run(t, "run", other, "--results", dir)
	if err != nil || fakeCalls.Load() != 0 || !strings.Contains(stderr, "4 cached (4 from other experiments)") {
		t.Errorf("repro run of a copy: %v, %d calls, stderr:\n%s", err, fakeCalls.Load(), stderr)
	}

	// A failing run makes the command fail; the other runs are recorded.
	fakeCalls.Store(0)
	_, stderr, err = run(t, "run", spec, "--results", dir, "--seeds", "13,2", "--jobs", "1")
	if err == nil || !strings.Contains(err.Error(), "2 of 2 runs of fake failed") || !strings.Contains(err.Error(), "unlucky seed") {
		t.Errorf("repro run with a failing seed: got %v, want 2 of 2 failed", err)
	}
	if fakeCalls.Load() != 2 || !strings.Contains(stderr, "failed: unlucky seed") {
		t.Errorf("repro run with a failing seed: %d calls (want 2: seed 2 is cached), stderr:\n%s", fakeCalls.Load(), stderr)
	}
}

// Environment of the child process of TestRunSignals.
const (
	slowEnv  = "REPRO_TEST_SLOW_MS" // the fake executor sleeps this long
	childEnv = "REPRO_TEST_CHILD"   // the child runs main with these arguments, separated by \x1f
)

// TestMainChild is not a test: it is the child process of TestRunSignals,
// which runs the real main (signal handling included) in this test binary.
func TestMainChild(t *testing.T) {
	args := os.Getenv(childEnv)
	if args == "" {
		t.Skip("only runs as the child of TestRunSignals")
	}
	os.Args = append([]string{"repro"}, strings.Split(args, "\x1f")...)
	main()
	os.Exit(0)
}

// TestRunSignals runs `repro run` in a child process and interrupts it: the
// first SIGINT lets the running run finish and be recorded and starts no
// other; a second SIGINT kills the process at once.
func TestRunSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	start := func(t *testing.T, dir, slow string) (*exec.Cmd, *bytes.Buffer) {
		spec := fakeSpec(t, "")
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), slowEnv+"="+slow, childEnv+"="+strings.Join([]string{"run", spec, "--jobs", "1", "--results", dir}, "\x1f"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the first run to start.
		deadline := time.Now().Add(time.Minute)
		for {
			ms, _ := filepath.Glob(filepath.Join(dir, "fake", "runs", "*", results.ManifestFile))
			if len(ms) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no run started in a minute; stderr:\n%s", stderr.String())
			}
			time.Sleep(2 * time.Millisecond)
		}
		return cmd, &stderr
	}
	statuses := func(dir string) map[results.Status]int {
		out := make(map[results.Status]int)
		dirs, _ := filepath.Glob(filepath.Join(dir, "fake", "runs", "*"))
		for _, d := range dirs {
			m, err := results.ReadManifest(d)
			if err != nil {
				out["unreadable"]++
				continue
			}
			out[m.Status]++
		}
		return out
	}

	t.Run("first", func(t *testing.T) {
		dir := t.TempDir()
		cmd, stderr := start(t, dir, "1000")
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupted: 3 runs not run") {
			t.Errorf("repro run after one SIGINT: %v, stderr:\n%s\nwant exit status 1 and 3 runs not run", err, stderr.String())
		}
		if got := statuses(dir); got[results.OK] != 1 || len(got) != 1 {
			t.Errorf("after one SIGINT the runs are %v, want 1 ok", got)
		}
		if _, err := results.ReadRuns(filepath.Join(dir, "fake", results.RunsFile)); err != nil {
			t.Errorf("runs.parquet after one SIGINT: %v", err)
		}
	})
	t.Run("second", func(t *testing.T) {
		dir := t.TempDir()
		cmd, stderr := start(t, dir, "5000")
		began := time.Now()
		cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 130 || time.Since(began) > 4*time.Second {
			t.Errorf("repro run after two SIGINTs: %v after %v, stderr:\n%s\nwant exit status 130 at once", err, time.Since(began), stderr.String())
		}
		// The run in progress is left "running", and is run next time.
		if got := statuses(dir); got[results.Running] != 1 || len(got) != 1 {
			t.Errorf("after two SIGINTs the runs are %v, want 1 running", got)
		}
	})
}

// TestRunScripts runs the txtar scripts of repro run, list, show, report and
// version in testdata/script, with repro as an in-process command. Scripts
// must give --results (the command runs in this folder, not in $WORK),
// except to repro version, repro --version, repro account and any --help,
// which read no results. Set REPRO_UPDATE_SCRIPTS=1 to rewrite the scripts' cmp files.
func TestRunScripts(t *testing.T) {
	var files []string
	for _, pat := range []string{"run_*.txtar", "list_*.txtar", "show_*.txtar", "report_*.txtar", "version_*.txtar"} {
		m, _ := filepath.Glob(filepath.Join("testdata", "script", pat))
		files = append(files, m...)
	}
	testscript.Run(t, testscript.Params{
		Files:         files,
		UpdateScripts: os.Getenv("REPRO_UPDATE_SCRIPTS") != "",
		// [cuda]: the binary was built with the cuda build tag; [gpu]: and
		// it can open a GPU here.
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "cuda":
				return slices.Contains(device.Names(), device.CUDA), nil
			case "gpu":
				if !slices.Contains(device.Names(), device.CUDA) || device.Use(device.CUDA) != nil {
					return false, nil
				}
				return true, device.Use(device.CPU)
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"repro": func(ts *testscript.TestScript, neg bool, args []string) {
				readsNone := len(args) == 1 && (args[0] == "version" || args[0] == "--version" || args[0] == "-v") ||
					len(args) > 0 && (args[0] == "account" || args[len(args)-1] == "--help")
				if !readsNone && !slices.Contains(args, "--results") {
					ts.Fatalf("repro in a script needs --results (it runs in the source folder)")
				}
				err := newApp(ts.Stdout(), ts.Stderr()).RunContext(context.Background(), append([]string{"repro"}, args...))
				if err != nil {
					fmt.Fprintf(ts.Stderr(), "repro: %v\n", err)
				}
				if (err != nil) != neg {
					ts.Fatalf("repro %s: got error %v, want error: %v", strings.Join(args, " "), err, neg)
				}
			},
		},
	})
}

// TestRunWarnsCollapsingSweep checks that expanding a sweep whose distinct
// values give one effective setting at the scale (fig3's retentions at
// smoke) warns before anything runs.
func TestRunWarnsCollapsingSweep(t *testing.T) {
	_, stderr, err := run(t, "run", "fig3", "--scale", "smoke", "--dry-run", "--results", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fig3: warning: dualpriv on fashion-vqa at scale smoke: retention 0.1, 0.2, 0.3 all give 1 dominant + 0 contextual tokens of 4 patches\n",
		"fig3: warning: 75 runs give 45 distinct settings; a larger --scale separates them\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("standard error lacks %q:\n%s", want, stderr)
		}
	}
}

// TestRunSlurmMissing checks that repro run --executor slurm on a machine
// without Slurm fails before writing anything, and says why.
func TestRunSlurmMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, wait := range []bool{false, true} {
		dir := t.TempDir()
		args := []string{"run", "--results", dir, "--executor", "slurm", "table1", "--scale", "smoke"}
		if wait {
			args = append(args, "--wait")
		}
		_, _, err := run(t, args...)
		if want := "sbatch is not on PATH"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("repro %q: got %v, want an error containing %q", args, err, want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("repro %q wrote %d entries under --results, want none", args, len(ents))
		}
	}
}
