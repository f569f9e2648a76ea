// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
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

// clone returns an independent copy of the base model m.
func clone(m *nn.TinyMLLM) (*nn.TinyMLLM, error) {
	c, err := nn.NewTinyMLLM(m.Config)
	if err != nil {
		return nil, err
	}
	src := m.Params()
	for i, p := range c.Params() {
		copy(p.Data, src[i].Data)
	}
	return c, nil
}

// sequence returns ex as a model input: prompt and answer, the loss on the
// answer tokens.
func sequence(ex *datasets.Example) nn.Sequence {
	s, mask := ex.Sequence()
	return nn.Sequence{Tokens: s, Images: ex.Images, Loss: mask}
}

// Execute is the runners.Executor of every method in the methods registry:
//
//  1. base: the scale's pretrained base (Base), copied;
//  2. data: the task's dataset at the run's scale and seed (Data);
//  3. fine-tune: the method on the private split (canary copies included),
//     with the hyperparameters of methods.Defaults overridden by the run's
//     params, seeded by the run's seed; per-step metrics and the privacy
//     record are recorded;
//  4. eval: Acc and IMG on the test split (Evaluate);
//  5. attacks: each of the run's attacks on the trained model, members the
//     private examples that are not canary copies, non-members as many
//     holdout examples; results, scores and warnings are recorded.
func Execute(ctx context.Context, run *runners.Run, rec *runners.Recorder) error {
	cfg := &run.Config
	method, ok := methods.Lookup(cfg.Method)
	if !ok {
		return fmt.Errorf("pipeline: unknown method %q", cfg.Method)
	}
	rec.Stage("base")
	dir := BaseDir
	if dir == "" {
		// run.Dir is <root>/<experiment>/runs/<id>.
		dir = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(run.Dir))), "pretrain")
	}
	base, err := Base(ctx, dir, cfg.Scale)
	if err != nil {
		return err
	}
	model, err := clone(base.TinyMLLM())
	if err != nil {
		return err
	}
	bj, err := json.MarshalIndent(struct {
		ID         string `json:"id"`
		Hash       string `json:"hash"`
		Checkpoint string `json:"checkpoint"`
	}{run.Inputs.Base, base.Hash, base.Checkpoint}, "", "  ")
	if err != nil {
		return err
	}
	if err := results.WriteFile(filepath.Join(run.Dir, "base.json"), append(bj, '\n')); err != nil {
		return err
	}

	rec.Stage("data")
	d, err := Data(cfg.Task, cfg.Scale, cfg.Seed)
	if err != nil {
		return err
	}
	if !d.Generative {
		return fmt.Errorf("pipeline: task %s is not generative; %s fine-tunes TinyMLLM on VQA tasks", cfg.Task, cfg.Method)
	}
	train := make([]nn.Sequence, len(d.Private))
	for i := range d.Private {
		train[i] = sequence(&d.Private[i])
	}

	rec.Stage("fine-tune")
	h, err := methods.Defaults(cfg.Method, cfg.Scale)
	if err != nil {
		return err
	}
	h, ignored, err := h.Parse(cfg.Params)
	if err != nil {
		return err
	}
	for _, k := range ignored {
		rec.Warn("param %s is not a hyperparameter of %s; ignored", k, cfg.Method)
	}
	res, err := method.FineTune(ctx, &methods.Job{
		Model:   model,
		Train:   train,
		Hyper:   h,
		Epsilon: float64(cfg.Epsilon),
		Delta:   cfg.Delta,
		Seed:    uint64(cfg.Seed),
	})
	if err != nil {
		return err
	}
	rec.Steps(int64(res.Steps))
	rec.Privacy(res.Privacy)
	for _, m := range res.Metrics {
		rec.Metric(int64(m.Step), "train", m.Name, m.Value)
	}
	for _, w := range res.Warnings {
		rec.Warn("%s", w)
	}
	rec.Result("epsilon_rdp", res.EpsilonRDP)
	rec.Result("epsilon_pld", res.EpsilonPLD)
	rec.Result("step_seconds", res.StepTime.Seconds())
	rec.Result("train_peak_bytes", float64(res.PeakBytes))

	rec.Stage("eval")
	ev, err := Evaluate(ctx, model, d.Test, d.Private, 0)
	if err != nil {
		return err
	}
	final := int64(res.Steps)
	evr := ev.results()
	for _, name := range slices.Sorted(maps.Keys(evr)) {
		rec.Result(name, evr[name])
		rec.Metric(final, "test", name, evr[name])
	}

	rec.Stage("attacks")
	var bound func(float64) (float64, error)
	if res.Privacy.Sigma > 0 {
		if bound, err = tprBound(res.Privacy); err != nil {
			return err
		}
	}
	var members, non []attacks.Example
	for i := range d.Private {
		if d.Private[i].Canary < 0 {
			members = append(members, attacks.Example{ID: int64(i), Seq: train[i]})
		}
	}
	for i := range d.Holdout {
		non = append(non, attacks.Example{ID: int64(i), Seq: sequence(&d.Holdout[i])})
	}
	n := min(len(members), len(non))
	target := &attacks.Target{Model: model, Members: members[:n], NonMembers: non[:n], TPRBound: bound}
	for _, name := range cfg.Attacks {
		a, ok := attacks.Lookup(name)
		if !ok {
			return fmt.Errorf("pipeline: unknown attack %q", name)
		}
		rep, err := a.Run(ctx, target)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(rep.Results)) {
			rec.Result(k, rep.Results[k])
		}
		rec.Scores(name, rep.Scores)
		for _, w := range rep.Warnings {
			rec.Warn("%s", w)
		}
	}
	return nil
}

// tprBound returns the PLD accountant's TPR bound for the mechanism of p,
// composed once per process for each distinct mechanism.
func tprBound(p results.Privacy) (func(float64) (float64, error), error) {
	pld, err := memo(&cache.plds, string(p.Events), func() (*privacy.PLD, error) {
		ev, err := privacy.UnmarshalEvent(p.Events)
		if err != nil {
			return nil, fmt.Errorf("pipeline: privacy events: %w", err)
		}
		pld, err := privacy.NewPLD(nil)
		if err != nil {
			return nil, err
		}
		if err := pld.Compose(ev, 1); err != nil {
			return nil, fmt.Errorf("pipeline: TPR bound: %w", err)
		}
		return pld, nil
	})
	if err != nil {
		return nil, err
	}
	// Accountants are not safe for concurrent use; runs share this one.
	return func(fpr float64) (float64, error) {
		cache.Lock()
		defer cache.Unlock()
		return pld.TPR(fpr)
	}, nil
}

// Eval holds the test metrics of a trained model.
type Eval struct {
	// Acc is the exact-match accuracy (%) of greedy decoding on every test
	// example; Img on the examples whose answer needs the image
	// (datasets.Example.TextOnly false: Dual-Priv's IMG); Text on the
	// others (NaN if none).
	Acc, Img, Text float64
	// Majority is the accuracy (%) of always giving the most frequent
	// training answer of the example's question kind: the chance level a
	// model that ignores the image and the question's details reaches.
	Majority float64
	// N and NImg count the test examples and the IMG subset.
	N, NImg int
}

func (e *Eval) results() map[string]float64 {
	return map[string]float64{"acc": e.Acc, "img": e.Img, "acc_text": e.Text, "acc_majority": e.Majority}
}

// Evaluate decodes every test example's prompt greedily (up to the length
// of its answer, which ends with EOS) and counts exact matches of the
// answer. train gives the majority baseline. Examples are decoded on up to
// workers goroutines (0: GOMAXPROCS), each on its own, so the result does
// not depend on workers.
func Evaluate(ctx context.Context, m *nn.TinyMLLM, test, train []datasets.Example, workers int) (*Eval, error) {
	if len(test) == 0 {
		return nil, errors.New("pipeline: empty test split")
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(test))
	ok := make([]bool, len(test))
	errs := make([]error, len(test))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(test); i += workers {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				ex := &test[i]
				p := nn.Sequence{Tokens: ex.Prompt, Images: ex.Images}
				out, err := m.Generate(&p, len(ex.Answer), nn.Sampler{}, nil, nil, nil)
				if err != nil {
					errs[i] = fmt.Errorf("pipeline: test example %s: %w", ex.ID, err)
					continue
				}
				ok[i] = slices.Equal(out, ex.Answer)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// The most frequent training answer per question kind.
	counts := map[string]map[string]int{}
	for i := range train {
		ex := &train[i]
		if ex.Canary >= 0 {
			continue
		}
		if counts[ex.Kind] == nil {
			counts[ex.Kind] = map[string]int{}
		}
		counts[ex.Kind][fmt.Sprint(ex.Answer)]++
	}
	majority := map[string]string{}
	for kind, c := range counts {
		best, bestN := "", -1
		for a, n := range c {
			if n > bestN || (n == bestN && a < best) {
				best, bestN = a, n
			}
		}
		majority[kind] = best
	}
	var e Eval
	var hit, hitImg, hitText, hitMaj int
	for i := range test {
		ex := &test[i]
		e.N++
		if ok[i] {
			hit++
		}
		if ex.TextOnly {
			if ok[i] {
				hitText++
			}
		} else {
			e.NImg++
			if ok[i] {
				hitImg++
			}
		}
		if majority[ex.Kind] == fmt.Sprint(ex.Answer) {
			hitMaj++
		}
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return 100 * float64(a) / float64(b)
	}
	e.Acc, e.Img, e.Text, e.Majority = pct(hit, e.N), pct(hitImg, e.NImg), pct(hitText, e.N-e.NImg), pct(hitMaj, e.N)
	return &e, nil
}
