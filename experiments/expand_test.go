// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	s, err := Parse("t.yaml", []byte(base), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Expand()
	inf := Epsilon(math.Inf(1))
	cfg := func(method string, eps Epsilon, seed int64, params map[string]any) Config {
		return Config{Method: method, Task: "fashion-vqa", Scale: "smoke", Seed: seed, Epsilon: eps, Delta: 1e-5, Attacks: []string{"loss-mia"}, Params: params}
	}
	np := map[string]any{"lr": 0.001, "peft": "lora"}
	dp := map[string]any{"lr": 0.001, "peft": "lora", "lora_rank": int64(8)}
	want := []Config{
		cfg("nonprivate", inf, 1, np), cfg("nonprivate", inf, 2, np),
		cfg("dpsgd", 1, 1, dp), cfg("dpsgd", 1, 2, dp),
		cfg("dpsgd", 8, 1, dp), cfg("dpsgd", 8, 2, dp),
		cfg("dpsgd", inf, 1, dp), cfg("dpsgd", inf, 2, dp),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand mismatch (-want +got):\n%s", diff)
	}
}

func TestExpandZip(t *testing.T) {
	src := strings.Replace(base, "  seed: [1, 2]", "  zip:\n    - {beta: [0.1, 0.2], chunks: [4, 2]}", 1)
	src = strings.Replace(src, "    sweep: {epsilon: [inf]}", "    sweep: {epsilon: [inf], shots: [0, 1]}", 1)
	s, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		Method string
		Eps    string
		Beta   any
		Chunks any
		Shots  any
		Seed   int64
	}
	var got []point
	for _, c := range s.Expand() {
		got = append(got, point{c.Method, c.Epsilon.String(), c.Params["beta"], c.Params["chunks"], c.Params["shots"], c.Seed})
	}
	want := []point{
		{"nonprivate", "inf", 0.1, int64(4), int64(0), 1},
		{"nonprivate", "inf", 0.2, int64(2), int64(0), 1},
		{"nonprivate", "inf", 0.1, int64(4), int64(1), 1},
		{"nonprivate", "inf", 0.2, int64(2), int64(1), 1},
		{"dpsgd", "1", 0.1, int64(4), nil, 1},
		{"dpsgd", "1", 0.2, int64(2), nil, 1},
		{"dpsgd", "8", 0.1, int64(4), nil, 1},
		{"dpsgd", "8", 0.2, int64(2), nil, 1},
		{"dpsgd", "inf", 0.1, int64(4), nil, 1},
		{"dpsgd", "inf", 0.2, int64(2), nil, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand with zip mismatch (-want +got):\n%s", diff)
	}
}

func TestID(t *testing.T) {
	c := Config{Method: "dpsgd", Task: "fashion-vqa", Scale: "small", Seed: 3, Epsilon: Epsilon(math.Inf(1)), Delta: 1e-5,
		Attacks: []string{"loss-mia"}, Params: map[string]any{"lr": 0.001, "beta": 0.5, "k": int64(2), "peft": "lora", "on": true}}
	in := Inputs{Data: "d1", Base: "b1"}
	// The canonical JSON written out by hand (sorted param keys, ε = ∞ as
	// "inf"), hashed with crypto/sha256: an independent check that the id
	// hashes exactly this text.
	canon := `{"code":"` + code() + `","config":{"method":"dpsgd","task":"fashion-vqa","scale":"small","seed":3,"epsilon":"inf","delta":0.00001,` +
		`"attacks":["loss-mia"],"params":{"beta":0.5,"k":2,"lr":0.001,"on":true,"peft":"lora"}},"inputs":{"data":"d1","base":"b1"}}`
	sum := sha256.Sum256([]byte(canon))
	if got, want := c.ID(in), hex.EncodeToString(sum[:])[:IDLen]; got != want {
		b, _ := c.canonical(in)
		t.Errorf("ID = %s, want %s\ncanonical: %s\nwant:      %s", got, want, b, canon)
	}
	// Every input changes the id.
	ids := map[string]string{c.ID(in): "base"}
	for desc, f := range map[string]func(*Config, *Inputs){
		"seed":    func(c *Config, _ *Inputs) { c.Seed++ },
		"epsilon": func(c *Config, _ *Inputs) { c.Epsilon = 8 },
		"delta":   func(c *Config, _ *Inputs) { c.Delta = 1e-6 },
		"param":   func(c *Config, _ *Inputs) { c.Params = map[string]any{"lr": 0.002} },
		"attacks": func(c *Config, _ *Inputs) { c.Attacks = nil },
		"data":    func(_ *Config, in *Inputs) { in.Data = "d2" },
		"base":    func(_ *Config, in *Inputs) { in.Base = "b2" },
	} {
		c2, in2 := c, in
		f(&c2, &in2)
		id := c2.ID(in2)
		if prev, dup := ids[id]; dup {
			t.Errorf("changing %s gives the same id as %s: %s", desc, prev, id)
		}
		ids[id] = desc
	}
	// So does the code on the run's path (a changed source changes
	// repro.Code; see its tests).
	saved := code
	code = func() string { return "another code fingerprint" }
	id := c.ID(in)
	code = saved
	if prev, dup := ids[id]; dup {
		t.Errorf("changing the code gives the same id as %s: %s", prev, id)
	}
	// The embedded specs expand into distinct ids.
	for _, name := range []string{"table1", "fig1"} {
		s, err := Load(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[string]bool)
		for _, c := range s.Expand() {
			id := c.ID(Inputs{})
			if seen[id] {
				t.Errorf("%s: duplicate run id %s for %v", name, id, &c)
			}
			seen[id] = true
		}
	}
}

func TestTable1(t *testing.T) {
	s, err := Load("table1", nil)
	if err != nil {
		t.Fatal(err)
	}
	count := make(map[string]int)
	for _, c := range s.Expand() {
		count[c.Method]++
		if c.Scale != "small" || c.Delta != 1e-5 {
			t.Errorf("table1 run %v: scale %s delta %v, want small 1e-5", &c, c.Scale, c.Delta)
		}
	}
	// nonprivate: 2 tasks × 3 seeds at ε = ∞; the DP methods: 2 tasks × 4 ε × 3 seeds.
	if diff := cmp.Diff(map[string]int{"nonprivate": 6, "dpsgd": 24, "dpzo": 24, "dualpriv": 24}, count); diff != "" {
		t.Errorf("table1 runs per method (-want +got):\n%s", diff)
	}
	f, err := Load("fig1", nil)
	if err != nil {
		t.Fatal(err)
	}
	// fig1 shares table1's runs, so one is a cache hit for the other.
	if diff := cmp.Diff(s.Expand(), f.Expand()); diff != "" {
		t.Errorf("fig1 and table1 runs differ (-table1 +fig1):\n%s", diff)
	}
}

func TestEpsilonJSON(t *testing.T) {
	for _, e := range []Epsilon{1, 0.5, Epsilon(math.Inf(1))} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var got Epsilon
		if err := json.Unmarshal(b, &got); err != nil || got != e {
			t.Errorf("epsilon %v → %s → %v, %v", e, b, got, err)
		}
	}
	if _, err := json.Marshal(Epsilon(math.NaN())); err == nil {
		t.Errorf("json.Marshal(Epsilon(NaN)): got nil error")
	}
}

// TestTuneBaselines checks the tuning spec: it trains and validates on the
// -tune tasks only (public data; never a task whose test split is the
// private test set), sweeps lr and epochs for nonprivate and dpsgd and
// φ, lr and epochs for DPZO, and expands to the runs its
// comments count.
func TestTuneBaselines(t *testing.T) {
	s, err := Load("tune-baselines", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range s.Tasks {
		if !strings.HasSuffix(task, "-tune") {
			t.Errorf("tune-baselines tunes on %s, want only -tune tasks", task)
		}
	}
	count := make(map[string]int)
	for _, c := range s.Expand() {
		v, _ := c.Params[VariantParam].(string)
		count[c.Method+"/"+v]++
		if c.Scale != "smoke" {
			t.Errorf("run %v: scale %s, want smoke", &c, c.Scale)
		}
	}
	// 2 tasks × 3 seeds × nonprivate 5 lr × 3 epochs; dpsgd the same × 4 ε
	// (1, 3, 8, ∞); the clip variant 3 clips; DPZO 2 tasks × 2 seeds × 2 ε ×
	// 2 lr × 2 epochs; 256 epochs at 2 lr (ε = 3) and at one (ε = ∞); and
	// one point each (2 tasks × 2 seeds) for 512 epochs, φ = 0.01 and
	// Algorithm 3's difference clip; DPZO at ε = 1, 2 lr × 4 epochs and
	// one point; DP-SGD at table10's 3 ε × 3 lr × 2 epochs, and 2 points
	// at ε = 0.5; DPZO at table10's 3 ε × 3 lr × 2 epochs, 3 ε × 2 lower
	// rates at 8 epochs, and 2 rates × 128 epochs at ε = 0.5 (2 tasks × 2
	// seeds each).
	want := map[string]int{"nonprivate/": 90, "dpsgd/": 360, "dpsgd/clip": 18, "dpsgd/strict": 72, "dpsgd/strict-edge": 8,
		"dpzo/derivative-eps1": 32, "dpzo/derivative-eps1-fast": 4, "dpzo/derivative": 32, "dpzo/derivative-long": 8, "dpzo/derivative-long-inf": 4, "dpzo/derivative-longer": 4, "dpzo/derivative-phi": 4, "dpzo/derivative-strict": 72, "dpzo/derivative-strict-low": 24, "dpzo/derivative-strict-long": 8, "dpzo/difference": 4}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("tune-baselines runs per method/variant (-want +got):\n%s", diff)
	}
}

// TestMembershipViews checks that fig4, roc and lira are views of the mia
// experiment: every run they expand to, at every scale, is one of mia's
// (same id), so they reuse its runs and LiRA's shadows instead of training
// their own. A recipe changed in mia.yaml alone fails here.
func TestMembershipViews(t *testing.T) {
	for _, scale := range []string{"smoke", "small", "full"} {
		mia, err := Load("mia", &Options{Overrides: []string{"scale=" + scale}})
		if err != nil {
			t.Fatal(err)
		}
		ids := make(map[string]bool)
		for _, c := range mia.Expand() {
			ids[c.ID(Inputs{})] = true
		}
		for _, view := range []string{"fig4", "roc", "lira"} {
			s, err := Load(view, &Options{Overrides: []string{"scale=" + scale}})
			if err != nil {
				t.Fatal(err)
			}
			cs := s.Expand()
			if len(cs) == 0 {
				t.Fatalf("%s at %s: no runs", view, scale)
			}
			for _, c := range cs {
				if !ids[c.ID(Inputs{})] {
					t.Errorf("%s at %s: run %s %s ε=%v seed %d %v is not one of mia's", view, scale, c.Method, c.Task, c.Epsilon, c.Seed, c.Params)
					break
				}
			}
		}
	}
}

// TestMethodTasks checks a method's own tasks: its runs are on those
// tasks only, the other methods' on the spec's, the count agrees with
// Expand, an unknown task is an error at its line, and a task of another
// architecture is an error at the method's entry.
func TestMethodTasks(t *testing.T) {
	src := strings.Replace(base, "    params: {lora_rank: 8}\n", "    params: {lora_rank: 8}\n    tasks: [shapes-vqa, records]\n", 1)
	s, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range s.Expand() {
		if !slices.Contains(got[c.Method], c.Task) {
			got[c.Method] = append(got[c.Method], c.Task)
		}
	}
	want := map[string][]string{"nonprivate": {"fashion-vqa"}, "dpsgd": {"shapes-vqa", "records"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks by method (-want +got):\n%s", diff)
	}
	// nonprivate: 1 task × 2 seeds; dpsgd: 2 tasks × 3 ε × 2 seeds.
	if n := len(s.Expand()); n != 2+12 || s.count() != n {
		t.Errorf("Expand gives %d runs, count %d, want 14", n, s.count())
	}
	bad := strings.Replace(src, "tasks: [shapes-vqa, records]", "tasks: [shapes-vqa, cifar]", 1)
	if _, err := Parse("t.yaml", []byte(bad), nil); err == nil || !strings.HasPrefix(err.Error(), `t.yaml:11: unknown task "cifar"`) {
		t.Errorf("unknown method task: got %v", err)
	}
	names := withParams(map[string][]string{"dpsgd": {"lr", "peft", "lora_rank"}, "nonprivate": {"lr", "peft"}, "dpzo": {"lr", "peft", "lora_rank"}})
	mixed := strings.Replace(src, "  - name: dpsgd\n", "  - name: dpzo\n", 1)
	mixed = strings.Replace(mixed, "tasks: [shapes-vqa, records]", "tasks: [fashion-cls]", 1)
	if _, err := Parse("t.yaml", []byte(mixed), &Options{Names: names}); err == nil || !strings.HasPrefix(err.Error(), "t.yaml:9: method dpzo fine-tunes a tinymllm") {
		t.Errorf("method task of another architecture: got %v", err)
	}
}
