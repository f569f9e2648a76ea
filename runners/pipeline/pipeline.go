// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"weak"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/pretrain"
	"github.com/repro-dp/repro/privacy"
	"github.com/repro-dp/repro/runners"
)

func init() {
	for _, name := range methods.Names() {
		runners.Register(name, Execute)
	}
	runners.RegisterInputs(Inputs)
}

// BaseDir is the cache folder of the pretrained bases; "" means the
// folder pretrain of the results root a run writes under (results/pretrain
// by default, pretrain.DefaultDir). Set it before the first run.
var BaseDir = ""

// cache memoises the pretrained bases (by folder and scale), the PLDs and
// the base identities for the life of the process, and shares the
// datasets (by task, scale and seed) among the runs that use them at the
// same time: every run of a sweep reads them, never writes.
var cache struct {
	sync.Mutex
	bases   map[baseKey]*entry[*pretrain.Result]
	data    map[dataKey]*dataEntry
	plds    map[string]*entry[*privacy.PLD]
	baseIDs map[baseIDKey]*entry[string]
}

type baseKey struct {
	dir, scale string
	choice     experiments.BaseChoice
}

type baseIDKey struct {
	scale  string
	choice experiments.BaseChoice
}

type dataKey struct {
	task, scale string
	seed        int64
	part        experiments.Partition
}

// entry is a value computed once; concurrent callers wait for it.
type entry[T any] struct {
	once sync.Once
	v    T
	err  error
}

// memo returns the value of key k in *m, computing it with f once. A
// failed computation is forgotten once its callers have its error, so
// that an interrupted base build is tried again by the next caller.
func memo[K comparable, T any](m *map[K]*entry[T], k K, f func() (T, error)) (T, error) {
	cache.Lock()
	if *m == nil {
		*m = map[K]*entry[T]{}
	}
	e := (*m)[k]
	if e == nil {
		e = &entry[T]{}
		(*m)[k] = e
	}
	cache.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	if e.err != nil {
		cache.Lock()
		if (*m)[k] == e {
			delete(*m, k)
		}
		cache.Unlock()
	}
	return e.v, e.err
}

// newBase builds or reads the pretrained base of scale that b selects
// (the zero choice: the preset's), writing the pretraining's progress
// lines to progress; tests replace it.
var newBase = func(ctx context.Context, dir, scale string, b experiments.BaseChoice, progress io.Writer) (*pretrain.Result, error) {
	return pretrain.Base(ctx, pretrain.Options{Scale: scale, Patch: b.Patch, Scenes: b.Scenes, ShapesQuestions: b.ShapesQuestions, Captions: b.Captions,
		CellCaptions: b.CellCaptions > 0, CaptionScale: b.CellCaptions, CaptionVision: b.CellCaptions > 0, CellForm: cellForm(b), Dir: dir, Progress: progress})
}

// cellForm returns the cell form (pretrain.Options.CellForm) that b's
// cell_form selects: pretrain.CellForms[b.CellForm], "" out of range
// (the axis check refuses it before a run).
func cellForm(b experiments.BaseChoice) string {
	if b.CellForm <= 0 || b.CellForm >= len(pretrain.CellForms) {
		return ""
	}
	return pretrain.CellForms[b.CellForm]
}

// Base returns the pretrained base of scale, built in or read from the
// cache folder dir (pretrain.Base) once per process. Pretraining a base
// the cache does not hold yet stops at the first interrupt of the sweep
// (runners.StopContext): nothing is cached then, and the next sweep
// builds it again. Meanwhile the sweep's progress line says that the base
// is pretraining (runners.Note).
func Base(ctx context.Context, dir, scale string) (*pretrain.Result, error) {
	return BaseAt(ctx, dir, scale, experiments.BaseChoice{})
}

// BaseAt is Base for the variant of scale that b selects (the base params
// vision_patch and vision_scenes, experiments.BaseParams); the zero
// choice is the preset's base.
func BaseAt(ctx context.Context, dir, scale string, b experiments.BaseChoice) (*pretrain.Result, error) {
	return memo(&cache.bases, baseKey{dir, scale, b}, func() (*pretrain.Result, error) {
		name := scale
		if b.Patch != 0 {
			name = fmt.Sprintf("%s (patch %d)", scale, b.Patch)
		}
		if b.Scenes {
			name += " (scenes)"
		}
		if b.ShapesQuestions {
			name += " (shapes questions)"
		}
		if b.Captions {
			name += " (captions stage)"
		}
		if b.CellCaptions > 0 {
			name += fmt.Sprintf(" (cell captions ×%d)", b.CellCaptions)
		}
		if f := cellForm(b); f != "" {
			name += " (" + f + ")"
		}
		runners.Note(ctx, "preparing the "+name+" base model")
		defer runners.Note(ctx, "")
		r, err := newBase(runners.StopContext(ctx), dir, scale, b, noteWriter{ctx})
		if err != nil {
			return nil, err
		}
		if r.TinyMLLM() == nil {
			return nil, fmt.Errorf("pipeline: the %s base is not a TinyMLLM", name)
		}
		return r, nil
	})
}

// noteWriter shows the last line written to it as the sweep's note.
type noteWriter struct{ ctx context.Context }

func (w noteWriter) Write(b []byte) (int, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		runners.Note(w.ctx, "pretraining: "+l)
	}
	return len(b), nil
}

// dataEntry holds a dataset weakly: it is shared while a run uses it, and
// built again when a later run needs it after the garbage collector has
// reclaimed it, so a sweep over many seeds holds only the datasets of the
// runs in progress.
type dataEntry struct {
	mu sync.Mutex
	p  weak.Pointer[datasets.Dataset]
}

// Data returns the dataset of task at scale and seed, built when first
// needed and shared by the runs that use it at the same time.
func Data(task, scale string, seed int64) (*datasets.Dataset, error) {
	return DataPart(task, scale, seed, experiments.Partition{})
}

// DataPart is Data with the federated partition part (fl-mm's client
// count and Dirichlet α; zero fields keep the task's defaults) and the
// other data options it carries (shapes-vqa's balanced answers).
func DataPart(task, scale string, seed int64, part experiments.Partition) (*datasets.Dataset, error) {
	k := dataKey{task, scale, seed, part}
	cache.Lock()
	if cache.data == nil {
		cache.data = map[dataKey]*dataEntry{}
	}
	e := cache.data[k]
	if e == nil {
		e = &dataEntry{}
		cache.data[k] = e
	}
	cache.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.p.Value(); d != nil {
		return d, nil
	}
	sc, err := datasets.ParseScale(scale)
	if err != nil {
		return nil, err
	}
	d, err := datasets.Build(task, &datasets.Options{Scale: sc, Seed: uint64(seed), Clients: part.Clients, Alpha: part.Alpha, ShapesBalanced: part.ShapesBalanced})
	if err != nil {
		return nil, err
	}
	e.p = weak.Make(d)
	return d, nil
}

// Inputs returns the inputs of a run without building anything, so that
// planning a sweep costs a small record per run: DataID for its dataset
// and BaseID for its scale's pretrained base.
func Inputs(cfg *experiments.Config) (experiments.Inputs, error) {
	data, err := DataIDPart(cfg.Task, cfg.Scale, cfg.Seed, cfg.Partition())
	if err != nil {
		return experiments.Inputs{}, err
	}
	b, err := BaseIDAt(cfg.Scale, cfg.BaseChoice())
	if err != nil {
		return experiments.Inputs{}, err
	}
	return experiments.Inputs{Data: data, Base: b}, nil
}

// DataID returns the identity of the dataset [Data] builds for task, scale
// and seed, without building it: "data-" and the SHA-256 of the canonical
// JSON of the build options and the vocabulary hash. Data builds from
// these alone: generated tasks from the seed, Fashion-MNIST tasks from
// the embedded subset or the system copy, whose contents package
// datasets checks against SHA-256 sums in its source. The code that
// builds the data is in the run id through repro.Code.
func DataID(task, scale string, seed int64) (string, error) {
	return DataIDPart(task, scale, seed, experiments.Partition{})
}

// DataIDPart is DataID with the federated partition part; a zero field is
// left out of the hashed options, so the identities without it are
// DataID's.
func DataIDPart(task, scale string, seed int64, part experiments.Partition) (string, error) {
	if _, err := datasets.ParseScale(scale); err != nil {
		return "", err
	}
	b, err := json.Marshal(struct {
		Task    string  `json:"task"`
		Scale   string  `json:"scale"`
		Seed    int64   `json:"seed"`
		Clients int     `json:"clients,omitempty"`
		Alpha   float64 `json:"alpha,omitempty"`
		// Balanced is omitted when false, so the ids of the data as
		// generated are unchanged.
		Balanced bool   `json:"shapes_balanced,omitempty"`
		Vocab    string `json:"vocab"`
	}{task, scale, seed, part.Clients, part.Alpha, part.ShapesBalanced, datasets.Vocab().Hash()})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "data-" + hex.EncodeToString(sum[:]), nil
}

// BaseID returns the identity of the pretrained base of scale without
// building it: "pretrain-" and the SHA-256 of the canonical JSON of
// pretrain.FormatVersion, the architecture, the scale, the seed, the
// scale's pretraining plan, the model preset, the vocabulary hash and the
// engine fingerprint (pretrain.EngineFingerprint). Pretraining is
// reproducible bit for bit from these and the code (in the run id through
// repro.Code), so equal identities mean equal checkpoints; the
// checkpoint's own hash is written to base.json in the run's folder when
// the run executes. It is computed once per scale and process.
func BaseID(scale string) (string, error) {
	return BaseIDAt(scale, experiments.BaseChoice{})
}

// BaseIDAt is BaseID for the variant of scale that b selects (the zero
// choice: the preset's, whose identity is BaseID's): with a patch side
// the model preset hashed is nn.Config.WithPatch's, with scenes the plan
// is pretrain.Plan.WithScenes, with shapes questions
// pretrain.Plan.WithShapesQuestions, with the captions stage
// pretrain.Plan.WithCaptions, with cell captions
// pretrain.Plan.WithCellCaptions (the encoder trained too) and, with a
// cell form, pretrain.Plan.WithCellForm.
func BaseIDAt(scale string, b experiments.BaseChoice) (string, error) {
	return memo(&cache.baseIDs, baseIDKey{scale, b}, func() (string, error) { return baseID(scale, b) })
}

func baseID(scale string, bc experiments.BaseChoice) (string, error) {
	sc, err := datasets.ParseScale(scale)
	if err != nil {
		return "", err
	}
	plan, err := pretrain.PlanFor(sc)
	if err != nil {
		return "", err
	}
	v := datasets.Vocab()
	cfg, err := nn.Preset(scale, v.Len())
	if err != nil {
		return "", err
	}
	if cfg, err = cfg.WithPatch(bc.Patch); err != nil {
		return "", err
	}
	if bc.Scenes {
		plan = plan.WithScenes()
	}
	if bc.ShapesQuestions {
		plan = plan.WithShapesQuestions()
	}
	if bc.Captions {
		plan = plan.WithCaptions()
	}
	if bc.CellForm != 0 && bc.CellCaptions == 0 {
		return "", fmt.Errorf("pipeline: cell_form %d needs cell_captions", bc.CellForm)
	}
	if bc.CellCaptions > 0 {
		plan = plan.WithCellCaptions(bc.CellCaptions, true)
		if f := cellForm(bc); f != "" {
			plan = plan.WithCellForm(f)
		}
	}
	b, err := json.Marshal(struct {
		Format int           `json:"format"`
		Arch   string        `json:"arch"`
		Scale  string        `json:"scale"`
		Seed   uint64        `json:"seed"`
		Plan   pretrain.Plan `json:"plan"`
		Model  nn.Config     `json:"model"`
		Vocab  string        `json:"vocab"`
		Engine string        `json:"engine"`
	}{pretrain.FormatVersion, "tinymllm", scale, 1, plan, cfg, v.Hash(), pretrain.EngineFingerprint()})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "pretrain-" + hex.EncodeToString(sum[:]), nil
}
