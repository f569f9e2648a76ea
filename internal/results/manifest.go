// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/repro-dp/repro"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/buildinfo"
)

// Format is the version of the on-disk format written by this package.
const Format = 1

// File names inside a run folder and an experiment folder.
const (
	ManifestFile = "manifest.json"
	MetricsFile  = "metrics.parquet"
	ScoresFile   = "scores.parquet"
	// PredictionsFile holds a run's per-example test outputs
	// ([Prediction] rows).
	PredictionsFile = "predictions.parquet"
	RunsFile        = "runs.parquet"
)

// RunDir returns the folder of run id of experiment exp under root:
// root/exp/runs/id.
func RunDir(root, exp, id string) string { return filepath.Join(root, exp, "runs", id) }

// Status is the state of a run.
type Status string

const (
	// Running: the run started and has not recorded its end; a run
	// killed half way stays in this state and is run again.
	Running Status = "running"
	// OK: the run finished and every file is written; the manifest's
	// Files record each file's size and hash ([Verify]).
	OK Status = "ok"
	// Failed: the run returned an error or panicked; Error (and Stack
	// for a panic) say why.
	Failed Status = "failed"
)

// A Manifest describes one run: what it was, how it went, where and how
// long it ran, and the privacy it guarantees.
type Manifest struct {
	Format     int                `json:"format"`
	RunID      string             `json:"run_id"`
	Experiment string             `json:"experiment"`
	Status     Status             `json:"status"`
	Error      string             `json:"error,omitempty"`
	Stack      string             `json:"stack,omitempty"`
	Config     experiments.Config `json:"config"`
	Inputs     experiments.Inputs `json:"inputs"`
	// CopiedFrom names the experiment whose run with the same id (same
	// config and inputs) this run's files were copied from; "" if the
	// run was executed for this experiment.
	CopiedFrom string `json:"copied_from,omitempty"`

	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Seconds is the wall time of the run.
	Seconds float64 `json:"seconds"`
	// Stages holds the wall time of each stage the run marked (base,
	// fine-tune, attacks, ...), in order.
	Stages []Stage `json:"stages,omitempty"`
	// Steps is the number of optimisation steps; SecondsPerStep is the
	// fine-tune stage's time divided by Steps (0 if either is unknown).
	Steps          int64   `json:"steps,omitempty"`
	SecondsPerStep float64 `json:"seconds_per_step,omitempty"`
	// PeakMemoryBytes is the peak resident set size of the process when
	// the run ended. Runs executed concurrently share it: it bounds each
	// run's peak from above.
	PeakMemoryBytes uint64 `json:"peak_memory_bytes"`
	// LoadStart and LoadEnd are the machine's 1-minute load average
	// (/proc/loadavg) when the run started and when it ended: with
	// Provenance.GOMAXPROCS and Jobs they say under what load Seconds was
	// measured, which the ETA uses to compare recorded times with
	// today's. Nil where the system has no /proc/loadavg, and in
	// manifests written before they were recorded. Like the times, they
	// are not part of the run id.
	LoadStart *float64 `json:"load_start,omitempty"`
	LoadEnd   *float64 `json:"load_end,omitempty"`

	Provenance Provenance `json:"provenance"`
	// Privacy is nil for a run that recorded none.
	Privacy *Privacy `json:"privacy,omitempty"`
	// Results holds the run's final metrics and attack results by name
	// (acc, img, mia_auc, ...), the float columns of runs.parquet.
	Results  map[string]Float `json:"results,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
	// Files records every file of the run's folder but the manifest, as
	// the run left them, sorted by name. The manifest is written last, so
	// a run is finished only when it says ok and every file matches
	// ([Check]). Nil in the manifest of a run that has not ended.
	Files []File `json:"files"`
}

// A File is a file of a run's folder: its name, size and content hash.
type File struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	// SHA256 is the hex SHA-256 of the contents.
	SHA256 string `json:"sha256"`
}

// A Stage is a named part of a run and its wall time.
type Stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Provenance says which code ran a run, and where.
type Provenance struct {
	// Revision is the VCS revision of the binary (vcs.revision from
	// runtime/debug.ReadBuildInfo), "unknown" when it carries none, and
	// Modified is true when the tree had local changes.
	Revision string `json:"revision"`
	Modified bool   `json:"modified"`
	// Code is the fingerprint of the code on a run's path (repro.Code),
	// which the run id hashes; it identifies the code even when Revision
	// is unknown.
	Code       string `json:"code,omitempty"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Host       string `json:"host"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// Jobs is the number of runs the runner executed concurrently.
	Jobs int `json:"jobs"`
	// Device is the hardware that trained: "cpu", or "cuda" for an
	// NVIDIA GPU (package internal/device); empty in manifests written
	// before it was recorded, which all ran on the CPU. It is not part
	// of the run id.
	Device string `json:"device,omitempty"`
}

// CurrentProvenance returns the provenance of this process, with Jobs 0.
func CurrentProvenance() Provenance {
	p := Provenance{
		Revision:   "unknown",
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	p.Host, _ = os.Hostname()
	p.Revision, p.Modified = buildinfo.Revision()
	p.Code = repro.Code()
	return p
}

// Privacy is the privacy record of a run (DESIGN §5): what the accountant
// guarantees for the mechanism the run actually executed.
type Privacy struct {
	// Accountant names the accountant that computed Epsilon: "rdp",
	// "pld", or "none" for a non-private run.
	Accountant string `json:"accountant"`
	// EpsilonTarget is the ε the run was calibrated for (+Inf: none);
	// Epsilon is the ε achieved, which never exceeds the target.
	EpsilonTarget Float `json:"epsilon_target"`
	Epsilon       Float `json:"epsilon"`
	// EpsilonNominal is the looser ε a paper reports for the same
	// mechanism, when it differs (Rap-FT); nil otherwise.
	EpsilonNominal *Float  `json:"epsilon_nominal,omitempty"`
	Delta          float64 `json:"delta"`
	// Sigma is the noise multiplier (noise std / clip norm); 0 for none.
	Sigma      float64 `json:"sigma"`
	SampleRate float64 `json:"sample_rate"`
	Steps      int64   `json:"steps"`
	// Sampling is "poisson", "shuffle", "full-batch" or "none".
	Sampling string `json:"sampling"`
	// Neighbouring is the neighbouring relation: "add-remove",
	// "replace-one", or "zero-out" (a record present or replaced by one
	// that contributes nothing, the dataset's size fixed: DP-MTV's
	// chunks).
	Neighbouring string  `json:"neighbouring"`
	ClipNorm     float64 `json:"clip_norm"`
	// Events is the mechanism as accountant events, as the privacy
	// package encodes them; repro stores it as given.
	Events json.RawMessage `json:"events,omitempty"`
	// ClientEvents, when not nil, are the mechanisms of the distinct
	// clients of a federated run at the record-level unit (one per
	// distinct sampling rate and step count), each encoded as Events is;
	// Events and Epsilon are the worst-ε client's. A membership test on
	// an example of unknown client is bounded by the largest TPR over
	// them at each FPR, which need not be the worst-ε client's.
	ClientEvents []json.RawMessage `json:"client_events,omitempty"`
	// Caveats lists what the accountant does not charge (for example a
	// data-dependent mask computed on private data).
	Caveats []string `json:"caveats,omitempty"`
	// Components are the blocks of a mechanism that releases several
	// noisy blocks of one update together (Sec-MMFL's modalities), each
	// with its noise multiplier and its ε at Delta on its own; Epsilon is
	// their composition. Nil for a mechanism of one block.
	Components []PrivacyComponent `json:"components,omitempty"`
	// SigmaScale is the common factor by which a joint calibration scaled
	// the components' noise multipliers from those of their separate
	// budgets, so that their composition meets the target; 0 when no
	// joint calibration was made.
	SigmaScale float64 `json:"sigma_scale,omitempty"`
}

// A PrivacyComponent is one block of a mechanism that releases several
// (Privacy.Components).
type PrivacyComponent struct {
	// Name names the block (a modality, with the first round of its
	// noise when the noise changes during the run: "image@r10").
	Name string `json:"name"`
	// Sigma is the block's noise multiplier (noise std / its clip norm).
	Sigma float64 `json:"sigma"`
	// Epsilon is the ε at the record's Delta of the block's releases
	// alone, as if the others were not released.
	Epsilon Float `json:"epsilon"`
}

// Float is a float64 that JSON-encodes NaN and ±Inf as the strings "nan",
// "inf" and "-inf" (JSON numbers cannot hold them).
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	switch x := float64(f); {
	case math.IsNaN(x):
		return []byte(`"nan"`), nil
	case math.IsInf(x, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"nan"`:
		*f = Float(math.NaN())
	case `"inf"`:
		*f = Float(math.Inf(1))
	case `"-inf"`:
		*f = Float(math.Inf(-1))
	default:
		var x float64
		if err := json.Unmarshal(b, &x); err != nil {
			return fmt.Errorf("results: bad float %s", b)
		}
		*f = Float(x)
	}
	return nil
}

// WriteManifest writes m to dir/manifest.json atomically, as indented JSON.
func WriteManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("results: manifest of run %s: %w", m.RunID, err)
	}
	return WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

// ReadManifest reads the manifest in dir (or the file dir names, if it
// ends in .json).
func ReadManifest(dir string) (*Manifest, error) {
	name := dir
	if !strings.HasSuffix(name, ".json") {
		name = filepath.Join(dir, ManifestFile)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return DecodeManifest(name, b)
}

// DecodeManifest decodes a manifest read from name (used in errors).
func DecodeManifest(name string, b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("results: %s: %w", name, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("results: %s: format %d, want %d", name, m.Format, Format)
	}
	switch m.Status {
	case Running, OK, Failed:
	default:
		return nil, fmt.Errorf("results: %s: unknown status %q", name, m.Status)
	}
	return &m, nil
}

// Finished reports whether the run in dir is finished: its manifest reads
// back, says status ok, and every file it records verifies ([Check]).
func Finished(dir string) bool {
	m, err := Check(dir)
	return err == nil && m.Status == OK
}

// A DamagedError says that a run's folder does not hold what its manifest
// records, or that the manifest itself does not read back.
type DamagedError struct {
	Dir string
	// File is the damaged file's name (ManifestFile for the manifest).
	File string
	Err  error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("results: run %s is damaged: %s: %v", filepath.Base(e.Dir), e.File, e.Err)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Check reads the manifest of the run in dir and, if it says ok, verifies
// the run's files against it ([Verify]). The error is a *DamagedError if
// the manifest exists but does not read back, or a file does not verify
// (the manifest is returned with it in that case; a missing file is
// damage too), and wraps fs.ErrNotExist, without being a *DamagedError,
// if there is no manifest.
func Check(dir string) (*Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &DamagedError{Dir: dir, File: ManifestFile, Err: errors.Unwrap(err)}
	}
	if m.Status != OK {
		return m, nil
	}
	return m, Verify(dir, m)
}

// Verify checks that every file m records is in dir with its recorded
// size and SHA-256; the first mismatch is returned as a *DamagedError.
// An ok manifest that records no files (written before files were
// recorded) does not verify.
func Verify(dir string, m *Manifest) error {
	if m.Files == nil {
		return &DamagedError{Dir: dir, File: ManifestFile, Err: errors.New("records no file hashes")}
	}
	for _, f := range m.Files {
		got, err := hashFile(filepath.Join(dir, f.Name))
		switch {
		case err != nil:
			return &DamagedError{Dir: dir, File: f.Name, Err: err}
		case got.Size != f.Size:
			return &DamagedError{Dir: dir, File: f.Name, Err: fmt.Errorf("%d bytes, the manifest says %d", got.Size, f.Size)}
		case got.SHA256 != f.SHA256:
			return &DamagedError{Dir: dir, File: f.Name, Err: errors.New("content differs from the manifest's SHA-256")}
		}
	}
	return nil
}

// HashFiles returns the record of every regular file in dir but the
// manifest and hidden files (temporary files start with a dot), sorted by
// name: what [Manifest.Files] holds. It never returns nil without an error.
func HashFiles(dir string) ([]File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	out := []File{}
	for _, e := range ents { // sorted by name
		n := e.Name()
		if !e.Type().IsRegular() || n == ManifestFile || strings.HasPrefix(n, ".") {
			continue
		}
		f, err := hashFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func hashFile(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return File{}, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("results: %w", err)
	}
	return File{Name: filepath.Base(name), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// FindRuns returns the manifests of every run under root (in
// root/*/runs/*/manifest.json), sorted by experiment, then start time,
// then run id. Manifests that do not read back are skipped, with one
// error each joined into err; the others are returned all the same.
func FindRuns(root string) ([]*Manifest, error) {
	names, err := filepath.Glob(filepath.Join(root, "*", "runs", "*", ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("results: %w", err)
	}
	var out []*Manifest
	var errs []error
	for _, n := range names {
		m, err := ReadManifest(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Manifest) int {
		if c := strings.Compare(a.Experiment, b.Experiment); c != 0 {
			return c
		}
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.RunID, b.RunID)
	})
	return out, errors.Join(errs...)
}
