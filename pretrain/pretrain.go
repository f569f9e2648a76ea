// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/buildinfo"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/nn/safetensors"
)

// FormatVersion is hashed into every cache key. Bump it when a change to
// this package changes what a given configuration trains, so that old
// checkpoints are not taken for new ones.
const FormatVersion = 2

// Architectures are the base models Base builds.
var Architectures = []string{"tinymllm", "vit", "cnn", "cnn-gn", "fusion"}

// DefaultDir is the cache directory when Options.Dir is empty: the
// pretrain folder of the default results directory.
const DefaultDir = "results/pretrain"

// Options configure Base. The zero value asks for the small TinyMLLM base
// with seed 1 in DefaultDir.
type Options struct {
	// Scale is the preset: "smoke", "small" or "full"; "" means small.
	Scale string
	// Arch is the base model: "tinymllm" (default), "vit", "cnn" or
	// "cnn-gn" (the image classifiers, pretrained on the coarse labels;
	// cnn-gn is the CNN with a group norm in each block) or "fusion" (the
	// image + text classifier, pretrained on fl-mm's public split).
	Arch string
	// ImageEncoder and FusionMode configure the fusion base (ignored by
	// the others): "mlp" or "cnn" (""; DefaultImageEncoder), "late" or
	// "early" ("": late).
	ImageEncoder, FusionMode string
	// Patch, when positive and not the preset's, is the side of the
	// vision encoder's patches (nn.Config.WithPatch): the many-patch
	// variant of a preset, with the preset's recipe (small with patch 4
	// sees 49 patches an image instead of 16). TinyMLLM only; 0 means the
	// preset's.
	Patch int
	// Scenes trains the vision encoder on public shapes-vqa scene objects
	// as well as on Fashion-MNIST items (Plan.VisionScenes, half of the
	// preset's VisionBatch): the scenes variant of a preset, with the
	// preset's recipe otherwise. TinyMLLM only.
	Scenes bool
	// ShapesQuestions adds public shapes-vqa questions of every kind to
	// the mixture (Plan.WithShapesQuestions): the shapes-questions variant
	// of a preset, with the preset's recipe otherwise. TinyMLLM only.
	ShapesQuestions bool
	// Captions adds the captions-only stage before the mixture
	// (Plan.WithCaptions, LLaVA's feature-alignment stage): the captions
	// variant of a preset, with the preset's recipe otherwise. TinyMLLM
	// only.
	Captions bool
	// CellCaptions adds the captions-only stage with cell-first scene
	// captions (Plan.WithCellCaptions, Plan.CaptionCells), for
	// CaptionScale times the mixture's steps (0: as many), training the
	// vision encoder as well with CaptionVision, and keeps those captions
	// in the mixture: the cell-captions variant of a preset. It excludes
	// Captions. TinyMLLM only.
	CellCaptions  bool
	CaptionScale  int
	CaptionVision bool
	// CellForm, with CellCaptions, sets the form of the cell-first
	// descriptions in the stage and the mixture (Plan.CaptionForm,
	// Plan.WithCellForm: "shuffled", "single", "questions", joined by
	// "+"; "" the fixed order).
	CellForm string
	// Dir is the cache directory; "" means DefaultDir. Each base lives in
	// its own folder Dir/<arch>-<scale>-<key>, or
	// Dir/<arch>-<scale>-p<patch>-<key> with a Patch, with "-scenes"
	// after the scale or the patch with Scenes, then "-shapesqa" with
	// ShapesQuestions, then "-captions" with Captions or "-cellcaps"
	// with CellCaptions ("-cellcapsxN" with a CaptionScale N above 1,
	// then "v" with CaptionVision, then "-" and the CellForm with "+" as
	// "-").
	Dir string
	// Fresh rebuilds the base even when the cache holds it.
	Fresh bool
	// Seed seeds the model's initial values, the public data and the
	// batch order; 0 means 1. Every fine-tuning run of a preset uses the
	// same base (seed 1); other seeds give independent bases.
	Seed uint64
	// DataDir is the full Fashion-MNIST release for datasets.Build (needed
	// at full scale); "" means the embedded subset, or the system copy at
	// full scale.
	DataDir string
	// Progress, when not nil, receives progress lines while the base trains
	// (steps, loss, elapsed time, ETA).
	Progress io.Writer

	// plan and cplan, when not nil, replace the scale's recipes (tests).
	plan  *Plan
	cplan *ClassifierPlan
}

// Result is a pretrained base.
type Result struct {
	// Model is the base model, loaded from Checkpoint: a *nn.TinyMLLM,
	// *nn.ViT, *nn.CNN or *nn.Fusion. Every tensor is frozen (PEFT method none);
	// the caller owns it and may fine-tune it. Load returns further
	// independent copies.
	Model nn.Model
	// Checkpoint is the path of the safetensors checkpoint.
	Checkpoint string
	// Hash is the hex SHA-256 of the checkpoint file.
	Hash string
	// Manifest describes how the base was built and how good it is.
	Manifest *Manifest
	// Cached reports that the base came from the cache.
	Cached bool
}

// TinyMLLM returns the model as a TinyMLLM, or nil for another architecture.
func (r *Result) TinyMLLM() *nn.TinyMLLM {
	m, _ := r.Model.(*nn.TinyMLLM)
	return m
}

// Load reads a new, independent copy of the base from its checkpoint and
// checks it against Hash.
func (r *Result) Load() (nn.Model, error) {
	h, err := safetensors.HashFile(r.Checkpoint)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	if h != r.Hash {
		return nil, fmt.Errorf("pretrain: checkpoint %s changed (hash %.12s, want %.12s)", r.Checkpoint, h, r.Hash)
	}
	return nn.Load(r.Checkpoint)
}

// Manifest records a base model: what was trained, on what, how, by which
// code, how long it took and how good it is.
type Manifest struct {
	Format int    `json:"format"`
	Key    string `json:"key"`
	Arch   string `json:"arch"`
	Scale  string `json:"scale"`
	Seed   uint64 `json:"seed"`
	// Model is the architecture's configuration (PEFT none).
	Model nn.Config `json:"model"`
	// Plan is the recipe: a Plan for tinymllm, a ClassifierPlan for vit
	// and fusion (a map once read back from JSON).
	Plan any `json:"plan"`
	// Data maps each task whose public split was read to its datasets
	// fingerprint; Vocab is the vocabulary hash.
	Data  map[string]string `json:"data"`
	Vocab string            `json:"vocab"`
	// Engine fingerprints the arithmetic of packages nn and nn/optim (see
	// the package documentation, Cache key).
	Engine string `json:"engine"`
	// Checkpoint is the checkpoint's file name in the manifest's folder and
	// Hash its hex SHA-256.
	Checkpoint string `json:"checkpoint"`
	Hash       string `json:"hash"`
	// Params is the number of parameters.
	Params int `json:"params"`
	// Metrics are the quality measures on public held-out data (and the
	// fine-tuning check); Chance gives the chance level of accuracies.
	Metrics map[string]float64 `json:"metrics"`
	Chance  map[string]float64 `json:"chance"`
	Timings Timings            `json:"timings"`
	// Revision, GoVersion and Host are the provenance of the build.
	Revision  string    `json:"revision"`
	GoVersion string    `json:"go_version"`
	Host      string    `json:"host"`
	Created   time.Time `json:"created"`
}

// Timings are the wall times of a build, in seconds.
type Timings struct {
	Data       float64 `json:"data"`
	Vision     float64 `json:"vision"`             // stage 1 (TinyMLLM)
	ICL        float64 `json:"icl,omitempty"`      // stage 2 (TinyMLLM)
	Captions   float64 `json:"captions,omitempty"` // captions-only stage (TinyMLLM, Plan.CaptionSteps)
	Train      float64 `json:"train"`              // stage 3, or the classifier's training
	Eval       float64 `json:"eval"`               // held-out measures and the fine-tuning check
	FineTune   float64 `json:"finetune"`
	Total      float64 `json:"total"`
	Steps      int     `json:"steps"`
	PerStep    float64 `json:"per_step"`
	GOMAXPROCS int     `json:"gomaxprocs"`
}

// keyed is what the cache key hashes.
type keyed struct {
	Format  int               `json:"format"`
	Arch    string            `json:"arch"`
	Scale   string            `json:"scale"`
	Seed    uint64            `json:"seed"`
	Model   nn.Config         `json:"model"`
	Plan    any               `json:"plan"`
	Data    map[string]string `json:"data"`
	Vocab   string            `json:"vocab"`
	DataSrc string            `json:"data_source"`
	Engine  string            `json:"engine"`
}

// key returns the hex SHA-256 of the canonical JSON of k (encoding/json
// sorts map keys and writes floats in their shortest exact form).
func (k *keyed) key() string {
	b, err := json.Marshal(k)
	if err != nil {
		panic("pretrain: unencodable cache key: " + err.Error())
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

const (
	checkpointFile = "model.safetensors"
	manifestFile   = "manifest.json"
)

// Base returns the pretrained base of opt: from the cache when it holds
// one, otherwise trained now and cached. Concurrent calls (goroutines or
// processes) for the same base train it once: the others wait on a file
// lock and then read the cache. With opt.Fresh the base is rebuilt under
// the lock by every such call, one after the other. ctx cancels a wait or a training run
// between steps. Errors are returned for a bad option, unreadable data or a
// failed write; a corrupt cache entry is rebuilt.
func Base(ctx context.Context, opt Options) (*Result, error) {
	start := time.Now()
	memoKey := fmt.Sprintf("%q %q %q %q %d %t %t %t %t %d %t %q %q %d %q %p %p", opt.Scale, opt.Arch, opt.ImageEncoder, opt.FusionMode, opt.Patch, opt.Scenes, opt.ShapesQuestions, opt.Captions, opt.CellCaptions, opt.CaptionScale, opt.CaptionVision, opt.CellForm, opt.Dir, opt.Seed, opt.DataDir, opt.plan, opt.cplan)
	if !opt.Fresh {
		// A process that asked for this base before knows its folder
		// without building the data again for the fingerprints.
		if dir, ok := entryMemo.Load(memoKey); ok {
			if r, err := readEntry(dir.(string)); err == nil {
				return r, nil
			}
		}
	}
	b, err := prepare(opt)
	if err != nil {
		return nil, err
	}
	entryMemo.Store(memoKey, b.dir)
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	if !opt.Fresh {
		if r, err := readEntry(b.dir); err == nil {
			return r, nil
		}
	}
	unlock, err := lockFile(ctx, b.dir+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !opt.Fresh {
		// Another process may have built it while we waited.
		if r, err := readEntry(b.dir); err == nil {
			return r, nil
		}
	}
	var m nn.Model
	if b.arch == "tinymllm" {
		if err := b.loadData(); err != nil {
			return nil, err
		}
		b.timings.Data = time.Since(start).Seconds()
		m, err = b.train(ctx)
	} else {
		b.timings.Data = time.Since(start).Seconds()
		m, err = b.trainClassifier(ctx)
	}
	if err != nil {
		return nil, err
	}
	return b.write(m, start)
}

// entryMemo maps the options of earlier calls in this process to their
// cache folder.
var entryMemo sync.Map

// builder carries one build.
type builder struct {
	opt     Options
	scale   datasets.Scale
	arch    string
	seed    uint64
	plan    Plan
	cplan   ClassifierPlan
	cfg     nn.Config
	data    map[string]*datasets.Dataset
	corpus  *corpus
	k       keyed
	dir     string
	metrics map[string]float64
	chance  map[string]float64
	timings Timings
}

// prepare checks opt and computes the configuration, data fingerprints and
// cache key.
func prepare(opt Options) (*builder, error) {
	scale, err := datasets.ParseScale(opt.Scale)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	arch := opt.Arch
	if arch == "" {
		arch = "tinymllm"
	}
	if !slices.Contains(Architectures, arch) {
		return nil, fmt.Errorf("pretrain: unknown architecture %q (want tinymllm, vit, cnn, cnn-gn or fusion)", arch)
	}
	seed := opt.Seed
	if seed == 0 {
		seed = 1
	}
	plan, err := PlanFor(scale)
	if err != nil {
		return nil, err
	}
	if opt.plan != nil {
		plan = *opt.plan
	}
	cplan := classifierPlans[scale]
	if opt.cplan != nil {
		cplan = *opt.cplan
	}
	b := &builder{opt: opt, scale: scale, arch: arch, seed: seed, plan: plan, cplan: cplan,
		metrics: map[string]float64{}, chance: map[string]float64{}}
	vocab := datasets.Vocab()
	cfg, err := nn.Preset(string(scale), vocab.Len())
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	cfg.Seed = seed
	cfg, plan, name, err := tinyVariants(opt, arch, cfg, plan, string(scale))
	if err != nil {
		return nil, err
	}
	b.plan = plan
	tasks := dataTasks
	if arch != "tinymllm" {
		tasks = []string{classifierTask[arch]}
	}
	data := map[string]string{}
	src := ""
	b.data = map[string]*datasets.Dataset{}
	for _, task := range tasks {
		d, err := datasets.Build(task, &datasets.Options{Scale: scale, Seed: seed, DataDir: opt.DataDir})
		if err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		b.data[task] = d
		data[task] = d.Fingerprint()
		if d.Source != "generated" {
			src = d.Source
		}
	}
	var kplan any = plan
	if arch == "tinymllm" {
		if plan.LMLayers > 0 {
			cfg.Layers = plan.LMLayers
		}
	} else {
		cfg = classifierConfig(arch, cfg, b.data[tasks[0]], opt)
		kplan = cplan
	}
	b.cfg = cfg
	b.k = keyed{Format: FormatVersion, Arch: arch, Scale: string(scale), Seed: seed, Model: cfg, Plan: kplan,
		Data: data, Vocab: vocab.Hash(), DataSrc: src, Engine: engineOnce()}
	dir := opt.Dir
	if dir == "" {
		dir = DefaultDir
	}
	b.dir = filepath.Join(dir, fmt.Sprintf("%s-%s-%.16s", arch, name, b.k.key()))
	return b, nil
}

// tinyVariants applies the tinymllm base's opt-in variants (patch size,
// scenes, shapes questions, captions) to its configuration and plan, and
// returns the base's name with their suffixes.
func tinyVariants(opt Options, arch string, cfg nn.Config, plan Plan, name string) (nn.Config, Plan, string, error) {
	only := func(what string) error {
		return fmt.Errorf("pretrain: the %s variant is of the tinymllm base only, not %s", what, arch)
	}
	if opt.Patch != 0 && opt.Patch != cfg.Patch {
		if arch != "tinymllm" {
			return cfg, plan, "", fmt.Errorf("pretrain: a patch size shapes the tinymllm base only, not %s", arch)
		}
		var err error
		if cfg, err = cfg.WithPatch(opt.Patch); err != nil {
			return cfg, plan, "", fmt.Errorf("pretrain: %w", err)
		}
		name = fmt.Sprintf("%s-p%d", name, opt.Patch)
	}
	if opt.Scenes {
		if arch != "tinymllm" {
			return cfg, plan, "", only("scenes")
		}
		plan = plan.WithScenes()
		name += "-scenes"
	}
	if opt.ShapesQuestions {
		if arch != "tinymllm" {
			return cfg, plan, "", only("shapes-questions")
		}
		plan = plan.WithShapesQuestions()
		name += "-shapesqa"
	}
	if opt.Captions {
		if arch != "tinymllm" {
			return cfg, plan, "", only("captions")
		}
		plan = plan.WithCaptions()
		name += "-captions"
	}
	switch {
	case opt.CellCaptions && opt.Captions:
		return cfg, plan, "", fmt.Errorf("pretrain: the captions and cell-captions variants exclude each other")
	case opt.CellCaptions && arch != "tinymllm":
		return cfg, plan, "", only("cell-captions")
	case (opt.CaptionScale != 0 || opt.CaptionVision || opt.CellForm != "") && !opt.CellCaptions:
		return cfg, plan, "", fmt.Errorf("pretrain: a caption scale, caption vision or cell form needs the cell-captions variant")
	case opt.CaptionScale < 0:
		return cfg, plan, "", fmt.Errorf("pretrain: negative caption scale %d", opt.CaptionScale)
	case opt.CellCaptions:
		plan = plan.WithCellCaptions(opt.CaptionScale, opt.CaptionVision)
		name += "-cellcaps"
		if opt.CaptionScale > 1 {
			name += fmt.Sprintf("x%d", opt.CaptionScale)
		}
		if opt.CaptionVision {
			name += "v"
		}
		if _, err := CellFormParts(opt.CellForm); err != nil {
			return cfg, plan, "", err
		}
		if opt.CellForm != "" {
			plan = plan.WithCellForm(opt.CellForm)
			name += "-" + strings.ReplaceAll(opt.CellForm, "+", "-")
		}
	}
	return cfg, plan, name, nil
}

func (b *builder) loadData() error {
	c, err := newCorpus(b.data)
	if err != nil {
		return err
	}
	b.corpus = c
	return nil
}

// write saves the checkpoint and then the manifest (last, so that a
// manifest means a complete entry) and returns the result.
func (b *builder) write(m nn.Model, start time.Time) (*Result, error) {
	ck := filepath.Join(b.dir, checkpointFile)
	if err := results.Write(ck, func(w io.Writer) error { return nn.Encode(w, m) }); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	h, err := safetensors.HashFile(ck)
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	_, cfg := m.Describe()
	total, _ := nn.Count(m)
	b.timings.Total = time.Since(start).Seconds()
	b.timings.GOMAXPROCS = runtime.GOMAXPROCS(0)
	host, _ := os.Hostname()
	man := &Manifest{
		Format: FormatVersion, Key: b.k.key(), Arch: b.arch, Scale: string(b.scale), Seed: b.seed,
		Model: cfg, Plan: b.k.Plan, Data: b.k.Data, Vocab: b.k.Vocab, Engine: b.k.Engine,
		Checkpoint: checkpointFile, Hash: h, Params: total,
		Metrics: b.metrics, Chance: b.chance, Timings: b.timings,
		Revision: buildinfo.String(), GoVersion: runtime.Version(), Host: host, Created: time.Now().UTC(),
	}
	js, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	if err := results.WriteFile(filepath.Join(b.dir, manifestFile), append(js, '\n')); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	return &Result{Model: m, Checkpoint: ck, Hash: h, Manifest: man}, nil
}

// readEntry returns the cached base in dir if it is complete and intact.
func readEntry(dir string) (*Result, error) {
	js, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var man Manifest
	if err := json.Unmarshal(js, &man); err != nil {
		return nil, fmt.Errorf("pretrain: %s: %w", dir, err)
	}
	r := &Result{Checkpoint: filepath.Join(dir, checkpointFile), Hash: man.Hash, Manifest: &man, Cached: true}
	m, err := r.Load()
	if err != nil {
		return nil, err
	}
	r.Model = m
	return r, nil
}

// ReadManifest reads the manifest of a cache entry folder.
func ReadManifest(dir string) (*Manifest, error) {
	js, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	var man Manifest
	if err := json.Unmarshal(js, &man); err != nil {
		return nil, fmt.Errorf("pretrain: %s: %w", dir, err)
	}
	return &man, nil
}
