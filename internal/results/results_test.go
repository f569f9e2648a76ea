// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/repro-dp/repro/experiments"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.txt")
	if err := WriteFile(name, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(name, func(w io.Writer) error {
		io.WriteString(w, "half of the new conte")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Write: got %v, want it to wrap %v", err, boom)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Errorf("after a failed Write the file holds %q, want %q", b, "old")
	}
	if err := WriteFile(name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Errorf("after Write the file holds %q, want %q", b, "new")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want 1 (no temporary files left)", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir"), nil); err == nil {
		t.Errorf("WriteFile into a missing folder: got nil error")
	}
}

func TestFloatJSON(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{1.5, "1.5"}, {0, "0"}, {1e-300, "1e-300"}, {math.Inf(1), `"inf"`}, {math.Inf(-1), `"-inf"`}, {math.NaN(), `"nan"`},
	} {
		b, err := json.Marshal(Float(tc.f))
		if err != nil || string(b) != tc.want {
			t.Errorf("json.Marshal(Float(%v)) = %s, %v; want %s", tc.f, b, err, tc.want)
		}
		var got Float
		if err := json.Unmarshal(b, &got); err != nil || !(float64(got) == tc.f || math.IsNaN(tc.f) && math.IsNaN(float64(got))) {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, got, err, tc.f)
		}
	}
}

func testManifest(id string, status Status) *Manifest {
	nominal := Float(3.5)
	start := time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	return &Manifest{
		Format:     Format,
		RunID:      id,
		Experiment: "table1",
		Status:     status,
		Config: experiments.Config{
			Method: "dpsgd", Task: "fashion-vqa", Scale: "smoke", Seed: 2, Epsilon: 8, Delta: 1e-5,
			Attacks: []string{"loss-mia"}, Params: map[string]any{"lr": 0.01, "lora_rank": int64(8), "peft": "lora", "on": true},
		},
		Inputs:          experiments.Inputs{Data: "abc", Base: "def"},
		Started:         start,
		Finished:        start.Add(90 * time.Second),
		Seconds:         90,
		Stages:          []Stage{{"base", 1}, {"fine-tune", 80}, {"attacks", 9}},
		Steps:           100,
		SecondsPerStep:  0.8,
		PeakMemoryBytes: 1 << 30,
		Provenance:      CurrentProvenance(),
		Privacy: &Privacy{
			Accountant: "rdp", EpsilonTarget: 8, Epsilon: 7.99, EpsilonNominal: &nominal, Delta: 1e-5, Sigma: 0.7,
			SampleRate: 0.01, Steps: 100, Sampling: "poisson", Neighbouring: "add-remove", ClipNorm: 1,
			Events:  json.RawMessage(`[{"kind":"poisson-gaussian","q":0.01,"sigma":0.7,"count":100}]`),
			Caveats: []string{"none"},
		},
		Results:  map[string]Float{"acc": 0.5, "mia_auc": 0.51, "loss": Float(math.NaN()), "eps_inf": Float(math.Inf(1))},
		Warnings: []string{"n=3 seeds"},
		Files:    []File{},
	}
}

var equateFloatNaNs = cmp.Comparer(func(a, b Float) bool {
	return a == b || math.IsNaN(float64(a)) && math.IsNaN(float64(b))
})

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := testManifest("0123456789abcdef", OK)
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Params read back from JSON are float64; ints become floats. The
	// events are stored indented.
	m.Config.Params["lora_rank"] = 8.0
	var events bytes.Buffer
	if err := json.Compact(&events, got.Privacy.Events); err != nil {
		t.Fatal(err)
	}
	got.Privacy.Events = events.Bytes()
	if diff := cmp.Diff(m, got, equateFloatNaNs); diff != "" {
		t.Errorf("manifest round trip (-want +got):\n%s", diff)
	}
	if !Finished(dir) {
		t.Errorf("Finished(%s) = false for status ok", dir)
	}
	m.Status = Failed
	WriteManifest(dir, m)
	if Finished(dir) {
		t.Errorf("Finished(%s) = true for status failed", dir)
	}
	if Finished(t.TempDir()) {
		t.Errorf("Finished(empty dir) = true")
	}
	for _, bad := range []string{`{`, `{"format":2,"status":"ok"}`, `{"format":1,"status":"done"}`} {
		if _, err := DecodeManifest("m.json", []byte(bad)); err == nil {
			t.Errorf("DecodeManifest(%s): got nil error", bad)
		}
	}
}

func TestMetricsScoresRoundTrip(t *testing.T) {
	dir := t.TempDir()
	metrics := []Metric{{0, "train", "loss", 2.5}, {10, "test", "acc", 0.75}, {10, "test", "nan", math.NaN()}, {10, "test", "inf", math.Inf(1)}}
	scores := []Score{{"loss-mia", 0, true, -0.5}, {"loss-mia", 7, false, -2}, {"loss-mia", 1 << 40, true, 1e-300}}
	mname, sname := filepath.Join(dir, MetricsFile), filepath.Join(dir, ScoresFile)
	if err := WriteMetrics(mname, metrics); err != nil {
		t.Fatal(err)
	}
	if err := WriteScores(sname, scores); err != nil {
		t.Fatal(err)
	}
	gotM, err := ReadMetrics(mname)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(metrics, gotM, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("metrics round trip (-want +got):\n%s", diff)
	}
	gotS, err := ReadScores(sname)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scores, gotS); diff != "" {
		t.Errorf("scores round trip (-want +got):\n%s", diff)
	}
	// A truncated file is an error, not a panic.
	b, _ := os.ReadFile(mname)
	os.WriteFile(mname, b[:len(b)/2], 0o644)
	if _, err := ReadMetrics(mname); err == nil {
		t.Errorf("ReadMetrics of a truncated file: got nil error")
	}
}

func TestRunsRoundTrip(t *testing.T) {
	nan := math.NaN()
	rows := []Run{
		{RunID: "a", Experiment: "e", Status: OK, Method: "dpsgd", Task: "t", Scale: "smoke", Seed: 1,
			EpsilonTarget: 8, Epsilon: 7.9, Delta: 1e-5, Sigma: 0.8, SampleRate: 0.01, Steps: 10, Seconds: 1.5,
			LoadStart: 3.5, LoadEnd: 0, GOMAXPROCS: 2, Jobs: 1,
			Params:  map[string]any{"beta": 0.5, "chunks": int64(2), "mixed": int64(1), "peft": "lora", "flag": true, "odd": true},
			Results: map[string]float64{"acc": 0.5, "mia_auc": nan}},
		{RunID: "b", Experiment: "e", Status: Failed, Error: "boom", Method: "nonprivate", Task: "t", Scale: "smoke", Seed: 2,
			EpsilonTarget: math.Inf(1), Epsilon: nan, Delta: 1e-5, Sigma: nan, SampleRate: nan,
			LoadStart: nan, LoadEnd: nan,
			Params:  map[string]any{"mixed": 0.25, "odd": "x"},
			Results: map[string]float64{}},
	}
	name := filepath.Join(t.TempDir(), RunsFile)
	if err := WriteRuns(name, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRuns(name)
	if err != nil {
		t.Fatal(err)
	}
	// mixed (int and float) is a DOUBLE column; odd (bool and string) a
	// STRING column; missing values read back as missing.
	want := rows
	want[0].Params["mixed"] = 1.0
	want[0].Params["odd"] = "true"
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("runs round trip (-want +got):\n%s", diff)
	}

	// The columns, their order and their physical types, as other readers
	// (DuckDB, pandas) see them.
	f, _ := os.Open(name)
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, fl := range pf.Schema().Fields() {
		cols = append(cols, fl.Name()+":"+fl.Type().String())
	}
	wantCols := "run_id:STRING experiment:STRING status:STRING error:STRING method:STRING task:STRING scale:STRING " +
		"seed:INT(64,true) epsilon_target:DOUBLE epsilon:DOUBLE delta:DOUBLE sigma:DOUBLE sample_rate:DOUBLE steps:INT(64,true) seconds:DOUBLE " +
		"load_start:DOUBLE load_end:DOUBLE gomaxprocs:INT(64,true) jobs:INT(64,true) " +
		"beta:DOUBLE chunks:INT(64,true) flag:BOOLEAN mixed:DOUBLE odd:STRING peft:STRING acc:DOUBLE mia_auc:DOUBLE"
	if got := strings.Join(cols, " "); got != wantCols {
		t.Errorf("runs.parquet columns:\n got %s\nwant %s", got, wantCols)
	}

	for _, bad := range [][]Run{
		{{RunID: "c", Params: map[string]any{"seed": int64(1)}}},
		{{RunID: "c", Params: map[string]any{"acc": 1.0}, Results: map[string]float64{"acc": 1}}},
		{{RunID: "c", Results: map[string]float64{"Bad Name": 1}}},
		{{RunID: "c", Params: map[string]any{"x": []int{1}}}},
	} {
		if err := WriteRuns(name, bad); err == nil {
			t.Errorf("WriteRuns(%v): got nil error", bad)
		}
	}
}

// TestRunsTiming checks the timing columns: a table written before they
// were recorded (the fixed columns, then params and results) reads with
// every load unknown (NaN, 0), as the checked-in tables do; a param that
// has a timing column's name keeps its column and the table goes without
// the timing ones; RunOf takes them from the manifest.
func TestRunsTiming(t *testing.T) {
	dir := t.TempDir()
	row := Run{RunID: "a", Experiment: "e", Status: OK, Method: "dpsgd", Task: "t", Scale: "smoke", Seed: 1,
		EpsilonTarget: 8, Epsilon: 7.9, Delta: 1e-5, Sigma: 0.8, SampleRate: 0.01, Steps: 10, Seconds: 1.5,
		LoadStart: 8, LoadEnd: 9, GOMAXPROCS: 2, Jobs: 2,
		Params: map[string]any{"beta": 0.5}, Results: map[string]float64{"acc": 0.5}}

	// The format before the timing columns, written as WriteRuns did.
	old := filepath.Join(dir, "old.parquet")
	var cols []column
	for _, f := range fixed {
		cols = append(cols, column{f.name, f.typ, f.get})
	}
	cols = append(cols, paramColumn("beta", typeFloat), column{"acc", typeFloat, func(r *Run) any { return r.Results["acc"] }})
	if err := writeColumns(old, []Run{row}, cols, nil, []string{"beta"}, []string{"acc"}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRuns(old)
	if err != nil {
		t.Fatal(err)
	}
	want := row
	want.LoadStart, want.LoadEnd, want.GOMAXPROCS, want.Jobs = math.NaN(), math.NaN(), 0, 0
	if diff := cmp.Diff([]Run{want}, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("a table without timing columns (-want +got):\n%s", diff)
	}

	clash := row
	clash.Params = map[string]any{"jobs": int64(4)}
	name := filepath.Join(dir, "clash.parquet")
	if err := WriteRuns(name, []Run{clash}); err != nil {
		t.Fatal(err)
	}
	got, err = ReadRuns(name)
	if err != nil {
		t.Fatal(err)
	}
	want = clash
	want.LoadStart, want.LoadEnd, want.GOMAXPROCS, want.Jobs = math.NaN(), math.NaN(), 0, 0
	if diff := cmp.Diff([]Run{want}, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("a param named jobs (-want +got):\n%s", diff)
	}

	m := testManifest("a", OK)
	m.Provenance.GOMAXPROCS, m.Provenance.Jobs = 2, 1
	start, end := 8.25, 0.0
	m.LoadStart, m.LoadEnd = &start, &end
	if r := RunOf(m); r.LoadStart != 8.25 || r.LoadEnd != 0 || r.GOMAXPROCS != 2 || r.Jobs != 1 {
		t.Errorf("RunOf: load %v → %v, GOMAXPROCS %d, jobs %d; want 8.25 → 0, 2, 1", r.LoadStart, r.LoadEnd, r.GOMAXPROCS, r.Jobs)
	}
	m.LoadStart, m.LoadEnd = nil, nil
	if r := RunOf(m); !math.IsNaN(r.LoadStart) || !math.IsNaN(r.LoadEnd) {
		t.Errorf("RunOf of a manifest without loads: %v → %v, want NaN → NaN", r.LoadStart, r.LoadEnd)
	}
}

func TestFindRuns(t *testing.T) {
	root := t.TempDir()
	for i, id := range []string{"b1", "a1", "c1"} {
		m := testManifest(id, OK)
		m.Started = m.Started.Add(time.Duration(-i) * time.Second)
		dir := RunDir(root, "table1", id)
		os.MkdirAll(dir, 0o755)
		if err := WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
	}
	bad := RunDir(root, "table1", "zz")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, ManifestFile), []byte("{"), 0o644)
	ms, err := FindRuns(root)
	if err == nil || !strings.Contains(err.Error(), "zz") {
		t.Errorf("FindRuns: got error %v, want one naming the bad manifest", err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.RunID)
	}
	if diff := cmp.Diff([]string{"c1", "a1", "b1"}, ids); diff != "" {
		t.Errorf("FindRuns order (-want +got):\n%s", diff)
	}
	if _, err := FindRuns(filepath.Join(root, "missing")); err == nil {
		t.Errorf("FindRuns(missing): got nil error")
	}
}
