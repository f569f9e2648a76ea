// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/repro-dp/repro/attacks"
	_ "github.com/repro-dp/repro/attacks/gia" // registers the gradient-inversion attack
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/pretrain"
	"github.com/repro-dp/repro/privacy"
	"github.com/repro-dp/repro/runners"
)

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

func init() { experiments.RegisterNames(names) }

// names returns the names the registries hold, for the spec checker: the
// methods with their hyperparameter declarations and architectures, the
// tasks, the attacks and the scales.
func names() *experiments.Names {
	return &experiments.Names{
		Methods: methods.Names(),
		Tasks:   datasets.Tasks(),
		Attacks: attacks.Names(),
		Scales:  slices.Clone(methods.Scales),
		CheckParam: func(method, name string, v any) error {
			_, err := methods.CheckParam(method, name, v)
			return err
		},
		Compatible: func(method, task string) error {
			m, ok := methods.Lookup(method)
			if !ok {
				return fmt.Errorf("unknown method %q", method)
			}
			if arch, _ := datasets.Arch(task); arch != m.Arch() {
				return fmt.Errorf("method %s fine-tunes a %s; task %s is posed to a %s", method, m.Arch(), task, arch)
			}
			return nil
		},
		CheckData: func(method, task, scale, name string, v any) error {
			m, ok := methods.Lookup(method)
			dc, bounded := m.(methods.DataChecker)
			if !ok || !bounded {
				return nil
			}
			x, err := methods.CheckParam(method, name, v)
			if err != nil {
				return nil // CheckParam's error is reported at its own line
			}
			return dc.CheckData(task, scale, name, x)
		},
		AttackOptions: attackOptions,
		AttackSets:    attackSets,
		Metrics:       slices.Clone(knownMetrics),
		Metric:        knownMetric,
		Effective:     effective,
		Steps:         plannedSteps,
	}
}

// attackOptions returns the option declarations of attack for the spec
// checker (attacks.Optioned.Options).
func attackOptions(attack string) []experiments.AttackOption {
	a, ok := attacks.Lookup(attack)
	if !ok {
		return nil
	}
	oa, ok := a.(attacks.Optioned)
	if !ok {
		return nil
	}
	var out []experiments.AttackOption
	for _, o := range oa.Options() {
		out = append(out, experiments.AttackOption{Name: o.Name, Elem: o.Elem, Canonical: o.Canonical, Sort: o.Sort, Default: o.Default})
	}
	return out
}

// attackSets returns the score sets of attack with options opts and the
// metrics it owns, for the spec checker (attacks.Optioned.Sets and Owns).
func attackSets(attack string, opts experiments.AttackOptions) ([]string, func(string) bool, error) {
	a, err := attacks.Configure(attack, opts)
	if err != nil {
		return nil, nil, err
	}
	oa, ok := a.(attacks.Optioned)
	if !ok {
		return nil, nil, nil
	}
	return oa.Sets(), oa.Owns, nil
}

// Execute is the runners.Executor of every method in the methods registry.
// It runs the named stages of a run in order, each marked on rec:
//
//  1. base: a fresh copy of the scale's pretrained base of the method's
//     architecture (baseStage);
//  2. data: the task's dataset at the run's scale and seed, with the
//     run's federated partition (clients, alpha; DataPart);
//  3. fine-tune: the method on the private split (canary copies included),
//     with the hyperparameters methods.Resolve gives for the run's params,
//     seeded by the run's seed; per-step metrics and the privacy record are
//     recorded (fineTuneStage);
//  4. eval: the test metrics of the task's kind: Acc and IMG of greedy
//     decoding for generative tasks (Evaluate), the test perplexity for
//     the records text tasks (Perplexities), accuracy for classifiers
//     (evalStage);
//  5. attacks: each of the run's attacks on the trained model, members the
//     private examples that are not canary copies, non-members every
//     holdout example; results, scores, warnings and images are recorded,
//     and a violated privacy check fails the run (attackStage).
func Execute(ctx context.Context, run *runners.Run, rec *runners.Recorder) error {
	cfg := &run.Config
	method, ok := methods.Lookup(cfg.Method)
	if !ok {
		return fmt.Errorf("pipeline: unknown method %q", cfg.Method)
	}
	rec.Stage("base")
	model, base, err := baseStage(ctx, run, methods.BaseArch(method, cfg.Params))
	if err != nil {
		return err
	}
	rec.Stage("data")
	d, err := DataPart(cfg.Task, cfg.Scale, cfg.Seed, cfg.Partition())
	if err != nil {
		return err
	}
	if arch, _ := datasets.Arch(cfg.Task); arch != method.Arch() {
		return fmt.Errorf("pipeline: method %s fine-tunes a %s; task %s is posed to a %s", cfg.Method, method.Arch(), cfg.Task, arch)
	}
	rec.Stage("fine-tune")
	res, h, err := fineTuneStage(ctx, cfg, method, model, d, rec)
	if err != nil {
		return err
	}
	rec.Stage("eval")
	if err := evalStage(ctx, model, res, d, h.Diagnostics, int64(res.Steps), rec); err != nil {
		return err
	}
	rec.Stage("attacks")
	return attackStage(ctx, cfg, model, base, res, d, run.Dir, rec)
}

// baseStage returns a fresh copy of the pretrained base of arch at the
// run's scale and writes its identity to base.json in the run's folder.
// The bases are cached in BaseDir, or in the folder pretrain of the results
// root the run writes under. For a TinyMLLM it also returns the cached
// base itself (shared: read only), the extraction attacks' control.
func baseStage(ctx context.Context, run *runners.Run, arch string) (nn.Model, *nn.TinyMLLM, error) {
	dir := BaseDir
	if dir == "" {
		// run.Dir is <root>/<experiment>/runs/<id>.
		dir = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(run.Dir))), "pretrain")
	}
	var model nn.Model
	var shared *nn.TinyMLLM
	var hash, checkpoint string
	if arch == "tinymllm" {
		base, err := BaseAt(ctx, dir, run.Config.Scale, run.Config.BaseChoice())
		if err != nil {
			return nil, nil, err
		}
		m, err := clone(base.TinyMLLM())
		if err != nil {
			return nil, nil, err
		}
		model, shared, hash, checkpoint = m, base.TinyMLLM(), base.Hash, base.Checkpoint
	} else {
		// A federated run's fusion mode (methods' hyperparameter fusion)
		// selects the fusion base.
		mode, _ := run.Config.Params["fusion"].(string)
		base, err := pretrain.Base(ctx, pretrain.Options{Scale: run.Config.Scale, Arch: arch, Dir: dir, FusionMode: mode})
		if err != nil {
			return nil, nil, err
		}
		if model, err = base.Load(); err != nil {
			return nil, nil, err
		}
		hash, checkpoint = base.Hash, base.Checkpoint
	}
	bj, err := json.MarshalIndent(struct {
		ID         string `json:"id"`
		Arch       string `json:"arch"`
		Hash       string `json:"hash"`
		Checkpoint string `json:"checkpoint"`
	}{run.Inputs.Base, arch, hash, checkpoint}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return model, shared, results.WriteFile(filepath.Join(run.Dir, "base.json"), append(bj, '\n'))
}

// fineTuneStage resolves the run's hyperparameters, fine-tunes model with
// method and records the privacy record, the per-step metrics and the
// training results. It returns the method's result and the
// hyperparameters.
func fineTuneStage(ctx context.Context, cfg *experiments.Config, method methods.Method, model nn.Model, d *datasets.Dataset, rec *runners.Recorder) (*methods.Result, methods.Hyper, error) {
	params := maps.Clone(cfg.Params)
	delete(params, experiments.VariantParam) // a label, not a hyperparameter
	for _, k := range slices.Concat(experiments.DataParams, experiments.BaseParams) {
		delete(params, k) // the data's and the base's, not the method's (Data, BaseAt)
	}
	h, err := methods.ResolveAt(cfg.Method, cfg.Scale, float64(cfg.Epsilon), params)
	if err != nil {
		return nil, h, fmt.Errorf("pipeline: %w", err)
	}
	res, err := method.FineTune(ctx, &methods.Job{
		Model:   model,
		Data:    trainingData(cfg, d),
		Hyper:   h,
		Epsilon: float64(cfg.Epsilon),
		Delta:   cfg.Delta,
		Seed:    uint64(cfg.Seed),
	})
	if err != nil {
		return nil, h, err
	}
	if h.Diagnostics {
		res.Privacy.Caveats = append(res.Privacy.Caveats, majorityCaveat)
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
	if res.VisualTokens > 0 {
		rec.Result("visual_tokens", res.VisualTokens)
	}
	for _, k := range slices.Sorted(maps.Keys(res.Values)) {
		rec.Result(k, res.Values[k])
	}
	if _, ok := res.Values["epsilon_tight"]; !ok {
		// Both ε in every manifest: the paper's (nominal) and the executed
		// mechanism's (tight) are the same unless the method says not.
		nominal := float64(res.Privacy.Epsilon)
		if res.Privacy.EpsilonNominal != nil {
			nominal = float64(*res.Privacy.EpsilonNominal)
		}
		rec.Result("epsilon_tight", float64(res.Privacy.Epsilon))
		rec.Result("epsilon_nominal", nominal)
	}
	counts := nn.TrainableCounts(model)
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		rec.Result(k, counts[k])
	}
	return res, h, nil
}

// trainingData returns the dataset the method fine-tunes on: d, or for
// the chance-level control (cfg.TrainHoldout) a copy of d whose private
// and holdout splits are swapped, so that the method trains on records it
// draws like the private ones (the same generator, the same name lists)
// but on none of them and on no canary, while evaluation and the attacks
// keep d and target its private split.
func trainingData(cfg *experiments.Config, d *datasets.Dataset) *datasets.Dataset {
	if !cfg.TrainHoldout() {
		return d
	}
	c := *d
	c.Private, c.Holdout = d.Holdout, d.Private
	return &c
}

// posed returns d with its test split as pose poses it (d itself when
// pose is nil): the test examples as the method's released system sees
// them (methods.Result.Pose).
func posed(pose func(*datasets.Example) datasets.Example, d *datasets.Dataset) *datasets.Dataset {
	if pose == nil {
		return d
	}
	c := *d
	c.Test = poseAll(pose, d.Test)
	return &c
}

func poseAll(pose func(*datasets.Example) datasets.Example, exs []datasets.Example) []datasets.Example {
	out := make([]datasets.Example, len(exs))
	for i := range exs {
		out[i] = pose(&exs[i])
	}
	return out
}

// majorityCaveat labels acc_majority in the privacy record.
const majorityCaveat = "non-private diagnostic outside the guarantee: acc_majority is the test accuracy of the most frequent private training answer per question kind (diagnostics=off drops it)"

// evalStage records the test metrics of model on d's test split at step
// final, as results and test metrics: for TinyMLLM those of Evaluate
// (acc_majority only with diagnostics, since it reads the private
// answers), for classifiers the accuracy (%). It records each test
// example's prediction too (predictions.parquet), but for the records
// text tasks, whose metric is the perplexity of the whole split.
func evalStage(ctx context.Context, model nn.Model, res *methods.Result, d *datasets.Dataset, diagnostics bool, final int64, rec *runners.Recorder) error {
	var evr map[string]float64
	var preds []results.Prediction
	if m, ok := model.(*nn.TinyMLLM); ok {
		var err error
		if evr, preds, err = lmResults(ctx, m, res.Visual, posed(res.Pose, d), diagnostics); err != nil {
			return err
		}
	} else {
		acc, p, err := classifierAccuracy(ctx, model, d.Test)
		if err != nil {
			return err
		}
		evr, preds = map[string]float64{"acc": acc}, p
	}
	for _, name := range slices.Sorted(maps.Keys(evr)) {
		rec.Result(name, evr[name])
		rec.Metric(final, "test", name, evr[name])
	}
	if len(preds) > 0 {
		rec.Predictions(preds)
	}
	return nil
}

// lmResults returns the test metrics of a TinyMLLM and the test
// examples' predictions: the perplexity for the records text tasks
// (Perplexities; the exact match of a whole generated record is not their
// metric, and they have no prediction rows), else those of Evaluate.
func lmResults(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, d *datasets.Dataset, diagnostics bool) (map[string]float64, []results.Prediction, error) {
	if textTask(d.Task) {
		ppl, err := Perplexities(ctx, m, vt, d.Test, 0)
		return ppl, nil, err
	}
	ev, err := Evaluate(ctx, m, vt, d.Test, d.Private, 0)
	if err != nil {
		return nil, nil, err
	}
	evr := ev.results()
	if !diagnostics {
		delete(evr, "acc_majority")
	}
	if len(d.Mapping) > 0 {
		if evr["label_acc"], err = LabelAccuracy(ctx, m, vt, d.Test, d.Mapping); err != nil {
			return nil, nil, err
		}
	}
	return evr, ev.Predictions, nil
}

// attackStage runs the run's attacks on model: members are the private
// examples that are not canary copies, non-members every holdout example,
// the audit canaries those of d.Canaries of kind datasets.AuditCanaryKind;
// each attack's results, scores and warnings are recorded. A DP run's
// attacks are checked against the PLD bound of its mechanism, and its
// audits against its accounted ε: a violation fails the run (after
// everything is recorded), unless the run is a planted under-noised
// control (methods.PlantedCaveat), for which it is the expected outcome
// and recorded as a warning. An attack that fails (for example for want
// of audit canaries) does not stop the others; the run fails with every
// such error once all have run.
func attackStage(ctx context.Context, cfg *experiments.Config, model nn.Model, base *nn.TinyMLLM, res *methods.Result, d *datasets.Dataset, dir string, rec *runners.Recorder) error {
	if len(cfg.Attacks) == 0 {
		return nil
	}
	if f, ok := model.(*nn.Fusion); ok {
		return fedAttackStage(ctx, cfg, f, res, d, dir, rec)
	}
	m, ok := model.(*nn.TinyMLLM)
	c, isClassifier := model.(attacks.Classifier)
	if !ok && !isClassifier {
		arch, _ := model.Describe()
		return fmt.Errorf("pipeline: the attacks %s need a tinymllm or an image classifier, not a %s", strings.Join(cfg.Attacks, ", "), arch)
	}
	target, err := attackTarget(m, res.Visual, d, res.Privacy)
	if err != nil {
		return err
	}
	if !ok {
		// An image classifier: the membership attacks read its class
		// distribution and the gradient inversion its released update;
		// it generates no text, so the extraction attacks have nothing to
		// extract (they fail for want of a TinyMLLM).
		target.Model, target.Classifier = nil, c
	}
	if res.Members != nil || res.Pose != nil {
		memberTarget(target, res, d)
	}
	target.Release, target.Mean = res.Release, res.Mean
	if ok {
		extractionTarget(target, d, base)
	}
	var errs []error
	var as []attacks.Attack
	for _, name := range cfg.Attacks {
		a, err := attacks.Configure(name, cfg.AttackOptions[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("pipeline: %w", err))
			continue
		}
		as = append(as, a)
		if r, ok := a.(attacks.MaxRenyiMIA); ok {
			// Every Rényi order in the shared forward passes: one pass.
			target.Orders = r.Orders
			if target.Orders == nil {
				target.Orders = attacks.RenyiOrders
			}
		}
	}
	warned := map[string]bool{}
	for _, a := range as {
		name := a.Name()
		rep, err := a.Run(ctx, target)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
			continue
		}
		recordReport(rec, name, rep, warned)
		if err := writeImages(dir, rep.Images); err != nil {
			return err
		}
		for _, v := range rep.Violations {
			if target.Planted {
				rec.Warn("%s (expected: this run is a %s)", v, methods.PlantedCaveat)
			} else {
				errs = append(errs, fmt.Errorf("pipeline: %s", v))
			}
		}
	}
	return errors.Join(errs...)
}

// attackTarget returns the attacks' view of the trained model m (nil for
// a classifier, which the caller sets) and its data d, with the bound of
// the mechanism of p when it is private. Every example carries its label
// (a classifier's class; -1 for a generative task).
func attackTarget(m *nn.TinyMLLM, vt nn.VisualTransform, d *datasets.Dataset, p results.Privacy) (*attacks.Target, error) {
	target := &attacks.Target{Model: m, Visual: vt, Decode: datasets.Vocab().Decode,
		Epsilon: float64(p.Epsilon), Delta: p.Delta,
		Planted: slices.ContainsFunc(p.Caveats, func(c string) bool { return strings.HasPrefix(c, methods.PlantedCaveat) })}
	switch eps := float64(p.Epsilon); {
	case p.Sigma > 0:
		var err error
		target.TPRBound, err = tprBound(p)
		switch {
		case errors.Is(err, privacy.ErrGridTooLarge):
			// ε too large for the PLD's grid: the bound is ≈ 1 at every
			// FPR, and the attacks are not held against it.
			target.TPRBound = nil
		case err != nil:
			return nil, err
		}
	case p.Accountant != "none" && p.Accountant != "" && eps > 0 && !math.IsInf(eps, 0):
		// A private record without a Gaussian noise multiplier (LDP-FL):
		// its stated (ε, δ) bounds every test, and the PLD of its
		// composed pure releases, where its events are those, more
		// tightly.
		var err error
		if target.TPRBound, err = pureBound(p); err != nil {
			return nil, err
		}
	}
	if target.Epsilon == 0 { // no privacy record: nothing is claimed
		target.Epsilon = math.Inf(1)
	}
	for i := range d.Private {
		if d.Private[i].Canary < 0 {
			target.Members = append(target.Members, attacks.Example{ID: int64(i), Seq: methods.Sequence(&d.Private[i]), Label: d.Private[i].Label})
		}
	}
	for i := range d.Public {
		target.Public = append(target.Public, attacks.Example{ID: int64(i), Seq: methods.Sequence(&d.Public[i]), Label: d.Public[i].Label})
	}
	for i := range d.Holdout {
		target.NonMembers = append(target.NonMembers, attacks.Example{ID: int64(i), Seq: methods.Sequence(&d.Holdout[i]), Label: d.Holdout[i].Label})
	}
	if d.Pool != nil {
		// A LiRA pool: members and non-members are the pool's examples in
		// pool order; their IDs become pool indices, shared by every run.
		target.Pool = true
		mi, ni := 0, 0
		for i, in := range d.Pool {
			if in {
				target.Members[mi].ID, mi = int64(i), mi+1
			} else {
				target.NonMembers[ni].ID, ni = int64(i), ni+1
			}
		}
	}
	for i := range d.Canaries {
		c := &d.Canaries[i]
		if c.Example.Kind == datasets.AuditCanaryKind {
			target.Canaries = append(target.Canaries, attacks.Canary{
				Example: attacks.Example{ID: int64(i), Seq: methods.Sequence(&c.Example)}, In: c.Reps > 0})
		}
	}
	return target, nil
}

// memberTarget replaces target's members and non-members by the method's
// (res.Members and res.NonMembers, when set) and poses every example of
// the membership attacks as the method's released system sees it
// (res.Pose, when set).
func memberTarget(target *attacks.Target, res *methods.Result, d *datasets.Dataset) {
	members, nonMembers := d.Private, d.Holdout
	if res.Members != nil {
		members, nonMembers = res.Members, res.NonMembers
	}
	if res.Pose != nil {
		members, nonMembers = poseAll(res.Pose, members), poseAll(res.Pose, nonMembers)
	}
	target.Members, target.NonMembers = nil, nil
	for i := range members {
		if members[i].Canary < 0 {
			target.Members = append(target.Members, attacks.Example{ID: int64(i), Seq: methods.Sequence(&members[i]), Label: members[i].Label})
		}
	}
	for i := range nonMembers {
		target.NonMembers = append(target.NonMembers, attacks.Example{ID: int64(i), Seq: methods.Sequence(&nonMembers[i]), Label: nonMembers[i].Label})
	}
}

// recordReport records the results, scores and warnings of attack name's
// report. Scores with an Attack label (one score set of several) are
// recorded under that label, the others under name. A warning already in
// warned (given by an earlier attack of the run) is not repeated.
func recordReport(rec *runners.Recorder, name string, rep *attacks.Report, warned map[string]bool) {
	for _, k := range slices.Sorted(maps.Keys(rep.Results)) {
		rec.Result(k, rep.Results[k])
	}
	var order []string
	byLabel := map[string][]results.Score{}
	for _, s := range rep.Scores {
		label := cmp.Or(s.Attack, name)
		if _, ok := byLabel[label]; !ok {
			order = append(order, label)
		}
		byLabel[label] = append(byLabel[label], s)
	}
	for _, label := range order {
		rec.Scores(label, byLabel[label])
	}
	for _, w := range rep.Warnings {
		if !warned[w] {
			warned[w] = true
			rec.Warn("%s", w)
		}
	}
}

// tprBound returns the PLD accountant's TPR bound for the mechanism of p,
// composed once per process for each distinct mechanism. When the record
// lists its clients' mechanisms (p.ClientEvents: a federated run at the
// record-level unit), the bound at each FPR is the largest over them: an
// example of any client is covered, and at partial participation the
// worst-ε client (p.Events) need not have the largest TPR at every FPR.
func tprBound(p results.Privacy) (func(float64) (float64, error), error) {
	events := p.ClientEvents
	if len(events) == 0 {
		events = []json.RawMessage{p.Events}
	}
	plds := make([]*privacy.PLD, len(events))
	for i, e := range events {
		var err error
		if plds[i], err = eventPLD(e); err != nil {
			return nil, err
		}
	}
	// Accountants are not safe for concurrent use; runs share these.
	return func(fpr float64) (float64, error) {
		cache.Lock()
		defer cache.Unlock()
		return maxTPR(plds, fpr)
	}, nil
}

// eventPLD returns the PLD accountant of the encoded mechanism e, composed
// once per process.
func eventPLD(e json.RawMessage) (*privacy.PLD, error) {
	return memo(&cache.plds, string(e), func() (*privacy.PLD, error) {
		ev, err := privacy.UnmarshalEvent(e)
		if err != nil {
			return nil, fmt.Errorf("pipeline: privacy events: %w", err)
		}
		// Pure ε-DP releases get a grid that holds their losses ±ε
		// exactly; every other mechanism the default (PureInterval is 0).
		pld, err := privacy.NewPLD(&privacy.PLDOptions{Interval: privacy.PureInterval(ev)})
		if err != nil {
			return nil, err
		}
		if err := pld.Compose(ev, 1); err != nil {
			return nil, fmt.Errorf("pipeline: TPR bound: %w", err)
		}
		return pld, nil
	})
}

// maxTPR returns the largest TPR bound at fpr of the accountants plds: the
// bound of a test whose example may belong to any of their mechanisms.
func maxTPR(plds []*privacy.PLD, fpr float64) (float64, error) {
	best := 0.0
	for _, a := range plds {
		t, err := a.TPR(fpr)
		if err != nil {
			return 0, err
		}
		best = max(best, t)
	}
	return best, nil
}

// pureBound returns the TPR bound of a private record without a Gaussian
// noise multiplier. When its events are pure ε-DP releases of one ε
// (LDP-FL's per-coordinate randomised responses: privacy.PureInterval is
// not 0), it is the smaller at each FPR of the (ε, δ) region at the
// record's accounted ε (epsilonDeltaBound) and the trade-off of the
// composed releases read from the PLD accountant on a grid that holds
// their losses exactly (eventPLD), which is much tighter: at LDP-FL's ε =
// 1 over 104 458 coordinates and 50 rounds, 0.15 against 0.27 at FPR 0.1
// (privacy.TestPureIntervalTPR). Both are upper bounds on every test's
// TPR, so their minimum is one. For any other record it is the (ε, δ)
// region alone.
func pureBound(p results.Privacy) (func(float64) (float64, error), error) {
	ed := epsilonDeltaBound(p)
	ev, err := privacy.UnmarshalEvent(p.Events)
	if err != nil || privacy.PureInterval(ev) == 0 {
		// No events, or events of another kind: the stated (ε, δ) only.
		return ed, nil
	}
	pld, err := eventPLD(p.Events)
	switch {
	case errors.Is(err, privacy.ErrGridTooLarge):
		// Too many grid points for the composition: the (ε, δ) region.
		return ed, nil
	case err != nil:
		return nil, err
	}
	return func(fpr float64) (float64, error) {
		b, err := ed(fpr)
		if err != nil {
			return 0, err
		}
		cache.Lock()
		defer cache.Unlock()
		t, err := pld.TPR(fpr)
		if err != nil {
			return 0, err
		}
		return min(b, t), nil
	}, nil
}

// epsilonDeltaBound returns the TPR bound of a record that states only
// its (ε, δ) (no Gaussian noise multiplier: LDP-FL's randomised response,
// pure ε-DP releases composed to (ε, δ)): the trade-off region of an
// (ε, δ)-DP mechanism (privacy.EpsilonDeltaTPR).
func epsilonDeltaBound(p results.Privacy) func(float64) (float64, error) {
	eps, delta := float64(p.Epsilon), p.Delta
	return func(fpr float64) (float64, error) { return privacy.EpsilonDeltaTPR(eps, delta, fpr) }
}

// writeImages writes an attack's images as <dir>/images/<name>.png
// (attacks.ImagesDir), atomically, for the grid plot kind.
func writeImages(dir string, imgs map[string][]byte) error {
	if len(imgs) == 0 {
		return nil
	}
	sub := filepath.Join(dir, attacks.ImagesDir)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(imgs)) {
		if !imageName.MatchString(name) {
			return fmt.Errorf("pipeline: bad image name %q", name)
		}
		if err := results.WriteFile(filepath.Join(sub, name+".png"), imgs[name]); err != nil {
			return err
		}
	}
	return nil
}

// imageName is the form of an image name (attacks.Report.Images).
var imageName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
