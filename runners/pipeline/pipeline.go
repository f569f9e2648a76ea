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
	"sync"

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

// cache memoises the pretrained bases (by scale) and the datasets (by task,
// scale and seed) for the life of the process: every run of a sweep shares
// them, read-only.
var cache struct {
	sync.Mutex
	bases map[baseKey]*entry[*pretrain.Result]
	data  map[dataKey]*entry[*datasets.Dataset]
	plds  map[string]*entry[*privacy.PLD]
}

type baseKey struct{ dir, scale string }

type dataKey struct {
	task, scale string
	seed        int64
}

// entry is a value computed once; concurrent callers wait for it.
type entry[T any] struct {
	once sync.Once
	v    T
	err  error
}

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
	return e.v, e.err
}

// newBase builds or reads the pretrained base of scale; tests replace it.
var newBase = func(ctx context.Context, dir, scale string) (*pretrain.Result, error) {
	return pretrain.Base(ctx, pretrain.Options{Scale: scale, Dir: dir})
}

// Base returns the pretrained base of scale, built in or read from the
// cache folder dir (pretrain.Base) once per process.
func Base(ctx context.Context, dir, scale string) (*pretrain.Result, error) {
	return memo(&cache.bases, baseKey{dir, scale}, func() (*pretrain.Result, error) {
		r, err := newBase(ctx, dir, scale)
		if err != nil {
			return nil, err
		}
		if r.TinyMLLM() == nil {
			return nil, fmt.Errorf("pipeline: the %s base is not a TinyMLLM", scale)
		}
		return r, nil
	})
}

// Data returns the dataset of task at scale and seed, built once per
// process.
func Data(task, scale string, seed int64) (*datasets.Dataset, error) {
	return memo(&cache.data, dataKey{task, scale, seed}, func() (*datasets.Dataset, error) {
		sc, err := datasets.ParseScale(scale)
		if err != nil {
			return nil, err
		}
		return datasets.Build(task, &datasets.Options{Scale: sc, Seed: uint64(seed)})
	})
}

// Inputs returns the inputs of a run: the fingerprint of its dataset and
// the identity of its scale's pretrained base, BaseID. It builds the
// dataset (memoised) but never the base, so a dry run stays fast.
func Inputs(cfg *experiments.Config) (experiments.Inputs, error) {
	d, err := Data(cfg.Task, cfg.Scale, cfg.Seed)
	if err != nil {
		return experiments.Inputs{}, err
	}
	b, err := BaseID(cfg.Scale)
	if err != nil {
		return experiments.Inputs{}, err
	}
	return experiments.Inputs{Data: d.Fingerprint(), Base: b}, nil
}

// BaseID returns the identity of the pretrained base of scale without
// building it: "pretrain-" and the SHA-256 of the canonical JSON of
// pretrain.FormatVersion, the architecture, the scale, the seed, the
// scale's pretraining plan, the model preset and the vocabulary hash.
// Pretraining is reproducible bit for bit from these (package pretrain), so
// equal identities mean equal checkpoints; the checkpoint's own hash is
// written to base.json in the run's folder when the run executes.
func BaseID(scale string) (string, error) {
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
	b, err := json.Marshal(struct {
		Format int           `json:"format"`
		Arch   string        `json:"arch"`
		Scale  string        `json:"scale"`
		Seed   uint64        `json:"seed"`
		Plan   pretrain.Plan `json:"plan"`
		Model  nn.Config     `json:"model"`
		Vocab  string        `json:"vocab"`
	}{pretrain.FormatVersion, "tinymllm", scale, 1, plan, cfg, v.Hash()})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "pretrain-" + hex.EncodeToString(sum[:]), nil
}
